// The ring machinery under the queues of <photon/common/lockfree_queue.h>: the cursors and
// their index arithmetic (LockfreeRingQueueBase), the capacity rounding, the item copies and
// spin-then-yield waits the queues' push/pop paths share, and FlexQueue, which places a
// queue's slots after it for a run-time capacity. Not on its own: include lockfree_queue.h.
// CPUCacheLine, is_shared_ptr, LockfreeRingQueueBase and FlexQueue keep PhotonLibOS's global
// names.
// Floor: thread (tools/floors.txt), above its folder's: it is built on photon's coroutines.
#pragma once

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <thread>
#include <type_traits>

#include <photon/common/utility.h>
#include <photon/thread/detail/spin_wait.h>

// Differences from PhotonLibOS: doc/compat.md#commondetaillockfree_queue_ringh
struct CPUCacheLine {
    constexpr static size_t SIZE = 64;
};

template <typename T>
struct is_shared_ptr : std::false_type {};
template <typename T>
struct is_shared_ptr<std::shared_ptr<T>> : std::true_type {};

namespace photon {
namespace lockfree_detail {

// The smallest power of two >= c, at least 2: a ring of 1 could not tell full from empty.
constexpr size_t ring_capacity(size_t c) {
    return c <= 2 ? 2 : size_t(1) << (64 - __builtin_clzll(c - 1));
}

// Run-time capacities above this are refused: their byte counts could overflow.
constexpr size_t kMaxRuntimeCapacity = size_t(1) << 48;

// t - h as a signed count; negative when recv() claimed positions the producers have not reached.
inline ptrdiff_t distance(size_t h, size_t t) { return (ptrdiff_t)(t - h); }

inline size_t clamp_count(ptrdiff_t d, size_t capacity) {
    return d <= 0 ? 0 : ((size_t)d > capacity ? capacity : (size_t)d);
}

template <typename T>
void copy_in(T* dst, const T* src, size_t n, std::true_type /* trivially copyable */) {
    if (n) memcpy((void*)dst, (const void*)src, n * sizeof(T));
}
template <typename T>
void copy_in(T* dst, const T* src, size_t n, std::false_type) {
    std::copy(src, src + n, dst);
}
template <typename T>
void copy_in(T* dst, const T* src, size_t n) {
    copy_in(dst, src, n, std::is_trivially_copyable<T>());
}

template <typename T>
void move_out(T* dst, T* src, size_t n, std::true_type /* trivially copyable */) {
    if (n) memcpy((void*)dst, (const void*)src, n * sizeof(T));
}
template <typename T>
void move_out(T* dst, T* src, size_t n, std::false_type) {
    std::move(src, src + n, dst);
}
template <typename T>
void move_out(T* dst, T* src, size_t n) {
    move_out(dst, src, n, std::is_trivially_copyable<T>());
}

// Waiting for another OS thread to finish a step: spin a little, then give the CPU away, as
// that thread may be preempted on this very CPU.
struct backoff {
    uint32_t rounds = 0;
    void pause() {
        if (rounds++ < 64)
            spin_wait();
        else
            std::this_thread::yield();
    }
};

// Moves `cursor` from pos to pos + n once the runs reserved before ours have moved it to pos.
inline void publish_in_order(std::atomic<size_t>& cursor, size_t pos, size_t n) {
    backoff wait;
    while (cursor.load(std::memory_order_acquire) != pos) wait.pause();
    // Release: our slot copies, and transitively the earlier runs', precede the new cursor.
    cursor.store(pos + n, std::memory_order_release);
}

}  // namespace lockfree_detail
}  // namespace photon

// State shared by the queues: the two cursors on their own cache lines and the capacity.
// Positions grow without bound; a position's slot is idx(pos) and its lap around the ring
// turn(pos).
template <typename T, size_t N>
class LockfreeRingQueueBase {
public:
    static_assert((std::is_trivially_copy_constructible<T>::value &&
                   std::is_trivially_copy_assignable<T>::value) ||
                      is_shared_ptr<T>::value,
                  "T should be trivially copyable (or a std::shared_ptr)");

    constexpr static size_t SLOTS_NUM = N ? photon::lockfree_detail::ring_capacity(N) : 0;

    const size_t capacity;
    const size_t mask;
    const size_t shift;
    const size_t lshift;

    alignas(CPUCacheLine::SIZE) std::atomic<size_t> tail{0};
    alignas(CPUCacheLine::SIZE) std::atomic<size_t> head{0};

