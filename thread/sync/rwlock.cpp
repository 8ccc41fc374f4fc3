#include "../vcpu.h"
#include "waitq.h"

namespace photon {

struct rwlock_impl {
    static bool grantable(rwlock* l, int mode) {
        return mode == RLOCK ? l->state >= 0 : l->state == 0;
    }
    static void grant(rwlock* l, int mode) {
        if (mode == RLOCK)
            l->state++;
        else
            l->state = -1;
    }
    // Grants the front waiters in order: one writer, or a run of readers.
    static void grant_waiters(rwlock* l) {
        while (thread* th = waitq_front(&l->q)) {
            int mode = (int)th->wait_arg;
            if (!grantable(l, mode)) break;
            grant(l, mode);
            waitq_wake(&l->q, th);
            if (mode == WLOCK) break;
        }
    }
};

int rwlock::lock(int mode, Timeout timeout) {
    if (mode != RLOCK && mode != WLOCK) {
        errno = EINVAL;
        return -1;
    }
    q.lock.lock();
    if (!q.head && rwlock_impl::grantable(this, mode)) {
        rwlock_impl::grant(this, mode);
        q.lock.unlock();
        return 0;
    }
    if (CURRENT) CURRENT->wait_arg = (uint64_t)mode;
    int ret = waitq_sleep(&q, timeout);  // granted by the waker when popped
    if (ret < 0) rwlock_impl::grant_waiters(this);
    q.lock.unlock();
    return ret;
}

int rwlock::try_lock(int mode) {
    if (mode != RLOCK && mode != WLOCK) {
        errno = EINVAL;
        return -1;
    }
    SCOPED_LOCK(q.lock);
    if (q.head || !rwlock_impl::grantable(this, mode)) {
        errno = EBUSY;
        return -1;
    }
    rwlock_impl::grant(this, mode);
    return 0;
}

int rwlock::unlock() {
    SCOPED_LOCK(q.lock);
    if (state == 0) {
        errno = ENOLCK;
        return -1;
    }
    if (state < 0)
        state = 0;
    else
        state--;
    rwlock_impl::grant_waiters(this);
    return 0;
}

}  // namespace photon
