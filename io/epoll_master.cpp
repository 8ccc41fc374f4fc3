// The epoll master engine.
//
// Every fd is registered once, edge-triggered for read and write together,
// and stays registered: a wait costs no epoll_ctl when the caller says it has
// just seen EAGAIN (EDGE_TRIGGERED), and one EPOLL_CTL_MOD otherwise, which
// makes the kernel re-check the level (so level-triggered waits stay correct,
// and an fd number closed and reused gets registered afresh: MOD fails with
// ENOENT and we ADD). Waiters are nodes on their own stacks, listed per fd;
// an event wakes those whose interest it matches.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <ctime>
#include <vector>

#include <photon/common/alog.h>
#include <photon/common/utility.h>
#include <photon/io/fd-events.h>

#include "../thread/wait_note.h"
#include "epoll_util.h"
#include "fd_poll.h"

namespace photon {

namespace {

constexpr uint64_t kNotifyTag = UINT64_MAX;  // epoll data of the cancel_wait eventfd
constexpr int kMaxEvents = 128;
constexpr uint32_t kRegistered = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLPRI | EPOLLET;

struct waiter {
    thread* th;
    uint32_t interests;  // EVENT_*
    waiter* prev;
    waiter* next;
};

struct fd_slot {
    waiter* head = nullptr;
    bool registered = false;  // known to be in the epoll set (EDGE_TRIGGERED waits trust it)
    // EVENT_* edges that came while nobody waited for them: the next
    // EDGE_TRIGGERED wait for that kind returns at once instead of missing
    // them (a caller may wait without having seen EAGAIN, e.g. after a short
    // read). May be stale: the caller's retry then sees EAGAIN.
    uint8_t ready = 0;
    // EVENT_* kinds a hang-up or error made permanently ready (the peer's
    // FIN may come in the same edge as the last data: a reader that drained
    // the data must still find the EOF). Cleared by forget_fd.
    uint8_t sticky = 0;
};

class epoll_master final : public MasterEventEngine {
public:
    ~epoll_master() override {
        if (epfd_ >= 0) close(epfd_);
        if (evfd_ >= 0) close(evfd_);
    }

    int init() {
        epfd_ = epoll_create1(EPOLL_CLOEXEC);
        if (epfd_ < 0) LOG_ERRNO_RETURN(0, -1, "epoll engine: epoll_create1 failed");
        evfd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (evfd_ < 0) LOG_ERRNO_RETURN(0, -1, "epoll engine: eventfd failed");
        // Level-triggered: a notification written while we are not waiting
        // is still seen by the next wait.
        struct epoll_event ev = {};
        ev.events = EPOLLIN;
        ev.data.u64 = kNotifyTag;
        if (epoll_ctl(epfd_, EPOLL_CTL_ADD, evfd_, &ev) < 0)
            LOG_ERRNO_RETURN(0, -1, "epoll engine: cannot register its eventfd");
        return 0;
    }

    int wait_for_fd(int fd, uint32_t interests, Timeout timeout) override {
        uint32_t want = interests & EVENT_RWE;
        if (fd < 0 || !want)
            LOG_ERROR_RETURN(EINVAL, -1, "wait_for_fd: bad fd ` or interests `", fd,
                             HEX(interests));
        if (timeout.expired()) return poll_once(fd, want);
        bool edge = interests & EDGE_TRIGGERED;
        int r = edge ? ensure_registered(fd) : rearm(fd);
        if (r <= 0) return r;  // 0: a file epoll cannot watch is always ready
        if (edge) {
            fd_slot& s = slots_[fd];
            if (s.ready & want) {
                s.ready &= ~want;
                return 0;
            }
            if (s.sticky & want) {
                if (poll_once(fd, want) == 0) return 0;
                // A hang-up of another file that had this number (closed
                // without forget_fd): not this one's. Start afresh.
                s.sticky &= ~want;
                if ((r = rearm(fd)) <= 0) return r;
            }
        }
        return edge ? park_edge(fd, want, timeout) : park(fd, want, timeout);
    }

    ssize_t wait_and_fire_events(uint64_t timeout) override {
        struct epoll_event events[kMaxEvents];
        int n = epoll_wait_us(epfd_, events, kMaxEvents, timeout);
        if (n < 0) {
            if (errno == EINTR) return 0;
            LOG_ERRNO_RETURN(0, -1, "epoll engine: epoll_wait failed");
        }
        for (int i = 0; i < n; i++) {
            if (events[i].data.u64 == kNotifyTag) {
                drain_notifications();
            } else {
                fire((int)events[i].data.u64, events[i].events);
            }
        }
        return n;
    }

    int cancel_wait() override {
        // One write per idle period: later notifiers find the flag set.
        if (notified_.exchange(true, std::memory_order_acq_rel)) return 0;
        uint64_t one = 1;
        if (write(evfd_, &one, sizeof(one)) < 0 && errno != EAGAIN)
            LOG_ERRNO_RETURN(0, -1, "epoll engine: cannot notify");
        return 0;
    }

    void forget_fd(int fd) override {
        if (fd < 0 || (size_t)fd >= slots_.size()) return;
        fd_slot& s = slots_[fd];
        // Deregister explicitly rather than rely on close(): a forked child
        // that still holds the file (between fork and exec) keeps it in the
        // epoll set, and its events (the hang-up of a shutdown) would then
        // come in under this number for the next fd that gets it.
        if (s.registered) epoll_ctl(epfd_, EPOLL_CTL_DEL, fd, nullptr);
        s.registered = false;
        s.ready = s.sticky = 0;
        wake(s, EVENT_RWE, EBADF);
    }

