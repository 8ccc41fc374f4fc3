// The waiting half of <photon/common/lockfree_queue.h>, written once for the queues and
// channels that block: blocking_ops (send/recv and their batch forms, retrying push/pop with
// a Pause policy) and channel_ops (RingChannel's and FlexRingChannel's parking send/recv, on
// SendBackoff and a semaphore). Not API on its own: include lockfree_queue.h, which defines
// the Pause policies declared here.
// Floor: thread (tools/floors.txt), above its folder's: it is built on photon's coroutines.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <type_traits>

#include <photon/common/timeout.h>
#include <photon/common/utility.h>
#include <photon/thread/thread.h>

struct PauseBase;
struct ThreadPause;
struct PhotonPause;

namespace photon {
namespace lockfree_detail {

// Sleeps the coroutine on a vCPU (its neighbours keep running), else the OS thread.
inline void nap(uint64_t usec) {
    usec = std::min<uint64_t>(usec, 1000 * 1000);
    if (CURRENT)
        thread_usleep(usec);
    else
        std::this_thread::sleep_for(std::chrono::microseconds(usec));
}

// The longest a parked waiter sleeps before it looks again; bounds the cost of a lost wake-up.
constexpr uint64_t kParkUs = 100 * 1000;

// Wakes one parked waiter if any waits and fewer wake-ups than waiters are in flight; `pending`
// mirrors the semaphore's count, so a burst cannot pile up stale tokens.
inline void wake_one(semaphore& sem, std::atomic<uint64_t>& waiters,
                     std::atomic<uint64_t>& pending) {
    // Dekker pairing with the seq_cst increment in park_until(): either the waiter's next try
    // sees what we just did to the queue, or we see it waiting here.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    uint64_t w = waiters.load(std::memory_order_seq_cst);
    if (w == 0) return;
    uint64_t p = pending.load(std::memory_order_acquire);
    for (;;) {
        if (p >= w) {
            uint64_t fresh = waiters.load(std::memory_order_relaxed);
            if (fresh <= w) return;
            w = fresh;
            continue;
        }
        if (pending.compare_exchange_weak(p, p + 1, std::memory_order_acq_rel,
                                          std::memory_order_acquire)) {
            sem.signal(1);
            return;
        }
    }
}

// Retries attempt() until it succeeds: yields the coroutine up to `turns` times within `usec`,
// then sleeps on `sem` (at most kParkUs) until wake_one() or the timeout, and starts over.
template <typename Attempt>
void park_until(Attempt&& attempt, semaphore& sem, std::atomic<uint64_t>& waiters,
                std::atomic<uint64_t>& pending, uint64_t turns, uint64_t usec) {
    waiters.fetch_add(1, std::memory_order_seq_cst);
    DEFER(waiters.fetch_sub(1, std::memory_order_seq_cst));
    Timeout budget(usec);
    uint64_t left = turns;
    while (!attempt()) {
        if (left > 0 && !budget.expired()) {
            left--;
            thread_yield();
            continue;
        }
        // Only a taken token is mirrored; a timeout or failure left the count alone.
        if (sem.wait(1, kParkUs) == 0) pending.fetch_sub(1, std::memory_order_acq_rel);
        left = turns;
        budget.timeout(usec);
    }
}

// The Pause-policy send/recv of a queue Queue of T items (CRTP base): each retries Queue's
// push/pop (or push_batch/pop_batch) and calls Pause::pause() between tries.
template <typename Queue, typename T>
class blocking_ops {
public:
    template <typename Pause = ThreadPause>
    T recv() {
        static_assert(std::is_base_of<PauseBase, Pause>::value,
                      "BusyPause should be derived by PauseBase");
        T ret;
        while (!queue().pop(ret)) Pause::pause();
        return ret;
    }

    template <typename Pause = ThreadPause>
    void send(const T& x) {
        static_assert(std::is_base_of<PauseBase, Pause>::value,
                      "BusyPause should be derived by PauseBase");
        while (!queue().push(x)) Pause::pause();
    }

    // Pushes all n items, pausing whenever the queue is full.
    template <typename Pause = ThreadPause>
    void send_batch(const T* x, size_t n) {
        static_assert(std::is_base_of<PauseBase, Pause>::value,
                      "BusyPause should be derived by PauseBase");
        while (n) {
            size_t cnt;
            while ((cnt = queue().push_batch(x, n)) == 0) Pause::pause();
            x += cnt;
            n -= cnt;
        }
    }

    // Pops between 1 and n items (n > 0), pausing while none is ready.
    template <typename Pause = ThreadPause>
    size_t recv_batch(T* x, size_t n) {
        static_assert(std::is_base_of<PauseBase, Pause>::value,
                      "BusyPause should be derived by PauseBase");
        if (n == 0) return 0;
        size_t ret;
        while ((ret = queue().pop_batch(x, n)) == 0) Pause::pause();
        return ret;
    }

private:
    Queue& queue() { return static_cast<Queue&>(*this); }
};

}  // namespace lockfree_detail

namespace common {

// How a channel's send() waits for room in a full queue, by Pause:
//  PhotonPause  yield the coroutine a while, then sleep on send_sem until recv() frees a slot
//               (notify_senders) or 100 ms pass; needs a vCPU.
//  ThreadPause  yield the OS thread a while, then nap yield_usec (the coroutine on a vCPU).
//  other        Pause::pause() between tries.
template <typename T>
struct SendBackoff {
    // Called after a pop: wakes one parked sender, if any and none is being woken already.
    static void notify_senders(photon::semaphore& send_sem, std::atomic<uint64_t>& send_waiters,
                               std::atomic<uint64_t>& send_pending) {
        lockfree_detail::wake_one(send_sem, send_waiters, send_pending);
    }

