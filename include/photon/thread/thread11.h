// thread_create11: create a coroutine that runs any callable with arguments.
// The callable and the arguments are kept in the new coroutine's own stack
// (no heap allocation for up to 64 KiB) and destroyed when it returns; the
// result is discarded and the coroutine is not joinable (see
// thread_enable_join). Returns nullptr with errno as thread_create().
//
// Arguments, as Photon keeps them: for a function pointer or a member
// function pointer (whose first argument is the object pointer), each
// argument is converted at creation to the parameter's type, and a
// reference parameter given an lvalue of its type (or std::ref/std::cref)
// refers to the caller's object, which must outlive the coroutine's use of
// it. Other callables get decayed copies (std::ref for references), moved
// into the call.
//
// Differences from PhotonLibOS: doc/compat.md#threadthread11h
#pragma once

#include <cerrno>
#include <functional>
#include <new>
#include <tuple>
#include <type_traits>
#include <utility>

#include <photon/common/PMF.h>
#include <photon/common/callback.h>
#include <photon/common/detail/std17.h>
#include <photon/common/tuple-assistance.h>
#include <photon/common/utility.h>
#include <photon/thread/thread.h>

namespace photon {

namespace detail {

// ---- what a function pointer takes ----------------------------------------

template <typename... P>
struct param_list {};

// params: the parameter types of F after the object (member functions);
// absent when F is not a (member) function pointer with a fixed list.
template <typename F>
struct fn_params {};
template <typename R, typename... P>
struct fn_params<R (*)(P...)> {
    using params = param_list<P...>;
};
// noexcept is part of a function's type from C++17 on; before, these would redefine the others.
#ifdef __cpp_noexcept_function_type
template <typename R, typename... P>
struct fn_params<R (*)(P...) noexcept> : fn_params<R (*)(P...)> {};
#define PHOTON_THREAD11_NOEXCEPT_MEMBER(QUALS)        \
    template <typename R, typename C, typename... P>  \
    struct fn_params<R (C::*)(P...) QUALS noexcept> { \
        using params = param_list<P...>;              \
    };
#else
#define PHOTON_THREAD11_NOEXCEPT_MEMBER(QUALS)
#endif

#define PHOTON_THREAD11_MEMBER(QUALS)                \
    template <typename R, typename C, typename... P> \
    struct fn_params<R (C::*)(P...) QUALS> {         \
        using params = param_list<P...>;             \
    };                                               \
    PHOTON_THREAD11_NOEXCEPT_MEMBER(QUALS)
PHOTON_THREAD11_MEMBER()
PHOTON_THREAD11_MEMBER(const)
PHOTON_THREAD11_MEMBER(&)
PHOTON_THREAD11_MEMBER(const&)
PHOTON_THREAD11_MEMBER(volatile)
PHOTON_THREAD11_MEMBER(const volatile)
#undef PHOTON_THREAD11_MEMBER
#undef PHOTON_THREAD11_NOEXCEPT_MEMBER

template <typename T>
struct wrapped {  // the U of a std::reference_wrapper<U>, else void
    using type = void;
};
template <typename U>
struct wrapped<std::reference_wrapper<U>> {
    using type = std::remove_cv_t<U>;
};

// What argument type A refers to, if it is an lvalue or a std::ref/cref.
template <typename A, typename W = typename wrapped<std::decay_t<A>>::type>
using ref_target_t = std::conditional_t<
    !std::is_void<W>::value, W,
    std::conditional_t<std::is_lvalue_reference<A>::value, std::decay_t<A>, void>>;

// An lvalue reference parameter P keeps a reference when given an lvalue of
// its own type (or a derived one); anything else is kept by value.
template <typename P, typename A, typename Target = ref_target_t<A>>
struct keeps_reference
    : std::integral_constant<bool, std::is_lvalue_reference<P>::value &&
                                       !std::is_void<Target>::value &&
                                       (std::is_same<std::decay_t<P>, Target>::value ||
                                        std::is_base_of<std::decay_t<P>, Target>::value)> {};

template <typename P, typename A>
using kept_t = std::conditional_t<keeps_reference<P, A>::value ||
                                      (std::is_lvalue_reference<P>::value &&
                                       !std::is_const<std::remove_reference_t<P>>::value),
                                  P, std::decay_t<P>>;

// ---- the coroutine's side ---------------------------------------------------

// Tuple is (callable, kept arguments...); Ps are the parameters the kept
// arguments are passed as (void: move them, for generic callables).
template <typename... Ps>
struct call_with {
    template <typename Tuple, size_t... I>
    static void call(Tuple& t, std::index_sequence<I...>) {
        detail::invoke(std::move(std::get<0>(t)), std::forward<Ps>(std::get<I + 1>(t))...);
    }
};
template <>
struct call_with<void> {
    template <typename Tuple, size_t... I>
    static void call(Tuple& t, std::index_sequence<I...>) {
        detail::invoke(std::move(std::get<0>(t)), std::move(std::get<I + 1>(t))...);
    }
};

template <typename Call, typename Tuple>
void* thread11_run(Tuple* t) {
    {
        Tuple local(std::move(*t));  // the stub owns its callable from here
        t->~Tuple();
        Call::call(local, std::make_index_sequence<std::tuple_size<Tuple>::value - 1>());
    }
    return nullptr;
}

// The tuple lives in the coroutine's reserved space.
template <typename Call, typename Tuple>
void* thread11_stub(void*) {
    return thread11_run<Call>(thread_reserved_space<Tuple>(CURRENT));
}

template <typename Call, typename Tuple>
void* thread11_heap_stub(void* arg) {
    auto t = static_cast<Tuple*>(arg);
    thread11_run<Call>(t);
    ::operator delete(t);
    return nullptr;
}

constexpr size_t kThread11MaxReserved = 64 * 1024;

template <typename Call, typename Tuple, typename... ARGS>
thread* thread_create11_tuple(uint64_t stack_size, ARGS&&... args) {
    if (sizeof(Tuple) > kThread11MaxReserved) {
        void* mem = ::operator new(sizeof(Tuple), std::nothrow);
        if (!mem) return errno = ENOMEM, nullptr;
        auto t = new (mem) Tuple(std::forward<ARGS>(args)...);
        thread* th = thread_create(&thread11_heap_stub<Call, Tuple>, t, stack_size);
        if (!th) {
            t->~Tuple();
            ::operator delete(mem);
        }
        return th;
    }
    // Filled in before the new coroutine first runs.
    thread* th = thread_create(&thread11_stub<Call, Tuple>, nullptr, stack_size, sizeof(Tuple));
    if (!th) return nullptr;
    new (thread_reserved_space<Tuple>(th)) Tuple(std::forward<ARGS>(args)...);
    return th;
}

// Generic callables: decayed copies.
template <typename F, typename... ARGS>
thread* thread_create11_impl(std::false_type, uint64_t stack_size, F&& f, ARGS&&... args) {
    using Tuple = std::tuple<std::decay_t<F>, std::decay_t<ARGS>...>;
    return thread_create11_tuple<call_with<void>, Tuple>(stack_size, std::forward<F>(f),
                                                         std::forward<ARGS>(args)...);
}

// Function pointers: the parameters' types (Photon's rule).
template <typename... Ps, typename F, typename... ARGS>
thread* thread_create11_params(param_list<Ps...>, std::false_type, uint64_t stack_size, F&& f,
                               ARGS&&... args) {
    using Tuple = std::tuple<std::decay_t<F>, kept_t<Ps, ARGS&&>...>;
    return thread_create11_tuple<call_with<Ps...>, Tuple>(stack_size, std::forward<F>(f),
                                                          std::forward<ARGS>(args)...);
}

// Member function pointers: the object pointer, then the parameters.
template <typename... Ps, typename F, typename OBJ, typename... ARGS>
thread* thread_create11_params(param_list<Ps...>, std::true_type, uint64_t stack_size, F&& f,
                               OBJ&& obj, ARGS&&... args) {
    using Tuple = std::tuple<std::decay_t<F>, std::decay_t<OBJ>, kept_t<Ps, ARGS&&>...>;
    using Call = call_with<std::decay_t<OBJ>, Ps...>;
    return thread_create11_tuple<Call, Tuple>(stack_size, std::forward<F>(f),
                                              std::forward<OBJ>(obj), std::forward<ARGS>(args)...);
}

template <typename F, typename = void>
struct has_params : std::false_type {};
template <typename F>
struct has_params<F, detail::void_t<typename fn_params<F>::params>> : std::true_type {};

template <typename Params>
struct count_params;
template <typename... Ps>
struct count_params<param_list<Ps...>> : std::integral_constant<size_t, sizeof...(Ps)> {};

// Whether (F, ARGS...) is a (member) function pointer call with the right
// number of arguments: then the parameters' types decide how they are kept.
template <typename D, size_t NArgs, bool = has_params<D>::value>
struct by_params_of : std::false_type {};
template <typename D, size_t NArgs>
struct by_params_of<D, NArgs, true>
    : std::integral_constant<bool,
                             NArgs == count_params<typename fn_params<D>::params>::value +
                                          (std::is_member_function_pointer<D>::value ? 1 : 0)> {};
template <typename F, typename... ARGS>
constexpr bool by_params() {
    return by_params_of<std::decay_t<F>, sizeof...(ARGS)>::value;
}

template <typename F, typename... ARGS>
thread* thread_create11_impl(std::true_type, uint64_t stack_size, F&& f, ARGS&&... args) {
    using D = std::decay_t<F>;
    return thread_create11_params(typename fn_params<D>::params(),
                                  std::is_member_function_pointer<D>(), stack_size,
                                  std::forward<F>(f), std::forward<ARGS>(args)...);
}

template <typename T>
using not_stack_size = std::enable_if_t<!std::is_integral<std::decay_t<T>>::value, thread*>;

}  // namespace detail

// Photon's traits: whether T is a class object callable with ARGUMENTS.
template <typename T, typename... ARGUMENTS>
using is_callable =
    std::is_constructible<std::function<void(ARGUMENTS...)>,
                          typename std::reference_wrapper<std::remove_reference_t<T>>::type>;

template <typename T, typename... ARGUMENTS>
struct is_functor : std::integral_constant<bool, std::is_class<std::decay_t<T>>::value &&
                                                     is_callable<T, ARGUMENTS...>::value> {};

// f(args...), or (obj->*f)(args...) when f is a member function pointer and
// the first argument an object pointer, on a new coroutine with the given
// stack size.
template <typename F, typename... ARGS>
inline detail::not_stack_size<F> thread_create11(uint64_t stack_size, F&& f, ARGS&&... args) {
    using by_params = std::integral_constant<bool, detail::by_params<F, ARGS...>()>;
    return detail::thread_create11_impl(by_params(), stack_size, std::forward<F>(f),
                                        std::forward<ARGS>(args)...);
}

template <typename F, typename... ARGS>
inline detail::not_stack_size<F> thread_create11(F&& f, ARGS&&... args) {
    return thread_create11(DEFAULT_STACK_SIZE, std::forward<F>(f), std::forward<ARGS>(args)...);
}

}  // namespace photon
