// Small language helpers shared by every photon module: scope guards (DEFER), SFINAE
// shorthands, integer ranges, alignment and saturating arithmetic.
// Pure computation: safe on any vCPU or OS thread, never yields.
#pragma once
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>

#define _unused(x) ((void)(x))
#define __INLINE__ __attribute__((always_inline))
#define __FORCE_INLINE__ __INLINE__ inline

#define _CONCAT_(a, b) a##b
#define _CONCAT(a, b) _CONCAT_(a, b)

#ifndef likely
#define likely(x) __builtin_expect(!!(x), 1)
#endif
#ifndef unlikely
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif

// Runs a callable when it goes out of scope. Neither copyable nor movable: make_defer relies on
// C++17 guaranteed copy elision, so exactly one guard exists and it fires exactly once.
template <typename F>
class Defer {
public:
    explicit Defer(F fn) : fn_(std::move(fn)) {}
    Defer(const Defer&) = delete;
    Defer& operator=(const Defer&) = delete;
    ~Defer() { fn_(); }
    explicit operator bool() const { return true; }  // lets WITH_Release put it in an `if`

private:
    F fn_;
};

template <typename F>
Defer<F> make_defer(F fn) {
    return Defer<F>(std::move(fn));
}

// DEFER(stmt): run `stmt` (captured by reference) at scope exit; guards fire in reverse order.
// At most one DEFER per source line.
#define DEFER(...) auto _CONCAT(photon_defer_, __LINE__) = make_defer([&]() { __VA_ARGS__; })

// WITH(auto x = acquire()) { ... }: scope `x` to the block (RAII types release themselves).
#define WITH(...) if (__VA_ARGS__)
// WITH_Release(auto x = acquire(), release(x)) { ... }: also run `release_expr` on exit.
#define WITH_Release(init_expr, release_expr) \
    if (init_expr)                            \
        if (DEFER(release_expr))

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

template <typename T, size_t N>
constexpr size_t LEN(T (&)[N]) {
    return N;
}

// Alignment must be a power of two.
template <typename T, typename A>
constexpr T align_down(T x, A alignment) {
    return x & ~static_cast<T>(alignment - 1);
}

template <typename T, typename A>
constexpr T align_up(T x, A alignment) {
    return align_down(static_cast<T>(x + static_cast<T>(alignment - 1)), alignment);
}

template <typename T>
void safe_delete(T*& p) {
    delete p;
    p = nullptr;
}

// Powers of two, as PhotonLibOS names them. is_power_of_2(0) is true there too.
inline constexpr bool is_power_of_2(uint64_t x) { return (x & (x - 1)) == 0; }
// floor(log2(x)); x > 0.
inline constexpr uint8_t log2_truncate(size_t x) { return (uint8_t)(63 - __builtin_clzll(x | 1)); }
// log2(x) rounded to the nearest integer (halves up); x > 0.
inline constexpr uint8_t log2_round(size_t x) {
    return (uint8_t)(log2_truncate(x) + (x > 1 && (x >> (log2_truncate(x) - 1) & 1)));
}
// ceil(log2(x)); 0 for x <= 1 (PhotonLibOS gave 1 for x == 1).
inline constexpr uint8_t log2_round_up(size_t x) {
    return x <= 1 ? 0 : (uint8_t)(log2_truncate(x - 1) + 1);
}
// The smallest power of two >= x (1 for 0); x <= 2^63.
inline constexpr size_t round_up_to_exp2(size_t x) { return size_t(1) << log2_round_up(x); }

// Python-style half-open integer range: for (auto i : xrange(10)), xrange(2, 8), xrange(8, 2, -2).
template <typename Int>
struct xrange_t {
    Int begin_, end_;
    int64_t step_;

    struct iterator {
        Int i;
        const xrange_t* range;
        Int operator*() const { return i; }
        iterator& operator++() {
            i = static_cast<Int>(i + range->step_);
            return *this;
        }
        // Range-for only asks "not done yet?"; answering it this way stops steps that overshoot.
        bool operator!=(const iterator&) const {
            return range->step_ > 0 ? i < range->end_ : i > range->end_;
        }
    };
    iterator begin() const { return {begin_, this}; }
    iterator end() const { return {end_, this}; }
};

template <typename Int, ENABLE_IF(std::is_integral<Int>::value)>
xrange_t<Int> xrange(Int begin, Int end, int64_t step = 1) {
    return {begin, end, step};
}

template <typename Int, ENABLE_IF(std::is_integral<Int>::value)>
xrange_t<Int> xrange(Int end) {
    return {0, end, 1};
}

namespace photon {

inline uint64_t sat_add(uint64_t a, uint64_t b) {
    uint64_t sum;
    return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

inline uint64_t sat_sub(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

}  // namespace photon
