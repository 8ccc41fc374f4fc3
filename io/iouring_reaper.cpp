// uring_reaper and the per-vCPU sidecar ring.
#include "iouring_reaper.h"

#include <poll.h>
#include <unistd.h>

#include <photon/common/alog.h>

namespace photon {

namespace {

constexpr uint64_t kReaperStack = 128 * 1024;

thread_local uring_reaper* t_reapers = nullptr;  // live reapers of this vCPU
thread_local bool t_hook_set = false;

// fini() waits for every coroutine, reapers included: end them first.
void stop_all_reapers() {
    t_hook_set = false;
    while (uring_reaper* r = t_reapers) r->stop();
}

void track(uring_reaper* r) {
    r->next_ = t_reapers;
    if (t_reapers) t_reapers->prev_ = r;
    t_reapers = r;
    if (!t_hook_set) {
        t_hook_set = true;
        fini_hook_late(Delegate<void>(&stop_all_reapers));
    }
}

void untrack(uring_reaper* r) {
    if (r->prev_)
        r->prev_->next_ = r->next_;
    else
        t_reapers = r->next_;
    if (r->next_) r->next_->prev_ = r->prev_;
    r->prev_ = r->next_ = nullptr;
}

}  // namespace

int uring_reaper::start(uring* ring) {
    vcpu_base* v = get_vcpu();
    if (!v) LOG_ERROR_RETURN(ENOSYS, -1, "io_uring: not a vCPU");
    ring_ = ring;
    master_ = v->master_event_engine;
    th_ = thread_create(&entry, this, kReaperStack, 0, THREAD_DAEMON);  // not counted by wait_all
    if (!th_) return -1;
    jh_ = thread_enable_join(th_);
    if (!master_) helper_ = std::thread([this] { helper_loop(); });
    track(this);
    return 0;
}

void uring_reaper::stop() {
    if (!th_) return;
    untrack(this);
    stopping_ = true;
    thread_interrupt(th_, ECANCELED);
    thread_join(jh_);
    th_ = nullptr;
    if (helper_.joinable()) {
        helper_stop_ = true;
        uint64_t one = 1;
        if (write(ring_->event_fd(), &one, sizeof(one)) < 0)
            LOG_ERROR("io_uring: cannot stop the helper thread ", ERRNO());
        helper_.join();
    } else if (master_) {
        master_->forget_fd(ring_->event_fd());
    }
}

void* uring_reaper::entry(void* self) {
    static_cast<uring_reaper*>(self)->run();
    return nullptr;
}

void uring_reaper::run() {
    while (true) {
        // Drain the eventfd before reaping: a CQE posted after the reap
        // makes it readable again.
        uint64_t v;
        if (master_ && read(ring_->event_fd(), &v, sizeof(v)) < 0 && errno != EAGAIN)
            LOG_ERROR("io_uring: reaper cannot read its eventfd ", ERRNO());
        ring_->reap();
        if (stopping_ && ring_->inflight() == 0) return;
        wait_event();
    }
}

void uring_reaper::wait_event() {
    if (master_)
        master_->wait_for_fd_readable(ring_->event_fd());
    else
        events_.wait_interruptible(1);
}

void uring_reaper::helper_loop() {
    while (!helper_stop_.load()) {
        pollfd p = {ring_->event_fd(), POLLIN, 0};
        if (::poll(&p, 1, -1) < 0 && errno != EINTR) LOG_ERROR("io_uring: helper poll ", ERRNO());
        uint64_t v;
        if (read(ring_->event_fd(), &v, sizeof(v)) < 0 && errno != EAGAIN)
            LOG_ERROR("io_uring: helper read ", ERRNO());
        if (!helper_stop_.load()) events_.signal(1);
    }
}

// ---- sidecar ----------------------------------------------------------------

namespace {

struct sidecar {
    uring* ring = nullptr;
    uring_reaper reaper;
    ~sidecar() {
        reaper.stop();
        delete ring;
    }
};

thread_local sidecar* t_sidecar = nullptr;

void drop_sidecar() {
    delete t_sidecar;
    t_sidecar = nullptr;
}

}  // namespace

uring* sidecar_ring() {
    if (t_sidecar) return t_sidecar->ring;
    auto s = new sidecar;
    s->ring = uring::create(iouring_args(), false);
    if (!s->ring || s->reaper.start(s->ring) < 0) {
        int e = errno;
        delete s;
        errno = e;
        return nullptr;
    }
    t_sidecar = s;
    fini_hook_late(Delegate<void>(&drop_sidecar));
    return s->ring;
}

}  // namespace photon
