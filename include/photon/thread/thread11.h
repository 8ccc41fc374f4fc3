// thread_create11: create a coroutine that runs any callable with arguments,
// as std::thread does. The callable and the arguments are decay-copied into
// the new coroutine's own stack (no heap allocation for up to 64 KiB) and
// destroyed when it returns; use std::ref to pass references. The result is
// discarded and the coroutine is not joinable (see thread_enable_join).
#pragma once

#include <functional>
#include <new>
#include <tuple>
#include <type_traits>
#include <utility>

#include <photon/thread/thread.h>

namespace photon {

namespace detail {

template <typename Tuple>
void* thread11_run(Tuple* t) {
    {
        Tuple local(std::move(*t));  // the stub owns its callable from here
        t->~Tuple();
        std::apply([](auto& f, auto&... a) { std::invoke(std::move(f), std::move(a)...); }, local);
    }
    return nullptr;
}

// The tuple lives in the coroutine's reserved space.
template <typename Tuple>
void* thread11_stub(void*) {
    return thread11_run(thread_reserved_space<Tuple>(CURRENT));
}

template <typename Tuple>
void* thread11_heap_stub(void* arg) {
    auto t = static_cast<Tuple*>(arg);
    thread11_run(t);
    ::operator delete(t);
    return nullptr;
}

constexpr size_t kThread11MaxReserved = 64 * 1024;

template <typename F, typename... ARGS>
thread* thread_create11_impl(uint64_t stack_size, F&& f, ARGS&&... args) {
    using Tuple = std::tuple<std::decay_t<F>, std::decay_t<ARGS>...>;
    if (sizeof(Tuple) > kThread11MaxReserved) {
        void* mem = ::operator new(sizeof(Tuple), std::nothrow);
        if (!mem) return errno = ENOMEM, nullptr;
        auto t = new (mem) Tuple(std::forward<F>(f), std::forward<ARGS>(args)...);
        thread* th = thread_create(&thread11_heap_stub<Tuple>, t, stack_size);
        if (!th) {
            t->~Tuple();
            ::operator delete(mem);
        }
        return th;
    }
    // Filled in before the new coroutine first runs.
    thread* th = thread_create(&thread11_stub<Tuple>, nullptr, stack_size, sizeof(Tuple));
    if (!th) return nullptr;
    new (thread_reserved_space<Tuple>(th)) Tuple(std::forward<F>(f), std::forward<ARGS>(args)...);
    return th;
}

template <typename T>
using not_stack_size = std::enable_if_t<!std::is_integral<std::decay_t<T>>::value, thread*>;

}  // namespace detail

// f(args...), or (obj->*f)(args...) when f is a member function pointer and
// the first argument an object pointer, on a new coroutine with the given
// stack size.
template <typename F, typename... ARGS>
inline detail::not_stack_size<F> thread_create11(uint64_t stack_size, F&& f, ARGS&&... args) {
    return detail::thread_create11_impl(stack_size, std::forward<F>(f),
                                        std::forward<ARGS>(args)...);
}

template <typename F, typename... ARGS>
inline detail::not_stack_size<F> thread_create11(F&& f, ARGS&&... args) {
    return detail::thread_create11_impl(DEFAULT_STACK_SIZE, std::forward<F>(f),
                                        std::forward<ARGS>(args)...);
}
}  // namespace photon
