// The io_uring master engine: one ring per vCPU, waited on in io_uring_enter
// when the vCPU idles. Requests queued by coroutines during one scheduling
// round go to the kernel together at the next wait_and_fire_events(), but
// for the first few file reads and writes of a round (uring::queued).
// cancel_wait() writes an eventfd that a read request in the ring watches.
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <vector>

#include <photon/common/alog.h>

#include "../thread/wait_note.h"
#include "fd_poll.h"
#include "iouring_ring.h"

namespace photon {

namespace {

// A wait_for_fd() poll, listed per fd so that forget_fd() can cancel it.
struct poll_waiter : op_waiter {
    poll_waiter* prev = nullptr;
    poll_waiter* next = nullptr;
};

class iouring_master final : public MasterEventEngine, uring_completion {
public:
    ~iouring_master() override {
        delete ring_;  // cancels the eventfd read before its buffer goes
        if (evfd_ >= 0) close(evfd_);
    }

    int init(const iouring_args& args) {
        ring_ = uring::create(args, true);
        if (!ring_) return -1;
        // Blocking on purpose: io_uring then polls it instead of failing with EAGAIN.
        evfd_ = eventfd(0, EFD_CLOEXEC);
        if (evfd_ < 0) LOG_ERRNO_RETURN(0, -1, "io_uring: eventfd");
        on_cqe = &on_notified;
        return arm_notify();
    }

    int wait_for_fd(int fd, uint32_t interests, Timeout timeout) override {
        uint32_t mask = events_to_poll(interests);
        if (fd < 0 || !mask)
            LOG_ERROR_RETURN(EINVAL, -1, "wait_for_fd: bad fd ` or interests `", fd, interests);
        if (timeout.expired()) return poll_once(fd, interests);
        poll_waiter w;
        link(fd, &w);
        set_wait_note(wait_note(kWaitNoteFd, interests & EVENT_RWE, fd));
        ring_->execute_until(
            w, [&](io_uring_sqe* sqe) { io_uring_prep_poll_add(sqe, fd, mask); }, timeout);
        set_wait_note(0);
        unlink(fd, &w);
        if (w.res == -EBADF && !w.cancel_errno) w.res = -EINVAL;  // not an open fd
        // A poll consumes nothing: an interrupt (or close) that raced with
        // readiness still wins, as it does on epoll. A timeout does not.
        if (w.res >= 0 && w.cancel_errno && w.cancel_errno != ETIMEDOUT) {
            errno = w.cancel_errno;
            return -1;
        }
        return uring::result(w) < 0 ? -1 : 0;
    }

    ssize_t wait_and_fire_events(uint64_t timeout) override {
        ring_->end_round();
        ssize_t n = ring_->reap();
        if (n == 0 && timeout != 0)
            ring_->submit_and_wait(timeout);
        else
            ring_->submit();
        return n + ring_->reap();
    }

    int cancel_wait() override {
        // One write per idle period: later callers see the flag until the
        // read completes, and the vCPU looks at its work after that anyway.
        if (notified_.exchange(true, std::memory_order_acq_rel)) return 0;
        uint64_t one = 1;
        if (write(evfd_, &one, sizeof(one)) != sizeof(one))
            LOG_ERRNO_RETURN(0, -1, "io_uring: cannot notify the vCPU");
        return 0;
    }

    void forget_fd(int fd) override {
        if (fd < 0 || (size_t)fd >= polls_.size()) return;
        for (poll_waiter* w = polls_[fd]; w; w = w->next)
            if (!w->cancel_errno) ring_->cancel(*w, EBADF);
    }

    uint64_t engine_kind() const override { return INIT_EVENT_IOURING; }
    const char* idle_wait_name() const override { return "io_uring"; }

    uring* ring() { return ring_; }

private:
    void link(int fd, poll_waiter* w) {
        if ((size_t)fd >= polls_.size()) polls_.resize((size_t)fd * 2 + 64, nullptr);
        w->next = polls_[fd];
        if (w->next) w->next->prev = w;
        polls_[fd] = w;
    }

    void unlink(int fd, poll_waiter* w) {
        if (w->prev)
            w->prev->next = w->next;
        else
            polls_[fd] = w->next;
        if (w->next) w->next->prev = w->prev;
    }

    int arm_notify() {
        io_uring_sqe* sqe = ring_->reserve(1);
        if (!sqe) return -1;
        io_uring_prep_read(sqe, evfd_, &counter_, sizeof(counter_), 0);
        io_uring_sqe_set_data(sqe, static_cast<uring_completion*>(this));
        ring_->queued();
        return 0;
    }

    static void on_notified(uring_completion* c, int32_t res, uint32_t flags) {
        auto self = static_cast<iouring_master*>(c);
        // acq_rel: pairs with a notifier whose exchange saw `true`, so the
        // scheduler then sees what it published.
        self->notified_.exchange(false, std::memory_order_acq_rel);
        if (res >= 0) {
            self->arm_notify();
        } else if (res != -ECANCELED) {  // ECANCELED: the ring is going away
            // E.g. an IOPOLL ring cannot read an eventfd: re-arming would spin.
            LOG_ERROR("io_uring: cancel_wait() is broken: ", ERRNO(-res));
        }
    }

    uring* ring_ = nullptr;
    int evfd_ = -1;
    uint64_t counter_ = 0;  // the eventfd read's buffer
    std::atomic<bool> notified_{false};
    std::vector<poll_waiter*> polls_;  // by fd
};

}  // namespace

MasterEventEngine* new_iouring_master_engine(const iouring_args& args) {
    auto e = new iouring_master;
    if (e->init(args) == 0) return e;
    int err = errno;
    delete e;
    errno = err;
    return nullptr;
}

uring* iouring_master_ring(MasterEventEngine* e) {
    auto m = dynamic_cast<iouring_master*>(e);
    return m ? m->ring() : nullptr;
}

}  // namespace photon