    template <typename Pause = ThreadPause, typename PushFn,
              ENABLE_IF(std::is_same<Pause, PhotonPause>::value)>
    static void push_backoff(const T& x, PushFn push_fn, uint64_t yield_turn, uint64_t yield_usec,
                             photon::semaphore& send_sem, std::atomic<uint64_t>& send_waiters,
                             std::atomic<uint64_t>& send_pending) {
        if (push_fn(x)) return;
        lockfree_detail::park_until([&] { return push_fn(x); }, send_sem, send_waiters,
                                    send_pending, yield_turn, yield_usec);
    }

    template <typename Pause = ThreadPause, typename PushFn,
              ENABLE_IF(std::is_same<Pause, ThreadPause>::value)>
    static void push_backoff(const T& x, PushFn push_fn, uint64_t yield_turn, uint64_t yield_usec,
                             photon::semaphore&, std::atomic<uint64_t>&, std::atomic<uint64_t>&) {
        using clock = std::chrono::steady_clock;
        auto budget = std::chrono::microseconds(std::min<uint64_t>(yield_usec, 1000 * 1000));
        while (!push_fn(x)) {
            auto deadline = clock::now() + budget;
            for (uint64_t left = yield_turn; left > 0 && clock::now() < deadline; left--) {
                std::this_thread::yield();
                if (push_fn(x)) return;
            }
            lockfree_detail::nap(yield_usec);
        }
    }

    template <typename Pause = ThreadPause, typename PushFn,
              ENABLE_IF(!std::is_same<Pause, PhotonPause>::value &&
                        !std::is_same<Pause, ThreadPause>::value)>
    static void push_backoff(const T& x, PushFn push_fn, uint64_t, uint64_t, photon::semaphore&,
                             std::atomic<uint64_t>&, std::atomic<uint64_t>&) {
        static_assert(std::is_base_of<PauseBase, Pause>::value,
                      "Pause should be derived by PauseBase");
        while (!push_fn(x)) Pause::pause();
    }
};

}  // namespace common

namespace lockfree_detail {

// FlexRingChannel's queue, a base ahead of channel_ops so that it stays the channel's first
// member.
template <typename Q>
struct channel_queue {
    Q* queue_;
};

// A channel's wait state and its parking send/recv (CRTP base of RingChannel and
// FlexRingChannel; Channel::ring_queue() is its queue of T items). The members keep the names
// RingChannel's subclasses know.
//
// Wake-ups: a consumer that finds the queue empty yields up to max_yield_turn times within
// max_yield_usec, then sleeps on queue_sem. send() signals it only while fewer wake-ups than
// idle consumers are in flight (`pending` mirrors queue_sem's count), so bursts never pile up
// tokens; a seq_cst fence in send() against the seq_cst increment of `idler` ensures that a
// consumer either sees the item or gets signalled.
template <typename Channel, typename T>
class channel_ops {
protected:
    photon::semaphore queue_sem;
    std::atomic<uint64_t> idler{0};    // consumers past their first failed pop
    std::atomic<uint64_t> pending{0};  // signals of queue_sem not yet taken
    photon::semaphore send_sem;
    std::atomic<uint64_t> send_waiters{0};
    std::atomic<uint64_t> send_pending{0};
    uint64_t default_yield_turn = 1024;
    uint64_t default_yield_usec = 1024;

    channel_ops() = default;
    channel_ops(uint64_t yield_turn, uint64_t yield_usec)
        : default_yield_turn(yield_turn), default_yield_usec(yield_usec) {}

public:
    // Pushes x, waiting for room as Pause says (see SendBackoff), then wakes an idle consumer.
    template <typename Pause = ThreadPause>
    void send(const T& x) {
        Channel* self = static_cast<Channel*>(this);
        common::SendBackoff<T>::template push_backoff<Pause>(
            x, [self](const T& v) { return self->ring_queue().push(v); }, default_yield_turn,
            default_yield_usec, send_sem, send_waiters, send_pending);
        wake_one(queue_sem, idler, pending);
    }

    // Pops an item, parking the coroutine while there is none. Call on a vCPU.
    T recv(uint64_t max_yield_turn, uint64_t max_yield_usec) {
        Channel* self = static_cast<Channel*>(this);
        T x;
        if (!self->ring_queue().pop(x)) {
            photon::thread_yield();  // also refreshes photon::now for the yield budget
            park_until([self, &x] { return self->ring_queue().pop(x); }, queue_sem, idler, pending,
                       max_yield_turn, max_yield_usec);
        }
        common::SendBackoff<T>::notify_senders(send_sem, send_waiters, send_pending);
        return x;
    }
    T recv() { return recv(default_yield_turn, default_yield_usec); }

    // Wake-ups signalled and not yet taken; never more than the consumers that were idle.
    uint64_t notification_pending() const { return pending.load(std::memory_order_acquire); }
};

}  // namespace lockfree_detail
}  // namespace photon
