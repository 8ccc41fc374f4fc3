// Helpers of the io_uring tests: a loopback TCP listener, with the shared
// fds, temp dir and io_uring fixtures they use.
#pragma once

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include <photon/io/fd-events.h>

#include "../thread/test_util.h"
#include "../util/engine_fixture.h"
#include "../util/fds.h"
#include "../util/temp_dir.h"

namespace photon_test {

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

}  // namespace photon_test