    uint64_t engine_kind() const override { return INIT_EVENT_EPOLL; }
    const char* idle_wait_name() const override { return "epoll"; }

private:
    int epfd_ = -1;
    int evfd_ = -1;
    std::atomic<bool> notified_{false};
    std::vector<fd_slot> slots_;

    fd_slot& slot(int fd) {
        if ((size_t)fd >= slots_.size()) slots_.resize(fd + 1 + fd / 2);
        return slots_[fd];
    }

    // 1: registered; 0: an fd epoll cannot watch (a regular file); -1: error.
    int ctl(int op, int fd) {
        struct epoll_event ev = {};
        ev.events = kRegistered;
        ev.data.u64 = (uint64_t)fd;
        if (epoll_ctl(epfd_, op, fd, &ev) == 0) {
            vcpu_count_io(VCPU_IO_MASTER, 1, 0);
            return 1;
        }
        if (errno == EPERM) return 0;
        if (op == EPOLL_CTL_ADD && errno == EEXIST) return 1;
        if (op == EPOLL_CTL_MOD && errno == ENOENT) return ctl(EPOLL_CTL_ADD, fd);
        LOG_ERRNO_RETURN(0, -1, "wait_for_fd: cannot watch fd `", fd);
    }

    int ensure_registered(int fd) {
        fd_slot& s = slot(fd);
        if (s.registered) return 1;
        int r = ctl(EPOLL_CTL_ADD, fd);
        s.registered = r > 0;
        return r;
    }

    int rearm(int fd) {
        int r = ctl(EPOLL_CTL_MOD, fd);
        slot(fd).registered = r > 0;
        return r;
    }

    int park(int fd, uint32_t want, Timeout timeout) {
        waiter w{CURRENT, want, nullptr, slots_[fd].head};
        if (w.next) w.next->prev = &w;
        slots_[fd].head = &w;
        thread_pin_current(true);  // only this vCPU's engine can wake it
        set_wait_note(wait_note(kWaitNoteFd, want, fd));
        int r = thread_usleep(timeout);
        int e = errno;
        set_wait_note(0);
        thread_pin_current(false);
        if (w.th) unlink(slots_[fd], w);  // not woken by the engine
        if (r == 0) {
            errno = ETIMEDOUT;  // the deadline, or thread_resume()
            return -1;
        }
        if (e == EOK) return 0;
        errno = e;
        return -1;
    }

    // An edge-triggered wait trusts the registration, which close() drops
    // silently: an fd closed without forget_fd and its number reused would
    // then never see an event. So a wait that has seen none for
    // kRecheckUs re-registers (EPOLL_CTL_MOD, or ADD if the file is
    // another) and has the kernel re-check the level; a stale registration
    // costs a delay, not a hang.
    static constexpr uint64_t kRecheckUs = 1000 * 1000;
    int park_edge(int fd, uint32_t want, Timeout timeout) {
        while (true) {
            // The recheck needs no precision: count it from this round's
            // clock instead of reading the clock afresh for every wait.
            Timeout slice = timeout;
            uint64_t recheck = sat_add(__atomic_load_n(&now, __ATOMIC_RELAXED), kRecheckUs);
            if (recheck < slice.expiration()) slice.expiration(recheck);
            int r = park(fd, want, slice);
            if (r == 0 || errno != ETIMEDOUT || timeout.expired() || !slice.expired()) return r;
            if ((r = rearm(fd)) <= 0) return r;
        }
    }

    static void unlink(fd_slot& s, waiter& w) {
        if (w.prev)
            w.prev->next = w.next;
        else
            s.head = w.next;
        if (w.next) w.next->prev = w.prev;
        w.th = nullptr;
    }

    // Wakes the waiters of `s` interested in `events` with error `err`;
    // returns the kinds of `events` that had a waiter.
    static uint32_t wake(fd_slot& s, uint32_t events, int err) {
        uint32_t taken = 0;
        for (waiter* w = s.head; w;) {
            waiter* next = w->next;
            if (w->interests & events) {
                taken |= w->interests & events;
                thread* th = w->th;
                unlink(s, *w);  // w may be gone once th runs
                thread_interrupt(th, err);
            }
            w = next;
        }
        return taken;
    }

    void fire(int fd, uint32_t ev) {
        if ((size_t)fd >= slots_.size()) return;
        uint32_t events = 0;
        // Errors and hang-ups wake everyone: the next syscall reports them.
        if (ev & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) events |= EVENT_READ;
        if (ev & (EPOLLOUT | EPOLLHUP | EPOLLERR)) events |= EVENT_WRITE;
        if (ev & (EPOLLPRI | EPOLLHUP | EPOLLERR)) events |= EVENT_ERROR;
        fd_slot& s = slots_[fd];
        if (ev & EPOLLERR) s.sticky |= EVENT_RWE;
        if (ev & EPOLLHUP) s.sticky |= EVENT_READ | EVENT_WRITE;
        if (ev & EPOLLRDHUP) s.sticky |= EVENT_READ;
        s.ready |= events & ~wake(s, events, EOK);
    }

    void drain_notifications() {
        uint64_t count;
        // Read first, then clear: a notifier that still sees the flag set
        // relies on a write that the next wait will see.
        while (read(evfd_, &count, sizeof(count)) > 0) {
        }
        notified_.store(false, std::memory_order_release);
    }
};

}  // namespace

MasterEventEngine* new_epoll_master_engine() {
    auto e = new epoll_master;
    if (e->init() < 0) {
        int err = errno;
        delete e;
        errno = err;
        return nullptr;
    }
    return e;
}

}  // namespace photon
