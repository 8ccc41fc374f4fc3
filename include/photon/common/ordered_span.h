// ordered_span<T, Less>: a tcb::span over a caller-owned array kept sorted by
// Less, found by binary search, with optional free slots at the tail that
// append() and insert() fill. ordered_strings and ordered_string_kv are the
// string_view forms, and the DEFINE_*ORDERED_STRING* macros declare one with
// its backing array in one line, as PhotonLibOS declares them. The array must
// outlive the span. Pure computation: any vCPU or thread, never yields; not
// synchronized, so one writer at a time.
//
// Differences from PhotonLibOS: doc/compat.md#commonordered_spanh
// An unordered initial array stays a precondition (asserted in debug builds):
// the elements are the caller's and may be const. Added: free_slots().
#pragma once
#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cinttypes>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <utility>

#include <photon/common/span.h>
#include <photon/common/string_view.h>
#include <photon/common/utility.h>

namespace photon {

// Initialize it only with an array already ordered by Less.
template <typename T, typename Less = std::less<T>>
class ordered_span : public ::tcb::span<T> {
    size_t free_ = 0;  // unused slots right after the last element

public:
    using base = ::tcb::span<T>;
    using base::operator=;

    ordered_span() = default;

    template <size_t N>
    constexpr ordered_span(const T (&arr)[N], size_t free = 0) : ordered_span(arr, N, free) {}

    // n slots at arr, of which the last `free` are unused.
    constexpr ordered_span(const T* arr, size_t n, size_t free = 0)
        : base(const_cast<T*>(arr), free <= n ? n - free : 0), free_(free <= n ? free : n) {
        assert(ordered(this->data(), this->size()));
    }

    constexpr ordered_span(const T* begin, const T* end, size_t free = 0)
        : ordered_span(begin, begin <= end ? static_cast<size_t>(end - begin) : 0, free) {}

    constexpr bool ordered(const T* p, size_t n) const {
        for (size_t i = 1; i < n; ++i)
            if (Less()(p[i], p[i - 1])) return false;
        return true;
    }

    // Unused slots left for append() and insert().
    size_t free_slots() const { return free_; }

    // Adds val at the end. -1 with ENOBUFS if no slot is free, EINVAL if val sorts
    // before the last element; the span is then unchanged.
    int append(const T& val) {
        if (!free_) return errno = ENOBUFS, -1;
        if (!this->empty() && Less()(val, this->back())) return errno = EINVAL, -1;
        grow();
        this->back() = val;
        return 0;
    }

    // Adds val at its sorted place, after any equal elements. -1 with ENOBUFS if no
    // slot is free; the span is then unchanged.
    int insert(const T& val) {
        if (!free_) return errno = ENOBUFS, -1;
        grow();
        // Only elements greater than val move, so val may even be one of ours.
        T* arr = this->data();
        size_t i = this->size() - 1;
        for (; i && Less()(val, arr[i - 1]); --i) arr[i] = std::move(arr[i - 1]);
        arr[i] = val;
        return 0;
    }

    using typename base::iterator;

    // The first element equivalent to s, or end().
    template <typename P>
    iterator find(const P& s) const {
        Less less;
        auto it = std::lower_bound(this->begin(), this->end(), s, less);
        return (it != this->end() && !less(s, *it)) ? it : this->end();
    }

    // 1 if an element equivalent to s exists, else 0 (elements need not be unique).
    template <typename P>
    size_t count(const P& s) const {
        return find(s) != this->end();
    }

private:
    void grow() {
        free_--;
        static_cast<base&>(*this) = base(this->data(), this->size() + 1);
    }
};

using ordered_strings = ordered_span<std::string_view>;

using SKV = std::pair<std::string_view, std::string_view>;

// Orders key-value pairs by key, and lets find() take a bare key.
struct SKVLess {
    bool operator()(const SKV& a, const SKV& b) const { return a.first < b.first; }
    bool operator()(const SKV& a, std::string_view b) const { return a.first < b; }
    bool operator()(std::string_view a, const SKV& b) const { return a < b.first; }
};

class ordered_string_kv : public ordered_span<SKV, SKVLess> {
public:
    using base = ordered_span<SKV, SKVLess>;
    using base::base;
    using base::operator[];
    using base::operator=;

    // Spelled out as well: some GCC versions miss the inherited array constructor.
    template <size_t N>
    constexpr ordered_string_kv(const SKV (&arr)[N], size_t free = 0) : base(arr, N, free) {}

    // The value of key s; an empty view if s is absent.
    std::string_view operator[](std::string_view s) const {
        auto it = this->find(s);
        return (it == end()) ? std::string_view() : it->second;
    }
};

namespace detail {
// Copies src to the front of dst and returns dst: the appendable macros use it to
// evaluate their initializer list once.
template <typename T, size_t N, size_t M>
T (&fill_front(T (&dst)[M], T (&src)[N]))
[M] {
    static_assert(N <= M, "fill_front: destination too small");
    std::copy(src, src + N, dst);
    return dst;
}
}  // namespace detail

}  // namespace photon

#define DEFINE_ORDERED_STRINGS(name, ...)                      \
    std::string_view _CONCAT(__a__, __LINE__)[] = __VA_ARGS__; \
    ::photon::ordered_strings name(_CONCAT(__a__, __LINE__));

#define DEFINE_APPENDABLE_ORDERED_STRINGS(name, free, ...)                           \
    std::string_view _CONCAT(_a_, __LINE__)[] = __VA_ARGS__;                         \
    std::string_view _CONCAT(__a__, __LINE__)[LEN(_CONCAT(_a_, __LINE__)) + (free)]; \
    ::photon::ordered_strings name(                                                  \
        ::photon::detail::fill_front(_CONCAT(__a__, __LINE__), _CONCAT(_a_, __LINE__)), (free));

#define DEFINE_CONST_STATIC_ORDERED_STRINGS(name, ...)                      \
    const static std::string_view _CONCAT(__a__, __LINE__)[] = __VA_ARGS__; \
    const static ::photon::ordered_strings name(_CONCAT(__a__, __LINE__));

#define DEFINE_ORDERED_STRING_KV(name, ...)                 \
    ::photon::SKV _CONCAT(__a__, __LINE__)[] = __VA_ARGS__; \
    ::photon::ordered_string_kv name(_CONCAT(__a__, __LINE__));

#define DEFINE_APPENDABLE_ORDERED_STRING_KV(name, free, ...)                      \
    ::photon::SKV _CONCAT(_a_, __LINE__)[] = __VA_ARGS__;                         \
    ::photon::SKV _CONCAT(__a__, __LINE__)[LEN(_CONCAT(_a_, __LINE__)) + (free)]; \
    ::photon::ordered_string_kv name(                                             \
        ::photon::detail::fill_front(_CONCAT(__a__, __LINE__), _CONCAT(_a_, __LINE__)), (free));

#define DEFINE_CONST_STATIC_ORDERED_STRING_KV(name, ...)                 \
    const static ::photon::SKV _CONCAT(__a__, __LINE__)[] = __VA_ARGS__; \
    const static ::photon::ordered_string_kv name(_CONCAT(__a__, __LINE__));
