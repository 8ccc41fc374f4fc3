// The io_uring cascading engine: one poll request per (fd, data) in a ring
// of its own, whose CQEs a reaper coroutine dispatches (see
// iouring_reaper.h); wait_for_events() parks until the reaper queues one.
//
// EDGE_TRIGGERED interests use a multishot poll (a CQE per readiness
// change); ONE_SHOT ones a single poll; the default, level-triggered, a
// single poll re-armed at the next wait_for_events() after it was reported,
// so an fd still ready then is reported again.
#include <fcntl.h>

#include <map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <photon/common/alog.h>

#include "fd_poll.h"
#include "iouring_reaper.h"

namespace photon {

namespace {

struct interest : uring_completion {
    int fd;
    void* data;
    uint32_t events;  // EVENT_* bits
    bool edge, one_shot;
    bool armed = false;    // a poll request of ours is in the kernel
    bool queued = false;   // in ready_, not yet harvested
    bool rearm = false;    // in reported_: level-triggered, to re-arm
    bool removed = false;  // rm_interest'ed: freed once none of the above holds
    class iouring_cascading* engine;
};

class iouring_cascading final : public CascadingEventEngine {
public:
    ~iouring_cascading() override {
        reaper_.stop();
        delete ring_;  // the kernel drops our polls: nothing references records now
        for (interest* i : all_) delete i;
    }

    int init(const iouring_args& args) {
        if (!CURRENT) LOG_ERROR_RETURN(ENOSYS, -1, "io_uring cascading engine: not a vCPU");
        ring_ = uring::create(args, false);
        return ring_ ? reaper_.start(ring_) : -1;
    }

    int add_interest(Event e) override {
        uint32_t ev = e.interests & EVENT_RWE;
        if (!ev || e.fd < 0)
            LOG_ERROR_RETURN(EINVAL, -1, "add_interest: fd `, interests `", e.fd, e.interests);
        if (fcntl(e.fd, F_GETFD) < 0) LOG_ERRNO_RETURN(0, -1, "add_interest: fd `", e.fd);
        auto it = map_.find({e.fd, e.data});
        if (it != map_.end()) {
            interest* i = it->second;
            if (widen(i, i->events | ev) < 0) return -1;
            // A ONE_SHOT that fired waits, unarmed, to be added again.
            return (i->one_shot && !i->armed && !i->queued) ? arm(i) : 0;
        }
        auto i = new interest{};
        i->on_cqe = &on_poll;
        i->fd = e.fd;
        i->data = e.data;
        i->events = ev;
        i->one_shot = e.interests & ONE_SHOT;
        i->edge = (e.interests & EDGE_TRIGGERED) && !i->one_shot;
        i->engine = this;
        map_.emplace(std::make_pair(e.fd, e.data), i);
        all_.insert(i);
        return arm(i);
    }

    int rm_interest(Event e) override {
        auto it = map_.find({e.fd, e.data});
        if (it == map_.end()) LOG_ERROR_RETURN(ENOENT, -1, "rm_interest: fd ` not added", e.fd);
        interest* i = it->second;
        uint32_t left = i->events & ~(e.interests & EVENT_RWE);
        if (left) return widen(i, left);
        map_.erase(it);
        i->removed = true;
        if (i->armed) submit_remove(i);
        release_if_idle(i);
        return 0;
    }

    ssize_t wait_for_events(void** data, size_t count, Timeout timeout) override {
        if (!CURRENT) LOG_ERROR_RETURN(ENOSYS, -1, "wait_for_events: not a vCPU");
        if (!data || !count) LOG_ERROR_RETURN(EINVAL, -1, "wait_for_events: no room for events");
        rearm_reported();
        ring_->reap();
        while (true) {
            size_t n = harvest(data, count);
            if (n || timeout.expired()) return n;
            if (ready_cv_.wait_no_lock(timeout) < 0 && errno != ETIMEDOUT) return -1;
        }
    }

