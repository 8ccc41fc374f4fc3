// IStream: the byte-stream interface that sockets, files and TLS streams
// share. Calls block the calling coroutine (never the vCPU, unless an
// implementation says so) and return like their POSIX namesakes: bytes, or
// -1 with errno. Not thread-safe: one coroutine reads and one writes at a
// time.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include <photon/common/object.h>

enum class ShutdownHow : int { Read = 0, Write = 1, ReadWrite = 2 };

class IStream : public Object {
public:
    virtual int close() = 0;

    virtual ssize_t read(void* buf, size_t count) = 0;
    virtual ssize_t readv(const struct iovec* iov, int iovcnt) = 0;
    // May modify iov (implementations that advance it in place save a copy).
    virtual ssize_t readv_mutable(struct iovec* iov, int iovcnt) { return readv(iov, iovcnt); }

    virtual ssize_t write(const void* buf, size_t count) = 0;
    virtual ssize_t writev(const struct iovec* iov, int iovcnt) = 0;
    virtual ssize_t writev_mutable(struct iovec* iov, int iovcnt) { return writev(iov, iovcnt); }

    // 0 by default: streams without a half-close have nothing to do.
    virtual int shutdown(ShutdownHow how) { return 0; }

    // The per-operation timeout in us (-1: none); ENOSYS where unsupported.
    virtual uint64_t timeout() const {
        errno = ENOSYS;
        return -1;
    }
    virtual void timeout(uint64_t tm) { errno = ENOSYS; }

    struct ReadAll {
        struct FreeDeleter {
            void operator()(void* p) const { free(p); }
        };
        std::unique_ptr<void, FreeDeleter> ptr;  // malloc'ed, `size` bytes used
        ssize_t size = 0;                        // -1 with errno on error
    };
    // Reads to EOF into one growing buffer (starting at min_buf, at most
    // max_buf bytes; more data than that fails with EFBIG).
    ReadAll readall(size_t max_buf = 1024UL * 1024 * 1024, size_t min_buf = 1024);
};
