// UDP and unix-domain datagram sockets (datagram_socket.h). The socket owns
// its fd: receives wait edge-triggered (the fd is forgotten by the engine
// before close), sends level-triggered (see send_datagram).
#include <photon/net/datagram_socket.h>

#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <cstddef>
#include <cstring>

#include <photon/common/alog.h>
#include <photon/io/fd-events.h>
#include <photon/net/basic_socket.h>
#include <photon/thread/thread.h>

#include "socket_io.h"

namespace photon {
namespace net {

namespace {

constexpr size_t kMaxUdp4Message = 65507;  // 65535 less the IPv4 (20) and UDP (8) headers
constexpr size_t kMaxUdp6Message = 65527;  // 65535 less the UDP header
// What the default SO_SNDBUF (212992) carries, less the kernel's overhead.
constexpr size_t kMaxUdsMessage = 207 * 1024;
constexpr uint64_t kFirstBackoffUs = 50;
constexpr uint64_t kMaxBackoffUs = 10 * 1000;

// io() once if the caller asked not to wait, else until it stops failing
// with EAGAIN.
template <typename IO>
ssize_t wait_loop(int fd, uint32_t event, bool dontwait, lazy_timeout& t, IO io) {
    if (!dontwait) return doio(fd, event, t, io, kRetryFaults);
    ssize_t r;
    do {
        r = io();
    } while (r < 0 && errno == EINTR);
    return r;
}

// Sleeps `us` (at most to the deadline): 0, or -1 with ETIMEDOUT once the
// deadline has passed, or the interrupter's errno.
int back_off(uint64_t us, lazy_timeout& t) {
    Timeout deadline = t.get();
    if (deadline.expired()) {
        errno = ETIMEDOUT;
        return -1;
    }
    return thread_usleep(std::min<uint64_t>(us, deadline.timeout()));
}

// One datagram. EAGAIN parks until the fd polls writable. But a unix
// datagram sent to a full receiver that this socket is not connected to
// fails with EAGAIN while the fd polls writable: the kernel has no wake-up
// for that case. So once a wait has not helped, the retries sleep, doubling
// up to kMaxBackoffUs, instead of spinning the vCPU.
ssize_t send_datagram(int fd, const struct msghdr* m, int flags, lazy_timeout& t) {
    uint64_t backoff = 0;
    while (true) {
        ssize_t r = ::sendmsg(fd, m, flags | MSG_DONTWAIT | MSG_NOSIGNAL);
        if (r >= 0) return r;
        if (errno == EINTR) continue;
        if ((errno != EAGAIN && errno != EWOULDBLOCK) || (flags & MSG_DONTWAIT)) return -1;
        if (backoff) {
            if (back_off(backoff, t) < 0) return -1;
            backoff = std::min(backoff * 2, kMaxBackoffUs);
        } else {
            if (wait_for_fd(fd, EVENT_WRITE, t.get()) < 0) return -1;
            backoff = kFirstBackoffUs;
        }
    }
}

// One datagram into m, taken only if it fits: a longer one gives -1
// EMSGSIZE and stays queued. That needs a peek (a second syscall) unless
// the buffer holds `whole` bytes, a length no datagram of the socket
// exceeds (0: none is known).
ssize_t recv_datagram(int fd, struct msghdr* m, int flags, lazy_timeout& t, size_t whole) {
    size_t room = iov_bytes(m->msg_iov, (int)m->msg_iovlen);
    bool as_kernel = flags & (MSG_PEEK | MSG_TRUNC);  // the caller's own request
    bool peek = !as_kernel && !(whole && room >= whole);
    int f = flags | MSG_DONTWAIT | (peek ? MSG_PEEK | MSG_TRUNC : 0);
    socklen_t namelen = m->msg_namelen;
    ssize_t r = wait_loop(fd, EVENT_READ | EDGE_TRIGGERED, flags & MSG_DONTWAIT, t, [&] {
        m->msg_namelen = namelen;
        return ::recvmsg(fd, m, f);
    });
    if (r < 0 || as_kernel) return r;
    if ((peek && (size_t)r > room) || (m->msg_flags & MSG_TRUNC)) {
        errno = EMSGSIZE;  // without the peek, only a datagram above `whole`
        return -1;
    }
    // Dequeue what was peeked; no coroutine of ours can read in between.
    if (peek && ::recv(fd, nullptr, 0, MSG_DONTWAIT) < 0) return -1;
    return r;
}

struct msghdr make_msg(const struct iovec* iov, int iovcnt, const void* name, socklen_t len) {
    struct msghdr m = {};
    m.msg_name = const_cast<void*>(name);
    m.msg_namelen = len;
    m.msg_iov = const_cast<struct iovec*>(iov);
    m.msg_iovlen = (size_t)iovcnt;  // a datagram is never cut: above IOV_MAX, EMSGSIZE
    return m;
}

// What UDP and unix-domain sockets share; Iface is the public class.
template <typename Iface>
class datagram_socket : public Iface {
public:
    datagram_socket(int fd, size_t max_message) : fd_(fd), max_(max_message) {}
    ~datagram_socket() override { close_watched_fd(fd_); }

