// Bounded lock-free ring queues, as PhotonLibOS declares them (global namespace), and
// photon::common::RingChannel / FlexRingChannel, queues whose recv() parks the calling coroutine.
//
//   LockfreeMPMCRingQueue<T, N>       any number of producers and consumers, a cache line per slot
//   LockfreeBatchMPMCRingQueue<T, N>  MPMC that moves runs of items with push_batch/pop_batch
//   LockfreeSPSCRingQueue<T, N>       one producer and one consumer (the only one fit for IPC)
//   Flex...<T>                        the same with the capacity chosen at run time (create)
//
// The ring machinery, FlexQueue included, is in detail/lockfree_queue_ring.h; the waiting
// send/recv that several classes share, in detail/lockfree_queue_wait.h.
//
// Capacity: N (or create(c)) is rounded up to a power of two, at least 2, and the queue holds
// exactly that many items. push() on a full queue returns false and overwrites nothing; pop() on
// an empty one returns false; the batch calls move as many as fit and return the count. T must be
// trivially copyable or a std::shared_ptr. push/pop never block or yield and may be called from
// any OS thread, vCPU or none. send()/recv() retry until they succeed, pausing with a policy:
// CPUPause spins, ThreadPause yields the OS thread, PhotonPause yields the coroutine.
// Memory ordering: a push happens-before the pop that returns its item (release/acquire on the
// slot's mark, or on the published index), so the item's pointees are visible to the consumer.
// empty(), full(), read_available() and write_available() are snapshots, exact when idle.
//
// Differences from PhotonLibOS: doc/compat.md#commonlockfree_queueh
// Floor: thread (tools/floors.txt), above its folder's: it is built on photon's coroutines.
#pragma once

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <new>
#include <thread>
#include <type_traits>
#include <utility>

#include <photon/common/detail/lockfree_queue_ring.h>  // LockfreeRingQueueBase, FlexQueue
#include <photon/common/detail/lockfree_queue_wait.h>  // blocking_ops, SendBackoff, channel_ops
#include <photon/common/utility.h>
#include <photon/thread/thread.h>

struct PauseBase {};

struct CPUPause : PauseBase {
    __FORCE_INLINE__ static void pause() { photon::spin_wait(); }
};

struct ThreadPause : PauseBase {
    __FORCE_INLINE__ static void pause() { std::this_thread::yield(); }
};

// Only on a vCPU: lets the other coroutines run.
struct PhotonPause : PauseBase {
    __FORCE_INLINE__ static void pause() { photon::thread_yield(); }
};

// Multi-producer multi-consumer ring (Vyukov-style): each slot carries a mark saying whose turn
// it is, so a producer claims a position by CAS on tail only when its slot is free, and publishes
// the item by the mark's release store. A thread stalled between claim and publish holds up the
// others at that slot: never use it across processes (Photon's notice), use the SPSC one there.
// MarkType: an unsigned type; its wrap-around is harmless (marks of one slot differ by <= 2).
template <typename T, size_t N, typename MarkType = uint64_t>
class LockfreeMPMCRingQueue : public LockfreeRingQueueBase<T, N> {
    static_assert(std::is_unsigned<MarkType>::value, "MarkType should be an unsigned integer");

protected:
    using Base = LockfreeRingQueueBase<T, N>;

    using Base::head;
    using Base::idx;
    using Base::tail;

public:
    struct alignas(CPUCacheLine::SIZE) packedslot {
        T data;
        std::atomic<MarkType> mark{0};
    };

protected:
    using slot_type = packedslot;

    packedslot slots[Base::SLOTS_NUM];

    // Marks of position x's slot: free for lap turn(x), holding x's item, read (= free for the
    // next lap).
    MarkType last_turn_read(const uint64_t x) const { return (MarkType)(Base::turn(x) << 1); }
    MarkType this_turn_write(const uint64_t x) const {
        return (MarkType)((Base::turn(x) << 1) + 1);
    }
    MarkType this_turn_read(const uint64_t x) const { return (MarkType)((Base::turn(x) << 1) + 2); }

    explicit LockfreeMPMCRingQueue(size_t c) : Base(c) {}

public:
    using Base::empty;
    using Base::full;

    explicit LockfreeMPMCRingQueue() : Base() {}

