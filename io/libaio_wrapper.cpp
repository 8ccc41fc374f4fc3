// libaio_*: Linux AIO on a per-vCPU context.
//
// A caller queues its iocb and parks. Requests go to io_submit in pairs: the
// second caller of a pair submits both at once; a first that finds no
// partner by the end of its scheduling round (it yields once, if another
// coroutine is ready to run) submits alone.
// Completions are signalled on an eventfd (io_set_eventfd) that a daemon
// reaper coroutine waits on through the master engine; it takes them from
// the completion ring in user space and wakes each finished caller. A semaphore keeps the requests
// in flight within the context's depth, so io_submit never sees EAGAIN.
#include <libaio.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include <photon/common/alog.h>
#include <photon/common/utility.h>
#include <photon/io/aio-wrapper.h>
#include <photon/io/fd-events.h>
#include <photon/photon.h>
#include <photon/thread/detail/idle-wait.h>
#include <photon/thread/thread.h>

namespace photon {
namespace {

constexpr uint64_t kReaperStack = 128 * 1024;
constexpr size_t kAlign = 512;

struct aio_request {
    iocb cb;
    thread* th = nullptr;
    long res = 0;
    bool submitted = false;
    bool done = false;
};

class aio_context {
public:
    static aio_context* create(int depth);
    ~aio_context();
    // Runs one prepared iocb; the syscall's result.
    ssize_t run(aio_request* req);
    void stop();

private:
    aio_context(int depth) : depth_(depth), slots_(depth) {}
    int setup();
    static void* reaper_entry(void* self);
    void reap_loop();
    void drain_events();
    void flush();
    void fail_first_pending(long res);
    bool unqueue(aio_request* req);
    ssize_t wait_done(aio_request* req, int err);