    uint64_t flags() override { return 0; }  // as Photon: promises neither delivery nor order
    uint64_t max_message_size() override { return max_; }
    uint64_t timeout() const override { return timeout_; }
    void timeout(uint64_t tm) override { timeout_ = tm; }

    Object* get_underlay_object(uint64_t) override { return (Object*)(intptr_t)fd_; }
    int setsockopt(int level, int name, const void* value, socklen_t len) override {
        return ::setsockopt(fd_, level, name, value, len);
    }
    int getsockopt(int level, int name, void* value, socklen_t* len) override {
        return ::getsockopt(fd_, level, name, value, len);
    }
    int getsockname(EndPoint& addr) override { return get_socket_name(fd_, addr); }
    int getpeername(EndPoint& addr) override { return get_peer_name(fd_, addr); }
    int getsockname(char* path, size_t count) override { return get_socket_name(fd_, path, count); }
    int getpeername(char* path, size_t count) override { return get_peer_name(fd_, path, count); }

protected:
    int connect_to(const struct sockaddr* a, socklen_t len) {
        return net::connect(fd_, a, len, timeout_);
    }
    int bind_to(const struct sockaddr* a, socklen_t len) { return ::bind(fd_, a, len); }

    ssize_t send_to(const struct iovec* iov, int iovcnt, const void* name, socklen_t namelen,
                    int flags) {
        if (iovcnt < 0) LOG_ERROR_RETURN(EINVAL, -1, "datagram send: iovcnt `", iovcnt);
        struct msghdr m = make_msg(iov, iovcnt, name, namelen);
        lazy_timeout t(timeout_);
        return send_datagram(fd_, &m, flags, t);
    }
    // *namelen: the capacity of name, then the sender's address length.
    ssize_t recv_from(const struct iovec* iov, int iovcnt, void* name, socklen_t* namelen,
                      int flags, size_t whole) {
        if (iovcnt < 0) LOG_ERROR_RETURN(EINVAL, -1, "datagram recv: iovcnt `", iovcnt);
        struct msghdr m = make_msg(iov, iovcnt, name, namelen ? *namelen : 0);
        lazy_timeout t(timeout_);
        ssize_t r = recv_datagram(fd_, &m, flags, t, whole);
        if (r >= 0 && namelen) *namelen = m.msg_namelen;
        return r;
    }

    int fd_;
    size_t max_;
    uint64_t timeout_ = -1;
};

// ---- UDP ---------------------------------------------------------------------

class udp_socket final : public datagram_socket<UDPSocket> {
public:
    udp_socket(int fd, int family)
        : datagram_socket(fd, family == AF_INET6 ? kMaxUdp6Message : kMaxUdp4Message),
          family_(family) {}

    int connect(const Addr* addr, size_t len) override {
        sockaddr_storage s;
        if (to_sockaddr(addr, len, s) < 0) return -1;
        return connect_to(s.get_sockaddr(), s.get_socklen());
    }
    int bind(const Addr* addr, size_t len) override {
        sockaddr_storage s;
        if (to_sockaddr(addr, len, s) < 0) return -1;
        return bind_to(s.get_sockaddr(), s.get_socklen());
    }
    ssize_t send(const struct iovec* iov, int iovcnt, const Addr* addr, size_t len,
                 int flags) override {
        if (!addr) return send_to(iov, iovcnt, nullptr, 0, flags);
        sockaddr_storage s;
        if (to_sockaddr(addr, len, s) < 0) return -1;
        return send_to(iov, iovcnt, s.get_sockaddr(), s.get_socklen(), flags);
    }
    ssize_t recv(const struct iovec* iov, int iovcnt, Addr* addr, size_t* len, int flags) override {
        if (!addr) return recv_from(iov, iovcnt, nullptr, nullptr, flags, max_);
        if (!len || *len != sizeof(EndPoint))
            LOG_ERROR_RETURN(EINVAL, -1, "udp recv: the address must be an EndPoint");
        sockaddr_storage s;
        socklen_t sl = s.get_max_socklen();
        ssize_t r = recv_from(iov, iovcnt, s.get_sockaddr(), &sl, flags, max_);
        if (r >= 0) {
            *(EndPoint*)addr = s.to_endpoint();  // packed: any alignment
            *len = sizeof(EndPoint);
        }
        return r;
    }

private:
    // An EndPoint as this socket's family takes it: an AF_INET6 socket takes
    // IPv4 as v4-mapped IPv6 (IPAddr's own form).
    int to_sockaddr(const Addr* addr, size_t len, sockaddr_storage& s) {
        if (!addr || len != sizeof(EndPoint))
            LOG_ERROR_RETURN(EINVAL, -1, "udp: the address must be an EndPoint");
        const EndPoint& ep = *(const EndPoint*)addr;  // packed: any alignment
        if (family_ == AF_INET6 && ep.is_ipv4()) {
            struct sockaddr_in6 a6 = {};
            a6.sin6_family = AF_INET6;
            a6.sin6_port = htons(ep.port);
            a6.sin6_addr = ep.addr.addr;
            s = sockaddr_storage(a6);
        } else {
            s = sockaddr_storage(ep);  // IPv6 on an AF_INET socket: EAFNOSUPPORT
        }
        return 0;
    }

