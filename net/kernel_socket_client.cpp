// kernel_socket_client: connects TCP (IPv4/IPv6) or unix-domain sockets and
// hands the fd to a stream; and the socket options clients and servers
// remember for the sockets they make.
#include <netinet/tcp.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>

#include <photon/common/alog.h>
#include <photon/net/basic_socket.h>

#include "kernel_socket.h"
#include "socket_io.h"

namespace photon {
namespace net {

int sockopt_list::add(int level, int name, const void* value, socklen_t len) {
    if (!value && len) LOG_ERROR_RETURN(EINVAL, -1, "setsockopt: no value");
    for (auto& o : opts_) {
        if (o.level == level && o.name == name) {
            o.value.assign((const char*)value, len);
            return 0;
        }
    }
    opts_.push_back({level, name, std::string((const char*)value, len)});
    return 0;
}

int sockopt_list::get(int level, int name, void* value, socklen_t* len) const {
    for (auto& o : opts_) {
        if (o.level == level && o.name == name) {
            socklen_t n = *len < o.value.size() ? *len : (socklen_t)o.value.size();
            memcpy(value, o.value.data(), n);
            *len = n;
            return 0;
        }
    }
    errno = ENOENT;
    return -1;
}

int sockopt_list::apply(int fd) const {
    for (auto& o : opts_) {
        if (::setsockopt(fd, o.level, o.name, o.value.data(), (socklen_t)o.value.size()) < 0)
            LOG_ERRNO_RETURN(0, -1, "setsockopt(`, `) failed", o.level, o.name);
    }
    return 0;
}

ISocketStream* kernel_socket_client::finish(int fd, const sockaddr* addr, socklen_t len) {
    if (net::connect(fd, addr, len, Timeout(timeout_)) < 0) {
        int e = errno;
        close_watched_fd(fd);
        errno = e;
        LOG_ERRNO_RETURN(0, nullptr, "connect failed");
    }
    ISocketStream* s = make_stream(make_, fd);
    if (!s) {
        close_watched_fd(fd);
        return nullptr;
    }
    s->timeout(timeout_);
    return s;
}

ISocketStream* kernel_socket_client::connect(const EndPoint& remote, const EndPoint* local) {
    if (family_ == AF_UNIX) LOG_ERROR_RETURN(EINVAL, nullptr, "a unix-domain client takes a path");
    int family = remote.is_ipv4() ? AF_INET : AF_INET6;
    // AF_SMC picks the IP version by protocol: SMCPROTO_SMC (0) / SMC6 (1).
    int fd = family_ == AF_SMC ? net::socket(AF_SMC, SOCK_STREAM, family == AF_INET6)
                               : net::socket(family, SOCK_STREAM, 0);
    if (fd < 0) LOG_ERRNO_RETURN(0, nullptr, "socket() failed");
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (opts_.apply(fd) < 0) {
        close_watched_fd(fd);
        return nullptr;
    }
    EndPoint bind_ep;
    if (local) {
        bind_ep = *local;
    } else if (!bind_ips_.empty()) {
        bind_ep = EndPoint(bind_ips_[(size_t)rand() % bind_ips_.size()], 0);
    }
    if (local || !bind_ips_.empty()) {
        sockaddr_storage s(bind_ep);
        if (::bind(fd, s.get_sockaddr(), s.get_socklen()) < 0) {
            int e = errno;
            close_watched_fd(fd);
            errno = e;
            LOG_ERRNO_RETURN(0, nullptr, "bind to ` failed", bind_ep);
        }
    }
    sockaddr_storage s(remote);
    return finish(fd, s.get_sockaddr(), s.get_socklen());
}

ISocketStream* kernel_socket_client::connect(const char* path, size_t count) {
    if (family_ != AF_UNIX) LOG_ERROR_RETURN(EINVAL, nullptr, "a TCP client takes an EndPoint");
    struct sockaddr_un name;
    if (fill_uds_path(name, path, count) < 0) return nullptr;
    int fd = net::socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) LOG_ERRNO_RETURN(0, nullptr, "socket(AF_UNIX) failed");
    if (opts_.apply(fd) < 0) {
        close_watched_fd(fd);
        return nullptr;
    }
    return finish(fd, (sockaddr*)&name, sizeof(name));
}

}  // namespace net
}  // namespace photon
