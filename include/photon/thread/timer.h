// Timer: a coroutine of its own that calls on_timer() after each timeout.
// on_timer's return value is the next timeout in us (0: the default one,
// -1: none, the timer waits for reset()). Create, reset, cancel, stop and
// destroy it on the vCPU that created it; stop() and the destructor may
// wait (yield) for a running on_timer to return.
//
// Differences from PhotonLibOS: doc/compat.md#threadtimerh
#pragma once

#include <cassert>
#include <cinttypes>
#include <cstdint>

#include <photon/common/alog.h>  // PhotonLibOS's timer.h brings it; its programs rely on that
#include <photon/common/callback.h>
#include <photon/thread/thread.h>

namespace photon {

class Timer {
public:
    using Entry = Delegate<uint64_t>;

    // Fires after default_timeout us, repeatedly unless !repeating (then once,
    // until reset() re-arms it).
    Timer(uint64_t default_timeout, Entry on_timer, bool repeating = true,
          uint64_t stack_size = DEFAULT_STACK_SIZE);
    Timer(const Timer&) = delete;
    Timer& operator=(const Timer&) = delete;
    ~Timer();

    // Restarts the wait with new_timeout us (-1: the default timeout).
    // 0, or -1 if the timer is not waiting (running on_timer, or failed to
    // start).
    int reset(uint64_t new_timeout = -1);
    // Disarms the timer until reset(). 0, or -1 as reset().
    int cancel();
    // Disarms the timer until reset(), first waiting for a running on_timer
    // to return (from inside on_timer: disarms it once it returns). 0. The
    // coroutine stays, for reset(); the destructor ends it.
    int stop();

protected:
    static void* stub(void* self);
    void run();

    thread* th_ = nullptr;
    Entry on_timer_;
    uint64_t default_timeout_;
    uint64_t timeout_;
    bool repeating_;
    bool waiting_ = false;
    bool stopping_ = false;  // being destroyed: the coroutine ends
    bool joined_ = false;
    bool disarm_ = false;  // stop() during on_timer: stay disarmed after it
};

}  // namespace photon