    // For the Flex queues: capacity c rounded up.
    explicit LockfreeRingQueueBase(size_t c)
        : capacity(photon::lockfree_detail::ring_capacity(c)),
          mask(capacity - 1),
          shift(__builtin_ctzll(capacity)),
          lshift(8 * sizeof(size_t) - shift) {}

    // For the fixed queues: capacity N rounded up.
    LockfreeRingQueueBase() : LockfreeRingQueueBase(N) {
        static_assert(N > 0, "N = 0 is for the Flex queues; give the fixed queue a capacity");
    }

    bool empty() const { return read_available() == 0; }
    bool full() const { return write_available() == 0; }

    // Items claimed by producers and not yet by consumers. Head is read first: tail only grows,
    // so a later tail is never behind it in push/pop use.
    size_t read_available() const {
        size_t h = head.load(std::memory_order_acquire);
        size_t t = tail.load(std::memory_order_acquire);
        return photon::lockfree_detail::clamp_count(photon::lockfree_detail::distance(h, t),
                                                    capacity);
    }

    size_t write_available() const {
        size_t t = tail.load(std::memory_order_acquire);
        size_t h = head.load(std::memory_order_acquire);
        return capacity - photon::lockfree_detail::clamp_count(
                              photon::lockfree_detail::distance(h, t), capacity);
    }

protected:
    bool check_mask_equal(size_t x, size_t y) const { return ((x ^ y) & mask) == 0; }
    bool check_empty(size_t h, size_t t) const {
        return photon::lockfree_detail::distance(h, t) <= 0;
    }
    bool check_full(size_t h, size_t t) const {
        return photon::lockfree_detail::distance(h, t) >= (ptrdiff_t)capacity;
    }
    size_t idx(size_t x) const { return x & mask; }
    size_t turn(size_t x) const { return x >> shift; }
};

// A queue Q<T, 0> whose slots follow it in one allocation sized for capacity c. T is Q's slot
// type (the Flex... aliases get it right). Not copyable; make it with create() or init_on().
template <typename T, typename Q>
class FlexQueue : public Q {
    static_assert(std::is_same<T, typename Q::slot_type>::value,
                  "FlexQueue<T, Q>: T must be Q's slot type; use the Flex... aliases");

protected:
    FlexQueue(size_t c) : Q(c) {
        for (size_t i = 0; i < this->capacity; i++) new (&this->slots[i]) T();
    }
    ~FlexQueue() {
        for (size_t i = 0; i < this->capacity; i++) this->slots[i].~T();
    }

public:
    // A queue on fresh cache-aligned memory; nullptr with errno EINVAL (c too large) or ENOMEM.
    static FlexQueue* create(size_t c) {
        size_t space = required_space(c);
        if (space == 0) return errno = EINVAL, nullptr;
        void* ptr = nullptr;
        int err = posix_memalign(&ptr, alignment(), space);
        if (err) return errno = err, nullptr;
        memset(ptr, 0, space);
        return new (ptr) FlexQueue(c);
    }

    // Bytes init_on() needs for capacity c; 0 if c is too large.
    static size_t required_space(size_t c) {
        if (c > photon::lockfree_detail::kMaxRuntimeCapacity) return 0;
        size_t slots_bytes;
        if (__builtin_mul_overflow(photon::lockfree_detail::ring_capacity(c), sizeof(T),
                                   &slots_bytes))
            return 0;
        size_t total;
        if (__builtin_add_overflow(sizeof(Q), slots_bytes, &total)) return 0;
        return total;
    }

    // Builds a fresh, empty queue in caller memory of required_space(c) bytes aligned to
    // CPUCacheLine::SIZE; nullptr with errno EINVAL for a null or misaligned ptr or a huge c.
    static FlexQueue* init_on(void* ptr, size_t c) {
        if (!ptr || (uintptr_t)ptr % alignof(FlexQueue) || required_space(c) == 0)
            return errno = EINVAL, nullptr;
        return new (ptr) FlexQueue(c);
    }

    // Destroys the queue and the items left in it, but not its memory (nullptr: no-op).
    static void deinit(FlexQueue* q) {
        if (q) q->~FlexQueue();
    }

    // deinit() and free() for a queue from create().
    static void destroy(FlexQueue* q) {
        deinit(q);
        free(q);
    }

private:
    static constexpr size_t alignment() {
        return alignof(FlexQueue) > CPUCacheLine::SIZE ? alignof(FlexQueue) : CPUCacheLine::SIZE;
    }
};
