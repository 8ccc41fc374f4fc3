// File descriptors a test owns: closed when the object goes, so a failed
// assertion leaks nothing. Pipes and socket pairs, blocking or not.
#pragma once

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace photon_test {

// One fd, closed at scope end; reads as the int it holds.
struct unique_fd {
    int fd = -1;
    unique_fd() = default;
    explicit unique_fd(int f) : fd(f) {}
    unique_fd(const unique_fd&) = delete;
    unique_fd& operator=(const unique_fd&) = delete;
    ~unique_fd() { reset(); }
    // Closes the fd held (if any) and holds `f` instead.
    void reset(int f = -1) {
        if (fd >= 0) close(fd);
        fd = f;
    }
    operator int() const { return fd; }
};

// A pipe, both ends closed at scope end: r reads, w writes. Non-blocking by
// default (what Photon's engines expect); pass O_CLOEXEC alone for a
// blocking one. ok() says whether pipe2 worked.
struct pipe_fds {
    int r = -1, w = -1;
    explicit pipe_fds(int flags = O_NONBLOCK | O_CLOEXEC) {
        int fds[2];
        if (pipe2(fds, flags) == 0) r = fds[0], w = fds[1];
    }
    ~pipe_fds() {
        if (r >= 0) close(r);
        if (w >= 0) close(w);
    }
    pipe_fds(const pipe_fds&) = delete;
    pipe_fds& operator=(const pipe_fds&) = delete;
    bool ok() const { return r >= 0 && w >= 0; }
    // Writes one byte, which makes r readable.
    void put(char c = 'x') { ASSERT_EQ(1, write(w, &c, 1)); }
    // Reads one byte back.
    void take() {
        char c;
        ASSERT_EQ(1, read(r, &c, 1));
    }
};

// Two connected AF_UNIX sockets (blocking), closed at scope end.
struct socket_pair {
    unique_fd a, b;
    explicit socket_pair(int type = SOCK_STREAM) {
        int fds[2];
        if (socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, fds) == 0) {
            a.reset(fds[0]);
            b.reset(fds[1]);
        }
    }
    bool ok() const { return a >= 0 && b >= 0; }
};

}  // namespace photon_test
