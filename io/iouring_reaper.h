// uring_reaper: a coroutine that dispatches the CQEs of a ring the vCPU does
// not wait on itself (the sidecar ring of a non-io_uring master, a cascading
// engine's ring). It parks on the master engine until the ring's registered
// eventfd is readable; on a vCPU without a master engine a helper OS thread
// watches the eventfd and wakes it. Private header.
#pragma once

#include <atomic>
#include <thread>

#include <photon/thread/thread.h>

#include "iouring_ring.h"

namespace photon {

class uring_reaper {
public:
    uring_reaper() = default;
    uring_reaper(const uring_reaper&) = delete;
    uring_reaper& operator=(const uring_reaper&) = delete;
    ~uring_reaper() { stop(); }

    // Starts reaping `ring` on the calling vCPU. 0, or -1 with errno.
    int start(uring* ring);
    // Waits until the ring has no parked request, then ends the coroutine.
    // Blocks the calling coroutine. photon::fini() stops live reapers.
    void stop();

    uring_reaper* prev_ = nullptr;  // live reapers of this OS thread
    uring_reaper* next_ = nullptr;

private:
    static void* entry(void* self);
    void run();
    void wait_event();
    void helper_loop();

    uring* ring_ = nullptr;
    MasterEventEngine* master_ = nullptr;
    thread* th_ = nullptr;
    join_handle* jh_ = nullptr;
    bool stopping_ = false;
    // Without a master engine:
    std::thread helper_;
    std::atomic<bool> helper_stop_{false};
    semaphore events_;
};

// The calling vCPU's sidecar ring for iouring_* calls when its master engine
// is not io_uring; created on first use. nullptr with errno.
uring* sidecar_ring();

}  // namespace photon
