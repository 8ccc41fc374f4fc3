// Event engines: what parks a coroutine until an fd is ready, and what a vCPU
// blocks in when it has nothing to run.
//
// Each vCPU has one master event engine (photon::init installs it: epoll or
// io_uring). Its wait_for_fd() blocks the calling coroutine only; the
// scheduler calls wait_and_fire_events() when the vCPU is idle, and
// cancel_wait() (from any OS thread) to make it look at new work.
// A cascading engine waits for many fds at once, again blocking only the
// calling coroutine (it nests in the master engine). Engines belong to the
// vCPU that created them: call them from that vCPU's coroutines only.
#pragma once

#include <sys/types.h>

#include <cerrno>
#include <cstdint>

#include <photon/common/timeout.h>
#include <photon/photon.h>
#include <photon/thread/detail/idle-wait.h>
#include <photon/thread/thread.h>

namespace photon {

const static uint32_t EVENT_READ = 1;
const static uint32_t EVENT_WRITE = 2;
const static uint32_t EVENT_ERROR = 4;
const static uint32_t EVENT_RWE = EVENT_READ | EVENT_WRITE | EVENT_ERROR;
// wait_for_fd: the caller has just seen EAGAIN on the fd and waits for the
// next readiness edge; the fd stays registered (no syscall per wait) until
// forget_fd(). Cascading engines: register edge-triggered.
const static uint32_t EDGE_TRIGGERED = 0x4000;
const static uint32_t ONE_SHOT = 0x8000;  // cascading engines: fire once

const static int EOK = ENXIO;  // errno of a coroutine woken by its event

class MasterEventEngine : public idle_wait_engine {
public:
    virtual ~MasterEventEngine() = default;

    // Blocks the calling coroutine until fd is ready for one of `interests`
    // (EVENT_* OR-ed; level-triggered unless EDGE_TRIGGERED). 0 when ready,
    // -1 with ETIMEDOUT, the interrupter's errno, EINVAL (bad fd or
    // interests) or EBADF (forget_fd() while waiting). An expired timeout
    // polls once without parking. May return 0 spuriously: callers retry the
    // syscall that gave EAGAIN.
    virtual int wait_for_fd(int fd, uint32_t interests, Timeout timeout) = 0;

    int wait_for_fd_readable(int fd, Timeout timeout = {}) {
        return wait_for_fd(fd, EVENT_READ, timeout);
    }
    int wait_for_fd_writable(int fd, Timeout timeout = {}) {
        return wait_for_fd(fd, EVENT_WRITE, timeout);
    }
    int wait_for_fd_error(int fd, Timeout timeout = {}) {
        return wait_for_fd(fd, EVENT_ERROR, timeout);
    }

    // The scheduler's idle wait: blocks the vCPU up to `timeout` us (0 =
    // poll) or until cancel_wait(), waking the coroutines whose events came.
    // Returns the number of events handled, or -1. Must not sleep.
    virtual ssize_t wait_and_fire_events(uint64_t timeout = -1) = 0;

    // Makes a blocked wait_and_fire_events() return soon. Any OS thread.
    virtual int cancel_wait() = 0;

    // Photon extension: call before close(fd) of an fd that was waited on
    // with EDGE_TRIGGERED; its waiters wake with EBADF and the engine drops
    // what it knew of the fd (a later fd with the same number starts clean).
    // Without it, such a later fd's edge-triggered waits may see its events
    // up to a second late on epoll (doc/io.md), never not at all.
    virtual void forget_fd(int /*fd*/) {}

    // Photon extension: INIT_EVENT_EPOLL, INIT_EVENT_IOURING, or
    // INIT_EVENT_NONE for engines of other kinds.
    virtual uint64_t engine_kind() const { return INIT_EVENT_NONE; }
};

namespace detail {
inline MasterEventEngine* master_engine_or_enosys() {
    auto v = get_vcpu();
    if (!v || !v->master_event_engine) errno = ENOSYS;
    return v ? v->master_event_engine : nullptr;
}
}  // namespace detail

// The current vCPU's master engine; -1 with ENOSYS if it has none.
inline int wait_for_fd(int fd, uint32_t interests, Timeout timeout = {}) {
    auto e = detail::master_engine_or_enosys();
    return e ? e->wait_for_fd(fd, interests, timeout) : -1;
}
inline int wait_for_fd_readable(int fd, Timeout timeout = {}) {
    return wait_for_fd(fd, EVENT_READ, timeout);
}
inline int wait_for_fd_writable(int fd, Timeout timeout = {}) {
    return wait_for_fd(fd, EVENT_WRITE, timeout);
}
inline int wait_for_fd_error(int fd, Timeout timeout = {}) {
    return wait_for_fd(fd, EVENT_ERROR, timeout);
}

class CascadingEventEngine {
public:
    virtual ~CascadingEventEngine() = default;

