// IAsyncStream: the asynchronous counterpart of IStream, as PhotonLibOS
// declares it (global namespace). Each operation returns at once and reports
// its completion through `done` (see async.h), with the operation ids below in
// AsyncResult::operation. The _and_*() / is_*f() helpers name the read and
// write members as AsyncFunc pointers, so generic code can tell them apart.
//
// Differences from PhotonLibOS: doc/compat.md#commonasync_streamh
// A caller does
//     stream->read(buf, n, {this, &Me::on_read_done});
// and on_read_done(AsyncResult<ssize_t>* r) checks r->result < 0 and
// r->error_number.
// Floor: thread (tools/floors.txt), above its folder's: it is built on photon's coroutines.
#pragma once
#include <sys/types.h>
#include <sys/uio.h>

#include <photon/common/async.h>

class IAsyncStream : public IAsyncBase {
public:
    DEFINE_ASYNC0(int, close);

    DEFINE_ASYNC(ssize_t, read, void* buf, size_t count);
    DEFINE_ASYNC(ssize_t, readv, const struct iovec* iov, int iovcnt);
    // May modify iov; by default it is readv().
    EXPAND_FUNC(ssize_t, readv_mutable, struct iovec* iov, int iovcnt) {
        readv(iov, iovcnt, done, timeout);
    }

    DEFINE_ASYNC(ssize_t, write, const void* buf, size_t count);
    DEFINE_ASYNC(ssize_t, writev, const struct iovec* iov, int iovcnt);
    EXPAND_FUNC(ssize_t, writev_mutable, struct iovec* iov, int iovcnt) {
        writev(iov, iovcnt, done, timeout);
    }

    // Differences from PhotonLibOS: doc/compat.md#commonasync_streamh
    static constexpr uint32_t OPID_CLOSE = 0;
    static constexpr uint32_t OPID_READ = 1;
    static constexpr uint32_t OPID_READV = 2;
    static constexpr uint32_t OPID_WRITE = 3;
    static constexpr uint32_t OPID_WRITEV = 4;

    // write() takes a const buffer; its pointer is cast to FuncIO only so that
    // it can be compared with read()'s, never to be called through.
    using FuncIO = AsyncFunc<ssize_t, IAsyncStream, void*, size_t>;
    FuncIO _and_read() { return &IAsyncStream::read; }
    FuncIO _and_write() { return (FuncIO)&IAsyncStream::write; }
    bool is_readf(FuncIO f) { return f == _and_read(); }
    bool is_writef(FuncIO f) { return f == _and_write(); }

    using FuncIOV_mutable = AsyncFunc<ssize_t, IAsyncStream, struct iovec*, int>;
    FuncIOV_mutable _and_readv_mutable() { return &IAsyncStream::readv_mutable; }
    FuncIOV_mutable _and_writev_mutable() { return &IAsyncStream::writev_mutable; }
    bool is_readf_mutable(FuncIOV_mutable f) { return f == _and_readv_mutable(); }
    bool is_writef_mutable(FuncIOV_mutable f) { return f == _and_writev_mutable(); }

    using FuncIOCV = AsyncFunc<ssize_t, IAsyncStream, const struct iovec*, int>;
    FuncIOCV _and_readcv() { return &IAsyncStream::readv; }
    FuncIOCV _and_writecv() { return &IAsyncStream::writev; }
    bool is_readf(FuncIOCV f) { return f == _and_readcv(); }
    bool is_writef(FuncIOCV f) { return f == _and_writecv(); }
};
