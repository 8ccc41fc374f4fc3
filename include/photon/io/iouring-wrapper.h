// io_uring system calls as coroutine calls: each blocks the calling coroutine
// (never the vCPU) until the kernel is done, and returns like the syscall
// (-1 with errno). A finite timeout gives -1 ETIMEDOUT when it expires first;
// an interrupt (thread_interrupt, from any thread) cancels the request and
// gives -1 with the interrupter's errno, unless the request completed anyway,
// whose result is then returned. Either way the kernel no longer uses the
// caller's buffers when a call returns.
//
// They run on `ce` if given (an io_uring cascading engine, else EINVAL), on
// the vCPU's io_uring master engine if it has one, else on a per-vCPU ring
// created on first use. -1 ENOSYS outside a vCPU or without io_uring.
//
// `flags`: the low 32 bits are the syscall's flags (RWF_* for the read and
// write forms, MSG_* for send and recv, SPLICE_F_* for splice), the high 32
// bits are SQE flags (IouringFixedFileFlag: `fd` is an index registered with
// iouring_register_files()).
#pragma once

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <poll.h>
#include <cerrno>
#include <cstdint>

#include <photon/common/detail/sys_socket.h>
#include <photon/common/timeout.h>

namespace photon {

class CascadingEventEngine;

const uint64_t IouringFixedFileFlag = 1ULL << 32;  // IOSQE_FIXED_FILE << 32

ssize_t iouring_pread(int fd, void* buf, size_t count, off_t offset, uint64_t flags = 0,
                      Timeout timeout = {}, CascadingEventEngine* ce = nullptr);
ssize_t iouring_pwrite(int fd, const void* buf, size_t count, off_t offset, uint64_t flags = 0,
                       Timeout timeout = {}, CascadingEventEngine* ce = nullptr);
ssize_t iouring_preadv(int fd, const iovec* iov, int iovcnt, off_t offset, uint64_t flags = 0,
                       Timeout timeout = {}, CascadingEventEngine* ce = nullptr);
ssize_t iouring_pwritev(int fd, const iovec* iov, int iovcnt, off_t offset, uint64_t flags = 0,
                        Timeout timeout = {}, CascadingEventEngine* ce = nullptr);
// At the file position (offset -1): pipes, sockets, sequential files.
ssize_t iouring_read(int fd, void* buf, size_t count, uint64_t flags = 0, Timeout timeout = {},
                     CascadingEventEngine* ce = nullptr);
ssize_t iouring_write(int fd, const void* buf, size_t count, uint64_t flags = 0,
                      Timeout timeout = {}, CascadingEventEngine* ce = nullptr);
ssize_t iouring_readv(int fd, const iovec* iov, int iovcnt, uint64_t flags = 0,
                      Timeout timeout = {}, CascadingEventEngine* ce = nullptr);
ssize_t iouring_writev(int fd, const iovec* iov, int iovcnt, uint64_t flags = 0,
                       Timeout timeout = {}, CascadingEventEngine* ce = nullptr);

ssize_t iouring_send(int fd, const void* buf, size_t len, uint64_t flags = 0, Timeout timeout = {},
                     CascadingEventEngine* ce = nullptr);
ssize_t iouring_sendmsg(int fd, const msghdr* msg, uint64_t flags = 0, Timeout timeout = {},
                        CascadingEventEngine* ce = nullptr);
// Zero-copy: return once the kernel has released the buffer (its
// notification arrived), so the caller may reuse it at once.
ssize_t iouring_send_zc(int fd, const void* buf, size_t len, uint64_t flags = 0,
                        Timeout timeout = {}, CascadingEventEngine* ce = nullptr);
ssize_t iouring_sendmsg_zc(int fd, const msghdr* msg, uint64_t flags = 0, Timeout timeout = {},
                           CascadingEventEngine* ce = nullptr);
ssize_t iouring_recv(int fd, void* buf, size_t len, uint64_t flags = 0, Timeout timeout = {},
                     CascadingEventEngine* ce = nullptr);
// Photon extension: iouring_recv on this vCPU's ring that also says whether
// the socket still had data queued after it (IORING_CQE_F_SOCK_NONEMPTY;
// false where the kernel does not tell).
ssize_t iouring_recv_more(int fd, void* buf, size_t len, uint64_t flags, Timeout timeout,
                          bool* more);
ssize_t iouring_recvmsg(int fd, msghdr* msg, uint64_t flags = 0, Timeout timeout = {},
                        CascadingEventEngine* ce = nullptr);
// Offsets -1: the pipe end, or the file position.
ssize_t iouring_splice(int fd_in, int64_t off_in, int fd_out, int64_t off_out, unsigned int nbytes,
                       uint64_t flags = 0, Timeout timeout = {},
                       CascadingEventEngine* ce = nullptr);

int iouring_connect(int fd, const sockaddr* addr, socklen_t addrlen, Timeout timeout = {},
                    CascadingEventEngine* ce = nullptr);
int iouring_accept(int fd, sockaddr* addr, socklen_t* addrlen, Timeout timeout = {},
                   CascadingEventEngine* ce = nullptr);
int iouring_fsync(int fd, Timeout timeout = {}, CascadingEventEngine* ce = nullptr);
int iouring_fdatasync(int fd, Timeout timeout = {}, CascadingEventEngine* ce = nullptr);
int iouring_open(const char* path, int flags, mode_t mode, Timeout timeout = {},
                 CascadingEventEngine* ce = nullptr);
int iouring_mkdir(const char* path, mode_t mode, Timeout timeout = {},
                  CascadingEventEngine* ce = nullptr);
int iouring_close(int fd, Timeout timeout = {}, CascadingEventEngine* ce = nullptr);

// Registers fd (or frees its slot) in the ring's file table, at index fd, for
// calls with IouringFixedFileFlag on the same ring. 0, or -1 with errno.
int iouring_register_files(int fd, CascadingEventEngine* ce = nullptr);
int iouring_unregister_files(int fd, CascadingEventEngine* ce = nullptr);
// Whether this vCPU's ring supports registered files.
bool iouring_register_files_enabled();

// An adaptor for templates over I/O engines (as `photon::iouring` in Photon).
struct iouring {
    static ssize_t pread(int fd, void* buf, size_t count, off_t offset, Timeout timeout = {},
                         CascadingEventEngine* ce = nullptr) {
        return iouring_pread(fd, buf, count, offset, 0, timeout, ce);
    }
    static ssize_t preadv(int fd, const iovec* iov, int iovcnt, off_t offset, Timeout timeout = {},
                          CascadingEventEngine* ce = nullptr) {
        return iouring_preadv(fd, iov, iovcnt, offset, 0, timeout, ce);
    }
    static ssize_t pwrite(int fd, const void* buf, size_t count, off_t offset, Timeout timeout = {},
                          CascadingEventEngine* ce = nullptr) {
        return iouring_pwrite(fd, buf, count, offset, 0, timeout, ce);
    }
    static ssize_t pwritev(int fd, const iovec* iov, int iovcnt, off_t offset, Timeout timeout = {},
                           CascadingEventEngine* ce = nullptr) {
        return iouring_pwritev(fd, iov, iovcnt, offset, 0, timeout, ce);
    }
    static int fsync(int fd, Timeout timeout = {}, CascadingEventEngine* ce = nullptr) {
        return iouring_fsync(fd, timeout, ce);
    }
    static int fdatasync(int fd, Timeout timeout = {}, CascadingEventEngine* ce = nullptr) {
        return iouring_fdatasync(fd, timeout, ce);
    }
    static int close(int fd, Timeout timeout = {}, CascadingEventEngine* ce = nullptr) {
        return iouring_close(fd, timeout, ce);
    }
};

}  // namespace photon
