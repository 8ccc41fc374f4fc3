// RingQueue<T> and RingBuffer, as PhotonLibOS declares them (global namespace): bounded FIFO
// rings whose push_back()/write() block the calling coroutine while the ring is full and whose
// pop_front()/read() block it while the ring is empty. For coroutines of ONE vCPU: the cursors
// are plain integers (use the lock-free queues of lockfree_queue.h across vCPUs).
//
// Capacity: the constructor's argument is rounded up to a power of two, at least 2 and at most
// 2^31; one slot always stays empty, so the ring holds capacity() - 1 items (RingQueue(8) holds
// 7, as in Photon). If the buffer cannot be allocated, capacity() is 0 and every blocking call
// fails at once with errno ENOMEM.
//
// Differences from PhotonLibOS: doc/compat.md#commonringh
// Floor: thread (tools/floors.txt), above its folder's: it is built on photon's coroutines.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <utility>

#include <photon/common/utility.h>
#include <photon/thread/thread.h>

// The cursor arithmetic and waiting of RingQueue, kept out of the template to keep it small.
class RingBase {
public:
    RingBase(const RingBase&) = delete;
    RingBase& operator=(const RingBase&) = delete;

    uint32_t capacity() const { return m_capacity; }
    uint32_t size() const { return mod(m_end - m_begin); }
    bool empty() const { return m_begin == m_end; }
    bool full() const { return next_end() == m_begin; }
    // Blocks until something is pushed (or popped), the timeout (us) passes or an interrupt.
    void wait_for_push(uint64_t timeout = -1) { m_cond_push.wait_no_lock(timeout); }
    void wait_for_pop(uint64_t timeout = -1) { m_cond_pop.wait_no_lock(timeout); }

protected:
    uint32_t m_begin = 0, m_end = 0, m_capacity = 0, m_mask = 0;
    photon::condition_variable m_cond_pop, m_cond_push;

    // Rounds `capacity` as the header says, stores and returns it.
    uint32_t set_capacity(uint32_t& capacity) {
        uint32_t c = capacity < 2 ? 2 : capacity;
        m_capacity = c > (1u << 31) ? (1u << 31) : (uint32_t)round_up_to_exp2(c);
        m_mask = m_capacity - 1;
        return m_capacity;
    }

    // 0 once there is room; -1 with errno on an interrupt (or ENOMEM if there is no buffer).
    int ensure_not_full() {
        if (unlikely(m_capacity == 0)) return errno = ENOMEM, -1;
        while (full())
            if (m_cond_pop.wait_no_lock() < 0) return -1;
        return 0;
    }

    // 0 once there is an item; -1 with errno on an interrupt (or ENOMEM if there is no buffer).
    int ensure_not_empty() {
        if (unlikely(m_capacity == 0)) return errno = ENOMEM, -1;
        while (empty())
            if (m_cond_push.wait_no_lock() < 0) return -1;
        return 0;
    }

    RingBase() {}
    uint32_t mod(uint32_t i) const { return i & m_mask; }
    uint32_t next_end() const { return mod(m_end + 1); }
    uint32_t next_begin() const { return mod(m_begin + 1); }
};

template <typename T>
class RingQueue : public RingBase {
public:
    // `capacity` will be rounded up to 2^n (see the header comment).
    RingQueue(uint32_t capacity_2expn) {
        set_capacity(capacity_2expn);
        // Raw memory: items are constructed on push and destroyed on pop.
        m_buf = (T*)malloc((size_t)m_capacity * sizeof(T));
        if (!m_buf) m_capacity = m_mask = 0;
    }
    ~RingQueue() {
        clear();
        free(m_buf);
    }

    // Unchecked, like std::deque: the queue must not be empty / i < size().
    T& front() { return m_buf[m_begin]; }
    T& back() { return m_buf[mod(m_end - 1)]; }
    T& operator[](uint64_t i) { return m_buf[mod(m_begin + i)]; }
    const T& front() const { return m_buf[m_begin]; }
    const T& back() const { return m_buf[mod(m_end - 1)]; }
    const T& operator[](uint64_t i) const { return m_buf[mod(m_begin + i)]; }

    // Appends x, blocking while full. On an interrupt nothing is stored and errno tells why.
    template <typename U>
    void push_back(U&& x) {
        if (ensure_not_full() < 0) return;
        new (&m_buf[m_end]) T(std::forward<U>(x));
        m_end = next_end();
        m_cond_push.notify_one();
    }

    // Drops the front item, blocking while empty. On an interrupt nothing changes.
    void pop_front() {
        if (ensure_not_empty() < 0) return;
        m_buf[m_begin].~T();
        m_begin = next_begin();
        m_cond_pop.notify_one();
    }

    // Moves the front item into lhs and drops it, blocking while empty. On an interrupt lhs and
    // the queue are unchanged and errno tells why.
    void pop_front(T& lhs) {
        if (ensure_not_empty() < 0) return;
        lhs = std::move(front());
        pop_front();
    }

    void clear() {
        while (!empty()) pop_front();
    }

protected:
    T* m_buf;
};

// A byte ring: write() blocks until all bytes are in, read() until all are out. One reader and
// one writer may block at once (the others queue on m_read_lock / m_write_lock).
class RingBuffer : public RingQueue<char> {
public:
    using RingQueue::RingQueue;

    // count bytes, or fewer if interrupted after some; -1 with errno if interrupted before any,
    // or EINVAL for a null buf or a count above SSIZE_MAX.
    ssize_t read(void* buf, size_t count) {
        photon::scoped_lock lock(m_read_lock);
        return do_read(buf, count);
    }
    ssize_t write(const void* buf, size_t count) {
        photon::scoped_lock lock(m_write_lock);
        return do_write(buf, count);
    }
    // As read()/write() over the iovecs in turn; -1 EINVAL for a null iov or negative iovcnt.
    ssize_t readv(const struct iovec* iov, int iovcnt);
    ssize_t writev(const struct iovec* iov, int iovcnt);

protected:
    photon::mutex m_read_lock, m_write_lock;
    ssize_t do_read(void* buf, size_t count);
    ssize_t do_write(const void* buf, size_t count);
    // One contiguous copy between the ring and buf, at most up to ring offset `end`; advances
    // buf, count and the cursor (which may then equal m_capacity); returns the bytes copied.
    ssize_t do_read(void*& buf, uint64_t& count, uint64_t end);
    ssize_t do_write(const void*& buf, uint64_t& count, uint64_t end);
};
