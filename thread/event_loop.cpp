// EventLoop (photon/common/event-loop.h): the wait / handle cycle and its
// stopping handshake.
#include <photon/common/event-loop.h>

#include <cerrno>
#include <new>

#include <photon/common/alog.h>
#include <photon/thread/thread.h>

namespace {

class event_loop_impl : public EventLoop {
public:
    event_loop_impl(Wait4Events wait, OnEvents on_event) : wait_(wait), on_event_(on_event) {}
    ~event_loop_impl() override { stop(); }

    void run() override {
        if (m_state != STOP) return;
        m_state = RUNNING;
        m_thread = photon::CURRENT;  // so that stop() can interrupt a wait
        loop();
    }

    void async_run() override {
        if (m_state != STOP) return;
        auto th = photon::thread_create(&entry, this);
        if (!th) {
            LOG_ERROR("EventLoop::async_run: no coroutine: ", ERRNO());
            return;
        }
        m_state = RUNNING;
        m_thread = th;
    }

    void stop() override {
        if (m_state == STOP) return;
        const int was = m_state;
        m_state = STOPPING;
        // From a callback: the loop sees STOPPING once the callback returns.
        if (m_thread == photon::CURRENT) return;
        if (was == WAITING && m_thread) photon::thread_interrupt(m_thread);
        while (m_state != STOP) cond_.wait_no_lock();
    }

private:
    static void* entry(void* self) {
        static_cast<event_loop_impl*>(self)->loop();
        return nullptr;
    }

    void loop() {
        while (m_state == RUNNING) {
            m_state = WAITING;
            int ret;
            do {
                ret = wait_(this);
            } while (ret == 0 && m_state == WAITING);
            if (ret < 0 || m_state == STOPPING) break;
            m_state = RUNNING;
            on_event_(this);
        }
        m_state = STOP;
        m_thread = nullptr;
        cond_.notify_all();
    }

    Wait4Events wait_;
    OnEvents on_event_;
    photon::condition_variable cond_;  // notified when the loop ends
};

}  // namespace

EventLoop* new_event_loop(EventLoop::Wait4Events wait, EventLoop::OnEvents on_event) {
    auto loop = new (std::nothrow) event_loop_impl(wait, on_event);
    if (!loop) LOG_ERROR_RETURN(ENOMEM, nullptr, "new_event_loop: out of memory");
    return loop;
}
