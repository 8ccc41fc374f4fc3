// The wait queue every sleeping lock is built on (mutex.h,
// condition_variable.h, semaphore.h, rwlock.h). Not a user-level primitive:
// Photon declares it in thread.h, which still provides it, for code that
// builds its own sync primitives on it. Any vCPU; wait() blocks.
#pragma once

#include <atomic>

#include <photon/common/callback.h>
#include <photon/common/timeout.h>
#include <photon/thread/detail/thread_fwd.h>
#include <photon/thread/spinlock.h>

namespace photon {

// A FIFO queue of sleeping coroutines under a spinlock; the building block of
// every sleeping lock. The member functions are Photon's interface for
// building sync primitives on it.
// Differences from PhotonLibOS: doc/compat.md#threaddetailwaitqh
struct waitq {
    waitq() = default;
    waitq(const waitq&) = delete;
    waitq& operator=(const waitq&) = delete;
    ~waitq();

    // Sleeps CURRENT at the back of the queue: 0 if resumed with error_number
    // -1, else -1 with errno ETIMEDOUT, the resumer's error_number or the
    // interrupter's errno.
    int wait(Timeout timeout = {});
    // As wait(), running defer(arg) once committed to sleep (an atomic
    // "unlock and wait"); `defer` must not sleep.
    int wait_defer(Timeout timeout, void (*defer)(void*), void* arg);
    int wait_defer(Timeout timeout, Delegate<void> defer) {
        return wait_defer(timeout, (void (*)(void*))defer._func, defer._obj);
    }
    // Wakes `th` if it waits in this queue (else nothing): its wait returns
    // 0 for error_number -1, else -1 with errno = error_number.
    void resume(thread* th, int error_number = -1);
    // Wakes every waiter; returns how many.
    int resume_all(int error_number = -1);
    // Wakes the first waiter; returns it, or nullptr if none.
    thread* resume_one(int error_number = -1);

    // Ring of waiters linked through their wq links; written under `lock`,
    // peeked at without it.
    std::atomic<thread*> head{nullptr};
    spinlock lock;
};

}  // namespace photon