    int family_;
};

// ---- unix domain -------------------------------------------------------------

class uds_socket final : public datagram_socket<UDS_DatagramSocket> {
public:
    explicit uds_socket(int fd) : datagram_socket(fd, kMaxUdsMessage) {}

    int connect(const Addr* addr, size_t len) override {
        struct sockaddr_un un;
        if (to_sockaddr(addr, len, un) < 0) return -1;
        return connect_to((struct sockaddr*)&un, sizeof(un));
    }
    int bind(const Addr* addr, size_t len) override {
        struct sockaddr_un un;
        if (to_sockaddr(addr, len, un) < 0) return -1;
        return bind_to((struct sockaddr*)&un, sizeof(un));
    }
    ssize_t send(const struct iovec* iov, int iovcnt, const Addr* addr, size_t len,
                 int flags) override {
        if (!addr) return send_to(iov, iovcnt, nullptr, 0, flags);
        struct sockaddr_un un;
        if (to_sockaddr(addr, len, un) < 0) return -1;
        return send_to(iov, iovcnt, &un, sizeof(un), flags);
    }
    // addr: a char buffer of *len bytes, as UDS_DatagramSocket::recvfrom says;
    // *len becomes the path's length + 1 (more than given if it was cut).
    // A sender's unix datagram can be as long as its SO_SNDBUF allows, so
    // every receive is checked by a peek.
    ssize_t recv(const struct iovec* iov, int iovcnt, Addr* addr, size_t* len, int flags) override {
        if (!addr || !len || !*len) return recv_from(iov, iovcnt, nullptr, nullptr, flags, 0);
        struct sockaddr_un un;
        socklen_t ul = sizeof(un);
        ssize_t r = recv_from(iov, iovcnt, &un, &ul, flags, 0);
        if (r >= 0) put_path(un, ul, (char*)addr, len);
        return r;
    }

private:
    // Photon's form: `len` bytes of path, or up to its NUL when len is 0.
    static int to_sockaddr(const Addr* addr, size_t len, struct sockaddr_un& un) {
        auto path = (const char*)addr;
        if (path && !(len ? len : strlen(path)))
            LOG_ERROR_RETURN(ENOENT, -1, "unix datagram socket: empty path");
        return fill_uds_path(un, path, len);  // EINVAL (no path), ENAMETOOLONG
    }
    // An unbound sender has no path: "".
    static void put_path(const struct sockaddr_un& un, socklen_t ul, char* out, size_t* len) {
        size_t off = offsetof(struct sockaddr_un, sun_path);
        size_t have = std::min<size_t>(ul, sizeof(un));
        size_t n = have > off ? strnlen(un.sun_path, have - off) : 0;
        size_t copy = std::min(n, *len - 1);
        memcpy(out, un.sun_path, copy);
        out[copy] = 0;
        *len = n + 1;
    }
};

// Checks that an fd handed to a factory is a datagram socket of a family
// the factory serves, and finds which: 0, or -1 with errno.
int check_adopted(int fd, bool unix_domain, int* family) {
    int type = 0;
    socklen_t len = sizeof(type);
    if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0)
        LOG_ERRNO_RETURN(0, -1, "datagram socket: cannot adopt fd `", fd);
    len = sizeof(*family);
    if (::getsockopt(fd, SOL_SOCKET, SO_DOMAIN, family, &len) < 0)
        LOG_ERRNO_RETURN(0, -1, "datagram socket: cannot adopt fd `", fd);
    bool ok = unix_domain ? *family == AF_UNIX : (*family == AF_INET || *family == AF_INET6);
    if (type != SOCK_DGRAM || !ok)
        LOG_ERROR_RETURN(EINVAL, -1, "datagram socket: fd ` is not a ` datagram socket", fd,
                         unix_domain ? "unix" : "UDP");
    return 0;
}

}  // namespace

UDPSocket* new_udp_socket(int fd) {
    int family = AF_INET;
    if (fd < 0) {
        fd = net::socket(AF_INET, SOCK_DGRAM, 0);
        if (fd < 0) LOG_ERRNO_RETURN(0, nullptr, "udp: socket() failed");
    } else if (check_adopted(fd, false, &family) < 0) {
        return nullptr;
    }
    return new udp_socket(fd, family);
}

UDS_DatagramSocket* new_uds_datagram_socket(int fd) {
    int family = AF_UNIX;
    if (fd < 0) {
        fd = net::socket(AF_UNIX, SOCK_DGRAM, 0);
        if (fd < 0) LOG_ERRNO_RETURN(0, nullptr, "unix datagram: socket() failed");
    } else if (check_adopted(fd, true, &family) < 0) {
        return nullptr;
    }
    return new uds_socket(fd);
}

}  // namespace net
}  // namespace photon