    io_context_t ctx_ = nullptr;
    int efd_ = -1;
    int depth_;
    semaphore slots_;
    std::vector<iocb*> pending_;  // queued, not yet submitted
    bool flusher_armed_ = false;  // a caller will flush pending_ this round
    uint64_t outstanding_ = 0;    // queued + in flight
    MasterEventEngine* master_ = nullptr;
    thread* reaper_ = nullptr;
    join_handle* reaper_jh_ = nullptr;
    bool stopping_ = false;
    bool read_efd_ = true;  // the eventfd must be read to reset its level
};

thread_local aio_context* t_ctx = nullptr;
// Most iocbs per io_submit. io_submit plugs the block queue for batches of
// more than two (fs/aio.c, AIO_PLUG_THRESHOLD): no request of such a batch
// reaches the device until all are prepared. Pairs halve the syscalls and
// keep each request moving; measured against one per call and a whole
// scheduling round per call in doc/performance-notebook.md.
constexpr size_t kMaxBatch = 2;
thread_local uint64_t t_submit_calls = 0;

void stop_on_fini() {
    if (t_ctx) libaio_wrapper_fini();
}

aio_context* aio_context::create(int depth) {
    auto c = new aio_context(depth);
    if (c->setup() < 0) {
        int e = errno;
        delete c;
        errno = e;
        return nullptr;
    }
    return c;
}

int aio_context::setup() {
    vcpu_base* v = get_vcpu();
    if (!v || !v->master_event_engine)
        LOG_ERROR_RETURN(ENOSYS, -1, "libaio: needs a vCPU with a master event engine");
    master_ = v->master_event_engine;
    read_efd_ = master_->engine_kind() != INIT_EVENT_EPOLL;
    int r = io_setup(depth_, &ctx_);
    if (r < 0) {
        ctx_ = nullptr;
        LOG_ERROR_RETURN(-r, -1, "libaio: io_setup(", depth_, ") failed, errno=", -r);
    }
    efd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (efd_ < 0) LOG_ERRNO_RETURN(0, -1, "libaio: eventfd failed");
    reaper_ = thread_create(&reaper_entry, this, kReaperStack, 0, THREAD_DAEMON);
    if (!reaper_) return -1;
    reaper_jh_ = thread_enable_join(reaper_);
    return 0;
}

aio_context::~aio_context() {
    stop();
    if (ctx_) io_destroy(ctx_);
    if (efd_ >= 0) {
        if (master_) master_->forget_fd(efd_);
        close(efd_);
    }
}

void aio_context::stop() {
    if (!reaper_) return;
    stopping_ = true;
    thread_interrupt(reaper_, ECANCELED);
    thread_join(reaper_jh_);
    reaper_ = nullptr;
}

void* aio_context::reaper_entry(void* self) {
    static_cast<aio_context*>(self)->reap_loop();
    return nullptr;
}

void aio_context::reap_loop() {
    while (true) {
        // Drain the eventfd first: a completion after the reap re-arms it.
        // Not on epoll, whose edge-triggered registration reports every
        // write to it (the counter never needs resetting): a syscall less
        // per wake-up. io_uring's polls see the level, so it is read there.
        uint64_t n;
        if (read_efd_ && read(efd_, &n, sizeof(n)) < 0 && errno != EAGAIN)
            LOG_ERROR("libaio: reaper cannot read its eventfd ", ERRNO());
        drain_events();
        if (stopping_ && outstanding_ == 0) return;
        // Edge-triggered (no epoll_ctl per round): a completion after the
        // drain above leaves an edge that this wait sees.
        master_->wait_for_fd(efd_, EVENT_READ | EDGE_TRIGGERED, Timeout());
    }
}

// The completion ring the kernel shares with us at ctx_ (fs/aio.c's struct
// aio_ring): events are taken from it without a syscall, as the kernel
// allows when the header says so (magic, no incompatible features).
struct aio_ring {
    unsigned id, nr, head, tail;
    unsigned magic, compat_features, incompat_features, header_length;
    io_event events[];
};
constexpr unsigned kAioRingMagic = 0xa10a10a1;

// Up to max events from the ring, or -1 if it cannot be read in user space.
// The reaper is the ring's only consumer (no io_getevents runs beside it).
int reap_ring(io_context_t ctx, io_event* evs, int max) {
    auto ring = reinterpret_cast<aio_ring*>(ctx);
    if (ring->magic != kAioRingMagic || ring->incompat_features != 0) return -1;
    unsigned nr = ring->nr, head = ring->head;
    unsigned tail = __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
    int n = 0;
    for (; head != tail && n < max; n++) {
        evs[n] = ring->events[head];
        head = head + 1 == nr ? 0 : head + 1;
    }
    __atomic_store_n(&ring->head, head, __ATOMIC_RELEASE);
    return n;
}

void aio_context::drain_events() {
    io_event evs[128];
    struct timespec zero = {0, 0};
    int n;
    do {
        n = reap_ring(ctx_, evs, LEN(evs));
        if (n < 0) n = io_getevents(ctx_, 0, LEN(evs), evs, &zero);
        if (n < 0) {
            LOG_ERROR("libaio: io_getevents failed, errno=", -n);
            return;
        }
        vcpu_count_io(VCPU_IO_LIBAIO, 0, (uint64_t)n);
        for (int i = 0; i < n; i++) {
            auto req = static_cast<aio_request*>(evs[i].data);
            req->res = (long)evs[i].res;
            req->done = true;
            thread_interrupt(req->th, EOK);
        }
    } while (n == (int)LEN(evs));
}

// io_submit takes the iocbs in order and stops at the first it rejects,
// returning how many it took, or -errno if it took none.
void aio_context::flush() {
    flusher_armed_ = false;
    while (!pending_.empty()) {
        t_submit_calls++;
        int r = io_submit(ctx_, (long)pending_.size(), pending_.data());
        if (r < 0) {
            fail_first_pending(r);
            continue;
        }
        vcpu_count_io(VCPU_IO_LIBAIO, (uint64_t)r, 0);
        for (int i = 0; i < r; i++) static_cast<aio_request*>(pending_[i]->data)->submitted = true;
        pending_.erase(pending_.begin(), pending_.begin() + r);
    }
}

void aio_context::fail_first_pending(long res) {
    auto req = static_cast<aio_request*>(pending_.front()->data);
    pending_.erase(pending_.begin());
    req->res = res;
    req->done = true;
    thread_interrupt(req->th, EOK);
}

bool aio_context::unqueue(aio_request* req) {
    auto it = std::find(pending_.begin(), pending_.end(), &req->cb);
    if (it == pending_.end()) return false;
    pending_.erase(it);
    return true;
}

ssize_t aio_context::run(aio_request* req) {
    if (slots_.wait_interruptible(1) < 0) return -1;
    req->th = CURRENT;
    req->cb.data = req;
    io_set_eventfd(&req->cb, efd_);
    pending_.push_back(&req->cb);
    outstanding_++;
    thread_pin_current(true);  // only this vCPU's reaper can complete it
    int err = 0;
    // Alone on the vCPU, no partner can come this round: submit without the
    // yield (and its clock read), as the idle wait would right after it.
    if (pending_.size() >= kMaxBatch || !vcpu_has_other_ready()) {
        flush();
    } else if (!flusher_armed_) {
        flusher_armed_ = true;
        err = thread_yield();  // let this round's other callers queue
        if (err && unqueue(req)) req->done = true, req->res = -ECANCELED;
        flush();
    }
    ssize_t ret = wait_done(req, err);
    thread_pin_current(false);
    outstanding_--;
    slots_.signal(1);
    return ret;
}

// Parks until the reaper (or a failed submit) completes req. An interrupt
// cancels a queued request outright; a submitted one gets io_cancel (which
// regular files refuse) and is then waited for, ignoring further interrupts.
ssize_t aio_context::wait_done(aio_request* req, int err) {
    while (!req->done) {
        if (thread_usleep(-1) == 0 || errno == EOK || err) continue;
        err = errno;
        if (!req->submitted && unqueue(req)) {
            req->done = true;
            req->res = -ECANCELED;
        } else {
            io_event ev;
            io_cancel(ctx_, &req->cb, &ev);  // the event still comes through the ring
        }
    }
    if (req->res >= 0) return req->res;
    errno = (req->res == -ECANCELED && err) ? err : (int)-req->res;
    return -1;
}

aio_context* current_context() {
    if (!CURRENT) return errno = ENOSYS, nullptr;
    if (!t_ctx && libaio_wrapper_init(32) < 0) return nullptr;
    return t_ctx;
}

bool aligned(uint64_t x) { return (x & (kAlign - 1)) == 0; }

bool iov_aligned(const iovec* iov, int iovcnt) {
    for (int i = 0; i < iovcnt; i++)
        if (!aligned((uintptr_t)iov[i].iov_base) || !aligned(iov[i].iov_len)) return false;
    return true;
}

template <typename Prep>
ssize_t submit(const char* what, bool is_aligned, Prep prep) {
    if (!is_aligned)
        LOG_ERROR_RETURN(EINVAL, -1, "libaio: ", what,
                         " needs buffers, offset and size aligned to 512 B (O_DIRECT)");
    auto c = current_context();
    if (!c) return -1;
    aio_request req;
    prep(&req.cb);
    return c->run(&req);
}

}  // namespace

// Not in a header: io_submit calls on this OS thread, for the batching test.
uint64_t libaio_submit_calls() { return t_submit_calls; }

}  // namespace photon