    // false if the queue is full (x is not stored).
    bool push(const T& x) {
        size_t t = tail.load(std::memory_order_relaxed);
        photon::lockfree_detail::backoff wait;
        for (;;) {
            packedslot& s = slots[idx(t)];
            if (s.mark.load(std::memory_order_acquire) == last_turn_read(t)) {
                // The acquire above ordered the last lap's read before our write.
                if (tail.compare_exchange_weak(t, t + 1, std::memory_order_relaxed)) {
                    s.data = x;
                    s.mark.store(this_turn_write(t), std::memory_order_release);
                    return true;
                }
                continue;  // t now holds the current tail
            }
            size_t prev = t;
            size_t h = head.load(std::memory_order_acquire);
            t = tail.load(std::memory_order_relaxed);
            if (t == prev) {
                if (Base::check_full(h, t)) return false;
                wait.pause();  // a consumer claimed the slot and is still reading it
            }
        }
    }

    // false if no item is ready. Spins while a producer that claimed the first position has not
    // finished writing it.
    bool pop(T& x) {
        size_t h = head.load(std::memory_order_relaxed);
        photon::lockfree_detail::backoff wait;
        for (;;) {
            packedslot& s = slots[idx(h)];
            if (s.mark.load(std::memory_order_acquire) == this_turn_write(h)) {
                if (head.compare_exchange_weak(h, h + 1, std::memory_order_relaxed)) {
                    x = std::move(s.data);
                    s.mark.store(this_turn_read(h), std::memory_order_release);
                    return true;
                }
                continue;
            }
            size_t prev = h;
            size_t t = tail.load(std::memory_order_acquire);
            h = head.load(std::memory_order_relaxed);
            if (h == prev) {
                if (Base::check_empty(h, t)) return false;
                wait.pause();
            }
        }
    }

    // Claims the next position at once and waits (Pause) until its slot is free. May run past a
    // full queue; the position is then served when consumers catch up.
    template <typename Pause = ThreadPause>
    void send(const T& x) {
        static_assert(std::is_base_of<PauseBase, Pause>::value,
                      "Pause should be derived by PauseBase");
        size_t t = tail.fetch_add(1, std::memory_order_relaxed);
        packedslot& s = slots[idx(t)];
        while (s.mark.load(std::memory_order_acquire) != last_turn_read(t)) Pause::pause();
        s.data = x;
        s.mark.store(this_turn_write(t), std::memory_order_release);
    }

    // Claims the next position at once and waits (Pause) until its item arrives.
    template <typename Pause = ThreadPause>
    T recv() {
        static_assert(std::is_base_of<PauseBase, Pause>::value,
                      "Pause should be derived by PauseBase");
        size_t h = head.fetch_add(1, std::memory_order_relaxed);
        packedslot& s = slots[idx(h)];
        while (s.mark.load(std::memory_order_acquire) != this_turn_write(h)) Pause::pause();
        T ret = std::move(s.data);
        s.mark.store(this_turn_read(h), std::memory_order_release);
        return ret;
    }
};

template <typename T>
using FlexLockfreeMPMCRingQueue =
    FlexQueue<typename LockfreeMPMCRingQueue<T, 0>::packedslot, LockfreeMPMCRingQueue<T, 0>>;

