// The few C++17 library pieces photon's public headers use, written in C++14 so that those
// headers compile for C++14 programs: void_t, invoke, invoke_result_t, apply, all_true and
// PHOTON_EXPAND_PACK (for folds), and maybe<T> for std::optional, with
// std::'s meaning (invoke: member pointers on objects, pointers and std::ref's; apply: the
// elements of a tuple as the arguments). One definition in every mode, so a C++14 program
// and photon (built as C++17) instantiate the same inline code.
#pragma once

#include <cstddef>
#include <functional>
#include <new>
#include <tuple>
#include <type_traits>
#include <utility>

namespace photon {
namespace detail {

// Through a struct: an unused alias parameter did not always take part in SFINAE (CWG 1558).
template <typename... Ts>
struct make_void {
    using type = void;
};
template <typename... Ts>
using void_t = typename make_void<Ts...>::type;

// The object a member pointer of C is applied to: o itself, or what o points to.
template <typename C, typename O,
          typename std::enable_if<std::is_base_of<C, std::decay_t<O>>::value, int>::type = 0>
constexpr O&& invoke_object(O&& o) noexcept {
    return std::forward<O>(o);
}
template <typename C, typename O,
          typename std::enable_if<!std::is_base_of<C, std::decay_t<O>>::value, int>::type = 0>
constexpr auto invoke_object(O&& o) -> decltype(*std::forward<O>(o)) {
    return *std::forward<O>(o);
}
template <typename C, typename T>
constexpr T& invoke_object(std::reference_wrapper<T> o) noexcept {
    return o.get();
}

template <typename F, typename... As,
          typename std::enable_if<!std::is_member_pointer<std::decay_t<F>>::value, int>::type = 0>
constexpr auto invoke(F&& f, As&&... as) -> decltype(std::forward<F>(f)(std::forward<As>(as)...)) {
    return std::forward<F>(f)(std::forward<As>(as)...);
}
template <typename M, typename C, typename O, typename... As,
          typename std::enable_if<std::is_function<M>::value, int>::type = 0>
constexpr auto invoke(M C::*pm, O&& o, As&&... as)
    -> decltype((invoke_object<C>(std::forward<O>(o)).*pm)(std::forward<As>(as)...)) {
    return (invoke_object<C>(std::forward<O>(o)).*pm)(std::forward<As>(as)...);
}
template <typename M, typename C, typename O,
          typename std::enable_if<!std::is_function<M>::value, int>::type = 0>
constexpr auto invoke(M C::*pm, O&& o) -> decltype(invoke_object<C>(std::forward<O>(o)).*pm) {
    return invoke_object<C>(std::forward<O>(o)).*pm;
}

template <typename F, typename... As>
using invoke_result_t = decltype(detail::invoke(std::declval<F>(), std::declval<As>()...));

// Whether every one of Bs is true (C++17: (Bs && ...)).
template <bool... Bs>
struct all_true;
template <>
struct all_true<> : std::true_type {};
template <bool B, bool... Bs>
struct all_true<B, Bs...> : std::integral_constant<bool, B && all_true<Bs...>::value> {};

// Evaluates expr, which names a parameter pack, for each element in order (C++17: (expr, ...)).
using expand_pack = int[];
#define PHOTON_EXPAND_PACK(expr) \
    (void)::photon::detail::expand_pack { 0, ((expr), void(), 0)... }

template <typename F, typename Tuple, std::size_t... I>
constexpr decltype(auto) apply_impl(F&& f, Tuple&& t, std::index_sequence<I...>) {
    return detail::invoke(std::forward<F>(f), std::get<I>(std::forward<Tuple>(t))...);
}
template <typename F, typename Tuple>
constexpr decltype(auto) apply(F&& f, Tuple&& t) {
    return detail::apply_impl(
        std::forward<F>(f), std::forward<Tuple>(t),
        std::make_index_sequence<std::tuple_size<std::remove_reference_t<Tuple>>::value>{});
}

// A T constructed in place, or nothing: the part of std::optional these headers use. Neither
// copied nor moved (what it holds may be neither).
template <typename T>
class maybe {
public:
    maybe() noexcept {}
    maybe(const maybe&) = delete;
    maybe& operator=(const maybe&) = delete;
    ~maybe() { reset(); }

    template <typename... As>
    T& emplace(As&&... as) {
        reset();
        new (static_cast<void*>(space_)) T(std::forward<As>(as)...);
        has_ = true;
        return **this;
    }
    void reset() noexcept {
        if (has_) (**this).~T();
        has_ = false;
    }
    bool has_value() const noexcept { return has_; }
    explicit operator bool() const noexcept { return has_; }
    T& operator*() noexcept { return *reinterpret_cast<T*>(space_); }
    const T& operator*() const noexcept { return *reinterpret_cast<const T*>(space_); }
    T* operator->() noexcept { return reinterpret_cast<T*>(space_); }
    const T* operator->() const noexcept { return reinterpret_cast<const T*>(space_); }

private:
    alignas(T) unsigned char space_[sizeof(T)];
    bool has_ = false;
};

}  // namespace detail
}  // namespace photon
