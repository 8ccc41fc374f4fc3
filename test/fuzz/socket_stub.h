// SocketStub: an ISocketStream whose socket-only calls do nothing (options,
// names, sendfile: ENOSYS or 0) and whose send() is write(), so that a
// fuzzer's fake socket writes only its reads and writes.
#pragma once

#include <cerrno>
#include <cstdint>

#include <photon/net/socket.h>

namespace photon_test {

class SocketStub : public photon::net::ISocketStream {
public:
    using photon::net::ISocketStream::recv;
    using photon::net::ISocketStream::send;
    int close() override { return 0; }
    ssize_t send(const void* b, size_t n, int = 0) override { return write(b, n); }
    ssize_t send(const iovec* v, int n, int = 0) override { return writev(v, n); }
    ssize_t sendfile(int, off_t, size_t) override { return errno = ENOSYS, -1; }
    Object* get_underlay_object(uint64_t) override { return nullptr; }
    int setsockopt(int, int, const void*, socklen_t) override { return 0; }
    int getsockopt(int, int, void*, socklen_t*) override { return errno = ENOSYS, -1; }
    int getsockname(photon::net::EndPoint&) override { return errno = ENOSYS, -1; }
    int getpeername(photon::net::EndPoint&) override { return errno = ENOSYS, -1; }
    int getsockname(char*, size_t) override { return errno = ENOSYS, -1; }
    int getpeername(char*, size_t) override { return errno = ENOSYS, -1; }
    void timeout(uint64_t) override {}
    uint64_t timeout() const override { return UINT64_MAX; }
};

}  // namespace photon_test