// MPMC ring moving runs of items. Each side has two cursors: producers reserve [tail, tail+n)
// by CAS, copy, then publish in reservation order by advancing write_head; consumers reserve on
// read_tail up to write_head, copy out, then release in order by advancing head. A thread
// stalled between reserve and publish holds up later publishers (they spin, then yield).
template <typename T, size_t N>
class LockfreeBatchMPMCRingQueue
    : public LockfreeRingQueueBase<T, N>,
      public photon::lockfree_detail::blocking_ops<LockfreeBatchMPMCRingQueue<T, N>, T> {
protected:
    using Base = LockfreeRingQueueBase<T, N>;
    using Base::check_empty;
    using Base::check_full;
    using Base::check_mask_equal;

    using Base::head;  // read_head: consumers released up to here
    using Base::idx;
    using Base::tail;  // write_tail: producers reserved up to here

    using slot_type = T;

    alignas(CPUCacheLine::SIZE) std::atomic<size_t> write_head{0};  // published up to here
    alignas(CPUCacheLine::SIZE) std::atomic<size_t> read_tail{0};   // consumers reserved
    alignas(CPUCacheLine::SIZE) T slots[Base::SLOTS_NUM];

    explicit LockfreeBatchMPMCRingQueue(size_t c) : Base(c) {}

public:
    explicit LockfreeBatchMPMCRingQueue() : Base() {}

    // Pushes the first min(n, free slots) items of x; returns how many (0 if full or n == 0).
    size_t push_batch(const T* x, size_t n) {
        if (n == 0) return 0;
        size_t wt = tail.load(std::memory_order_relaxed), wn;
        for (;;) {
            // Acquire: the consumers' reads of the slots we are about to reuse come first.
            size_t rh = head.load(std::memory_order_acquire);
            ptrdiff_t used = photon::lockfree_detail::distance(rh, wt);
            if (used < 0) {  // wt is stale: the ring moved on past it
                wt = tail.load(std::memory_order_relaxed);
                continue;
            }
            size_t space = used >= (ptrdiff_t)Base::capacity ? 0 : Base::capacity - used;
            wn = std::min(n, space);
            if (wn == 0) return 0;
            if (tail.compare_exchange_weak(wt, wt + wn, std::memory_order_relaxed)) break;
        }
        copy_around(wt, wn, [&](T* slot, size_t k, size_t done) {
            photon::lockfree_detail::copy_in(slot, x + done, k);
        });
        photon::lockfree_detail::publish_in_order(write_head, wt, wn);
        return wn;
    }

    bool push(const T& x) { return push_batch(&x, 1) == 1; }

    // Pops up to n items into x; returns how many (0 if none is published or n == 0).
    size_t pop_batch(T* x, size_t n) {
        if (n == 0) return 0;
        size_t rt = read_tail.load(std::memory_order_relaxed), rn;
        for (;;) {
            // Acquire: the producers' writes of the published items come first.
            size_t wh = write_head.load(std::memory_order_acquire);
            ptrdiff_t ready = photon::lockfree_detail::distance(rt, wh);
            if (ready < 0) {
                rt = read_tail.load(std::memory_order_relaxed);
                continue;
            }
            rn = std::min(n, (size_t)ready);
            if (rn == 0) return 0;
            if (read_tail.compare_exchange_weak(rt, rt + rn, std::memory_order_relaxed)) break;
        }
        copy_around(rt, rn, [&](T* slot, size_t k, size_t done) {
            photon::lockfree_detail::move_out(x + done, slot, k);
        });
        photon::lockfree_detail::publish_in_order(head, rt, rn);
        return rn;
    }

    bool pop(T& x) { return pop_batch(&x, 1) == 1; }

    // Nothing reserved by producers that consumers have not released.
    bool empty() const {
        size_t h = head.load(std::memory_order_acquire);
        return check_empty(h, tail.load(std::memory_order_acquire));
    }

    // Every slot published and not yet reserved by a consumer.
    bool full() const {
        size_t wh = write_head.load(std::memory_order_acquire);
        return check_full(read_tail.load(std::memory_order_acquire), wh);
    }

    // Published items not yet reserved by consumers.
    size_t read_available() const {
        size_t rt = read_tail.load(std::memory_order_acquire);
        size_t wh = write_head.load(std::memory_order_acquire);
        return photon::lockfree_detail::clamp_count(photon::lockfree_detail::distance(rt, wh),
                                                    Base::capacity);
    }

    // Slots released by consumers and not yet reserved by producers.
    size_t write_available() const {
        size_t wt = tail.load(std::memory_order_acquire);
        size_t rh = head.load(std::memory_order_acquire);
        return Base::capacity - photon::lockfree_detail::clamp_count(
                                    photon::lockfree_detail::distance(rh, wt), Base::capacity);
    }

protected:
    // Calls fn(slot pointer, count, items done before) for the one or two runs of [pos, pos+n).
    template <typename Fn>
    void copy_around(size_t pos, size_t n, Fn&& fn) {
        size_t first = idx(pos), part = std::min(n, Base::capacity - first);
        fn(&slots[first], part, 0);
        if (part < n) fn(&slots[0], n - part, part);
    }
};

template <typename T>
using FlexLockfreeBatchMPMCRingQueue = FlexQueue<T, LockfreeBatchMPMCRingQueue<T, 0>>;

