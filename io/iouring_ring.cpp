// uring: setup (probing the kernel's flags by trying), submission,
// completion dispatch and the parked wait of one request.
#include "iouring_ring.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <iterator>

#include <photon/common/alog.h>

namespace photon {

namespace {

constexpr unsigned kSqEntries = 512;
constexpr unsigned kCqEntries = 4096;
constexpr unsigned kMaxFileTable = 65536;
// How soon a cancel that found the submission queue full is tried again.
constexpr uint64_t kCancelRetryUs = 1000;

// Setup modes, best first; each is tried until the kernel accepts one.
// DEFER_TASKRUN runs completions only in our io_uring_enter: right for a
// ring that the vCPU waits on, wrong for one it cannot wait on.
constexpr unsigned kMasterModes[] = {
    IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
    IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
    IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
    IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
    0,
};
constexpr unsigned kSideModes[] = {IORING_SETUP_SINGLE_ISSUER, 0};

std::atomic<bool> g_flags_logged{false};

__kernel_timespec to_timespec(uint64_t us) {
    __kernel_timespec ts;
    ts.tv_sec = (int64_t)(us / 1000000);
    ts.tv_nsec = (long long)(us % 1000000) * 1000;
    return ts;
}

unsigned base_flags(const iouring_args& a) {
    unsigned f = IORING_SETUP_CQSIZE | IORING_SETUP_CLAMP;
    if (a.setup_sqpoll) f |= IORING_SETUP_SQPOLL;
    if (a.setup_sqpoll && a.setup_sq_aff) f |= IORING_SETUP_SQ_AFF;
    if (a.setup_iopoll) f |= IORING_SETUP_IOPOLL;
    return f;
}

}  // namespace

void op_waiter::fire(uring_completion* c, int32_t res, uint32_t flags) {
    auto w = static_cast<op_waiter*>(c);
    if (!(flags & IORING_CQE_F_NOTIF)) w->res = res;  // a notification carries no result
    if (flags & IORING_CQE_F_MORE) return;            // zero-copy: the buffer is still in use
    w->cqe_flags = flags;
    w->done = true;
    // Only a parked waiter is woken: an EOK left on a ready coroutine would
    // surface as a spurious thread_yield() result.
    if (w->parked) thread_interrupt(w->th, EOK);
}

uring* uring::create(const iouring_args& args, bool master) {
    auto r = new uring;
    if (r->init(args, master) == 0) return r;
    int e = errno;
    delete r;
    errno = e;
    return nullptr;
}

int uring::init(const iouring_args& args, bool master) {
    if (master) submitted_ = vcpu_io_submitted(VCPU_IO_MASTER);
    int ret = -EINVAL;
    unsigned flags = 0;
    const unsigned* modes = master ? kMasterModes : kSideModes;
    size_t nmodes = master ? std::size(kMasterModes) : std::size(kSideModes);
    for (size_t k = 0; k < nmodes; k++) {
        unsigned mode = modes[k];
        if (args.setup_sqpoll && (mode & IORING_SETUP_DEFER_TASKRUN)) continue;
        io_uring_params p = {};
        p.flags = flags = base_flags(args) | mode;
        p.cq_entries = kCqEntries;
        p.sq_thread_cpu = args.sq_thread_cpu;
        p.sq_thread_idle = args.sq_thread_idle_ms;
        ret = io_uring_queue_init_params(kSqEntries, &ring_, &p);
        if (ret != -EINVAL) break;  // EINVAL: a flag this kernel lacks
    }
    if (ret < 0) LOG_ERROR_RETURN(-ret, -1, "io_uring: cannot set up a ring: `", ERRNO(-ret));
    ring_ok_ = true;
    io_uring_register_ring_fd(&ring_);  // saves an fd lookup per enter; optional
    if (!g_flags_logged.exchange(true)) LOG_INFO("io_uring: ring set up with flags `", HEX(flags));
    eager_ = !master || args.eager_submit || args.setup_sqpoll;
    if (master) return 0;
    evfd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (evfd_ < 0) LOG_ERRNO_RETURN(0, -1, "io_uring: eventfd");
    int r = io_uring_register_eventfd(&ring_, evfd_);
    if (r < 0) LOG_ERROR_RETURN(-r, -1, "io_uring: register eventfd: `", ERRNO(-r));
    return 0;
}

uring::~uring() {
    if (ring_ok_) io_uring_queue_exit(&ring_);
    if (evfd_ >= 0) close(evfd_);
}

io_uring_sqe* uring::reserve(unsigned n) {
    if (io_uring_sq_space_left(&ring_) < n) {
        submit();
        if ((ring_.flags & IORING_SETUP_SQPOLL) && io_uring_sq_space_left(&ring_) < n)
            io_uring_sqring_wait(&ring_);
    }
    if (io_uring_sq_space_left(&ring_) < n)
        LOG_ERROR_RETURN(EBUSY, nullptr, "io_uring: submission queue stays full");
    vcpu_count_add(submitted_, n);
    return io_uring_get_sqe(&ring_);
}

int uring::submit() {
    if (io_uring_sq_ready(&ring_) == 0) return 0;
    int r = io_uring_submit(&ring_);
    if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY)
        LOG_ERROR_RETURN(-r, -1, "io_uring: submit: `", ERRNO(-r));
    return r;
}

