// Asynchronous file I/O as syscall-like coroutine calls: each parks the
// calling coroutine (never the vCPU) until the I/O is done and returns like
// the syscall (-1 with errno). An interrupt (thread_interrupt) cancels a
// request that has not started and gives -1 with the interrupter's errno; a
// started one is waited for (its result is returned if it completed), so the
// caller's buffer is never written after the call returns.
//
// libaio_*: Linux AIO on a per-vCPU context created on first use (or by
// libaio_wrapper_init); the requests queued in one scheduling round go to the
// kernel in one io_submit. Needs an O_DIRECT fd, buffers, offsets and sizes
// aligned to 512 B (else -1 EINVAL) and a master event engine (else ENOSYS).
// -1 ENOSYS when photon is built without libaio.
//
// posixaio_*: the syscall runs on one of a few helper OS threads shared by
// the process, which wakes the coroutine with thread_interrupt (glibc's
// aio_read notifies by starting a thread per completion, or by a signal).
#pragma once

#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

extern "C" {
// Creates this vCPU's libaio context with room for iodepth requests in
// flight (a lazily created one has 32). 0, or -1 with errno (EALREADY).
int libaio_wrapper_init(int iodepth = 32);
// Waits for the requests in flight, then destroys the context.
int libaio_wrapper_fini();

ssize_t libaio_pread(int fd, void* buf, size_t count, off_t offset);
ssize_t libaio_preadv(int fd, const struct iovec* iov, int iovcnt, off_t offset);
ssize_t libaio_pwrite(int fd, const void* buf, size_t count, off_t offset);
ssize_t libaio_pwritev(int fd, const struct iovec* iov, int iovcnt, off_t offset);

ssize_t posixaio_pread(int fd, void* buf, size_t count, off_t offset);
ssize_t posixaio_pwrite(int fd, const void* buf, size_t count, off_t offset);
ssize_t posixaio_preadv(int fd, const struct iovec* iov, int iovcnt, off_t offset);
ssize_t posixaio_pwritev(int fd, const struct iovec* iov, int iovcnt, off_t offset);
int posixaio_fsync(int fd);
int posixaio_fdatasync(int fd);
}

namespace photon {

// PhotonLibOS declares these in namespace photon (C linkage, so the symbols
// are the same): photon::libaio_pread and the plain name both work.
using ::libaio_pread;
using ::libaio_preadv;
using ::libaio_pwrite;
using ::libaio_pwritev;
using ::libaio_wrapper_fini;
using ::libaio_wrapper_init;
using ::posixaio_fdatasync;
using ::posixaio_fsync;
using ::posixaio_pread;
using ::posixaio_preadv;
using ::posixaio_pwrite;
using ::posixaio_pwritev;

// libaio has no fsync of its own: this one runs fsync(2) on the posixaio
// helpers.
// Differences from PhotonLibOS: doc/compat.md#ioaio-wrapperh
inline int libaio_fsync(int fd) { return posixaio_fsync(fd); }

// Adaptors for templates over I/O engines. libaio's fsync/fdatasync run on
// the posixaio helpers; close() is close(2).
struct libaio {
    static ssize_t pread(int fd, void* buf, size_t count, off_t offset) {
        return libaio_pread(fd, buf, count, offset);
    }
    static ssize_t preadv(int fd, const iovec* iov, int iovcnt, off_t offset) {
        return libaio_preadv(fd, iov, iovcnt, offset);
    }
    static ssize_t pwrite(int fd, const void* buf, size_t count, off_t offset) {
        return libaio_pwrite(fd, buf, count, offset);
    }
    static ssize_t pwritev(int fd, const iovec* iov, int iovcnt, off_t offset) {
        return libaio_pwritev(fd, iov, iovcnt, offset);
    }
    static int fsync(int fd) { return posixaio_fsync(fd); }
    static int fdatasync(int fd) { return posixaio_fdatasync(fd); }
    static int close(int fd) { return ::close(fd); }
};

struct posixaio {
    static ssize_t pread(int fd, void* buf, size_t count, off_t offset) {
        return posixaio_pread(fd, buf, count, offset);
    }
    static ssize_t preadv(int fd, const iovec* iov, int iovcnt, off_t offset) {
        return posixaio_preadv(fd, iov, iovcnt, offset);
    }
    static ssize_t pwrite(int fd, const void* buf, size_t count, off_t offset) {
        return posixaio_pwrite(fd, buf, count, offset);
    }
    static ssize_t pwritev(int fd, const iovec* iov, int iovcnt, off_t offset) {
        return posixaio_pwritev(fd, iov, iovcnt, offset);
    }
    static int fsync(int fd) { return posixaio_fsync(fd); }
    static int fdatasync(int fd) { return posixaio_fdatasync(fd); }
    static int close(int fd) { return ::close(fd); }
};

}  // namespace photon
