// fd-level socket calls that block only the calling coroutine: the
// syscall is tried first and the coroutine parks in the vCPU's event engine
// on EAGAIN (level-triggered waits, safe on any fd the caller owns). The
// `_n` forms transfer everything or fail (short only at EOF). Timeout
// failures set ETIMEDOUT; sends never raise SIGPIPE.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>

#include <photon/common/timeout.h>
#include <photon/net/socket.h>

namespace photon {
namespace net {

// A non-blocking, close-on-exec socket(2).
int socket(int domain, int type, int protocol);
int connect(int fd, const struct sockaddr* addr, socklen_t addrlen, Timeout timeout = {});
// The accepted fd is non-blocking and close-on-exec.
int accept(int fd, struct sockaddr* addr, socklen_t* addrlen, Timeout timeout = {});

ssize_t send(int fd, const void* buf, size_t len, int flags, Timeout timeout = {});
ssize_t sendmsg(int fd, const struct msghdr* msg, int flags, Timeout timeout = {});
ssize_t recv(int fd, void* buf, size_t count, int flags, Timeout timeout = {});
ssize_t recvmsg(int fd, struct msghdr* msg, int flags, Timeout timeout = {});
ssize_t read(int fd, void* buf, size_t count, Timeout timeout = {});
ssize_t readv(int fd, const struct iovec* iov, int iovcnt, Timeout timeout = {});
ssize_t write(int fd, const void* buf, size_t count, Timeout timeout = {});
ssize_t writev(int fd, const struct iovec* iov, int iovcnt, Timeout timeout = {});
ssize_t sendv(int fd, const struct iovec* iov, int iovcnt, int flags, Timeout timeout = {});
ssize_t sendfile(int out_fd, int in_fd, off_t* offset, size_t count, Timeout timeout = {});

ssize_t read_n(int fd, void* buf, size_t count, Timeout timeout = {});
ssize_t write_n(int fd, const void* buf, size_t count, Timeout timeout = {});
// The _n forms taking iovec* advance it in place.
ssize_t readv_n(int fd, struct iovec* iov, int iovcnt, Timeout timeout = {});
ssize_t writev_n(int fd, struct iovec* iov, int iovcnt, Timeout timeout = {});
ssize_t send_n(int fd, const void* buf, size_t count, int flags, Timeout timeout = {});
ssize_t sendv_n(int fd, struct iovec* iov, int iovcnt, int flags, Timeout timeout = {});
ssize_t sendfile_n(int out_fd, int in_fd, off_t* offset, size_t count, Timeout timeout = {});
// Sends `count` bytes of in_fd from `offset` through a stream (its sendfile).
ssize_t sendfile_n(ISocketStream* out_stream, int in_fd, off_t offset, size_t count,
                   Timeout timeout = {});

// Waits for `num_calls` MSG_ZEROCOPY completions of fd (its error queue).
int zerocopy_confirm(int fd, uint32_t num_calls, Timeout timeout = {});

int set_fd_nonblocking(int fd);
int set_socket_nonblocking(int fd);

// Fills a sockaddr_un; -1 ENAMETOOLONG if the path does not fit.
int fill_uds_path(struct sockaddr_un& name, const char* path, size_t count);

using Getter = int (*)(int sockfd, struct sockaddr* addr, socklen_t* addrlen);
int do_get_name(int fd, Getter getter, char* path, size_t count);
int do_get_name(int fd, Getter getter, EndPoint& addr);
inline int get_socket_name(int fd, EndPoint& addr) { return do_get_name(fd, &::getsockname, addr); }
inline int get_peer_name(int fd, EndPoint& addr) { return do_get_name(fd, &::getpeername, addr); }
inline int get_socket_name(int fd, char* path, size_t count) {
    return do_get_name(fd, &::getsockname, path, count);
}
inline int get_peer_name(int fd, char* path, size_t count) {
    return do_get_name(fd, &::getpeername, path, count);
}

// Any socket address: converts EndPoint to and from what libc wants.
struct sockaddr_storage {
    sockaddr_storage() = default;
    explicit sockaddr_storage(const EndPoint& ep);
    explicit sockaddr_storage(const sockaddr_in& a) { memcpy(&store, &a, sizeof(a)); }
    explicit sockaddr_storage(const sockaddr_in6& a) { memcpy(&store, &a, sizeof(a)); }
    explicit sockaddr_storage(const sockaddr_un& a) { memcpy(&store, &a, sizeof(a)); }
    EndPoint to_endpoint() const;
    sockaddr* get_sockaddr() const { return (sockaddr*)&store; }
    socklen_t get_socklen() const;
    socklen_t get_max_socklen() const { return sizeof(store); }
    ::sockaddr_storage store = {};
};

}  // namespace net
}  // namespace photon