void uring::submit_and_wait(uint64_t timeout_us) {
    __kernel_timespec ts = to_timespec(timeout_us);
    io_uring_cqe* cqe;
    // -ETIME and -EINTR are ordinary ends of an idle wait.
    io_uring_submit_and_wait_timeout(&ring_, &cqe, 1, timeout_us == UINT64_MAX ? nullptr : &ts,
                                     nullptr);
}

int uring::reap() {
    // Completions deferred to us, or held back by a full CQ, need an enter.
    if (!io_uring_cq_ready(&ring_) &&
        (IO_URING_READ_ONCE(*ring_.sq.kflags) & (IORING_SQ_CQ_OVERFLOW | IORING_SQ_TASKRUN)))
        io_uring_get_events(&ring_);
    struct entry {
        uint64_t data;
        int32_t res;
        uint32_t flags;
    } batch[64];
    int total = 0;
    while (true) {
        unsigned head, n = 0;
        io_uring_cqe* cqe;
        io_uring_for_each_cqe(&ring_, head, cqe) {
            batch[n++] = {cqe->user_data, cqe->res, cqe->flags};
            if (n == 64) break;
        }
        if (n == 0) return total;
        // Free the CQ slots before the handlers, which may queue more work.
        io_uring_cq_advance(&ring_, n);
        for (unsigned i = 0; i < n; i++) {
            if (batch[i].data == kIgnoredCqe || batch[i].data == LIBURING_UDATA_TIMEOUT) continue;
            auto c = reinterpret_cast<uring_completion*>(batch[i].data);
            c->on_cqe(c, batch[i].res, batch[i].flags);
            total++;
        }
    }
}

void uring::link_timeout(op_waiter& w, io_uring_sqe* sqe, Timeout timeout) {
    sqe->flags |= IOSQE_IO_LINK;
    w.ts = to_timespec(timeout.timeout());  // 0 if expired: one non-blocking try
    w.timed = true;
    io_uring_sqe* t = io_uring_get_sqe(&ring_);  // reserved by execute()
    io_uring_prep_link_timeout(t, &w.ts, 0);
    io_uring_sqe_set_data64(t, kIgnoredCqe);
}

int32_t uring::wait(op_waiter& w, Timeout deadline, bool file_io) {
    inflight_++;
    queued(file_io);
    thread_pin_current(true);  // the CQE comes to this vCPU's ring
    int retry = 0;             // a cancel that found no free SQE: tried again shortly
    while (!w.done) {
        w.parked = true;
        // Once cancelled, only the request's own CQE ends the wait.
        int r = thread_usleep(w.cancel_errno ? Timeout()
                              : retry        ? Timeout(kCancelRetryUs)
                                             : deadline);
        int e = errno;
        w.parked = false;
        if (w.done || w.cancel_errno) continue;
        // Interrupted, or the deadline passed: cancel once, then wait for
        // the request's own CQE.
        int why = retry;
        if (r < 0 && e != EOK)
            why = e;
        else if (r == 0 && deadline.expired())
            why = ETIMEDOUT;
        if (why) retry = cancel(w, why) ? 0 : why;
    }
    thread_pin_current(false);
    inflight_--;
    return w.res;
}

bool uring::cancel(op_waiter& w, int err) {
    io_uring_sqe* sqe = reserve(1);
    if (!sqe) return false;
    w.cancel_errno = err;
    io_uring_prep_cancel(sqe, static_cast<uring_completion*>(&w), 0);
    io_uring_sqe_set_data64(sqe, kIgnoredCqe);
    queued();
    return true;
}

int64_t uring::result(const op_waiter& w) {
    if (w.res >= 0) return w.res;
    int err = -w.res;
    if ((err == ECANCELED || err == EINTR) && w.cancel_errno)
        err = w.cancel_errno;
    else if (err == ECANCELED && w.timed)
        err = ETIMEDOUT;
    errno = err;
    return -1;
}

int uring::ensure_file_table() {
    if (file_table_ != 0) return file_table_;
    rlimit rl = {};
    getrlimit(RLIMIT_NOFILE, &rl);
    unsigned n = rl.rlim_cur > kMaxFileTable ? kMaxFileTable : (unsigned)rl.rlim_cur;
    if (n < 1024) n = 1024;
    int r = io_uring_register_files_sparse(&ring_, n);
    file_table_ = r < 0 ? r : (int)n;
    if (r < 0) LOG_WARN("io_uring: no sparse file table: `", ERRNO(-r));
    return file_table_;
}

int uring::register_file(int fd) {
    int n = ensure_file_table();
    if (n < 0) return n;
    if (fd < 0 || fd >= n) return -EINVAL;
    int r = io_uring_register_files_update(&ring_, (unsigned)fd, &fd, 1);
    return r < 0 ? r : 0;
}

int uring::unregister_file(int fd) {
    int n = ensure_file_table();
    if (n < 0) return n;
    if (fd < 0 || fd >= n) return -EINVAL;
    int none = -1;
    int r = io_uring_register_files_update(&ring_, (unsigned)fd, &none, 1);
    return r < 0 ? r : 0;
}

bool uring::files_enabled() { return ensure_file_table() > 0; }

}  // namespace photon
