// Small language helpers shared by every photon module: scope guards (DEFER), SFINAE
// shorthands, integer ranges, alignment, ownership-tagged pointers and saturating arithmetic.
// Pure computation: safe on any vCPU or OS thread, never yields (print_stacktrace logs).
//
// Differences from PhotonLibOS: doc/compat.md#commonutilityh
#pragma once
#include <assert.h>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <new>
#include <string>  // PhotonLibOS 0.6's utility.h brought it; its programs rely on that
#include <type_traits>
#include <utility>

#include <photon/common/string_view.h>

#define _unused(x) ((void)(x))

template <typename... Ts>
inline void __unused__(const Ts&...) {}

#define __INLINE__ __attribute__((always_inline))
#define __FORCE_INLINE__ __INLINE__ inline

#define _CONCAT_(a, b) a##b
#define _CONCAT(a, b) _CONCAT_(a, b)

#ifndef likely
constexpr bool likely(bool expr) { return __builtin_expect(expr, true); }
#endif
#ifndef unlikely
constexpr bool unlikely(bool expr) { return __builtin_expect(expr, false); }
#endif

// Runs a callable when it goes out of scope. Neither copyable nor movable, so exactly one guard
// exists and it fires exactly once: make_defer list-initialises its result and DEFER binds it
// to a reference, which needs no copy even before C++17's guaranteed elision.
template <typename F>
class Defer {
public:
    Defer(F fn) : fn_(std::move(fn)) {}
    Defer(const Defer&) = delete;
    Defer& operator=(const Defer&) = delete;
    ~Defer() { fn_(); }
    operator bool() const { return true; }  // lets WITH_Release put it in an `if`

private:
    F fn_;
};

template <typename F>
Defer<F> make_defer(F fn) {
    return {std::move(fn)};
}

// DEFER(stmt): run `stmt` (captured by reference) at scope exit; guards fire in reverse order.
// At most one DEFER per source line.
#define DEFER(...) \
    auto&& _CONCAT(__defer__, __LINE__) __attribute__((unused)) = make_defer([&]() { __VA_ARGS__; })

// WITH(auto x = acquire()) { ... }: scope `x` to the block (RAII types release themselves).
#define WITH(...) if (__VA_ARGS__)
// WITH_Release(auto x = acquire(), release(x)) { ... }: also run `release_expr` on exit.
#define WITH_Release(init_expr, release_expr) \
    if (init_expr)                            \
        if (DEFER(release_expr))

// auto obj = NewObj<T>(ctor args...)->init(init args...): T* when T::init() returns 0 (or
// false), else nullptr with the object deleted. One init() per NewObj.
template <typename T>
class NewObj {
public:
    template <typename... Ts>
    explicit NewObj(Ts&&... xs) : obj_(new (std::nothrow) T(std::forward<Ts>(xs)...)) {}
    NewObj(const NewObj&) = delete;
    NewObj& operator=(const NewObj&) = delete;
    ~NewObj() { delete obj_; }  // init() was never called

    template <typename... Ts>
    T* init(Ts&&... xs) const {
        T* obj = obj_;
        obj_ = nullptr;
        if (!obj) {
            errno = ENOMEM;
            return nullptr;
        }
        if (!obj->init(std::forward<Ts>(xs)...)) return obj;
        delete obj;
        return nullptr;
    }
    const NewObj* operator->() const { return this; }
    NewObj* operator->() { return this; }

private:
    mutable T* obj_;
};

// A [begin, end) view of a plain array, for range-for.
template <typename T>
struct ptr_array_t {
    T* pbegin;
    T* pend;
    T* begin() { return pbegin; }
    T* end() { return pend; }
    T& front() { return pbegin[0]; }
    T& back() { return pend[-1]; }
};

template <typename T>
ptr_array_t<T> ptr_array(T* pbegin, size_t n) {
    return {pbegin, pbegin + n};
}

template <typename T, size_t N>
constexpr size_t LEN(T (&)[N]) {
    return N;
}

template <typename T>
struct is_function_pointer {
    static const bool value =
        std::is_pointer<T>::value && std::is_function<typename std::remove_pointer<T>::type>::value;
};

// template <typename T, ENABLE_IF(cond)>: overloads with different conditions may coexist.
#define ENABLE_IF(...) typename std::enable_if<(__VA_ARGS__), int>::type = 0
#define IS_SAME(T, P) (std::is_same<typename std::remove_cv<T>::type, P>::value)
#define ENABLE_IF_SAME(T, P) ENABLE_IF(IS_SAME(T, P))
#define ENABLE_IF_NOT_SAME(T, P) ENABLE_IF(!IS_SAME(T, P))
#define IS_BASE_OF(A, B) (std::is_base_of<A, B>::value)
#define ENABLE_IF_BASE_OF(A, B) ENABLE_IF(IS_BASE_OF(A, B))
#define ENABLE_IF_NOT_BASE_OF(A, B) ENABLE_IF(!IS_BASE_OF(A, B))
#define IS_POINTER(T) (std::is_pointer<T>::value)
#define ENABLE_IF_POINTER(T) ENABLE_IF(IS_POINTER(T))
#define ENABLE_IF_NOT_POINTER(T) ENABLE_IF(!IS_POINTER(T))

