// EventLoop: runs `wait(loop)` until it reports events, then `on_event(loop)`,
// over and over until stopped. wait returns > 0 for events, 0 for "none yet,
// ask again" (it should then have slept a while), < 0 to end the loop.
//
// The loop runs on a photon coroutine: run() in the calling one, async_run()
// in a new one. stop() ends it: it interrupts a wait in progress (the
// callback's sleep returns -1 with EINTR) and blocks the calling coroutine
// until the loop has ended. All calls on the loop's vCPU.
//
// Differences from PhotonLibOS: doc/compat.md#commonevent-looph
// Floor: runtime (tools/floors.txt), above its folder's: it needs vCPUs and engines.
#pragma once

#include <photon/common/callback.h>
#include <photon/common/object.h>

namespace photon {
struct thread;
}

class EventLoop : public Object {
public:
    static constexpr int STOP = 0;
    static constexpr int RUNNING = 1;
    static constexpr int WAITING = 2;
    static constexpr int STOPPING = -1;

    // > 0: event(s) ready; 0: none yet, wait again; < 0: end the loop.
    using Wait4Events = Callback<EventLoop*>;
    // Handles the events; the return value is ignored.
    using OnEvents = Callback<EventLoop*>;

    // Runs the loop in the calling coroutine until it ends.
    virtual void run() = 0;
    // Runs the loop in a new coroutine of this vCPU and returns.
    virtual void async_run() = 0;
    // Ends the loop and waits until it has (see above); no-op if stopped.
    virtual void stop() = 0;

    int state() { return m_state; }

    // The coroutine running the loop, nullptr when it does not run.
    photon::thread* loop_thread() { return m_thread; }

protected:
    EventLoop() {}  // made by new_event_loop()
    photon::thread* m_thread = nullptr;
    int m_state = STOP;
};

// A stopped loop of the two callbacks, which must outlive it. Deleting it
// stops it first. nullptr with ENOMEM.
extern "C" EventLoop* new_event_loop(EventLoop::Wait4Events wait, EventLoop::OnEvents on_event);
