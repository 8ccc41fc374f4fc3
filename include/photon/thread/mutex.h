// Sleeping mutexes: a coroutine that cannot take one sleeps (blocks) while
// its vCPU runs others. Usable across vCPUs; lock() may block and needs a
// vCPU (ENOSYS otherwise); unlock() is the owner's. scoped_lock and WITH_LOCK
// hold a mutex for a scope. Also reachable through <photon/thread/thread.h>,
// as in Photon.
#pragma once

#include <atomic>
#include <cstdint>

#include <photon/common/timeout.h>
#include <photon/thread/detail/thread_fwd.h>
#include <photon/thread/detail/waitq.h>
#include <photon/thread/locker.h>

namespace photon {

// Sleeping mutex: tries, yields up to max_retries times, then sleeps in FIFO
// order. unlock() hands ownership to the first waiter, unless `contending`,
// where the woken waiter competes with newcomers. Timeout -> -1 ETIMEDOUT,
// interrupt -> -1 with the interrupter's errno.
class mutex {
public:
    mutex(uint16_t max_retries = 100, bool contending = false)
        : retries(max_retries), _contending(contending) {}
    mutex(const mutex&) = delete;
    mutex& operator=(const mutex&) = delete;
    ~mutex();

    int lock(Timeout timeout = {});
    int try_lock() { return try_lock_as(CURRENT); }
    bool locked() const { return owner.load(std::memory_order_relaxed) != nullptr; }
    // Non-owner: EINVAL, no effect.
    void unlock();

protected:
    // Takes `self` rather than reading CURRENT: after a switch the coroutine
    // may run on another OS thread (thread_migrate), and a thread pointer the
    // compiler computed before the switch would name the old one.
    int try_lock_as(thread* self) {
        thread* expected = nullptr;
        return owner.compare_exchange_strong(expected, self, std::memory_order_acquire) ? 0 : -1;
    }
    std::atomic<thread*> owner{nullptr};
    waitq q;
    uint16_t retries;
    bool _contending;
};

// A mutex that never spins before sleeping: strict FIFO.
class seq_mutex : protected mutex {
public:
    seq_mutex() : mutex(0) {}
};

class recursive_mutex : protected mutex {
public:
    using mutex::mutex;
    int lock(Timeout timeout = {});
    int try_lock();
    void unlock();
    bool locked() const { return mutex::locked(); }

protected:
    int32_t recursive_count = 0;
};

using scoped_lock = locker<mutex>;

#define WITH_LOCK(mutex) if (auto __lock__ = ::photon::scoped_lock(mutex))

}  // namespace photon
