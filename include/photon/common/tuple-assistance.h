// tuple_assistance: callable<F> (return and argument types of a function,
// function pointer, member pointer or functor), apply(f, tuple) that converts
// each element to the type f's parameter declares, and enumerate(p, tuple)
// that calls p.proc() on each element in order, as PhotonLibOS declares them.
// Pure compile-time helpers: any vCPU or thread; apply/enumerate yield only
// if the called code does.
//
// Differences from PhotonLibOS: doc/compat.md#commontuple-assistanceh
#pragma once

#include <cstddef>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

#include <photon/common/detail/std17.h>

namespace tuple_assistance {

template <class F>
struct callable;

template <class R, class... Args>
struct callable<R(Args...)> {
    using return_type = R;
    using arguments = std::tuple<Args...>;
};

template <class R, class... Args>
struct callable<R (*)(Args...)> : public callable<R(Args...)> {};

// noexcept is part of a function's type from C++17 on; before, these would redefine the above.
#ifdef __cpp_noexcept_function_type
template <class R, class... Args>
struct callable<R(Args...) noexcept> : public callable<R(Args...)> {};

template <class R, class... Args>
struct callable<R (*)(Args...) noexcept> : public callable<R(Args...)> {};
#endif

// Member functions take the object first, as C& (const ones too, as in Photon).
template <class C, class R, class... Args>
struct callable<R (C::*)(Args...)> : public callable<R(C&, Args...)> {};

template <class C, class R, class... Args>
struct callable<R (C::*)(Args...) const> : public callable<R(C&, Args...)> {};

#ifdef __cpp_noexcept_function_type
template <class C, class R, class... Args>
struct callable<R (C::*)(Args...) noexcept> : public callable<R(C&, Args...)> {};

template <class C, class R, class... Args>
struct callable<R (C::*)(Args...) const noexcept> : public callable<R(C&, Args...)> {};
#endif

// Member object pointer. A member function type left over here (ref- or
// volatile-qualified) gets no signature rather than an ill-formed one.
template <class R, class C, bool = std::is_function<R>::value>
struct __member_object_callable : public callable<R(C&)> {};

template <class R, class C>
struct __member_object_callable<R, C, true> {};

template <class C, class R>
struct callable<R(C::*)> : public __member_object_callable<R, C> {};

template <typename T>
struct __remove_first_type_in_tuple {};

template <typename T, typename... Ts>
struct __remove_first_type_in_tuple<std::tuple<T, Ts...>> {
    typedef std::tuple<Ts...> type;
};

// A functor with exactly one, non-template operator(); empty otherwise, so that
// `typename callable<F>::arguments` is a substitution failure, not a hard error.
template <class F, class = void>
struct __functor_callable {};

template <class F>
struct __functor_callable<
    F, photon::detail::void_t<typename callable<decltype(&F::operator())>::arguments>> {
    using call_type = callable<decltype(&F::operator())>;
    using return_type = typename call_type::return_type;
    using arguments = typename __remove_first_type_in_tuple<typename call_type::arguments>::type;
};

template <class F>
struct callable : public __functor_callable<F> {};

template <class F>
struct callable<F&> : public callable<F> {};

template <class F>
struct callable<F&&> : public callable<F> {};

template <class F, class = void>
struct __has_signature : std::false_type {};

template <class F>
struct __has_signature<F, photon::detail::void_t<typename callable<F>::arguments>>
    : std::true_type {};

// How element I of Tuple is handed to a parameter of type P: as an lvalue when it may
// not be consumed (lvalue tuple, or a reference element) and P copies it anyway;
// otherwise as P&& (forwarding), as Photon always did.
template <typename P, typename Tuple, std::size_t I>
struct __pass {
    using elem = std::tuple_element_t<I, std::remove_reference_t<Tuple>>;
    using elem_lvalue = decltype(std::get<I>(std::declval<Tuple&>()));
    static constexpr bool keep_source =
        std::is_lvalue_reference<Tuple>::value || std::is_lvalue_reference<elem>::value;
    using type = std::conditional_t<keep_source && !std::is_reference<P>::value &&
                                        std::is_constructible<P, elem_lvalue>::value,
                                    elem_lvalue, P&&>;
};

// std::invoke's rules (member pointers too), constexpr unlike std::invoke before C++20.
template <typename F, typename... As>
constexpr decltype(auto) __call_with(F&& f, As&&... as) {
    return photon::detail::invoke(std::forward<F>(f), std::forward<As>(as)...);
}

// f has one signature: each element converted to its parameter's type.
template <typename F, typename Tuple, std::size_t... I>
constexpr inline decltype(auto) apply_impl(std::true_type, F&& f, Tuple&& t,
                                           std::index_sequence<I...>) {
    using Args = typename callable<F>::arguments;
    return tuple_assistance::__call_with(
        std::forward<F>(f),
        static_cast<typename __pass<std::tuple_element_t<I, Args>, Tuple, I>::type>(
            std::get<I>(t))...);
}

// f is generic or overloaded: std::apply's rules.
template <typename F, typename Tuple, std::size_t... I>
constexpr inline decltype(auto) apply_impl(std::false_type, F&& f, Tuple&& t,
                                           std::index_sequence<I...>) {
    return tuple_assistance::__call_with(std::forward<F>(f),
                                         std::get<I>(std::forward<Tuple>(t))...);
}

// Calls f with the elements of t, each converted to the matching parameter type.
template <typename F, typename Tuple>
constexpr inline decltype(auto) apply(F&& f, Tuple&& t) {
    return apply_impl(
        __has_signature<F>(), std::forward<F>(f), std::forward<Tuple>(t),
        std::make_index_sequence<std::tuple_size<std::remove_reference_t<Tuple>>::value>{});
}

template <typename P, size_t I, typename... Ts>
struct do_enumerate;

template <typename P, size_t I, typename... Ts>
struct do_enumerate<P, I, std::tuple<Ts...>> {
    static_assert(0 < I && I < sizeof...(Ts), "do_enumerate index out of range");
    static void proc(const P& p, std::tuple<Ts...>& t) {
        do_enumerate<P, I - 1, std::tuple<Ts...>>::proc(p, t);
        p.proc(std::get<I>(t));
    }
};

template <typename P, typename... Ts>
struct do_enumerate<P, 0, std::tuple<Ts...>> {
    static void proc(const P& p, std::tuple<Ts...>& t) { p.proc(std::get<0>(t)); }
};

// Calls p.proc(element) for each element of t, first to last.
template <typename P, typename... Ts>
inline void enumerate(const P& p, std::tuple<Ts...>& t) {
    do_enumerate<P, sizeof...(Ts) - 1, std::tuple<Ts...>>::proc(p, t);
}

template <typename P>
inline void enumerate(const P&, std::tuple<>&) {}

}  // namespace tuple_assistance