// Single-producer single-consumer ring: push/produce calls from one thread at a time, pop/consume
// calls from one thread at a time (serialize more with a lock). Wait-free; fit for shared memory
// between processes.
template <typename T, size_t N>
class LockfreeSPSCRingQueue
    : public LockfreeRingQueueBase<T, N>,
      public photon::lockfree_detail::blocking_ops<LockfreeSPSCRingQueue<T, N>, T> {
protected:
    using Base = LockfreeRingQueueBase<T, N>;
    using Base::head;
    using Base::idx;
    using Base::tail;

    using slot_type = T;

    // Each side's last view of the other side's cursor, so it reads (and pulls over) that cache
    // line only when the view says full or empty.
    alignas(CPUCacheLine::SIZE) size_t head_seen_ = 0;  // producer's; <= head
    alignas(CPUCacheLine::SIZE) size_t tail_seen_ = 0;  // consumer's; <= tail
    alignas(CPUCacheLine::SIZE) T slots[Base::SLOTS_NUM];

    explicit LockfreeSPSCRingQueue(size_t c) : Base(c) {}

public:
    using Base::empty;
    using Base::full;

    explicit LockfreeSPSCRingQueue() : Base() {}

    // false if the queue is full (x is not stored).
    bool push(const T& x) {
        size_t t = tail.load(std::memory_order_relaxed);
        if (unlikely(free_slots(t, 1) == 0)) return false;
        slots[idx(t)] = x;
        tail.store(t + 1, std::memory_order_release);  // publishes the item
        return true;
    }

    // false if the queue is empty.
    bool pop(T& x) {
        size_t h = head.load(std::memory_order_relaxed);
        if (unlikely(ready_items(h, 1) == 0)) return false;
        x = std::move(slots[idx(h)]);
        head.store(h + 1, std::memory_order_release);  // hands the slot back
        return true;
    }

    // Pushes the first min(n, free slots) items of x; returns how many.
    size_t push_batch(const T* x, size_t n) {
        return produce_push_batch(n, [&](T* p1, size_t n1, T* p2, size_t n2) {
            photon::lockfree_detail::copy_in(p1, x, n1);
            photon::lockfree_detail::copy_in(p2, x + n1, n2);
        });
    }

    // Reserves k = min(n, free slots) slots and calls produce(T* p1, size_t n1, T* p2, size_t n2)
    // to write them in place (n1 + n2 == k; p2 is nullptr and n2 0 unless the run wraps), then
    // publishes them. Returns k; produce is not called when k == 0.
    template <typename Producer>
    size_t produce_push_batch(size_t n, Producer&& produce) {
        size_t t = tail.load(std::memory_order_relaxed);
        n = std::min(n, free_slots(t, n));
        if (n == 0) return 0;
        split(t, n, produce);
        tail.store(t + n, std::memory_order_release);
        return n;
    }

    // As produce_push_batch(), but all n or nothing: returns 0 (produce not called) if fewer
    // than n slots are free.
    template <typename Producer>
    size_t produce_push_batch_fully(size_t n, Producer&& produce) {
        size_t t = tail.load(std::memory_order_relaxed);
        if (n == 0 || free_slots(t, n) < n) return 0;
        split(t, n, produce);
        tail.store(t + n, std::memory_order_release);
        return n;
    }

    // Pops up to n items into x; returns how many.
    size_t pop_batch(T* x, size_t n) {
        size_t h = head.load(std::memory_order_relaxed);
        n = std::min(n, ready_items(h, n));
        if (n == 0) return 0;
        split(h, n, [&](T* p1, size_t n1, T* p2, size_t n2) {
            photon::lockfree_detail::move_out(x, p1, n1);
            photon::lockfree_detail::move_out(x + n1, p2, n2);
        });
        head.store(h + n, std::memory_order_release);
        return n;
    }

    // Calls consume(const T* p1, size_t n1, const T* p2, size_t n2) on k = min(n, ready items)
    // items in place, then releases their slots. Returns k; consume is not called when k == 0.
    template <typename Consumer>
    size_t consume_pop_batch(size_t n, Consumer&& consume) {
        size_t h = head.load(std::memory_order_relaxed);
        n = std::min(n, ready_items(h, n));
        if (n == 0) return 0;
        split(h, n, [&](T* p1, size_t n1, T* p2, size_t n2) {
            consume((const T*)p1, n1, (const T*)p2, n2);
        });
        head.store(h + n, std::memory_order_release);
        return n;
    }

protected:
    // Producer side: free slots at tail t, re-reading head only if the last view shows < want.
    size_t free_slots(size_t t, size_t want) {
        size_t free = Base::capacity - (t - head_seen_);
        if (free < want) {
            // Acquire: the consumer's reads of those slots precede our writes.
            head_seen_ = head.load(std::memory_order_acquire);
            free = Base::capacity - (t - head_seen_);
        }
        return free;
    }

    // Consumer side: ready items at head h, re-reading tail only if the last view shows < want.
    size_t ready_items(size_t h, size_t want) {
        size_t ready = tail_seen_ - h;
        if (ready < want) {
            // Acquire: the producer's writes of those items precede our reads.
            tail_seen_ = tail.load(std::memory_order_acquire);
            ready = tail_seen_ - h;
        }
        return ready;
    }

    // Calls fn(p1, n1, p2, n2) with the one or two runs of slots holding [pos, pos + n).
    template <typename Fn>
    void split(size_t pos, size_t n, Fn&& fn) {
        size_t first = idx(pos), part = Base::capacity - first;
        if (likely(part >= n))
            fn(&slots[first], n, (T*)nullptr, size_t(0));
        else
            fn(&slots[first], part, &slots[0], n - part);
    }
};

