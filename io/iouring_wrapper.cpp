// iouring_* calls: pick the ring (see iouring-wrapper.h), prepare one SQE,
// park until its CQE.
#include <photon/io/iouring-wrapper.h>

#include <fcntl.h>

#include <photon/common/alog.h>

#include "iouring_reaper.h"

namespace photon {

namespace {

constexpr size_t kMaxRw = 0x7ffff000;  // what Linux transfers per read/write at most

uring* ring_for(CascadingEventEngine* ce) {
    vcpu_base* v = get_vcpu();
    if (!v) return errno = ENOSYS, nullptr;
    if (ce) {
        uring* r = iouring_cascading_ring(ce);
        if (!r) errno = EINVAL;
        return r;
    }
    if (uring* r = iouring_master_ring(v->master_event_engine)) return r;
    return sidecar_ring();
}

unsigned clamp_len(size_t n) { return (unsigned)(n > kMaxRw ? kMaxRw : n); }

// Runs prep(sqe) on the chosen ring; the high 32 bits of `flags` are SQE
// flags. `file_io`: a positioned read or write (see uring::queued).
template <typename Prep>
int64_t run(CascadingEventEngine* ce, uint64_t flags, Timeout timeout, Prep&& prep,
            bool file_io = false) {
    uring* r = ring_for(ce);
    if (!r) return -1;
    return r->call(
        [&](io_uring_sqe* sqe) {
            prep(sqe);
            sqe->flags |= (uint8_t)(flags >> 32);
        },
        timeout, file_io);
}

// run() for a read or write at `offset`: a positioned one (offset >= 0) is
// file I/O to the ring's submission policy, one at the file position is not.
template <typename Prep>
int64_t run_at(off_t offset, CascadingEventEngine* ce, uint64_t flags, Timeout timeout,
               Prep&& prep) {
    return run(ce, flags, timeout, prep, offset >= 0);
}

}  // namespace

ssize_t iouring_pread(int fd, void* buf, size_t count, off_t offset, uint64_t flags,
                      Timeout timeout, CascadingEventEngine* ce) {
    return run_at(offset, ce, flags, timeout, [&](io_uring_sqe* sqe) {
        io_uring_prep_read(sqe, fd, buf, clamp_len(count), (uint64_t)offset);
        sqe->rw_flags = (int)(uint32_t)flags;
    });
}

ssize_t iouring_pwrite(int fd, const void* buf, size_t count, off_t offset, uint64_t flags,
                       Timeout timeout, CascadingEventEngine* ce) {
    return run_at(offset, ce, flags, timeout, [&](io_uring_sqe* sqe) {
        io_uring_prep_write(sqe, fd, buf, clamp_len(count), (uint64_t)offset);
        sqe->rw_flags = (int)(uint32_t)flags;
    });
}

ssize_t iouring_preadv(int fd, const iovec* iov, int iovcnt, off_t offset, uint64_t flags,
                       Timeout timeout, CascadingEventEngine* ce) {
    return run_at(offset, ce, flags, timeout, [&](io_uring_sqe* sqe) {
        io_uring_prep_readv2(sqe, fd, iov, (unsigned)iovcnt, (uint64_t)offset,
                             (int)(uint32_t)flags);
    });
}

ssize_t iouring_pwritev(int fd, const iovec* iov, int iovcnt, off_t offset, uint64_t flags,
                        Timeout timeout, CascadingEventEngine* ce) {
    return run_at(offset, ce, flags, timeout, [&](io_uring_sqe* sqe) {
        io_uring_prep_writev2(sqe, fd, iov, (unsigned)iovcnt, (uint64_t)offset,
                              (int)(uint32_t)flags);
    });
}

ssize_t iouring_read(int fd, void* buf, size_t count, uint64_t flags, Timeout timeout,
                     CascadingEventEngine* ce) {
    return iouring_pread(fd, buf, count, -1, flags, timeout, ce);
}

ssize_t iouring_write(int fd, const void* buf, size_t count, uint64_t flags, Timeout timeout,
                      CascadingEventEngine* ce) {
    return iouring_pwrite(fd, buf, count, -1, flags, timeout, ce);
}

ssize_t iouring_readv(int fd, const iovec* iov, int iovcnt, uint64_t flags, Timeout timeout,
                      CascadingEventEngine* ce) {
    return iouring_preadv(fd, iov, iovcnt, -1, flags, timeout, ce);
}

ssize_t iouring_writev(int fd, const iovec* iov, int iovcnt, uint64_t flags, Timeout timeout,
                       CascadingEventEngine* ce) {
    return iouring_pwritev(fd, iov, iovcnt, -1, flags, timeout, ce);
}

ssize_t iouring_send(int fd, const void* buf, size_t len, uint64_t flags, Timeout timeout,
                     CascadingEventEngine* ce) {
    return run(ce, flags, timeout, [&](io_uring_sqe* sqe) {
        io_uring_prep_send(sqe, fd, buf, clamp_len(len), (int)(uint32_t)flags);
    });
}

ssize_t iouring_sendmsg(int fd, const msghdr* msg, uint64_t flags, Timeout timeout,
                        CascadingEventEngine* ce) {
    return run(ce, flags, timeout, [&](io_uring_sqe* sqe) {
        io_uring_prep_sendmsg(sqe, fd, msg, (unsigned)(uint32_t)flags);
    });
}

ssize_t iouring_send_zc(int fd, const void* buf, size_t len, uint64_t flags, Timeout timeout,
                        CascadingEventEngine* ce) {
    return run(ce, flags, timeout, [&](io_uring_sqe* sqe) {
        io_uring_prep_send_zc(sqe, fd, buf, clamp_len(len), (int)(uint32_t)flags, 0);
    });
}

ssize_t iouring_sendmsg_zc(int fd, const msghdr* msg, uint64_t flags, Timeout timeout,
                           CascadingEventEngine* ce) {
    return run(ce, flags, timeout, [&](io_uring_sqe* sqe) {
        io_uring_prep_sendmsg_zc(sqe, fd, msg, (unsigned)(uint32_t)flags);
    });
}

ssize_t iouring_recv(int fd, void* buf, size_t len, uint64_t flags, Timeout timeout,
                     CascadingEventEngine* ce) {
    return run(ce, flags, timeout, [&](io_uring_sqe* sqe) {
        io_uring_prep_recv(sqe, fd, buf, clamp_len(len), (int)(uint32_t)flags);
    });
}

ssize_t iouring_recv_more(int fd, void* buf, size_t len, uint64_t flags, Timeout timeout,
                          bool* more) {
    uring* r = ring_for(nullptr);
    if (!r) return -1;
    op_waiter w;
    // The deadline stays on the scheduler's timer (no linked timeout SQE):
    // the wait nearly always ends by data. (IORING_RECVSEND_POLL_FIRST, for
    // a socket believed empty, measured slower in ping-pong: the reply often
    // arrives before the batch is submitted, and is then taken inline.)
    r->execute_until(
        w,
        [&](io_uring_sqe* sqe) {
            io_uring_prep_recv(sqe, fd, buf, clamp_len(len), (int)(uint32_t)flags);
            sqe->flags |= (uint8_t)(flags >> 32);
        },
        timeout);
#ifdef IORING_CQE_F_SOCK_NONEMPTY
    *more = w.cqe_flags & IORING_CQE_F_SOCK_NONEMPTY;
#else
    *more = false;
#endif
    return uring::result(w);
}

ssize_t iouring_recvmsg(int fd, msghdr* msg, uint64_t flags, Timeout timeout,
                        CascadingEventEngine* ce) {
    return run(ce, flags, timeout, [&](io_uring_sqe* sqe) {
        io_uring_prep_recvmsg(sqe, fd, msg, (unsigned)(uint32_t)flags);
    });
}

ssize_t iouring_splice(int fd_in, int64_t off_in, int fd_out, int64_t off_out, unsigned int nbytes,
                       uint64_t flags, Timeout timeout, CascadingEventEngine* ce) {
    return run(ce, flags, timeout, [&](io_uring_sqe* sqe) {
        io_uring_prep_splice(sqe, fd_in, off_in, fd_out, off_out, nbytes,
                             (unsigned)(uint32_t)flags);
    });
}

int iouring_connect(int fd, const sockaddr* addr, socklen_t addrlen, Timeout timeout,
                    CascadingEventEngine* ce) {
    return (int)run(ce, 0, timeout,
                    [&](io_uring_sqe* sqe) { io_uring_prep_connect(sqe, fd, addr, addrlen); });
}

int iouring_accept(int fd, sockaddr* addr, socklen_t* addrlen, Timeout timeout,
                   CascadingEventEngine* ce) {
    return (int)run(ce, 0, timeout,
                    [&](io_uring_sqe* sqe) { io_uring_prep_accept(sqe, fd, addr, addrlen, 0); });
}

int iouring_fsync(int fd, Timeout timeout, CascadingEventEngine* ce) {
    return (int)run(ce, 0, timeout, [&](io_uring_sqe* sqe) { io_uring_prep_fsync(sqe, fd, 0); });
}

int iouring_fdatasync(int fd, Timeout timeout, CascadingEventEngine* ce) {
    return (int)run(ce, 0, timeout, [&](io_uring_sqe* sqe) {
        io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
    });
}

int iouring_open(const char* path, int flags, mode_t mode, Timeout timeout,
                 CascadingEventEngine* ce) {
    return (int)run(ce, 0, timeout, [&](io_uring_sqe* sqe) {
        io_uring_prep_openat(sqe, AT_FDCWD, path, flags, mode);
    });
}

int iouring_mkdir(const char* path, mode_t mode, Timeout timeout, CascadingEventEngine* ce) {
    return (int)run(ce, 0, timeout,
                    [&](io_uring_sqe* sqe) { io_uring_prep_mkdirat(sqe, AT_FDCWD, path, mode); });
}

int iouring_close(int fd, Timeout timeout, CascadingEventEngine* ce) {
    return (int)run(ce, 0, timeout, [&](io_uring_sqe* sqe) { io_uring_prep_close(sqe, fd); });
}

int iouring_register_files(int fd, CascadingEventEngine* ce) {
    uring* r = ring_for(ce);
    if (!r) return -1;
    int ret = r->register_file(fd);
    if (ret < 0) LOG_ERROR_RETURN(-ret, -1, "iouring_register_files(`): `", fd, ERRNO(-ret));
    return 0;
}

int iouring_unregister_files(int fd, CascadingEventEngine* ce) {
    uring* r = ring_for(ce);
    if (!r) return -1;
    int ret = r->unregister_file(fd);
    if (ret < 0) LOG_ERROR_RETURN(-ret, -1, "iouring_unregister_files(`): `", fd, ERRNO(-ret));
    return 0;
}

bool iouring_register_files_enabled() {
    uring* r = ring_for(nullptr);
    return r && r->files_enabled();
}

}  // namespace photon
