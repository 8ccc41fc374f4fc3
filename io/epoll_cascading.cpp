// The epoll cascading engine: an epoll set of its own whose fd the calling
// coroutine waits on through the master engine, so waiting for many fds
// blocks only that coroutine. An fd may carry a different `data` per event
// kind (read, write, error); each fired kind reports its data once.
#include <sys/epoll.h>
#include <unistd.h>

#include <deque>
#include <unordered_map>

#include <photon/common/alog.h>
#include <photon/io/fd-events.h>

#include "epoll_util.h"

namespace photon {

namespace {

constexpr int kMaxEvents = 64;

struct interest_set {
    uint32_t kinds = 0;  // EVENT_* registered
    uint32_t mode = 0;   // EDGE_TRIGGERED | ONE_SHOT of the last add
    void* data[3] = {};  // per kind: read, write, error
};

uint32_t to_epoll(uint32_t kinds, uint32_t mode) {
    uint32_t ev = 0;
    if (kinds & EVENT_READ) ev |= EPOLLIN | EPOLLRDHUP;
    if (kinds & EVENT_WRITE) ev |= EPOLLOUT;
    if (kinds & EVENT_ERROR) ev |= EPOLLPRI;
    if (mode & EDGE_TRIGGERED) ev |= EPOLLET;
    if (mode & ONE_SHOT) ev |= EPOLLONESHOT;
    return ev;
}

class epoll_cascading final : public CascadingEventEngine {
public:
    ~epoll_cascading() override {
        if (epfd_ >= 0) close(epfd_);
    }

    int init() {
        epfd_ = epoll_create1(EPOLL_CLOEXEC);
        if (epfd_ < 0) LOG_ERRNO_RETURN(0, -1, "epoll cascading engine: epoll_create1 failed");
        return 0;
    }

    int add_interest(Event e) override {
        uint32_t kinds = e.interests & EVENT_RWE;
        if (e.fd < 0 || !kinds) LOG_ERROR_RETURN(EINVAL, -1, "add_interest: bad fd or interests");
        auto it = set_.find(e.fd);
        bool fresh = it == set_.end();
        interest_set next = fresh ? interest_set{} : it->second;
        next.kinds |= kinds;
        next.mode = e.interests & (EDGE_TRIGGERED | ONE_SHOT);
        for (int k = 0; k < 3; k++)
            if (kinds & (1u << k)) next.data[k] = e.data;
        // A fired ONE_SHOT fd is gone from set_ but still in the kernel's set.
        if (ctl(fresh ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, e.fd, next) < 0 &&
            !(fresh && errno == EEXIST && ctl(EPOLL_CTL_MOD, e.fd, next) == 0))
            LOG_ERRNO_RETURN(0, -1, "add_interest: epoll_ctl on fd ` failed", e.fd);
        set_[e.fd] = next;
        return 0;
    }

    int rm_interest(Event e) override {
        auto it = set_.find(e.fd);
        if (it == set_.end()) LOG_ERROR_RETURN(ENOENT, -1, "rm_interest: fd ` not added", e.fd);
        interest_set& s = it->second;
        s.kinds &= ~(e.interests & EVENT_RWE);
        if (s.kinds == 0) {
            // The fd may be closed already (and so gone from the set).
            epoll_ctl(epfd_, EPOLL_CTL_DEL, e.fd, nullptr);
            set_.erase(it);
            drop_pending(e.fd);
            return 0;
        }
        if (ctl(EPOLL_CTL_MOD, e.fd, s) < 0)
            LOG_ERRNO_RETURN(0, -1, "rm_interest: epoll_ctl on fd ` failed", e.fd);
        return 0;
    }

    ssize_t wait_for_events(void** data, size_t count, Timeout timeout) override {
        if (!data || !count) LOG_ERROR_RETURN(EINVAL, -1, "wait_for_events: no room for events");
        while (true) {
            if (collect() < 0) return -1;
            if (!pending_.empty()) return deliver(data, count);
            if (timeout.expired()) return 0;
            if (photon::wait_for_fd_readable(epfd_, timeout) < 0)
                return errno == ETIMEDOUT ? 0 : -1;
        }
    }

private:
    struct ready {
        int fd;
        void* data;
    };
    int epfd_ = -1;
    std::unordered_map<int, interest_set> set_;
    std::deque<ready> pending_;  // fired, not yet handed out

    int ctl(int op, int fd, const interest_set& s) {
        struct epoll_event ev = {};
        ev.events = to_epoll(s.kinds, s.mode);
        ev.data.u64 = (uint64_t)fd;
        return epoll_ctl(epfd_, op, fd, &ev);
    }

    // Moves what the kernel has ready (without blocking) to pending_.
    int collect() {
        if (!pending_.empty()) return 0;
        struct epoll_event events[kMaxEvents];
        int n = epoll_wait_us(epfd_, events, kMaxEvents, 0);
        if (n < 0) {
            if (errno == EINTR) return 0;
            LOG_ERRNO_RETURN(0, -1, "wait_for_events: epoll_wait failed");
        }
        for (int i = 0; i < n; i++) queue_fired((int)events[i].data.u64, events[i].events);
        return 0;
    }

    void queue_fired(int fd, uint32_t ev) {
        auto it = set_.find(fd);
        if (it == set_.end()) return;
        interest_set& s = it->second;
        uint32_t fired = 0;
        if (ev & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) fired |= EVENT_READ;
        if (ev & (EPOLLOUT | EPOLLHUP | EPOLLERR)) fired |= EVENT_WRITE;
        if (ev & (EPOLLPRI | EPOLLHUP | EPOLLERR)) fired |= EVENT_ERROR;
        fired &= s.kinds;
        void* seen[3];
        int nseen = 0;
        for (int k = 0; k < 3; k++) {
            if (!(fired & (1u << k))) continue;
            bool dup = false;
            for (int j = 0; j < nseen; j++) dup |= seen[j] == s.data[k];
            if (dup) continue;
            seen[nseen++] = s.data[k];
            pending_.push_back({fd, s.data[k]});
        }
        if (s.mode & ONE_SHOT) set_.erase(it);  // the kernel disarmed it
    }

    size_t deliver(void** data, size_t count) {
        size_t n = 0;
        while (n < count && !pending_.empty()) {
            data[n++] = pending_.front().data;
            pending_.pop_front();
        }
        return n;
    }

    void drop_pending(int fd) {
        for (auto it = pending_.begin(); it != pending_.end();)
            it = it->fd == fd ? pending_.erase(it) : it + 1;
    }
};

}  // namespace

CascadingEventEngine* new_epoll_cascading_engine() {
    auto e = new epoll_cascading;
    if (e->init() < 0) {
        int err = errno;
        delete e;
        errno = err;
        return nullptr;
    }
    return e;
}

}  // namespace photon
