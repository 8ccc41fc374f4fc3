// Condition variables: a coroutine waits (blocks) until another one notifies
// it, optionally releasing a mutex or spinlock meanwhile. Usable across
// vCPUs: wait() needs a vCPU (-1 ENOSYS otherwise), notify_one/notify_all may
// also run on a plain OS thread. Also reachable through
// <photon/thread/thread.h>, as in Photon.
//
// Differences from PhotonLibOS: doc/compat.md#threadcondition_variableh
#pragma once

#include <cerrno>
#include <utility>

#include <photon/common/timeout.h>
#include <photon/thread/detail/eshutdown.h>
#include <photon/thread/detail/thread_fwd.h>
#include <photon/thread/detail/waitq.h>
#include <photon/thread/mutex.h>
#include <photon/thread/spinlock.h>

namespace photon {

// Waits are notified in FIFO order. wait() releases the lock while asleep and
// always retakes it; 0 if notified, -1 ETIMEDOUT / -1 with the interrupter's
// errno otherwise.
class condition_variable {
public:
    condition_variable() = default;
    int wait_no_lock(Timeout timeout = {});
    int wait(mutex* m, Timeout timeout = {}) { return wait_locked(*m, timeout); }
    int wait(mutex& m, Timeout timeout = {}) { return wait_locked(m, timeout); }
    int wait(spinlock* m, Timeout timeout = {}) { return wait_locked(*m, timeout); }
    int wait(spinlock& m, Timeout timeout = {}) { return wait_locked(m, timeout); }
    int wait(scoped_lock& l, Timeout timeout = {}) { return wait_locked(*l.m_mutex, timeout); }
    // Waits until pred() holds: 0 then (also if it held on entry), or -1
    // with errno ETIMEDOUT once the timeout expires without it. As Photon's,
    // interrupts do not end the wait, except those that end semaphore::wait
    // (ESHUTDOWN, and EPERM of a shut-down coroutine): -1 with that errno.
    template <typename LOCK, typename PRED, typename = decltype(std::declval<PRED>()())>
    int wait(LOCK&& lock, PRED&& pred, Timeout timeout = {}) {
        return wait_pred([&] { return wait(lock, timeout); }, pred, timeout);
    }
    template <typename PRED, typename = decltype(std::declval<PRED>()())>
    int wait_no_lock(PRED&& pred, Timeout timeout = {}) {
        return wait_pred([&] { return wait_no_lock(timeout); }, pred, timeout);
    }
    // Wakes the first waiter; returns it, or nullptr if none.
    thread* signal();
    thread* notify_one() { return signal(); }
    // Wakes all waiters; returns how many.
    int notify_all();
    int broadcast() { return notify_all(); }

protected:
    template <typename WAIT, typename PRED>
    static int wait_pred(WAIT&& do_wait, PRED& pred, const Timeout& timeout) {
        while (!pred()) {
            int e = ETIMEDOUT;
            if (!timeout.expired()) {
                if (do_wait() == 0) continue;
                e = errno;
                if (e != ETIMEDOUT && e != ESHUTDOWN && e != EPERM && e != ENOSYS) continue;
            }
            if (pred()) return 0;
            errno = e;
            return -1;
        }
        return 0;
    }
    // Sleeps in the queue, calling unlock(lock) once committed to sleep.
    int wait_defer(Timeout timeout, defer_func unlock, void* lock);
    template <typename LOCK>
    int wait_locked(LOCK& lock, Timeout timeout) {
        int ret = wait_defer(
            timeout, [](void* l) { static_cast<LOCK*>(l)->unlock(); }, &lock);
        int e = errno;
        while (lock.lock() < 0) {  // always retake, even when interrupted
        }
        errno = e;
        return ret;
    }
    waitq q;
};

}  // namespace photon