    uring* ring() { return ring_; }

private:
    int arm(interest* i) {
        io_uring_sqe* sqe = ring_->reserve(1);
        if (!sqe) return -1;
        uint32_t mask = events_to_poll(i->events);
        if (i->edge)
            io_uring_prep_poll_multishot(sqe, i->fd, mask);
        else
            io_uring_prep_poll_add(sqe, i->fd, mask);
        io_uring_sqe_set_data(sqe, static_cast<uring_completion*>(i));
        i->armed = true;
        ring_->queued();
        return 0;
    }

    // Sets i's events to `ev`, updating its armed poll in place.
    int widen(interest* i, uint32_t ev) {
        if (ev == i->events) return 0;
        i->events = ev;
        if (!i->armed) return 0;  // the next arm uses the new events
        io_uring_sqe* sqe = ring_->reserve(1);
        if (!sqe) return -1;
        auto ud = (uint64_t)(uintptr_t) static_cast<uring_completion*>(i);
        io_uring_prep_poll_update(sqe, ud, ud, events_to_poll(ev), IORING_POLL_UPDATE_EVENTS);
        io_uring_sqe_set_data64(sqe, kIgnoredCqe);
        ring_->queued();
        return 0;
    }

    void submit_remove(interest* i) {
        io_uring_sqe* sqe = ring_->reserve(1);
        if (!sqe) return;
        io_uring_prep_poll_remove(sqe, (uint64_t)(uintptr_t) static_cast<uring_completion*>(i));
        io_uring_sqe_set_data64(sqe, kIgnoredCqe);
        ring_->queued();
    }

    // Frees a removed record once neither the kernel nor ready_ holds it.
    void release_if_idle(interest* i) {
        if (!i->removed || i->armed || i->queued || i->rearm) return;
        all_.erase(i);
        delete i;
    }

    static void on_poll(uring_completion* c, int32_t res, uint32_t flags) {
        auto i = static_cast<interest*>(c);
        iouring_cascading* self = i->engine;
        bool more = flags & IORING_CQE_F_MORE;
        if (!more) i->armed = false;
        if (i->removed) return self->release_if_idle(i);
        if (res < 0) {
            // A multishot poll the kernel ended (e.g. CQ overflow): re-arm.
            if (!more && i->edge && res != -EBADF) self->arm(i);
            return;
        }
        if (!i->queued) {
            i->queued = true;
            self->ready_.push_back(i);
            self->ready_cv_.notify_all();
        }
    }

    size_t harvest(void** data, size_t count) {
        size_t n = 0, k = 0;
        for (; k < ready_.size() && n < count; k++) {
            interest* i = ready_[k];
            i->queued = false;
            if (!i->removed) {
                data[n++] = i->data;
                if (!i->edge && !i->one_shot && !i->rearm) {
                    i->rearm = true;
                    reported_.push_back(i);
                }
            }
            release_if_idle(i);
        }
        ready_.erase(ready_.begin(), ready_.begin() + k);
        return n;
    }

    void rearm_reported() {
        for (interest* i : reported_) {
            i->rearm = false;
            if (i->removed)
                release_if_idle(i);
            else if (!i->armed)
                arm(i);
        }
        reported_.clear();
    }

    uring* ring_ = nullptr;
    uring_reaper reaper_;
    std::map<std::pair<int, void*>, interest*> map_;
    std::unordered_set<interest*> all_;  // every record not yet freed
    std::vector<interest*> ready_;       // fired, not yet harvested
    std::vector<interest*> reported_;    // level-triggered, to re-arm
    condition_variable ready_cv_;
};

}  // namespace

CascadingEventEngine* new_iouring_cascading_engine(const iouring_args& args) {
    auto e = new iouring_cascading;
    if (e->init(args) == 0) return e;
    int err = errno;
    delete e;
    errno = err;
    return nullptr;
}

uring* iouring_cascading_ring(CascadingEventEngine* e) {
    auto c = dynamic_cast<iouring_cascading*>(e);
    return c ? c->ring() : nullptr;
}

}  // namespace photon
