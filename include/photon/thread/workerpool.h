// WorkPool: a set of vCPUs on OS threads of their own that run tasks handed
// to them from any thread, and that coroutines can be migrated into.
//
// Each pool OS thread calls photon::init(ev_engine, io_engine) and, at the
// end, photon::fini(), which waits for every coroutine on it, migrated-in ones
// included. Tasks run inline in the pool vCPU's worker coroutine
// (thread_mod -1), each in a new coroutine (0), or in one of thread_mod
// worker coroutines per vCPU (> 0). The queue holds ring_size tasks; a
// producer that finds it full waits until there is room.
//
// call() and async_call() may be used from any vCPU or plain OS thread. A
// task must not call() into its own pool when that could leave no worker
// free to run the inner task (e.g. thread_mod -1 with one vCPU).
//
// Differences from PhotonLibOS: doc/compat.md#threadworkerpoolh
// Floor: runtime (tools/floors.txt), above its folder's: it needs vCPUs and engines.
#pragma once

#include <cstddef>
#include <memory>
#include <utility>

#include <photon/common/callback.h>
#include <photon/common/tuple-assistance.h>
#include <photon/thread/awaiter.h>
#include <photon/thread/thread.h>

namespace photon {

class WorkPool {
public:
    // Returns once every pool vCPU is up; a pool OS thread whose
    // photon::init fails is logged and left out (see get_vcpu_num()).
    explicit WorkPool(size_t vcpu_num, int ev_engine = 0, int io_engine = 0, int thread_mod = -1,
                      size_t ring_size = 65536);
    WorkPool(const WorkPool&) = delete;
    WorkPool& operator=(const WorkPool&) = delete;
    // Runs every task still queued, stops and joins the pool OS threads (each
    // waits for its coroutines) and waits for joined vCPUs to leave. Must not
    // run on a pool vCPU.
    ~WorkPool();

    // Runs f(args...) on a pool vCPU and waits for it to finish; see
    // awaiter.h for how each Context waits.
    template <typename Context = PhotonContext, typename F, typename... Args>
    void call(F&& f, Args&&... args) {
        Awaiter<Context> done;
        auto task = [&] {
            f(std::forward<Args>(args)...);
            done.resume();
        };
        enqueue(&run<decltype(task)>, &task);
        done.suspend();
    }

    // Queues (*task)() and returns; the pool then deletes task.
    template <typename Task>
    void async_call(Task* task) {
        enqueue(&run_and_delete<Task>, task);
    }

    // photon::thread_migrate() of `th` (a coroutine of the calling vCPU) to
    // pool vCPU `index`, or round-robin over them if index is -1. -1 with
    // EINVAL for a bad index, else as photon::thread_migrate().
    int thread_migrate(photon::thread* th = CURRENT, size_t index = -1ULL);

    // Makes the calling vCPU serve the pool too: the calling coroutine runs
    // the worker loop (per thread_mod) and returns 0 once the pool is being
    // destroyed. Meanwhile the vCPU is also a thread_migrate() target.
    // -1 with ENOSYS if not a vCPU, EALREADY if it serves this pool already.
    int join_current_vcpu_into_workpool();

    // The number of vCPUs serving the pool (joined ones included).
    int get_vcpu_num();

private:
    struct impl;
    void enqueue(void (*fn)(void*), void* arg);

    template <typename T>
    static void run(void* task) {
        (*static_cast<T*>(task))();
    }
    template <typename T>
    static void run_and_delete(void* task) {
        auto t = static_cast<T*>(task);
        (*t)();
        delete t;
    }

    std::unique_ptr<impl> impl_;
};

}  // namespace photon
