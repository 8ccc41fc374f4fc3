// kernel_socket_server: binds, listens and accepts; its accept loop gives each
// connection a coroutine running the handler. Running out of fds or memory
// on accept is logged (rate-limited) and retried after a pause, so the
// server keeps serving its open connections and never spins. terminate()
// may come from any vCPU (PhotonLibOS's net-perf stops servers running on
// other vCPUs so); it waits on state shared with the loop, never on the
// server, which a blocking start_loop's caller may delete once it returns.
#include <netinet/tcp.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <new>

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

struct kernel_socket_server::loop_state {
    spinlock lock;              // guards th, jh and left
    thread* th = nullptr;       // the loop's coroutine, alive until left is set
    join_handle* jh = nullptr;  // start_loop(false): joined by the first terminator
    bool left = false;
    std::atomic<bool> stopping{false};
    semaphore left_sem{0};  // posted when the loop leaves; each waiter passes it on
};

kernel_socket_server::~kernel_socket_server() {
    terminate();
    if (fd_ >= 0) close_watched_fd(fd_);
    if (autoremove_ && !path_.empty()) unlink(path_.c_str());
}

int kernel_socket_server::make_socket(int family) {
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

void kernel_socket_server::drop_socket() {
    ERRNO e;
    close_watched_fd(fd_);
    fd_ = -1;
    errno = e.no;
}

// A failed bind closes the socket it made, so a retry (another address, the
// cause fixed) starts afresh.
int kernel_socket_server::bind(const EndPoint& ep) {
    if (family_ == AF_UNIX) LOG_ERROR_RETURN(EINVAL, -1, "a unix-domain server binds a path");
    if (make_socket(ep.is_ipv4() ? AF_INET : AF_INET6) < 0) {
        if (fd_ >= 0) drop_socket();
        return -1;
    }
    sockaddr_storage s(ep);
    if (::bind(fd_, s.get_sockaddr(), s.get_socklen()) < 0) {
        drop_socket();
        LOG_ERRNO_RETURN(0, -1, "bind to ` failed", ep);
    }
    return 0;
}

int kernel_socket_server::bind(const char* path, size_t count) {
    if (family_ != AF_UNIX) LOG_ERROR_RETURN(EINVAL, -1, "a TCP server binds an EndPoint");
    struct sockaddr_un name;
    if (fill_uds_path(name, path, count) < 0) return -1;
    if (autoremove_) {  // a stale socket file from an earlier run
        struct stat st;
        if (::stat(name.sun_path, &st) == 0 && S_ISSOCK(st.st_mode)) unlink(name.sun_path);
    }
    if (make_socket(AF_UNIX) < 0) {
        if (fd_ >= 0) drop_socket();
        return -1;
    }
    if (::bind(fd_, (sockaddr*)&name, sizeof(name)) < 0) {
        drop_socket();
        LOG_ERRNO_RETURN(0, -1, "bind to ` failed", name.sun_path);
    }
    path_ = name.sun_path;
    return 0;
}

int kernel_socket_server::listen(int backlog) {
    if (fd_ < 0) LOG_ERROR_RETURN(EBADF, -1, "listen before bind");
    if (::listen(fd_, backlog) < 0) LOG_ERRNO_RETURN(0, -1, "listen failed");
    return 0;
}

int kernel_socket_server::accept_fd(EndPoint* remote) {
    sockaddr_storage s;
    socklen_t len = s.get_max_socklen();
    int fd = (int)doio(
        fd_, EVENT_READ | EDGE_TRIGGERED, Timeout(timeout_),
        [&] { return ::accept4(fd_, s.get_sockaddr(), &len, SOCK_NONBLOCK | SOCK_CLOEXEC); },
        kRetryFaults);
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

ISocketStream* kernel_socket_server::accept(EndPoint* remote_endpoint) {
    if (fd_ < 0) LOG_ERROR_RETURN(EBADF, nullptr, "accept before bind/listen");
    int fd = accept_fd(remote_endpoint);
    if (fd < 0) return nullptr;
    ISocketStream* s = make_stream(make_, fd);
    if (!s) {
        close_watched_fd(fd);
        return nullptr;
    }
    return s;
}

void kernel_socket_server::accept_loop(loop_state* ls) {
    while (!ls->stopping.load(std::memory_order_acquire)) {
        int fd = accept_fd(nullptr);
        if (fd < 0) {
            int e = errno;
            if (ls->stopping.load(std::memory_order_acquire)) break;
            // A failed accept is the loop's to handle, not an error of the
            // program: a timeout (the server's timeout()) is silent, the rest
            // a rate-limited warning, as Photon's loop warns.
            if (out_of_resources(e)) {
                LOG_EVERY_T(1, LOG_WARN("accept: out of resources, pausing: ", ERRNO(e)));
                thread_usleep(kResourcePauseUs);
            } else if (e != ETIMEDOUT && e != ECONNABORTED && e != EINTR && e != EPROTO &&
                       e != ECANCELED) {
                LOG_EVERY_T(1, LOG_WARN("accept failed: ", ERRNO(e)));
                thread_usleep(kResourcePauseUs);
            }
            continue;
        }
        // Read per connection: the handler may be set after start_loop, as Photon's.
        Handler h = handler_;
        if (!h) {
            LOG_EVERY_T(1, LOG_WARN("a connection came before set_handler(); closed"));
            close_watched_fd(fd);
            continue;
        }
        ISocketStream* s = make_stream(make_, fd);
        if (!s) {
            close_watched_fd(fd);
            continue;
        }
        thread* th = thread_create11([h, s] {
            h(s);
            delete s;
        });
        if (!th) {
            LOG_EVERY_T(1, LOG_WARN("no coroutine for a new connection: ", ERRNO()));
            delete s;
            thread_usleep(kResourcePauseUs);
        }
    }
}

void kernel_socket_server::run_loop(loop_state* ls) {
    accept_loop(ls);
    std::shared_ptr<loop_state> keep;
    {
        SCOPED_LOCK(loop_lock_);
        keep = std::move(loop_);
    }
    {
        SCOPED_LOCK(keep->lock);
        keep->left = true;
        keep->th = nullptr;
    }
    keep->left_sem.signal(1);
}

void* kernel_socket_server::accept_loop_entry(void* self) {
    auto server = static_cast<kernel_socket_server*>(self);
    loop_state* ls;
    {
        SCOPED_LOCK(server->loop_lock_);
        ls = server->loop_.get();
    }
    server->run_loop(ls);
    return nullptr;
}

int kernel_socket_server::start_loop(bool block) {
    if (fd_ < 0) LOG_ERROR_RETURN(EBADF, -1, "start_loop before bind/listen");
    std::shared_ptr<loop_state> ls(new (std::nothrow) loop_state);
    if (!ls) LOG_ERROR_RETURN(ENOMEM, -1, "no memory for the accept loop");
    {
        // Held until th and jh are set: a terminate() that finds the loop
        // meanwhile (from another vCPU) waits for them.
        SCOPED_LOCK(ls->lock);
        {
            SCOPED_LOCK(loop_lock_);
            if (loop_) LOG_ERROR_RETURN(EALREADY, -1, "the accept loop runs already");
            loop_ = ls;
        }
        if (block) {
            ls->th = CURRENT;
        } else {
            // Not run before this returns; it reads loop_ when it starts.
            thread* th = thread_create(&accept_loop_entry, this, 64 * 1024);
            if (!th) {
                SCOPED_LOCK(loop_lock_);
                loop_.reset();
                return -1;
            }
            ls->th = th;
            ls->jh = thread_enable_join(th);
            return 0;
        }
    }
    run_loop(ls.get());
    return 0;
}

void kernel_socket_server::terminate() {
    std::shared_ptr<loop_state> ls;
    {
        SCOPED_LOCK(loop_lock_);
        ls = loop_;
    }
    if (!ls) return;
    // From here on only ls: once the loop has left, the server may be gone.
    join_handle* jh;
    {
        SCOPED_LOCK(ls->lock);
        ls->stopping.store(true, std::memory_order_release);
        if (ls->th == CURRENT) return;  // the loop stopping itself: it sees the flag
        if (!ls->left) thread_interrupt(ls->th, ECANCELED);
        jh = ls->jh;
        ls->jh = nullptr;
    }
    // An interrupt that lands while the loop runs (on another vCPU) rather
    // than waits is lost if the loop read the flag just before: repeat it,
    // at a growing interval, until the loop has left.
    uint64_t pause_us = 1000;
    while (ls->left_sem.wait(1, Timeout(pause_us)) < 0) {
        SCOPED_LOCK(ls->lock);
        if (!ls->left) thread_interrupt(ls->th, ECANCELED);
        if (pause_us < 100 * 1000) pause_us *= 2;
    }
    ls->left_sem.signal(1);  // for the next terminator
    if (jh) thread_join(jh);
}

Object* kernel_socket_server::get_underlay_object(uint64_t recursion) {
    return (Object*)(intptr_t)fd_;
}

int kernel_socket_server::setsockopt(int level, int name, const void* value, socklen_t len) {
    if (opts_.add(level, name, value, len) < 0) return -1;
    return fd_ >= 0 ? ::setsockopt(fd_, level, name, value, len) : 0;
}

int kernel_socket_server::getsockopt(int level, int name, void* value, socklen_t* len) {
    return fd_ >= 0 ? ::getsockopt(fd_, level, name, value, len)
                    : opts_.get(level, name, value, len);
}

int kernel_socket_server::getsockname(EndPoint& addr) { return get_socket_name(fd_, addr); }
int kernel_socket_server::getpeername(EndPoint& addr) { return get_peer_name(fd_, addr); }
int kernel_socket_server::getsockname(char* path, size_t count) {
    return get_socket_name(fd_, path, count);
}
int kernel_socket_server::getpeername(char* path, size_t count) {
    return get_peer_name(fd_, path, count);
}

}  // namespace net
}  // namespace photon
