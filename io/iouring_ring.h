// One io_uring instance and the coroutine-blocking operation on it. Private
// header of the io_uring sources (master engine, cascading engine, sidecar).
//
// An operation's SQE carries a pointer to a completion on the caller's
// stack; the caller parks until the CQE that ends the request (the last one
// of a zero-copy send) comes back, whatever interrupts it meanwhile, so the
// kernel never touches the caller's memory after it returned. A ring belongs
// to the vCPU that created it: only its coroutines may use it.
#pragma once

#include <liburing.h>

#include <cstdint>

#include <photon/io/fd-events.h>

namespace photon {

// What a CQE's user_data points at; 0 (kIgnoredCqe) marks CQEs nobody waits
// for (linked timeouts, cancel and poll-remove requests).
struct uring_completion {
    void (*on_cqe)(uring_completion* self, int32_t res, uint32_t flags);
};
constexpr uint64_t kIgnoredCqe = 0;

// A parked coroutine waiting for one request.
struct op_waiter : uring_completion {
    thread* th = CURRENT;
    int32_t res = 0;
    uint32_t cqe_flags = 0;  // of the request's last CQE
    bool done = false;
    bool parked = false;        // asleep for this request: the CQE wakes it
    bool timed = false;         // a linked timeout guards the request
    int cancel_errno = 0;       // the request was cancelled on purpose, for this
    __kernel_timespec ts = {};  // read by the kernel at submission

    op_waiter() { on_cqe = &fire; }
    static void fire(uring_completion* c, int32_t res, uint32_t flags);
};

class uring {
public:
    // A ring for the calling vCPU. `master`: it is waited on in
    // io_uring_enter (defer task work to it); otherwise an eventfd is
    // registered and SQEs are submitted at once. nullptr with errno, logged.
    static uring* create(const iouring_args& args, bool master);
    ~uring();
    uring(const uring&) = delete;
    uring& operator=(const uring&) = delete;

    // Runs one request prepared by prep(sqe) and parks until it ends; a
    // finite timeout links an IORING_OP_LINK_TIMEOUT. Returns the CQE's res
    // (-errno on failure); w.cancel_errno / w.timed say how to read it.
    template <typename Prep>
    int32_t execute(op_waiter& w, Prep&& prep, Timeout timeout, bool file_io = false) {
        io_uring_sqe* sqe = reserve(timeout.expiration() != UINT64_MAX ? 2 : 1);
        if (!sqe) return -errno;
        prep(sqe);
        io_uring_sqe_set_data(sqe, static_cast<uring_completion*>(&w));
        if (timeout.expiration() != UINT64_MAX) link_timeout(w, sqe, timeout);
        return wait(w, Timeout(), file_io);
    }
    // As execute, with the deadline kept by the scheduler instead of a linked
    // timeout: one SQE, and a cancel (-> ETIMEDOUT) only if the deadline
    // passes. For waits that nearly always end by their event (fd polls).
    template <typename Prep>
    int32_t execute_until(op_waiter& w, Prep&& prep, Timeout deadline) {
        io_uring_sqe* sqe = reserve(1);
        if (!sqe) return -errno;
        prep(sqe);
        io_uring_sqe_set_data(sqe, static_cast<uring_completion*>(&w));
        return wait(w, deadline);
    }
    // As execute, then the syscall convention: res, or -1 with errno.
    template <typename Prep>
    int64_t call(Prep&& prep, Timeout timeout, bool file_io = false) {
        op_waiter w;
        execute(w, prep, timeout, file_io);
        return result(w);
    }
    static int64_t result(const op_waiter& w);

    // Asks the kernel to cancel w's request and sets w.cancel_errno = err;
    // false (nothing set) if no SQE is free, for the caller to try again.
    bool cancel(op_waiter& w, int err);

    // A free SQE (`n` - 1 more are guaranteed free after it), submitting
    // when the SQ is full; nullptr with errno.
    io_uring_sqe* reserve(unsigned n = 1);
    // Passes queued SQEs to the kernel (now, unless the ring batches them).
    // On a batching ring, the first kFileAtOnce file reads and writes of a
    // round (from one poll of the engine to the next) go now too while
    // another coroutine is ready (else the vCPU idles when the caller parks,
    // and that wait submits them): a device that is not kept busy loses IOPS
    // to requests held until the end of a round. The rest of a busy round
    // go together at its end, where the block layer plugs them into one
    // notification of the device (a VM exit under virtio) instead of one
    // per request. Measured in doc/performance-notebook.md.
    static constexpr unsigned kFileAtOnce = 8;
    void queued(bool file_io = false) {
        if (eager_) {
            submit();
        } else if (file_io && at_once_ < kFileAtOnce && vcpu_has_other_ready()) {
            at_once_++;
            submit();
        }
    }
    // The engine was polled: a new round begins.
    void end_round() { at_once_ = 0; }
    int submit();
    // Submits and blocks the OS thread up to timeout_us for a CQE.
    void submit_and_wait(uint64_t timeout_us);
    // Dispatches every CQE available now; returns how many.
    int reap();

    int event_fd() const { return evfd_; }
    io_uring* raw() { return &ring_; }
    uint32_t inflight() const { return inflight_; }

    // Sparse registered-file table indexed by fd number. 0 / -errno.
    int register_file(int fd);
    int unregister_file(int fd);
    bool files_enabled();

private:
    uring() = default;
    int init(const iouring_args& args, bool master);
    void link_timeout(op_waiter& w, io_uring_sqe* sqe, Timeout timeout);
    int32_t wait(op_waiter& w, Timeout deadline = Timeout(), bool file_io = false);
    int ensure_file_table();

    io_uring ring_ = {};
    bool ring_ok_ = false;
    bool eager_ = true;
    uint64_t* submitted_ = nullptr;  // the vCPU's count of them, for a master ring (metrics)
    int evfd_ = -1;                  // registered eventfd (non-master rings)
    uint32_t inflight_ = 0;          // execute() calls parked now
    unsigned at_once_ = 0;           // file requests submitted at once this round
    int file_table_ = 0;             // 0 not tried, > 0 its size, < 0 -errno
};

// The ring behind an engine made by this module; nullptr if it is not one.
uring* iouring_master_ring(MasterEventEngine* e);
uring* iouring_cascading_ring(CascadingEventEngine* e);

}  // namespace photon