template <typename T>
using FlexLockfreeSPSCRingQueue = FlexQueue<T, LockfreeSPSCRingQueue<T, 0>>;

namespace photon {
namespace common {

// A lock-free queue (LockfreeMPMCRingQueue, LockfreeBatchMPMCRingQueue or LockfreeSPSCRingQueue
// with a fixed N) whose recv() parks the calling coroutine while the queue is empty, and whose
// send() wakes it. recv() must run on a vCPU; send() may run anywhere (pick the Pause that fits:
// ThreadPause, the default, for OS threads, PhotonPause for coroutines). The inherited push()
// and pop() wake nobody: a parked peer then notices within 100 ms. send(), recv() and
// notification_pending() come from channel_ops (detail/lockfree_queue_wait.h).
template <typename QueueType>
class RingChannel
    : public QueueType,
      public lockfree_detail::channel_ops<RingChannel<QueueType>,
                                          decltype(std::declval<QueueType>().recv())> {
protected:
    using T = decltype(std::declval<QueueType>().recv());

private:
    using Ops = lockfree_detail::channel_ops<RingChannel, T>;
    friend Ops;
    QueueType& ring_queue() { return *this; }

public:
    using Ops::notification_pending;
    using Ops::recv;
    using Ops::send;
    using QueueType::empty;
    using QueueType::full;
    using QueueType::pop;
    using QueueType::push;
    using QueueType::read_available;
    using QueueType::write_available;

    RingChannel() = default;
    explicit RingChannel(uint64_t max_yield_turn, uint64_t max_yield_usec)
        : Ops(max_yield_turn, max_yield_usec) {}
};

// RingChannel over a run-time sized Flex queue, which it owns (a Flex queue's slots follow it in
// memory, so the channel cannot derive from it). Make it with create(), end it with destroy().
template <typename FlexQueueType>
class FlexRingChannel
    : lockfree_detail::channel_queue<FlexQueueType>,
      public lockfree_detail::channel_ops<FlexRingChannel<FlexQueueType>,
                                          decltype(std::declval<FlexQueueType>().recv())> {
    using T = decltype(std::declval<FlexQueueType>().recv());
    using Ops = lockfree_detail::channel_ops<FlexRingChannel, T>;
    friend Ops;
    using lockfree_detail::channel_queue<FlexQueueType>::queue_;

    FlexRingChannel(FlexQueueType* q, uint64_t yield_turn, uint64_t yield_usec)
        : lockfree_detail::channel_queue<FlexQueueType>{q}, Ops(yield_turn, yield_usec) {}
    FlexQueueType& ring_queue() { return *queue_; }

public:
    ~FlexRingChannel() = default;

    FlexRingChannel(const FlexRingChannel&) = delete;
    FlexRingChannel& operator=(const FlexRingChannel&) = delete;

    // nullptr with errno EINVAL (capacity too large) or ENOMEM.
    static FlexRingChannel* create(size_t capacity, uint64_t max_yield_turn = 1024,
                                   uint64_t max_yield_usec = 1024) {
        auto q = FlexQueueType::create(capacity);
        if (!q) return nullptr;
        auto ch = new (std::nothrow) FlexRingChannel(q, max_yield_turn, max_yield_usec);
        if (!ch) {
            FlexQueueType::destroy(q);
            errno = ENOMEM;
        }
        return ch;
    }

    // Destroys the channel, its queue and the items left in it (nullptr: no-op).
    static void destroy(FlexRingChannel* ch) {
        if (!ch) return;
        FlexQueueType::destroy(ch->queue_);
        delete ch;
    }

    bool empty() const { return queue_->empty(); }
    bool full() const { return queue_->full(); }
    size_t read_available() const { return queue_->read_available(); }
    size_t write_available() const { return queue_->write_available(); }
};

}  // namespace common
}  // namespace photon
