#include <photon/thread/timer.h>

#include <photon/common/alog.h>

namespace photon {

namespace {

// Wakes the waiting timer so it re-reads m_timeout / m_stopping.
constexpr int kRearm = EAGAIN;

// stop() callers waiting for an on_timer to return. Shared by all timers
// (stops are rare); each waiter rechecks its own timer when woken.
condition_variable g_stop_waiters;

}  // namespace

Timer::Timer(uint64_t default_timeout, Entry on_timer, bool repeating, uint64_t stack_size)
    : m_on_timer(on_timer),
      m_default_timeout(default_timeout),
      m_timeout(default_timeout),
      m_repeating(repeating) {
    m_th = thread_create(&Timer::stub, this, stack_size, 0, THREAD_JOINABLE);
    if (!m_th)
        LOG_ERROR("Timer: cannot create its coroutine ", ERRNO());
    else
        thread_yield_to(m_th);  // armed (waiting) when the constructor returns
}

Timer::~Timer() {
    if (!m_th || m_joined) return;
    m_stopping = true;
    if (CURRENT == m_th) {  // from on_timer: nobody can join us
        LOG_ERROR("Timer destroyed from its own on_timer");
        return;
    }
    if (m_waiting) thread_interrupt(m_th, kRearm);
    thread_join(reinterpret_cast<join_handle*>(m_th));
    m_joined = true;
}

void* Timer::stub(void* self) {
    static_cast<Timer*>(self)->run();
    return nullptr;
}

void Timer::run() {
    while (!m_stopping) {
        m_waiting = true;
        int ret = thread_usleep(m_timeout);
        m_waiting = false;
        if (m_stopping) break;
        if (ret < 0) continue;  // re-armed, cancelled or interrupted: wait again
        uint64_t next = m_on_timer.fire();
        if (m_stopping) break;
        m_timeout = !m_repeating || m_disarm ? UINT64_MAX : next ? next : m_default_timeout;
        if (m_disarm) {
            m_disarm = false;
            g_stop_waiters.notify_all();
        }
    }
    g_stop_waiters.notify_all();  // a stop() waiting for us has nothing left to wait for
}

int Timer::reset(uint64_t new_timeout) {
    if (!m_th || !m_waiting || m_stopping) return -1;
    m_timeout = new_timeout == (uint64_t)-1 ? m_default_timeout : new_timeout;
    thread_interrupt(m_th, kRearm);
    return 0;
}

int Timer::cancel() {
    if (!m_th || !m_waiting || m_stopping) return -1;
    m_timeout = UINT64_MAX;
    thread_interrupt(m_th, kRearm);
    return 0;
}

int Timer::stop() {
    if (!m_th || m_joined || m_stopping) return 0;
    if (m_waiting) return cancel();
    m_disarm = true;  // on_timer runs: disarm once it returns
    if (CURRENT == m_th) return 0;
    // Its stub sets m_waiting again and wakes us (the condition is ours to
    // check: the same vCPU runs both, nothing can slip in between).
    while (m_disarm && !m_stopping) g_stop_waiters.wait_no_lock();
    return 0;
}

}  // namespace photon
