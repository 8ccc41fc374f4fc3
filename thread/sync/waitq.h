// Wait-queue operations shared by the sleeping locks. Private header.
//
// Protocol: a waiter enqueues itself under q.lock and sleeps, releasing
// q.lock only once committed to sleep. A waker pops waiters under q.lock and
// wakes them while still holding it; being popped (th->wq == nullptr) is what
// makes a wait succeed (popped by waitq_wake_with_error, it fails), so a waiter whose timeout raced
// with its waker still gets what the waker handed it. Each sleeper retakes q.lock before it
// returns, so the lock object is never touched after its last waiter leaves.
#pragma once

#include <photon/thread/thread.h>

namespace photon {

// All with q->lock held.
void waitq_push(waitq* q, thread* th);
thread* waitq_front(waitq* q);
void waitq_erase(waitq* q, thread* th);
// Pops and wakes the front waiter; returns it or nullptr.
thread* waitq_wake_one(waitq* q);
// Pops and wakes `th`, a waiter of q.
void waitq_wake(waitq* q, thread* th);
// Pops `th`, a waiter of q, and wakes it with error `err`: its waitq_sleep
// returns -1 with errno err (EINTR if err <= 0).
void waitq_wake_with_error(waitq* q, thread* th, int err);

// Sleeps CURRENT in q. Called with q->lock held; once committed to sleep,
// calls unlock(lock) if given, then releases q->lock. Returns with q->lock
// held again: 0 if a waker popped us, else -1 with errno ETIMEDOUT or the
// interrupter's (EPERM for a shut-down coroutine's capped sleep).
int waitq_sleep(waitq* q, Timeout timeout, defer_func unlock = nullptr, void* lock = nullptr);

}  // namespace photon
