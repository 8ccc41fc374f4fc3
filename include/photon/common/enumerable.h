// Enumerable<T>: range-for over a cursor-like object, as PhotonLibOS declares it (global
// namespace). T needs valid() (is there a current item?), get() (the current item) and next()
// (advance: 0 on success, negative when there are no more items):
//     for (auto x : enumerable(cursor)) ...
// enumerable(T&) and enumerable(T*) iterate the caller's object; enumerable(T&&) moves a
// temporary into the range so that it lives through the loop. Whatever T's calls do (they may
// yield, if T's do) happens on the calling thread.
//
// Differences from PhotonLibOS: doc/compat.md#commonenumerableh
#pragma once
#include <cstddef>
#include <iterator>
#include <type_traits>
#include <utility>

#include <photon/common/detail/std17.h>
#include <photon/common/utility.h>

template <typename T>
struct Enumerable {
    T* obj;
    bool autoDelete;
    ~Enumerable() {
        if (autoDelete) delete obj;
    }
    Enumerable(T& obj) : Enumerable(&obj, false) {}
    Enumerable(T* obj, bool autoDelete = false) : obj(obj), autoDelete(autoDelete) {}
    // A copy iterates the same object but never deletes it.
    Enumerable(const Enumerable& rhs) : obj(rhs.obj), autoDelete(false) {}
    Enumerable(Enumerable&& rhs) : obj(rhs.obj), autoDelete(rhs.autoDelete) {
        rhs.autoDelete = false;
    }
    Enumerable& operator=(const Enumerable& rhs) {
        if (this != &rhs) reset(rhs.obj, false);
        return *this;
    }
    Enumerable& operator=(Enumerable&& rhs) {
        if (this != &rhs) {
            reset(rhs.obj, rhs.autoDelete);
            rhs.autoDelete = false;
        }
        return *this;
    }

    struct iterator {
        using R = photon::detail::invoke_result_t<decltype(&T::get), T&>;
        using iterator_category = std::input_iterator_tag;
        using value_type = typename std::decay<R>::type;
        using difference_type = std::ptrdiff_t;
        using pointer = void;
        using reference = R;

        T* obj;  // nullptr at the end
        explicit iterator(T* obj) : obj(obj && obj->valid() ? obj : nullptr) {}

        // The current item; at the end, R{} (a reference R must not be read there).
        R operator*() { return get(std::is_reference<R>()); }
        R get(std::true_type /* a reference */) { return obj->get(); }
        R get(std::false_type) { return obj ? obj->get() : R{}; }
        bool operator==(const iterator& rhs) const { return obj == rhs.obj; }
        bool operator!=(const iterator& rhs) const { return !(*this == rhs); }
        iterator& operator++() {
            if (obj && obj->next() < 0) obj = nullptr;
            return *this;
        }
        iterator operator++(int) {
            auto rst = *this;
            ++(*this);
            return rst;
        }
    };
    iterator begin() { return iterator(obj); }
    iterator end() { return iterator(nullptr); }

private:
    void reset(T* o, bool owns) {
        if (autoDelete && obj != o) delete obj;
        obj = o;
        autoDelete = owns;
    }
};

// Owns the object it enumerates.
template <typename T>
struct Enumerable_Holder : Enumerable<T> {
    T _obj;
    Enumerable_Holder(T&& obj) : Enumerable<T>(&_obj, false), _obj(std::move(obj)) {}
    Enumerable_Holder(const Enumerable_Holder& rhs) : Enumerable<T>(&_obj, false), _obj(rhs._obj) {}
    Enumerable_Holder(Enumerable_Holder&& rhs)
        : Enumerable<T>(&_obj, false), _obj(std::move(rhs._obj)) {}
    Enumerable_Holder& operator=(const Enumerable_Holder&) = delete;
};

template <typename T>
inline Enumerable<T> enumerable(T& obj) {
    return {obj};
}

template <typename T>
inline Enumerable<T> enumerable(T* obj) {
    return {obj};
}

template <typename T>
inline Enumerable_Holder<T> enumerable(T&& obj) {
    return {std::move(obj)};
}

// The shape T must have, and the three ways to enumerate it.
inline void __example_of_enumerable__() {
    struct exam {
        bool valid() { return false; }
        int next() { return -1; }          // advance: 0 on success, -1 at the end
        double* get() { return nullptr; }  // the current item
    };
    exam ex;
    for (auto x : enumerable(ex)) _unused(x);
    for (auto x : enumerable(&ex)) _unused(x);
    for (auto x : enumerable(exam())) _unused(x);
}
