// Callback-style asynchronous operations, as PhotonLibOS declares them
// (global namespace). An async operation takes its arguments plus a
// `Done<T> done` callback and a `timeout`; it returns at once, and calls
// done(&result) exactly once when it completes, from whatever thread does the
// work. AsyncResult<T> carries the object, an operation id, the result and
// errno. DEFINE_ASYNC / OVERRIDE_ASYNC / UNIMPLEMENTED_ASYNC declare such
// methods in interfaces derived from IAsyncBase.
//
// AsyncFuncWrapper and AsyncFuncWrapper_Generic turn an async operation into
// a blocking call for a photon coroutine: call() parks the coroutine (other
// coroutines of its vCPU keep running; on an OS thread that is not a vCPU it
// blocks the thread) until `done` runs, then returns the result and sets errno
// on failure. The operation owns its timeout: call() waits for `done`.
//
// Differences from PhotonLibOS: doc/compat.md#commonasynch
// Floor: thread (tools/floors.txt), above its folder's: it is built on photon's coroutines.
#pragma once
#include <cassert>
#include <cerrno>
#include <cinttypes>
#include <sys/types.h>
#include <tuple>
#include <type_traits>
#include <utility>

#include <photon/common/callback.h>
#include <photon/common/detail/std17.h>
#include <photon/common/object.h>
#include <photon/thread/awaiter.h>
#include <photon/thread/thread11.h>

template <typename T>
struct _AsyncResult {
    typedef T result_type;
    void* object = nullptr;  // the object that performed the operation
    uint32_t operation = 0;  // the operation's id
    int error_number = 0;    // errno, meaningful only on failure
    T result{};              // the operation's result
    T get_result() { return result; }
};

template <typename T>
struct AsyncResult : public _AsyncResult<T> {
    bool is_failure() { return this->result < 0; }
    static T failure() { return -1; }
};

// Void operations carry a dummy char result and never fail by value.
template <>
struct AsyncResult<void> : public _AsyncResult<char> {
    bool is_failure() { return false; }
    static char failure() { return 0; }
    void get_result() {}
};

template <typename Obj>
struct AsyncResult<Obj*> : public _AsyncResult<Obj*> {
    bool is_failure() { return this->result == nullptr; }
    static Obj* failure() { return nullptr; }
};

// Called once with the operation's AsyncResult<T> when it completes.
template <typename T>
using Done = Callback<AsyncResult<T>*>;

template <typename T>
struct done_traits;

template <typename T>
struct done_traits<Done<T>> {
    using result_type = T;
};

// A member function of T taking ARGS..., then Done<R> and a timeout.
template <typename R, typename T, typename... ARGS>
using AsyncFunc = void (T::*)(ARGS..., Done<R>, uint64_t timeout);

template <typename F>
struct af_traits;

template <typename T, typename... ARGS>
struct af_traits<void (T::*)(ARGS...)> {
    using interface_type = T;
    using args_type = std::tuple<ARGS...>;
    const static int nargs = sizeof...(ARGS);
    static_assert(nargs >= 2, "an async function ends with (Done<R> done, uint64_t timeout)");
    using done_type = typename std::tuple_element<nargs - 2, args_type>::type;
    using result_type = typename done_traits<done_type>::result_type;
};

// The two trailing arguments of every async function.
#define EXPAND_FUNC(T, OP, ...) \
    virtual void OP(__VA_ARGS__, Done<T> done, [[maybe_unused]] uint64_t timeout = -1)
#define EXPAND_FUNC0(T, OP) virtual void OP(Done<T> done, uint64_t timeout = -1)

// Pure virtual async functions of an interface.
#define DEFINE_ASYNC(T, OP, ...) EXPAND_FUNC(T, OP, __VA_ARGS__) = 0
#define DEFINE_ASYNC0(T, OP) EXPAND_FUNC0(T, OP) = 0

// Overrides in concrete classes.
#define OVERRIDE_ASYNC(T, OP, ...) EXPAND_FUNC(T, OP, __VA_ARGS__) override
#define OVERRIDE_ASYNC0(T, OP) EXPAND_FUNC0(T, OP) override

#define UNIMPLEMENTED_(T) \
    { callback_umimplemented(done); }

// Async functions that complete at once with failure and ENOSYS.
#define UNIMPLEMENTED_ASYNC(T, OP, ...) EXPAND_FUNC(T, OP, __VA_ARGS__) UNIMPLEMENTED_(T)
#define UNIMPLEMENTED_ASYNC0(T, OP) EXPAND_FUNC0(T, OP) UNIMPLEMENTED_(T)

#define OVERRIDE_UNIMPLEMENTED_ASYNC(T, OP, ...) \
    OVERRIDE_ASYNC(T, OP, __VA_ARGS__) UNIMPLEMENTED_(T)