    struct Event {
        int fd;
        uint32_t interests;  // EVENT_* OR-ed, optionally EDGE_TRIGGERED / ONE_SHOT
        void* data;          // returned by wait_for_events
    };

    // Adds interests on fd (the same fd, event and data again is allowed).
    // 0, or -1 with errno. The same fd and event with other data is engine
    // specific, as in PhotonLibOS: epoll replaces the data, io_uring adds a
    // second interest; rm_interest the old one first.
    virtual int add_interest(Event e) = 0;
    // Removes interests added with the same Event; 0, or -1 with errno.
    virtual int rm_interest(Event e) = 0;
    // Blocks the calling coroutine (never the vCPU) until events arrive or
    // the timeout; stores up to `count` of their `data`. Returns how many, 0
    // on timeout, -1 with errno (an interrupt gives the interrupter's errno).
    virtual ssize_t wait_for_events(void** data, size_t count, Timeout timeout = {}) = 0;
};

struct iouring_args {
    bool is_master = true;
    bool setup_sqpoll = false;
    bool setup_sq_aff = false;
    bool setup_iopoll = false;
    bool eager_submit = false;
    uint32_t sq_thread_cpu = 0;
    uint32_t sq_thread_idle_ms = 1000;
};

// Factories: nullptr with errno (ENOSYS if the kind is not built or the
// kernel lacks it). The caller owns the result.
MasterEventEngine* new_epoll_master_engine();
CascadingEventEngine* new_epoll_cascading_engine();
MasterEventEngine* new_iouring_master_engine(const iouring_args& args = {});
CascadingEventEngine* new_iouring_cascading_engine(const iouring_args& args = {});
// Photon's untyped form: a master engine (as MasterEventEngine*) if
// args.is_master, else a cascading one (as CascadingEventEngine*), each
// converted to void*; cast it back to that same type.
inline void* new_iouring_event_engine(iouring_args args = {}) {
    if (args.is_master) return static_cast<void*>(new_iouring_master_engine(args));
    return static_cast<void*>(new_iouring_cascading_engine(args));
}
// epoll_ng (Photon's second epoll engine) is the epoll engine here, which
// already waits edge-triggered where asked. select, kqueue and iocp are not
// available on Linux: nullptr with ENOSYS.
inline MasterEventEngine* new_epoll_ng_master_engine() { return new_epoll_master_engine(); }
inline CascadingEventEngine* new_epoll_ng_cascading_engine() {
    return new_epoll_cascading_engine();
}
inline MasterEventEngine* new_select_master_engine() { return errno = ENOSYS, nullptr; }
inline CascadingEventEngine* new_select_cascading_engine() { return errno = ENOSYS, nullptr; }
inline MasterEventEngine* new_kqueue_master_engine() { return errno = ENOSYS, nullptr; }
inline CascadingEventEngine* new_kqueue_cascading_engine() { return errno = ENOSYS, nullptr; }
inline MasterEventEngine* new_iocp_master_engine() { return errno = ENOSYS, nullptr; }
inline CascadingEventEngine* new_iocp_cascading_engine() { return errno = ENOSYS, nullptr; }
inline CascadingEventEngine* new_default_cascading_engine() { return new_epoll_cascading_engine(); }

// The engine photon::init would pick for `event_engine` (INIT_EVENT_* bits:
// io_uring first when asked for and available, then epoll). nullptr with
// errno if none of the requested kinds can be had.
// options: the io_uring SQ-thread settings.
MasterEventEngine* new_master_event_engine(uint64_t event_engine,
                                           const PhotonOptions& options = {});

// Installs `engine` (owned from then on) / a new engine of INIT_EVENT_*
// bits as this vCPU's master engine; -1 with errno (EALREADY if it has
// one, ENOSYS if not a vCPU). fd_events_fini() deletes it.
int fd_events_init(MasterEventEngine* engine);
int fd_events_init(uint64_t event_engine, const PhotonOptions& options = {});
int fd_events_fini();

// Installs the engine new_engine() makes, as fd_events_init(engine); -1 if
// it makes none (its errno).
template <typename Ctor>
inline int _fd_events_init(Ctor new_engine) {
    MasterEventEngine* e = new_engine();
    if (!e) return -1;
    if (fd_events_init(e) == 0) return 0;
    int err = errno;
    delete e;  // not installed: nobody else owns it
    errno = err;
    return -1;
}

// The kind of this vCPU's master engine (engine_kind()); INIT_EVENT_NONE if
// it has none.
inline uint64_t master_event_engine_kind() {
    auto v = get_vcpu();
    return v && v->master_event_engine ? v->master_event_engine->engine_kind() : INIT_EVENT_NONE;
}

}  // namespace photon
