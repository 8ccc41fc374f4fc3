// KernelSocketServer: binds, listens and accepts; its accept loop gives each
// connection a coroutine running the handler. Running out of fds or memory
// on accept is logged (rate-limited) and retried after a pause, so the
// server keeps serving its open connections and never spins.
#include <netinet/tcp.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <photon/common/alog.h>
#include <photon/net/basic_socket.h>
#include <photon/thread/thread11.h>

#include "kernel_socket.h"
#include "socket_io.h"

namespace photon {
namespace net {

namespace {
constexpr uint64_t kResourcePauseUs = 10 * 1000;  // EMFILE & co: retry after this

bool out_of_resources(int e) { return e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM; }
}  // namespace

KernelSocketServer::~KernelSocketServer() {
    terminate();
    if (fd_ >= 0) close_watched_fd(fd_);
    if (autoremove_ && !path_.empty()) unlink(path_.c_str());
}

int KernelSocketServer::make_socket(int family) {
    if (fd_ >= 0) LOG_ERROR_RETURN(EALREADY, -1, "server socket is bound already");
    fd_ = family_ == AF_SMC ? net::socket(AF_SMC, SOCK_STREAM, family == AF_INET6)
                            : net::socket(family, SOCK_STREAM, 0);
    if (fd_ < 0) LOG_ERRNO_RETURN(0, -1, "socket() failed");
    if (family != AF_UNIX) {
        int one = 1;
        ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    }
    return opts_.apply(fd_);
}

int KernelSocketServer::bind(const EndPoint& ep) {
    if (family_ == AF_UNIX) LOG_ERROR_RETURN(EINVAL, -1, "a unix-domain server binds a path");
    if (make_socket(ep.is_ipv4() ? AF_INET : AF_INET6) < 0) return -1;
    sockaddr_storage s(ep);
    if (::bind(fd_, s.get_sockaddr(), s.get_socklen()) < 0)
        LOG_ERRNO_RETURN(0, -1, "bind to ` failed", ep);
    return 0;
}

int KernelSocketServer::bind(const char* path, size_t count) {
    if (family_ != AF_UNIX) LOG_ERROR_RETURN(EINVAL, -1, "a TCP server binds an EndPoint");
    struct sockaddr_un name;
    if (fill_uds_path(name, path, count) < 0) return -1;
    if (autoremove_) {  // a stale socket file from an earlier run
        struct stat st;
        if (::stat(name.sun_path, &st) == 0 && S_ISSOCK(st.st_mode)) unlink(name.sun_path);
    }
    if (make_socket(AF_UNIX) < 0) return -1;
    if (::bind(fd_, (sockaddr*)&name, sizeof(name)) < 0)
        LOG_ERRNO_RETURN(0, -1, "bind to ` failed", name.sun_path);
    path_ = name.sun_path;
    return 0;
}

int KernelSocketServer::listen(int backlog) {
    if (fd_ < 0) LOG_ERROR_RETURN(EBADF, -1, "listen before bind");
    if (::listen(fd_, backlog) < 0) LOG_ERRNO_RETURN(0, -1, "listen failed");
    return 0;
}

int KernelSocketServer::accept_fd(EndPoint* remote) {
    sockaddr_storage s;
    socklen_t len = s.get_max_socklen();
    int fd = (int)doio(fd_, EVENT_READ | EDGE_TRIGGERED, Timeout(timeout_), [&] {
        return ::accept4(fd_, s.get_sockaddr(), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    });
    if (fd < 0) return -1;
    if (remote) *remote = s.to_endpoint();
    if (s.store.ss_family != AF_UNIX) {
        int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    }
    if (opts_.apply(fd) < 0) {
        close_watched_fd(fd);
        return -1;
    }
    return fd;
}

ISocketStream* KernelSocketServer::accept(EndPoint* remote_endpoint) {
    if (fd_ < 0) LOG_ERROR_RETURN(EBADF, nullptr, "accept before bind/listen");
    int fd = accept_fd(remote_endpoint);
    if (fd < 0) return nullptr;
    ISocketStream* s = make_(fd);
    if (!s) {
        close_watched_fd(fd);
        return nullptr;
    }
    return s;
}

void KernelSocketServer::accept_loop() {
    while (!stopping_) {
        int fd = accept_fd(nullptr);
        if (fd < 0) {
            int e = errno;
            if (stopping_) break;
            if (out_of_resources(e)) {
                LOG_EVERY_T(1, LOG_ERROR("accept: out of resources, pausing: ", ERRNO(e)));
                thread_usleep(kResourcePauseUs);
            } else if (e != ECONNABORTED && e != EINTR && e != EPROTO) {
                LOG_ERROR("accept failed: ", ERRNO(e));
                thread_usleep(kResourcePauseUs);
            }
            continue;
        }
        ISocketStream* s = make_(fd);
        if (!s) {
            close_watched_fd(fd);
            continue;
        }
        Handler h = handler_;
        thread* th = thread_create11([h, s] {
            h(s);
            delete s;
        });
        if (!th) {
            LOG_ERROR("no coroutine for a new connection: ", ERRNO());
            delete s;
            thread_usleep(kResourcePauseUs);
        }
    }
}

void* KernelSocketServer::accept_loop_entry(void* self) {
    static_cast<KernelSocketServer*>(self)->accept_loop();
    return nullptr;
}

int KernelSocketServer::start_loop(bool block) {
    if (loop_) LOG_ERROR_RETURN(EALREADY, -1, "the accept loop runs already");
    if (fd_ < 0) LOG_ERROR_RETURN(EBADF, -1, "start_loop before bind/listen");
    if (!handler_) LOG_ERROR_RETURN(EINVAL, -1, "start_loop without a handler");
    stopping_ = false;
    if (!block) {
        loop_ = thread_create(&accept_loop_entry, this, 64 * 1024);
        if (!loop_) return -1;
        loop_jh_ = thread_enable_join(loop_);
        return 0;
    }
    loop_ = CURRENT;
    accept_loop();
    loop_ = nullptr;
    loop_left_.notify_all();
    return 0;
}

void KernelSocketServer::terminate() {
    if (!loop_) return;
    stopping_ = true;
    if (loop_ == CURRENT) return;  // a blocking loop stopping itself: it sees the flag
    thread_interrupt(loop_, ECANCELED);
    if (loop_jh_) {
        thread_join(loop_jh_);
        loop_jh_ = nullptr;
        loop_ = nullptr;
        return;
    }
    // A blocking start_loop in another coroutine: it clears loop_ on its way out.
    while (loop_) loop_left_.wait_no_lock();
}

Object* KernelSocketServer::get_underlay_object(uint64_t recursion) {
    return (Object*)(intptr_t)fd_;
}

int KernelSocketServer::setsockopt(int level, int name, const void* value, socklen_t len) {
    if (opts_.add(level, name, value, len) < 0) return -1;
    return fd_ >= 0 ? ::setsockopt(fd_, level, name, value, len) : 0;
}

int KernelSocketServer::getsockopt(int level, int name, void* value, socklen_t* len) {
    return fd_ >= 0 ? ::getsockopt(fd_, level, name, value, len)
                    : opts_.get(level, name, value, len);
}

int KernelSocketServer::getsockname(EndPoint& addr) { return get_socket_name(fd_, addr); }
int KernelSocketServer::getpeername(EndPoint& addr) { return get_peer_name(fd_, addr); }
int KernelSocketServer::getsockname(char* path, size_t count) {
    return get_socket_name(fd_, path, count);
}
int KernelSocketServer::getpeername(char* path, size_t count) {
    return get_peer_name(fd_, path, count);
}

}  // namespace net
}  // namespace photon
