// The type-independent half of go.h's channels and select: claiming and
// waking parked operations, parking, locking several channels, the select
// loop.
//
// Protocol. Each channel has a spinlock guarding its buffer and its queues
// of parked operations (sudogs). A coroutine that must wait queues one sudog
// per operation (one, or one per select case) while holding the channel
// locks, takes its waiter lock, drops the channel locks and sleeps on the
// waiter's condition variable. A waker, holding a channel lock, pops a sudog
// and claims its waiter under the waiter lock (the first claim wins: a
// select completes one case), moves the value and wakes it. Lock order:
// channels by address, then a waiter. The sleeper, once up, retakes every
// channel lock before returning: a waker that popped one of its sudogs
// still touches the waiter until it releases that channel's lock.
#include <photon/thread/go.h>

#include <algorithm>

namespace photon {
namespace detail {

namespace {

constexpr uint64_t kMinPollUs = 100;
constexpr uint64_t kMaxPollUs = 10 * 1000;

// xorshift64*: cheap, per OS thread; only fairness depends on it.
uint32_t random_below(uint32_t n) {
    static thread_local uint64_t state = 0;
    if (state == 0) state = (reinterpret_cast<uintptr_t>(&state) ^ __update_now()) | 1;
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    uint32_t r = (uint32_t)((state * 0x2545F4914F6CDD1DULL) >> 32);
    return (uint32_t)(((uint64_t)r * n) >> 32);
}

bool ends_wait(int e) { return e == ETIMEDOUT || e == EPERM || e == ESHUTDOWN || e == ENOSYS; }

}  // namespace

chan_sudog* chan_claim(intrusive_list<chan_sudog>& q) {
    while (chan_sudog* sg = q.pop_front()) {
        sg->queue = nullptr;
        sg->waiter->lock.lock();
        if (sg->waiter->fired == chan_waiter::kWaiting) return sg;
        sg->waiter->lock.unlock();  // fired by another case, or gave up
    }
    return nullptr;
}

void chan_complete(chan_sudog* sg, bool ok) {
    chan_waiter* w = sg->waiter;
    sg->ok = ok;
    w->fired = sg->index;
    w->cv.notify_one();
    w->lock.unlock();
}

void chan_close_locked(chan_base* c) {
    c->closed.store(true, std::memory_order_release);
    while (chan_sudog* sg = chan_claim(c->recvq)) chan_complete(sg, false);
    while (chan_sudog* sg = c->sendq.pop_front()) {
        sg->queue = nullptr;
        // A select's send on a closed channel never happens: the select
        // keeps waiting on its other cases. A plain send fails.
        if (sg->in_select) continue;
        sg->waiter->lock.lock();
        if (sg->waiter->fired == chan_waiter::kWaiting)
            chan_complete(sg, false);
        else
            sg->waiter->lock.unlock();
    }
}

size_t chan_sort_unique(chan_base** chans, size_t n) {
    std::sort(chans, chans + n, std::less<chan_base*>());
    return (size_t)(std::unique(chans, chans + n) - chans);
}

void chan_lock_all(chan_base* const* chans, size_t n) {
    for (size_t i = 0; i < n; i++) chans[i]->lock.lock();
}

void chan_unlock_all(chan_base* const* chans, size_t n) {
    for (size_t i = n; i-- > 0;) chans[i]->lock.unlock();
}

int chan_park(chan_waiter& w, chan_base* const* chans, size_t nchans, chan_sudog* sgs, size_t nsgs,
              Timeout timeout) {
    w.lock.lock();
    chan_unlock_all(chans, nchans);
    int err = 0;
    while (w.fired == chan_waiter::kWaiting) {
        // Sleeps with w.lock released once committed to sleep, so a claim
        // either comes after and finds us asleep, or before and we see it.
        if (w.cv.wait(w.lock, timeout) == 0 || w.fired != chan_waiter::kWaiting) continue;
        if (ends_wait(errno)) {
            err = errno;
            w.fired = chan_waiter::kCancelled;  // no claim may succeed from now on
        }
    }
    int fired = w.fired;
    w.lock.unlock();
    chan_lock_all(chans, nchans);
    for (size_t i = 0; i < nsgs; i++) {
        if (sgs[i].queue) {
            sgs[i].queue->erase(&sgs[i]);
            sgs[i].queue = nullptr;
        }
    }
    chan_unlock_all(chans, nchans);
    if (fired < 0) {
        errno = err;
        return -1;
    }
    return fired;
}

int select_cases(select_ref* c, size_t n, chan_base** chans, chan_sudog* sgs, Timeout timeout,
                 bool block) {
    if (n == 0) {  // Go's `select {}`: wait for ever (or the timeout)
        if (!block) return -1;
        chan_waiter w;
        return chan_park(w, nullptr, 0, nullptr, 0, timeout);
    }
    size_t nchans = 0;
    bool polled = false;  // cases that select cannot park on
    for (size_t i = 0; i < n; i++) {
        if (c[i].chan)
            chans[nchans++] = c[i].chan->chan_core();
        else
            polled = true;
    }
    nchans = chan_sort_unique(chans, nchans);
    uint64_t poll_us = kMinPollUs;
    while (true) {
        size_t start = random_below((uint32_t)n);
        if (polled) {  // outside the channel locks: they may do anything
            for (size_t k = 0; k < n; k++) {
                size_t i = (start + k) % n;
                if (!c[i].chan && c[i].ready(c[i].obj)) {
                    c[i].execute(c[i].obj);
                    return (int)i;
                }
            }
        }
        // Polling with every channel locked until parked: a send or receive
        // cannot slip in between the poll and the park unnoticed.
        chan_lock_all(chans, nchans);
        size_t dead = 0;
        for (size_t k = 0; k < n; k++) {
            size_t i = (start + k) % n;
            auto r = c[i].chan ? c[i].chan->poll_locked() : chan_case::kNotReady;
            if (r == chan_case::kDead) dead++;
            if (r != chan_case::kDone && r != chan_case::kClosed) continue;
            chan_unlock_all(chans, nchans);
            // A closed channel is always ready: let the coroutines that feed
            // the other cases run, or a loop over this select could starve them.
            if (r == chan_case::kClosed && CURRENT) thread_yield();
            c[i].execute(c[i].obj);
            return (int)i;
        }
        if (dead == n) {  // only sends on closed channels: nothing can ever happen
            chan_unlock_all(chans, nchans);
            errno = ESHUTDOWN;
            return -1;
        }
        if (!block || timeout.expired() || !CURRENT) {
            chan_unlock_all(chans, nchans);
            if (block) errno = timeout.expired() ? ETIMEDOUT : ENOSYS;
            return -1;
        }
        chan_waiter w;
        for (size_t i = 0; i < n; i++) {
            sgs[i].queue = nullptr;
            if (!c[i].chan) continue;
            sgs[i].waiter = &w;
            sgs[i].index = (int)i;
            sgs[i].in_select = true;
            sgs[i].ok = false;
            c[i].chan->park_locked(sgs[i]);
        }
        Timeout t = timeout;
        if (polled) {
            t.timeout_at_most(poll_us);
            poll_us = std::min(poll_us * 2, kMaxPollUs);
        }
        int fired = chan_park(w, chans, nchans, sgs, n, t);
        if (fired >= 0) {
            c[fired].chan->fired(sgs[fired]);
            c[fired].execute(c[fired].obj);
            return fired;
        }
        if (errno != ETIMEDOUT || timeout.expired()) return -1;
    }
}

}  // namespace detail
}  // namespace photon