#define OVERRIDE_UNIMPLEMENTED_ASYNC0(T, OP) OVERRIDE_ASYNC0(T, OP) UNIMPLEMENTED_(T)

class IAsyncBase : public Object {
protected:
    // Completes an operation: calls done with {this, operation, ret, error_number}.
    // T comes from `done` alone, so `ret` may be of any type convertible to it.
    template <typename T>
    void callback(Done<T> done, uint32_t operation, typename done_traits<Done<T>>::result_type ret,
                  int error_number) {
        AsyncResult<T> r;
        r.result = ret;
        complete(done, r, operation, error_number);
    }
    void callback(Done<void> done, uint32_t operation, int error_number) {
        AsyncResult<void> r;
        complete(done, r, operation, error_number);
    }
    // Completes with the type's failure value, operation UINT32_MAX and ENOSYS.
    template <typename T>
    void callback_umimplemented(Done<T> done) {
        AsyncResult<T> r;
        r.result = AsyncResult<T>::failure();
        complete(done, r, UINT32_MAX, ENOSYS);
    }
    template <typename T>
    void callback_unimplemented(Done<T> done) {
        callback_umimplemented(done);
    }

private:
    template <typename T>
    void complete(Done<T> done, AsyncResult<T>& r, uint32_t operation, int error_number) {
        r.object = this;
        r.operation = operation;
        r.error_number = error_number;
        done(&r);
    }
};

// Calls (obj->*afunc)(args..., done, timeout), an async function that may
// complete on another thread, and parks until it does; see the file comment.
template <typename R, typename T, typename... ARGS>
class AsyncFuncWrapper {
public:
    using AFunc = AsyncFunc<R, T, ARGS...>;
    AsyncFuncWrapper(T* obj, AFunc afunc, uint64_t timeout)
        : _obj(obj), afunc_(afunc), _timeout(timeout) {}

    // The operation's result; on failure errno is its error_number.
    template <typename... _Args>
    R call(_Args&&... args) {
        AsyncReturn aret;
        (_obj->*afunc_)(std::forward<_Args>(args)..., aret.done(), _timeout);
        aret.awaiter.suspend();
        assert(aret.gotit);
        if (aret.result.is_failure() && aret.result.error_number) errno = aret.result.error_number;
        return aret.result.get_result();
    }

protected:
    T* _obj;
    AFunc afunc_;
    uint64_t _timeout;

    struct AsyncReturn {
        photon::Awaiter<photon::AutoContext> awaiter;  // made on the calling thread
        AsyncResult<R> result;
        bool gotit = false;
        Done<R> done() { return {this, &on_done}; }
        // Runs on the completing thread; resume() is the last touch of *aret.
        static int on_done(void* aret_, AsyncResult<R>* ar) {
            auto aret = (AsyncReturn*)aret_;
            aret->result = *ar;
            aret->gotit = true;
            aret->awaiter.resume();
            return 0;
        }
    };
};

// async_func<R, T, ARGS...>(obj, &T::op, timeout).call(args...). ARGS precede
// Done in the signature, so they cannot be deduced and must be spelled out;
// `afunc` is kept out of deduction (else GCC tries to extend ARGS from it, and
// the call fails to compile).
template <typename R, typename T, typename... ARGS>
inline AsyncFuncWrapper<R, T, ARGS...> async_func(
    T* obj, typename AsyncFuncWrapper<R, T, ARGS...>::AFunc afunc, uint64_t timeout) {
    return {obj, afunc, timeout};
}

// Wraps any asynchronous start-up: call(afunc) runs afunc(), which must start
// work that finishes by calling put_result() exactly once (from any thread),
// and parks until it does. One call() at a time per object; it may be reused.
template <typename R>
class AsyncFuncWrapper_Generic {
public:
    // The result passed to put_result(); on failure errno is its error number.
    template <typename AFunc>
    R call(AFunc afunc) {
        gotit = false;
        result = AsyncResult<R>();
        waiter.emplace();  // a fresh one-shot Awaiter, made on the waiting thread
        afunc();
        waiter->suspend();
        assert(gotit);
        if (result.is_failure() && result.error_number) errno = result.error_number;
        return result.get_result();
    }
    // Stores the result (and error_number if it is a failure) and wakes call().
    template <typename Rst>
    void put_result(Rst&& r, int error_number) {
        result.result = std::forward<Rst>(r);
        if (result.is_failure() && error_number) result.error_number = error_number;
        put_result();
    }
    // For R = void, or a result stored already: records error_number and wakes.
    void put_result(int error_number) {
        if (error_number != 0) result.error_number = error_number;
        put_result();
    }

protected:
    photon::detail::maybe<photon::Awaiter<photon::AutoContext>> waiter;  // std::optional's job
    AsyncResult<R> result;
    bool gotit = false;

    // resume() is the last touch of *this by the completing thread.
    void put_result() {
        gotit = true;
        waiter->resume();
    }
};
