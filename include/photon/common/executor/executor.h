// Executor: a photon vCPU that code outside it (plain std::threads, other
// vCPUs) hands work to. perform() runs a callable there and waits for its
// result; async_perform() queues a heap callable and returns.
//
// Executor(...) starts an OS thread of its own that calls
// photon::init(init_ev, init_io, options); export_as_executor() instead serves
// from a coroutine of the calling vCPU. Each task runs in a coroutine of its
// own, so tasks that sleep or wait on I/O overlap.
//
// perform() and async_perform() may be called from any OS thread or vCPU,
// the executor's own included; the waiting per Context is as in awaiter.h
// (AutoContext parks the calling coroutine on a vCPU, blocks a plain thread).
//
// Differences from PhotonLibOS: doc/compat.md#commonexecutorexecutorh
// Floor: runtime (tools/floors.txt), above its folder's: it needs vCPUs and engines.
#pragma once

#include <cerrno>
#include <exception>
#include <type_traits>
#include <utility>

#include <photon/common/callback.h>
#include <photon/common/detail/std17.h>
#include <photon/photon.h>
#include <photon/thread/awaiter.h>
#include <photon/thread/thread.h>

namespace photon {

// How long the executor's loop keeps polling (yielding) for new tasks before
// it sleeps: at most max_yield_turn yields and max_yield_usec microseconds.
struct ExecutorQueueOption {
    uint64_t max_yield_turn;
    uint64_t max_yield_usec;
};

namespace detail {

// A perform() task's outcome, written on the executor, read by the caller.
template <typename R>
struct executor_outcome {
    maybe<R> value;
    int err = 0;
#if defined(__cpp_exceptions)
    std::exception_ptr ex;
#endif

    template <typename F>
    void run(F& f) {
#if defined(__cpp_exceptions)
        try {
            value.emplace(f());
        } catch (...) {
            ex = std::current_exception();
        }
#else
        value.emplace(f());
#endif
        err = errno;
    }
    R take() {
        errno = err;
#if defined(__cpp_exceptions)
        if (ex) std::rethrow_exception(ex);
#endif
        return std::move(*value);
    }
};

template <>
struct executor_outcome<void> {
    int err = 0;
#if defined(__cpp_exceptions)
    std::exception_ptr ex;
#endif

    template <typename F>
    void run(F& f) {
#if defined(__cpp_exceptions)
        try {
            f();
        } catch (...) {
            ex = std::current_exception();
        }
#else
        f();
#endif
        err = errno;
    }
    void take() {
        errno = err;
#if defined(__cpp_exceptions)
        if (ex) std::rethrow_exception(ex);
#endif
    }
};

}  // namespace detail

class Executor {
public:
    class ExecutorImpl;

    ExecutorImpl* e;

    // Starts the executor's OS thread and returns once its vCPU is up.
    Executor(int init_ev = photon::INIT_EVENT_DEFAULT, int init_io = photon::INIT_IO_DEFAULT,
             const PhotonOptions& options = {},
             const ExecutorQueueOption& queue_options = {1024, 1024});
    Executor(const Executor&) = delete;
    Executor& operator=(const Executor&) = delete;
    // Stops taking work, lets every queued and running task finish, then ends
    // the executor's vCPU (or, when exported, its serving coroutine). Called
    // from one of its own tasks it returns at once instead (see above).
    ~Executor();

    // Runs act() on the executor and returns its result; errno is the
    // task's, and an exception it throws is rethrown here.
    template <typename Context = AutoContext, typename Func,
              typename R = detail::invoke_result_t<Func>,
              typename _ = typename std::enable_if<!std::is_void<R>::value, R>::type>
    R perform(Func&& act) {
        return perform_impl<Context, R>(act);
    }

    template <typename Context = AutoContext, typename Func,
              typename R = detail::invoke_result_t<Func>,
              typename _ = typename std::enable_if<std::is_void<R>::value, R>::type>
    void perform(Func&& act) {
        perform_impl<Context, void>(act);
    }

    // Queues (*task)() and returns; the executor deletes task afterwards.
    // Typically `e.async_perform(new auto([=] { ... }))`.
    template <typename Context = AutoContext, typename Func>
    void async_perform(Func* task) {
        if (!task) {
            errno = EINVAL;
            return;
        }
        void (*run)(void*) noexcept = [](void* t) noexcept {
            auto f = static_cast<Func*>(t);
            (*f)();
            delete f;
        };
        _issue(e, {run, task});
    }

    // An executor served by a new coroutine of the calling vCPU; delete it
    // before that vCPU's photon::fini(), which would wait for the serving
    // coroutine. nullptr with ENOSYS if the caller is not a vCPU.
    static Executor* export_as_executor();

protected:
    static constexpr int64_t kCondWaitMaxTime = 100LL * 1000;

    struct create_on_current_vcpu {};

    explicit Executor(create_on_current_vcpu);

    // Queues cb; waits (sleeping) while the queue is full.
    static void _issue(ExecutorImpl* e, Delegate<void> cb);

private:
    template <typename Context, typename R, typename Func>
    R perform_impl(Func& act) {
        detail::executor_outcome<R> out;
        Awaiter<Context> done;
        auto task = [&] {
            out.run(act);
            done.resume();  // the caller may return at once: touch nothing after
        };
        _issue(e, task);
        done.suspend();
        return out.take();
    }
};

}  // namespace photon