using namespace photon;

extern "C" {

int libaio_wrapper_init(int iodepth) {
    if (t_ctx) LOG_ERROR_RETURN(EALREADY, -1, "libaio: this vCPU has a context already");
    if (iodepth <= 0) LOG_ERROR_RETURN(EINVAL, -1, "libaio: bad iodepth ", iodepth);
    t_ctx = aio_context::create(iodepth);
    if (!t_ctx) return -1;
    fini_hook_late(Delegate<void>(&stop_on_fini));
    return 0;
}

int libaio_wrapper_fini() {
    if (!t_ctx) LOG_ERROR_RETURN(ENOSYS, -1, "libaio: no context on this vCPU");
    delete t_ctx;
    t_ctx = nullptr;
    return 0;
}

ssize_t libaio_pread(int fd, void* buf, size_t count, off_t offset) {
    bool ok = aligned((uintptr_t)buf) && aligned(count) && aligned(offset);
    return submit("pread", ok, [&](iocb* cb) { io_prep_pread(cb, fd, buf, count, offset); });
}

ssize_t libaio_pwrite(int fd, const void* buf, size_t count, off_t offset) {
    bool ok = aligned((uintptr_t)buf) && aligned(count) && aligned(offset);
    return submit("pwrite", ok,
                  [&](iocb* cb) { io_prep_pwrite(cb, fd, const_cast<void*>(buf), count, offset); });
}

ssize_t libaio_preadv(int fd, const iovec* iov, int iovcnt, off_t offset) {
    bool ok = iov_aligned(iov, iovcnt) && aligned(offset);
    return submit("preadv", ok, [&](iocb* cb) { io_prep_preadv(cb, fd, iov, iovcnt, offset); });
}

ssize_t libaio_pwritev(int fd, const iovec* iov, int iovcnt, off_t offset) {
    bool ok = iov_aligned(iov, iovcnt) && aligned(offset);
    return submit("pwritev", ok, [&](iocb* cb) { io_prep_pwritev(cb, fd, iov, iovcnt, offset); });
}

}  // extern "C"
