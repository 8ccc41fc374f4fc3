#include <photon/thread/timer.h>

#include <photon/common/alog.h>

namespace photon {

// Wakes the waiting timer so it re-reads m_timeout / m_stopping.
constexpr int kRearm = EAGAIN;

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

Timer::~Timer() { stop(); }

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
        m_timeout = !m_repeating ? UINT64_MAX : next ? next : m_default_timeout;
    }
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
    if (!m_th || m_joined) return 0;
    m_stopping = true;
    if (CURRENT == m_th) return 0;  // from on_timer: the loop ends after it
    if (m_waiting) thread_interrupt(m_th, kRearm);
    thread_join(reinterpret_cast<join_handle*>(m_th));
    m_joined = true;
    return 0;
}

}  // namespace photon
