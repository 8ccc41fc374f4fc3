// Reader-writer locks: any number of readers (RLOCK) or one writer (WLOCK);
// a coroutine that cannot take one sleeps (blocks). Usable across vCPUs; a
// lock() that must sleep needs a vCPU (-1 ENOSYS otherwise). rwlock is fair
// to writers, qrwlock is faster for read-mostly data. Also reachable
// through <photon/thread/thread.h>, as in Photon.
//
// Differences from PhotonLibOS: doc/compat.md#threadrwlockh
#pragma once

#include <atomic>
#include <cerrno>
#include <cstdint>

#include <photon/common/timeout.h>
#include <photon/thread/condition_variable.h>
#include <photon/thread/detail/waitq.h>
#include <photon/thread/spinlock.h>

namespace photon {

constexpr int RLOCK = 0x1000;
constexpr int WLOCK = 0x2000;

// Reader-writer lock; a newcomer queues behind any waiter (no starvation of
// writers). mode is RLOCK or WLOCK (else -1 EINVAL).
class rwlock {
public:
    int lock(int mode, Timeout timeout = {});
    int try_lock(int mode);
    int unlock();

protected:
    friend struct rwlock_impl;
    int64_t state = 0;  // > 0 readers, -1 a writer, 0 free
    waitq q;
};

class scoped_rwlock {
public:
    scoped_rwlock(rwlock& l, int lockmode) : m_rwlock(&l) { lock(lockmode); }
    scoped_rwlock(const scoped_rwlock&) = delete;
    bool locked() const { return m_locked; }
    operator bool() const { return m_locked; }
    int lock(int mode, bool must_lock = true) {
        int ret;
        while ((ret = m_rwlock->lock(mode)) < 0 && must_lock && errno != EINVAL) {
        }
        m_locked = (ret == 0);
        return ret;
    }
    ~scoped_rwlock() {
        if (m_locked) m_rwlock->unlock();
    }

protected:
    rwlock* m_rwlock;
    bool m_locked = false;
};

// Reader-writer lock for read-mostly data: readers take it with one atomic
// operation while no writer holds it; no starvation guard (a stream of
// readers can hold writers off). At most 65536 readers at once, more wait.
// mode RLOCK or WLOCK, else -1 EINVAL; unlock() of a free lock: -1 ENOLCK.
// Timeout -> -1 ETIMEDOUT, interrupt -> -1 with the interrupter's errno.
class qrwlock {
public:
    qrwlock() = default;
    qrwlock(const qrwlock&) = delete;
    qrwlock& operator=(const qrwlock&) = delete;
    int try_lock(int mode);  // 0, or -1 (EBUSY if held)
    int lock(int mode, Timeout timeout = {});
    int unlock();

protected:
    constexpr static int64_t MAX_SHARED_LOCK_COUNT = 1 << 16;
    constexpr static int64_t WRITE_LOCKED = -1;
    bool try_lock_unique();
    bool try_lock_shared();
    void wake_locked();  // under `spin`: a writer, else all readers

    // > 0 readers, 0 free, WRITE_LOCKED a writer
    std::atomic<int64_t> lock_state{0};
    condition_variable cv_shared;
    condition_variable cv_unique;
    spinlock spin;  // orders sleeping against waking
};

}  // namespace photon
