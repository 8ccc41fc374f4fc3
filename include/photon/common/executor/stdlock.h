// StdCond: a condition variable over a std::mutex with Photon's timed-wait
// convention (microseconds, negative = forever), for code that waits on
// plain OS threads. Blocks the calling OS thread (the whole vCPU, if it is
// one).
//
// Differences from PhotonLibOS: doc/compat.md#commonexecutorstdlockh
// Floor: runtime (tools/floors.txt), above its folder's: it needs vCPUs and engines.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include <photon/thread/awaiter.h>

namespace photon {

struct StdCond {
    std::condition_variable cond;
    std::mutex& mtx;

    StdCond(std::mutex& mtx) : mtx(mtx) {}

    template <typename Lock>
    void wait(Lock& lock) {
        cond.wait(lock);
    }
    // false if `timeout` microseconds passed without a notification; may
    // also return true on a spurious wakeup, as std::condition_variable.
    template <typename Lock>
    bool wait_for(Lock& lock, int64_t timeout) {
        if (timeout < 0) {
            cond.wait(lock);
            return true;
        }
        return cond.wait_for(lock, std::chrono::microseconds(timeout)) ==
               std::cv_status::no_timeout;
    }
    void notify_one() { cond.notify_one(); }
    void notify_all() { cond.notify_all(); }
    void lock() { mtx.lock(); }
    void unlock() { mtx.unlock(); }
};

}  // namespace photon
