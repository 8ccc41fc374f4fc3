// IStream: the byte-stream interface that sockets, files and TLS streams
// share. Calls block the calling coroutine (never the vCPU, unless an
// implementation says so) and return like their POSIX namesakes: bytes, or
// -1 with errno. Not thread-safe: one coroutine reads and one writes at a
// time.
//
// Differences from PhotonLibOS: doc/compat.md#commonstreamh
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
    virtual int shutdown(ShutdownHow /*how*/) { return 0; }

    // The per-operation timeout in us (-1: none); ENOSYS where unsupported.
    virtual uint64_t timeout() const {
        errno = ENOSYS;
        return -1;
    }
    virtual void timeout(uint64_t /*tm*/) { errno = ENOSYS; }

    struct ReadAll {
        struct FreeDeleter {
            void operator()(void* p) const { free(p); }
        };
        std::unique_ptr<void, FreeDeleter> ptr;  // malloc'ed; holds |size| bytes
        // Bytes read; on error (errno set) minus the bytes read before it, or -1 (ptr null)
        // when there were none.
        ssize_t size = 0;
    };
    // Reads to EOF into one growing buffer (starting at min_buf, at most max_buf bytes; more
    // data than that fails with ENOBUFS, keeping the max_buf bytes read).
    ReadAll readall(size_t max_buf = 1024UL * 1024 * 1024, size_t min_buf = 1024);

    // Member-function pointers to pick read or write at run time: (stream->*f)(buf, n).
    typedef ssize_t (IStream::*FuncIO)(void* buf, size_t count);
    FuncIO _and_read() { return &IStream::read; }
    FuncIO _and_write() { return &IStream::write_nonconst_; }
    bool is_readf(FuncIO f) { return f == _and_read(); }
    bool is_writef(FuncIO f) { return f == _and_write(); }

    typedef ssize_t (IStream::*FuncIOV_mutable)(struct iovec* iov, int iovcnt);
    FuncIOV_mutable _and_readv_mutable() { return &IStream::readv_mutable; }
    FuncIOV_mutable _and_writev_mutable() { return &IStream::writev_mutable; }
    bool is_readf(FuncIOV_mutable f) { return f == _and_readv_mutable(); }
    bool is_writef(FuncIOV_mutable f) { return f == _and_writev_mutable(); }

    typedef ssize_t (IStream::*FuncIOCV)(const struct iovec* iov, int iovcnt);
    FuncIOCV _and_readcv() { return &IStream::readv; }
    FuncIOCV _and_writecv() { return &IStream::writev; }
    bool is_readf(FuncIOCV f) { return f == _and_readcv(); }
    bool is_writef(FuncIOCV f) { return f == _and_writecv(); }

private:
    // write() with FuncIO's signature, so _and_write() needs no cast between member types.
    ssize_t write_nonconst_(void* buf, size_t count) { return write(buf, count); }
};
