// Helpers shared by the socket tests of test/net/.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace photon_test {

// n pseudo-random bytes, the same for the same seed.
inline std::string pattern(size_t n, uint32_t seed = 1) {
    std::string s(n, 0);
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245 + 12345;
        s[i] = (char)(seed >> 16);
    }
    return s;
}

// A free loopback port for a child server (a small race we accept in tests).
inline uint16_t free_loopback_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a = {};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    ::bind(fd, (sockaddr*)&a, sizeof(a));
    ::getsockname(fd, (sockaddr*)&a, &len);
    ::close(fd);
    return ntohs(a.sin_port);
}

}  // namespace photon_test
