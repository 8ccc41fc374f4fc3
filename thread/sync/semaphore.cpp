#include "../vcpu.h"
#include "waitq.h"

namespace photon {

namespace {

// Wakes the waiters whose request now fits, in queue order; with in-order
// resume, a waiter that does not fit holds back those behind it.
void grant_waiters(waitq* q, std::atomic<uint64_t>& count, bool out_of_order) {
    thread* th = waitq_front(q);
    while (th) {
        thread* next = th->wq_next == waitq_front(q) ? nullptr : th->wq_next;
        uint64_t c = count.load(std::memory_order_relaxed);
        bool taken = false;
        while (c >= th->wait_arg) {
            if (count.compare_exchange_weak(c, c - th->wait_arg, std::memory_order_acquire)) {
                taken = true;
                break;
            }
        }
        if (taken)
            waitq_wake(q, th);
        else if (!out_of_order)
            break;
        th = next;
    }
}

}  // namespace

bool semaphore::try_take(uint64_t n) {
    uint64_t c = m_count.load(std::memory_order_relaxed);
    while (c >= n)
        if (m_count.compare_exchange_weak(c, c - n, std::memory_order_acquire)) return true;
    return false;
}

int semaphore::wait_interruptible(uint64_t n, Timeout timeout) {
    if (n == 0) return 0;
    // Skip the queue only when nobody waits (FIFO), else join it.
    if (!q.head && try_take(n)) return 0;
    q.lock.lock();
    if (!q.head && try_take(n)) {
        q.lock.unlock();
        return 0;
    }
    if (CURRENT) CURRENT->wait_arg = n;
    int ret = waitq_sleep(&q, timeout);
    // Leaving the front may let those behind us proceed.
    if (ret < 0) grant_waiters(&q, m_count, m_ooo_resume);
    q.lock.unlock();
    return ret;
}

int semaphore::wait(uint64_t n, Timeout timeout) {
    while (true) {
        int ret = wait_interruptible(n, timeout);
        if (ret == 0 || errno == ETIMEDOUT || errno == ESHUTDOWN || errno == ENOSYS ||
            errno == EPERM)
            return ret;
    }
}

int semaphore::signal(uint64_t n) {
    if (n == 0) return 0;
    q.lock.lock();
    m_count.fetch_add(n, std::memory_order_release);
    grant_waiters(&q, m_count, m_ooo_resume);
    q.lock.unlock();
    return 0;
}

}  // namespace photon
