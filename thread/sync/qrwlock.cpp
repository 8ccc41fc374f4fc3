// qrwlock: readers and the writer meet on one atomic word; sleeping and
// waking are ordered by `spin`: a waiter retries and goes to sleep under it
// (the condition variable releases it only once the waiter is queued), and
// whoever frees the lock wakes under it, so no wakeup falls in between.
#include <photon/thread/thread.h>

namespace photon {

bool qrwlock::try_lock_unique() {
    int64_t expected = 0;
    return lock_state.compare_exchange_strong(expected, WRITE_LOCKED, std::memory_order_acquire,
                                              std::memory_order_relaxed);
}

bool qrwlock::try_lock_shared() {
    int64_t s = lock_state.load(std::memory_order_relaxed);
    while (s >= 0 && s < MAX_SHARED_LOCK_COUNT)
        if (lock_state.compare_exchange_weak(s, s + 1, std::memory_order_acquire,
                                             std::memory_order_relaxed))
            return true;
    return false;
}

void qrwlock::wake_locked() {
    if (!cv_unique.notify_one()) cv_shared.notify_all();
}

int qrwlock::try_lock(int mode) {
    if (mode != RLOCK && mode != WLOCK) {
        errno = EINVAL;
        return -1;
    }
    if (mode == WLOCK ? try_lock_unique() : try_lock_shared()) return 0;
    errno = EBUSY;
    return -1;
}

int qrwlock::lock(int mode, Timeout timeout) {
    if (mode != RLOCK && mode != WLOCK) {
        errno = EINVAL;
        return -1;
    }
    const bool unique = mode == WLOCK;
    if (unique ? try_lock_unique() : try_lock_shared()) return 0;
    condition_variable& cv = unique ? cv_unique : cv_shared;
    SCOPED_LOCK(spin);
    while (!(unique ? try_lock_unique() : try_lock_shared())) {
        if (cv.wait(spin, timeout) < 0) {
            int e = errno;
            // We may have been picked as the one writer to wake: pass it on.
            if (lock_state.load(std::memory_order_relaxed) == 0) wake_locked();
            errno = e;
            return -1;
        }
    }
    return 0;
}

int qrwlock::unlock() {
    int64_t s = lock_state.load(std::memory_order_relaxed);
    if (s == 0) {
        errno = ENOLCK;
        return -1;
    }
    if (s == WRITE_LOCKED) {
        SCOPED_LOCK(spin);
        lock_state.store(0, std::memory_order_release);
        wake_locked();
        return 0;
    }
    int64_t prev = lock_state.fetch_sub(1, std::memory_order_release);
    if (prev == 1) {  // the last reader: a writer may go
        SCOPED_LOCK(spin);
        wake_locked();
    } else if (prev == MAX_SHARED_LOCK_COUNT) {  // room for a reader that waits for it
        SCOPED_LOCK(spin);
        cv_shared.notify_one();
    }
    return 0;
}

}  // namespace photon
