// What PhotonLibOS's own <sys/socket.h> adds to libc's: the socket option and
// name calls in namespace photon::net. Photon's headers that include that
// file (net/socket.h, net/basic_socket.h, io/iouring-wrapper.h) include this
// one, so their users find the calls where Photon's find them; libc's header
// itself is never shadowed. The kernel's calls on a raw fd, never yielding;
// -1 with errno on failure. Not API on its own: include one of those headers.
#pragma once

#include <sys/socket.h>

namespace photon {
namespace net {

inline int setsockopt(int fd, int level, int optname, const void* optval, socklen_t optlen) {
    return ::setsockopt(fd, level, optname, optval, optlen);
}
inline int getsockopt(int fd, int level, int optname, void* optval, socklen_t* optlen) {
    return ::getsockopt(fd, level, optname, optval, optlen);
}
inline int getsockname(int fd, struct sockaddr* addr, socklen_t* len) {
    return ::getsockname(fd, addr, len);
}
inline int getpeername(int fd, struct sockaddr* addr, socklen_t* len) {
    return ::getpeername(fd, addr, len);
}

}  // namespace net
}  // namespace photon