// Powers of two. is_power_of_2(0) is true, as in PhotonLibOS.
inline constexpr bool is_power_of_2(uint64_t x) { return (x & (x - 1)) == 0; }
// floor(log2(x)); x > 0.
inline constexpr uint8_t log2_truncate(size_t x) { return (uint8_t)(63 - __builtin_clzll(x | 1)); }
// log2(x) rounded to the nearest integer (halves up); x > 0.
inline constexpr uint8_t log2_round(size_t x) {
    return (uint8_t)(log2_truncate(x) + (x > 1 && (x >> (log2_truncate(x) - 1) & 1)));
}
// ceil(log2(x)); 0 for x <= 1.
inline constexpr uint8_t log2_round_up(size_t x) {
    return x <= 1 ? 0 : (uint8_t)(log2_truncate(x - 1) + 1);
}
// The smallest power of two >= x (1 for 0); x <= 2^63.
inline constexpr size_t round_up_to_exp2(size_t x) { return size_t(1) << log2_round_up(x); }

// Python-style half-open integer range: for (auto i : xrange(10)), xrange(2, 8), xrange(8, 2, -2).
template <typename INT>
struct xrange_t {
    const INT _begin, _end;
    const int64_t _step;

    struct iterator {
        INT i;
        const xrange_t* _xrange;
        INT operator*() const { return i; }
        iterator& operator++() {
            i = static_cast<INT>(i + _xrange->_step);
            return *this;
        }
        // Range-for asks only "not done yet?"; answering by position stops steps that overshoot.
        bool operator!=(const iterator&) const {
            return _xrange->_step > 0 ? i < _xrange->_end : i > _xrange->_end;
        }
        bool operator==(const iterator& rhs) const { return !(*this != rhs); }
    };
    iterator begin() const { return {_begin, this}; }
    iterator end() const { return {_end, this}; }
};

template <typename T>
inline xrange_t<T> xrange(T begin, T end, int64_t step = 1) {
    static_assert(std::is_integral<T>::value, "xrange needs an integer type");
    return xrange_t<T>{begin, end, step};
}

template <typename T>
inline xrange_t<T> xrange(T end) {
    return xrange<T>(0, end);
}

// Runs the loop body N times, with `i` counting down from N to 1.
#define FOR_LOOP(N) for (auto i = N; i; --i)

// Alignment must be a power of two.
inline constexpr uint64_t align_down(uint64_t x, uint64_t alignment) {
    return x & ~(alignment - 1);
}

inline constexpr uint64_t align_up(uint64_t x, uint64_t alignment) {
    return align_down(x + alignment - 1, alignment);
}

template <typename T>
inline T* align_ptr(T* p, uint64_t alignment) {
    return (T*)align_up((uint64_t)p, alignment);
}

// A char* `name` to `size` bytes aligned to `alignment`, in a stack buffer.
#define ALIGNED_MEM(name, size, alignment)  \
    char __buf##name[(size) + (alignment)]; \
    char* name = align_ptr(__buf##name, alignment);

#define ALIGNED_MEM4K(buf, size) ALIGNED_MEM(buf, size, 4096)

template <typename T>
void safe_delete(T*& obj) {
    delete obj;
    obj = nullptr;
}

// A pointer plus an ownership bit kept in its lowest bit (objects are at least 2-aligned).
class OwnedPtr_Base {
protected:
    void* m_ptr;
    const static uint64_t mask = 1;
    OwnedPtr_Base(void* ptr, bool ownership) {
        assert(((uint64_t)ptr & mask) == 0);
        m_ptr = (void*)((uint64_t)ptr | (uint64_t)ownership);
    }
    void* get() { return (void*)((uint64_t)m_ptr & ~mask); }
    bool owned() { return (uint64_t)m_ptr & mask; }
};

// Deletes the object at destruction if constructed with ownership. Move-only.
template <typename T>
class OwnedPtr : OwnedPtr_Base {
public:
    OwnedPtr(T* ptr, bool ownership) : OwnedPtr_Base(ptr, ownership) {}
    OwnedPtr(const OwnedPtr&) = delete;
    OwnedPtr& operator=(const OwnedPtr&) = delete;
    OwnedPtr(OwnedPtr&& rhs) : OwnedPtr_Base(nullptr, false) { std::swap(m_ptr, rhs.m_ptr); }
    ~OwnedPtr() {
        if (owned()) delete (T*)get();
    }
    T* operator->() { return (T*)get(); }
    operator T*() { return (T*)get(); }
};

// Compares dotted numeric versions ("5.15.2"): result < 0, 0 or > 0 as a is older, equal or
// newer (numerically per component; with an equal prefix, more components is newer). 0, or -1
// with EINVAL if a component is empty or not all digits.
int version_compare(std::string_view a, std::string_view b, int& result);
// version_compare of the running kernel's release (its leading "x.y.z") against dst.
int kernel_version_compare(std::string_view dst, int& result);
// Logs the caller's stack (up to 16 frames) at ALOG_DEBUG.
void print_stacktrace();

namespace photon {

// Saturating addition, no upward overflow
__attribute__((always_inline)) inline uint64_t sat_add(uint64_t x, uint64_t y) {
    uint64_t sum;
    return __builtin_add_overflow(x, y, &sum) ? UINT64_MAX : sum;
}

// Saturating subtraction, no downward overflow
__attribute__((always_inline)) inline uint64_t sat_sub(uint64_t x, uint64_t y) {
    return x > y ? x - y : 0;
}

}  // namespace photon
