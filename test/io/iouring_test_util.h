// Helpers of the io_uring tests: fds that close themselves, a temp dir, and
// a check that io_uring can be set up here at all.
#pragma once

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include <photon/io/fd-events.h>

#include "engine_fixture.h"

#include "../util/temp_dir.h"

namespace photon_test {

struct unique_fd {
    int fd = -1;
    unique_fd() = default;
    explicit unique_fd(int f) : fd(f) {}
    unique_fd(const unique_fd&) = delete;
    ~unique_fd() {
        if (fd >= 0) close(fd);
    }
    operator int() const { return fd; }
};

struct fd_pair {
    unique_fd a, b;
};

// Blocking pipe: [0] read end, [1] write end.
inline bool make_pipe(fd_pair& p) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0) return false;
    p.a.fd = fds[0];
    p.b.fd = fds[1];
    return true;
}

inline bool make_socketpair(fd_pair& p, int type = SOCK_STREAM) {
    int fds[2];
    if (socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, fds) < 0) return false;
    p.a.fd = fds[0];
    p.b.fd = fds[1];
    return true;
}

// A listening TCP socket on 127.0.0.1, its port in *addr.
inline int tcp_listener(sockaddr_in* addr) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    *addr = {};
    addr->sin_family = AF_INET;
    addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(*addr);
    if (fd < 0 || bind(fd, (sockaddr*)addr, len) < 0 || listen(fd, 64) < 0 ||
        ::getsockname(fd, (sockaddr*)addr, &len) < 0) {
        if (fd >= 0) close(fd);
        return -1;
    }
    return fd;
}

// Whether this kernel lets us set up an io_uring; the reason if not.
inline bool iouring_available(std::string* why) {
    photon::MasterEventEngine* e = photon::new_iouring_master_engine();
    if (!e) {
        *why = std::string("io_uring unavailable here: ") + strerror(errno);
        return false;
    }
    delete e;
    return true;
}

// EngineTest, skipped where io_uring cannot be set up (the epoll runs use a
// sidecar ring).
class IouringEngineTest : public EngineTest {
protected:
    void SetUp() override {
        std::string why;
        if (!iouring_available(&why)) GTEST_SKIP() << why;
        EngineTest::SetUp();
    }
};

}  // namespace photon_test
