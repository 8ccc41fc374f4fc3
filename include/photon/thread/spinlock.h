// Spinlocks: busy-waiting locks that never sleep, for critical sections of a
// few instructions, shared by vCPUs and plain OS threads alike (any thread
// may lock and unlock). Holding one across a sleep or a switch can deadlock
// the vCPU. Also reachable through <photon/thread/thread.h>, as in Photon.
//
// Differences from PhotonLibOS: doc/compat.md#threadspinlockh
#pragma once

#include <atomic>
#include <cstdint>

#include <photon/thread/detail/spin_wait.h>

namespace photon {

// Busy-waiting lock; never sleeps. Keep critical sections short.
class spinlock {
public:
    int lock() {
        while (_lock.exchange(true, std::memory_order_acquire)) {
            // Spin, then yield the CPU: the holder may have been preempted on
            // this one (a wakeup syscall made under the lock can switch to
            // the woken thread at once), and it cannot finish while we spin.
            for (uint32_t i = 0; _lock.load(std::memory_order_relaxed); i++) {
                if (i < kSpinsBeforeYield)
                    spin_wait();
                else
                    spin_yield();
            }
        }
        return 0;
    }
    int try_lock() {
        return (!_lock.load(std::memory_order_relaxed) &&
                !_lock.exchange(true, std::memory_order_acquire))
                   ? 0
                   : -1;
    }
    bool locked() const { return _lock.load(std::memory_order_relaxed); }
    void unlock() { _lock.store(false, std::memory_order_release); }

protected:
    static constexpr uint32_t kSpinsBeforeYield = 128;
    std::atomic<bool> _lock{false};
};

// FIFO spinlock: waiters get the lock in arrival order.
class ticket_spinlock {
public:
    int lock() {
        const auto ticket = next.fetch_add(1, std::memory_order_relaxed);
        while (serv.load(std::memory_order_acquire) != ticket) spin_wait();
        return 0;
    }
    int try_lock() {
        auto s = serv.load(std::memory_order_acquire);
        auto t = s;
        return next.compare_exchange_strong(t, s + 1, std::memory_order_acquire) ? 0 : -1;
    }
    void unlock() { serv.fetch_add(1, std::memory_order_release); }

protected:
    std::atomic<uint32_t> next{0};
    std::atomic<uint32_t> serv{0};
};

// Queued (MCS) spinlock: FIFO, and each waiter spins on a node of its own
// instead of the lock word. Never sleeps. Holders may nest qspinlocks, and
// may unlock on another OS thread than the one that locked.
class qspinlock {
public:
    qspinlock() = default;
    qspinlock(const qspinlock&) = delete;
    qspinlock& operator=(const qspinlock&) = delete;
    int try_lock();  // 0, or -1 if held
    int lock();      // 0
    bool locked() const { return _owner_tail.load(std::memory_order_acquire) != nullptr; }
    void unlock();

protected:
    struct holder;
    static holder* take_node();
    static void put_node(holder* h);
    std::atomic<holder*> _owner_tail{nullptr};  // the last queued node
    holder* owner_ = nullptr;                   // the holder's node; only the holder uses it
};

}  // namespace photon
