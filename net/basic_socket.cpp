// fd-level coroutine socket calls (basic_socket.h): level-triggered waits,
// since the caller, not us, decides when the fd is closed.
#include <photon/net/basic_socket.h>

#include <fcntl.h>
#include <linux/errqueue.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include <climits>
#include <vector>

#include <photon/common/alog.h>

#include "socket_io.h"

namespace photon {
namespace net {

namespace {
constexpr int kMaxIov = IOV_MAX;

// A copy of iov that the _n loops may advance (the caller's stays intact).
struct iov_copy {
    std::vector<struct iovec> v;
    iov_copy(const struct iovec* iov, int cnt) : v(iov, iov + (cnt > 0 ? cnt : 0)) {}
};
}  // namespace

int socket(int domain, int type, int protocol) {
    return ::socket(domain, type | SOCK_NONBLOCK | SOCK_CLOEXEC, protocol);
}

int connect(int fd, const struct sockaddr* addr, socklen_t addrlen, Timeout timeout) {
    if (::connect(fd, addr, addrlen) == 0) return 0;
    if (errno != EINPROGRESS) return -1;
    if (wait_for_fd_writable(fd, timeout) < 0) return -1;
    int err = 0;
    socklen_t len = sizeof(err);
    if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0) return -1;
    if (err) {
        errno = err;
        return -1;
    }
    return 0;
}

int accept(int fd, struct sockaddr* addr, socklen_t* addrlen, Timeout timeout) {
    return (int)doio(fd, EVENT_READ, timeout,
                     [&] { return ::accept4(fd, addr, addrlen, SOCK_NONBLOCK | SOCK_CLOEXEC); });
}

ssize_t send(int fd, const void* buf, size_t len, int flags, Timeout timeout) {
    return doio(fd, EVENT_WRITE, timeout,
                [&] { return ::send(fd, buf, len, flags | MSG_NOSIGNAL); });
}

ssize_t sendmsg(int fd, const struct msghdr* msg, int flags, Timeout timeout) {
    return doio(fd, EVENT_WRITE, timeout, [&] { return ::sendmsg(fd, msg, flags | MSG_NOSIGNAL); });
}

ssize_t recv(int fd, void* buf, size_t count, int flags, Timeout timeout) {
    return doio(fd, EVENT_READ, timeout, [&] { return ::recv(fd, buf, count, flags); });
}

ssize_t recvmsg(int fd, struct msghdr* msg, int flags, Timeout timeout) {
    return doio(fd, EVENT_READ, timeout, [&] { return ::recvmsg(fd, msg, flags); });
}

ssize_t read(int fd, void* buf, size_t count, Timeout timeout) {
    return doio(fd, EVENT_READ, timeout, [&] { return ::read(fd, buf, count); });
}

ssize_t readv(int fd, const struct iovec* iov, int iovcnt, Timeout timeout) {
    return doio(fd, EVENT_READ, timeout, [&] { return ::readv(fd, iov, iovcnt); });
}

ssize_t write(int fd, const void* buf, size_t count, Timeout timeout) {
    return doio(fd, EVENT_WRITE, timeout, [&] { return ::write(fd, buf, count); });
}

ssize_t writev(int fd, const struct iovec* iov, int iovcnt, Timeout timeout) {
    return doio(fd, EVENT_WRITE, timeout, [&] { return ::writev(fd, iov, iovcnt); });
}

ssize_t sendv(int fd, const struct iovec* iov, int iovcnt, int flags, Timeout timeout) {
    struct msghdr msg = {};
    msg.msg_iov = const_cast<struct iovec*>(iov);
    msg.msg_iovlen = iovcnt > kMaxIov ? kMaxIov : iovcnt;
    return sendmsg(fd, &msg, flags, timeout);
}

ssize_t sendfile(int out_fd, int in_fd, off_t* offset, size_t count, Timeout timeout) {
    return doio(out_fd, EVENT_WRITE, timeout,
                [&] { return ::sendfile(out_fd, in_fd, offset, count); });
}

ssize_t read_n(int fd, void* buf, size_t count, Timeout timeout) {
    struct iovec iov = {buf, count};
    return readv_n(fd, &iov, 1, timeout);
}

ssize_t write_n(int fd, const void* buf, size_t count, Timeout timeout) {
    struct iovec iov = {const_cast<void*>(buf), count};
    return writev_n(fd, &iov, 1, timeout);
}

ssize_t readv_n(int fd, struct iovec* iov, int iovcnt, Timeout timeout) {
    return doio_all(iov, iovcnt, [&](struct iovec* v, int n) {
        return readv(fd, v, n > kMaxIov ? kMaxIov : n, timeout);
    });
}

ssize_t writev_n(int fd, struct iovec* iov, int iovcnt, Timeout timeout) {
    return doio_all(iov, iovcnt, [&](struct iovec* v, int n) {
        return sendv(fd, v, n, 0, timeout);  // MSG_NOSIGNAL, unlike writev(2)
    });
}

ssize_t send_n(int fd, const void* buf, size_t count, int flags, Timeout timeout) {
    struct iovec iov = {const_cast<void*>(buf), count};
    return sendv_n(fd, &iov, 1, flags, timeout);
}

ssize_t sendv_n(int fd, struct iovec* iov, int iovcnt, int flags, Timeout timeout) {
    return doio_all(iov, iovcnt,
                    [&](struct iovec* v, int n) { return sendv(fd, v, n, flags, timeout); });
}

ssize_t sendfile_n(int out_fd, int in_fd, off_t* offset, size_t count, Timeout timeout) {
    size_t done = 0;
    while (done < count) {
        ssize_t r = sendfile(out_fd, in_fd, offset, count - done, timeout);
        if (r < 0) return -1;
        if (r == 0) break;  // the file ended
        done += (size_t)r;
    }
    return (ssize_t)done;
}

ssize_t sendfile_n(ISocketStream* out_stream, int in_fd, off_t offset, size_t count,
                   Timeout timeout) {
    uint64_t saved = out_stream->timeout();
    out_stream->timeout(timeout.timeout());
    ssize_t r = out_stream->sendfile(in_fd, offset, count);
    out_stream->timeout(saved);
    return r;
}

int zerocopy_confirm(int fd, uint32_t num_calls, Timeout timeout) {
    uint32_t confirmed = 0;
    while (confirmed < num_calls) {
        char control[128];
        struct msghdr msg = {};
        msg.msg_control = control;
        msg.msg_controllen = sizeof(control);
        ssize_t r = ::recvmsg(fd, &msg, MSG_ERRQUEUE);
        if (r < 0) {
            if (errno == EINTR) continue;
            if (errno != EAGAIN) return -1;
            // Completions arrive as POLLERR on the socket.
            if (wait_for_fd(fd, EVENT_ERROR, timeout) < 0) return -1;
            continue;
        }
        for (auto cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
            auto serr = (struct sock_extended_err*)CMSG_DATA(cm);
            if (serr->ee_origin != SO_EE_ORIGIN_ZEROCOPY) continue;
            confirmed += serr->ee_data - serr->ee_info + 1;  // a range of sends
        }
    }
    return 0;
}

int set_fd_nonblocking(int fd) {
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0) return -1;
    return (flags & O_NONBLOCK) ? 0 : fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

int set_socket_nonblocking(int fd) { return set_fd_nonblocking(fd); }

int fill_uds_path(struct sockaddr_un& name, const char* path, size_t count) {
    if (!path) LOG_ERROR_RETURN(EINVAL, -1, "unix socket: no path");
    if (count == 0) count = strlen(path);
    memset(&name, 0, sizeof(name));
    name.sun_family = AF_UNIX;
    if (count >= sizeof(name.sun_path))
        LOG_ERROR_RETURN(ENAMETOOLONG, -1, "unix socket path too long: `", path);
    memcpy(name.sun_path, path, count);
    return 0;
}

int do_get_name(int fd, Getter getter, char* path, size_t count) {
    struct sockaddr_un name;
    socklen_t len = sizeof(name);
    if (getter(fd, (struct sockaddr*)&name, &len) < 0) return -1;
    if (name.sun_family != AF_UNIX) LOG_ERROR_RETURN(EAFNOSUPPORT, -1, "not a unix socket");
    size_t n = len > offsetof(struct sockaddr_un, sun_path)
                   ? strnlen(name.sun_path, len - offsetof(struct sockaddr_un, sun_path))
                   : 0;
    if (count == 0) return 0;
    if (n >= count) n = count - 1;
    memcpy(path, name.sun_path, n);
    path[n] = 0;
    return 0;
}

int do_get_name(int fd, Getter getter, EndPoint& addr) {
    sockaddr_storage s;
    socklen_t len = s.get_max_socklen();
    if (getter(fd, s.get_sockaddr(), &len) < 0) return -1;
    addr = s.to_endpoint();
    return 0;
}

sockaddr_storage::sockaddr_storage(const EndPoint& ep) {
    if (ep.is_ipv4()) {
        auto in4 = (sockaddr_in*)&store;
        in4->sin_family = AF_INET;
        in4->sin_port = htons(ep.port);
        in4->sin_addr.s_addr = ep.addr.to_nl();
    } else {
        auto in6 = (sockaddr_in6*)&store;
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(ep.port);
        in6->sin6_addr = ep.addr.addr;
    }
}

EndPoint sockaddr_storage::to_endpoint() const {
    EndPoint ep;
    if (store.ss_family == AF_INET6) {
        auto s6 = (const sockaddr_in6*)&store;
        ep.addr = IPAddr(s6->sin6_addr);
        ep.port = ntohs(s6->sin6_port);
    } else if (store.ss_family == AF_INET) {
        auto s4 = (const sockaddr_in*)&store;
        ep.addr = IPAddr(s4->sin_addr);
        ep.port = ntohs(s4->sin_port);
    }
    return ep;
}

socklen_t sockaddr_storage::get_socklen() const {
    switch (store.ss_family) {
        case AF_INET:
            return sizeof(sockaddr_in);
        case AF_INET6:
            return sizeof(sockaddr_in6);
        case AF_UNIX:
            return sizeof(sockaddr_un);
        default:
            return 0;
    }
}

}  // namespace net
}  // namespace photon
