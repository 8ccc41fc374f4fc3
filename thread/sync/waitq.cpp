#include "waitq.h"

#include <photon/common/alog.h>

#include "../vcpu.h"

namespace photon {

namespace {

// th->wq of a waiter popped by waitq_wake_with_error(); never dereferenced.
waitq* const kPoppedWithError = reinterpret_cast<waitq*>(alignof(waitq));

}  // namespace

waitq::~waitq() {
    if (head.load())
        LOG_ERROR("a lock or condition variable destroyed while coroutines wait on it");
}

void waitq_push(waitq* q, thread* th) {
    th->wq = q;
    thread* head = q->head.load(std::memory_order_relaxed);
    if (!head) {
        th->wq_prev = th->wq_next = th;
        q->head.store(th, std::memory_order_relaxed);
        return;
    }
    thread* tail = head->wq_prev;
    th->wq_prev = tail;
    th->wq_next = head;
    tail->wq_next = th;
    head->wq_prev = th;
}

thread* waitq_front(waitq* q) { return q->head.load(std::memory_order_relaxed); }

void waitq_erase(waitq* q, thread* th) {
    if (th->wq_next == th) {
        q->head.store(nullptr, std::memory_order_relaxed);
    } else {
        th->wq_prev->wq_next = th->wq_next;
        th->wq_next->wq_prev = th->wq_prev;
        if (waitq_front(q) == th) q->head.store(th->wq_next, std::memory_order_relaxed);
    }
    th->wq = nullptr;
    th->wq_prev = th->wq_next = nullptr;
}

void waitq_wake(waitq* q, thread* th) {
    waitq_erase(q, th);
    th->lock.lock();
    // A waiter already woken by its timeout or an interrupt is not SLEEPING;
    // it will find itself popped when it retakes q->lock.
    if (th->state == SLEEPING) make_ready_locked(th, 0);
    th->lock.unlock();
}

void waitq_wake_with_error(waitq* q, thread* th, int err) {
    waitq_erase(q, th);
    th->wq = kPoppedWithError;
    th->lock.lock();
    if (th->state == SLEEPING) make_ready_locked(th, err > 0 ? err : EINTR);
    th->lock.unlock();
}

thread* waitq_wake_one(waitq* q) {
    thread* th = waitq_front(q);
    if (th) waitq_wake(q, th);
    return th;
}

namespace {

struct unlock_both {
    waitq* q;
    defer_func unlock;
    void* lock;
};

void release(void* arg) {
    auto u = static_cast<unlock_both*>(arg);
    if (u->unlock) u->unlock(u->lock);
    u->q->lock.unlock();
}

}  // namespace

int waitq_sleep(waitq* q, Timeout timeout, defer_func unlock, void* lock) {
    thread* self = CURRENT;
    if (!self) {
        if (unlock) unlock(lock);
        errno = ENOSYS;
        return -1;
    }
    waitq_push(q, self);
    unlock_both u{q, unlock, lock};
    int e = sleep_current(timeout.expiration(), &release, &u);
    q->lock.lock();
    if (!self->wq) return 0;  // popped by a waker
    if (self->wq == kPoppedWithError)
        self->wq = nullptr;
    else
        waitq_erase(q, self);
    if (e == kTimedOut)
        e = (self->flags & TF_SHUTDOWN) ? EPERM : ETIMEDOUT;
    else if (e <= 0)
        e = EINTR;  // thread_resume() of a waiter: still not granted
    errno = e;
    return -1;
}

// ---- Photon's waitq interface --------------------------------------------

namespace {

void resume_locked(waitq* q, thread* th, int error_number) {
    if (error_number == -1)
        waitq_wake(q, th);
    else
        waitq_wake_with_error(q, th, error_number);
}

}  // namespace

int waitq::wait_defer(Timeout timeout, void (*defer)(void*), void* arg) {
    lock.lock();
    int ret = waitq_sleep(this, timeout, defer, arg);
    lock.unlock();
    return ret;
}

int waitq::wait(Timeout timeout) { return wait_defer(timeout, nullptr, nullptr); }

void waitq::resume(thread* th, int error_number) {
    if (!th) return;
    SCOPED_LOCK(lock);
    if (th->wq == this) resume_locked(this, th, error_number);  // else not waiting here
}

thread* waitq::resume_one(int error_number) {
    if (!head.load(std::memory_order_relaxed)) return nullptr;  // a racy peek, as signal()
    SCOPED_LOCK(lock);
    thread* th = waitq_front(this);
    if (th) resume_locked(this, th, error_number);
    return th;
}

int waitq::resume_all(int error_number) {
    if (!head.load(std::memory_order_relaxed)) return 0;
    int n = 0;
    SCOPED_LOCK(lock);
    while (thread* th = waitq_front(this)) {
        resume_locked(this, th, error_number);
        n++;
    }
    return n;
}

}  // namespace photon
