#include <photon/thread/timer.h>

#include <photon/common/alog.h>

namespace photon {

namespace {

// Wakes the waiting timer so it re-reads timeout_ / stopping_.
constexpr int kRearm = EAGAIN;

// stop() callers waiting for an on_timer to return. Shared by all timers
// (stops are rare); each waiter rechecks its own timer when woken.
condition_variable g_stop_waiters;

}  // namespace

Timer::Timer(uint64_t default_timeout, Entry on_timer, bool repeating, uint64_t stack_size)
    : on_timer_(on_timer),
      default_timeout_(default_timeout),
      timeout_(default_timeout),
      repeating_(repeating) {
    th_ = thread_create(&Timer::stub, this, stack_size, 0, THREAD_JOINABLE);
    if (!th_)
        LOG_ERROR("Timer: cannot create its coroutine ", ERRNO());
    else
        thread_yield_to(th_);  // armed (waiting) when the constructor returns
}

Timer::~Timer() {
    if (!th_ || joined_) return;
    stopping_ = true;
    if (CURRENT == th_) {  // from on_timer: nobody can join us
        LOG_ERROR("Timer destroyed from its own on_timer");
        return;
    }
    if (waiting_) thread_interrupt(th_, kRearm);
    thread_join(reinterpret_cast<join_handle*>(th_));
    joined_ = true;
}

void* Timer::stub(void* self) {
    static_cast<Timer*>(self)->run();
    return nullptr;
}

void Timer::run() {
    while (!stopping_) {
        waiting_ = true;
        int ret = thread_usleep(timeout_);
        waiting_ = false;
        if (stopping_) break;
        if (ret < 0) continue;  // re-armed, cancelled or interrupted: wait again
        uint64_t next = on_timer_.fire();
        if (stopping_) break;
        timeout_ = !repeating_ || disarm_ ? UINT64_MAX : next ? next : default_timeout_;
        if (disarm_) {
            disarm_ = false;
            g_stop_waiters.notify_all();
        }
    }
    g_stop_waiters.notify_all();  // a stop() waiting for us has nothing left to wait for
}

int Timer::reset(uint64_t new_timeout) {
    if (!th_ || !waiting_ || stopping_) return -1;
    timeout_ = new_timeout == (uint64_t)-1 ? default_timeout_ : new_timeout;
    thread_interrupt(th_, kRearm);
    return 0;
}

int Timer::cancel() {
    if (!th_ || !waiting_ || stopping_) return -1;
    timeout_ = UINT64_MAX;
    thread_interrupt(th_, kRearm);
    return 0;
}

int Timer::stop() {
    if (!th_ || joined_ || stopping_) return 0;
    if (waiting_) return cancel();
    disarm_ = true;  // on_timer runs: disarm once it returns
    if (CURRENT == th_) return 0;
    // Its stub sets waiting_ again and wakes us (the condition is ours to
    // check: the same vCPU runs both, nothing can slip in between).
    while (disarm_ && !stopping_) g_stop_waiters.wait_no_lock();
    return 0;
}

}  // namespace photon
