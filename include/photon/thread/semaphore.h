// Counting semaphores: wait(n) blocks until n units are there and takes them.
// Usable across vCPUs: a wait() that must sleep needs a vCPU (-1 ENOSYS
// otherwise); signal() may be called from any vCPU or plain OS thread. Also
// reachable through <photon/thread/thread.h>, as in Photon.
#pragma once

#include <atomic>
#include <cstdint>

#include <photon/common/timeout.h>
#include <photon/thread/detail/eshutdown.h>
#include <photon/thread/detail/waitq.h>

namespace photon {

// Counting semaphore. wait(n) takes n units (FIFO by default: a large request
// at the front holds back smaller ones behind it): 0, or -1 with ETIMEDOUT,
// ESHUTDOWN (an interrupt with that errno), EPERM (the coroutine is being shut
// down) or ENOSYS (not on a vCPU); it ignores other interrupts, while
// wait_interruptible() returns on any. signal(n) may be called from any vCPU
// or OS thread.
class semaphore {
public:
    explicit semaphore(uint64_t count = 0, bool in_order_resume = true)
        : m_count(count), m_ooo_resume(!in_order_resume) {}
    int wait(uint64_t count, Timeout timeout = {});
    int wait_interruptible(uint64_t count, Timeout timeout = {});
    int signal(uint64_t count);
    uint64_t count() const { return m_count.load(std::memory_order_relaxed); }

protected:
    bool try_take(uint64_t count);
    std::atomic<uint64_t> m_count;
    waitq q;
    bool m_ooo_resume;
};

// One-shot event for one waiter; signal() may come before wait().
class disposable_semaphore : public semaphore {
public:
    int wait(Timeout timeout = {}) { return semaphore::wait(1, timeout); }
    void signal() { semaphore::signal(1); }
};

}  // namespace photon
