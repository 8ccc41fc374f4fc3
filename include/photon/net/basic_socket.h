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

#include <cassert>
#include <cerrno>
#include <cstdint>

#include <photon/common/iovector.h>
#include <photon/common/timeout.h>
#include <photon/common/utility.h>
#include <photon/net/socket.h>
#include <photon/thread/thread.h>

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

[[deprecated("use sendfile_n() instead")]] inline ssize_t sendfile_fallback(
    ISocketStream* out_stream, int in_fd, off_t offset, size_t count, Timeout timeout = {}) {
    return sendfile_n(out_stream, in_fd, offset, count, timeout);
}

// Waits for `num_calls` MSG_ZEROCOPY completions of fd (its error queue).
int zerocopy_confirm(int fd, uint32_t num_calls, Timeout timeout = {});

int set_fd_nonblocking(int fd);
int set_socket_nonblocking(int fd);

// -- I/O loop helpers, as PhotonLibOS's (for socket implementations) ------
#define LAMBDA(expr) [&]() __INLINE__ { return expr; }
#define LAMBDA_TIMEOUT(expr) LAMBDA(expr)

// Runs iocb() until it succeeds or fails with other than EINTR / EAGAIN; on
// EAGAIN calls waitcb(), whose nonzero result (timeout, interrupt: errno
// set) ends the loop with iocb's -1. Returns iocb's last result.
template <typename IOCB, typename WAIT>
__FORCE_INLINE__ int doio_once(IOCB iocb, WAIT waitcb) {
    while (true) {
        ssize_t ret = iocb();
        if (ret < 0) {
            int e = errno;
            if (e == EINTR) continue;
            if (e == EAGAIN || e == EWOULDBLOCK) {
                if (waitcb()) return ret;
                continue;
            }
        }
        return ret;
    }
}
#define DOIO_ONCE(iocb, waitcb) doio_once(LAMBDA(iocb), LAMBDA(waitcb))

// Repeats iocb() while step(ret, total) says more is wanted: the total, or
// iocb's negative result. An iocb returning 0 (EOF) ends it early.
template <typename IOCB, typename STEP>
__FORCE_INLINE__ ssize_t doio_loop(IOCB iocb, STEP step) {
    ssize_t ret, n = 0;
    do {
        ret = iocb();
        if (ret < 0) return ret;
        if (ret == 0) break;
        n += ret;
    } while (step(ret, n));
    return n;
}

// A doio_loop step over a plain buffer: advances buf, shrinks count. A
// transfer claiming more than count (a broken iocb) stops the loop instead
// of wrapping count around.
// Differences from PhotonLibOS: doc/compat.md#netbasic_socketh
struct BufStep {
    void*& buf;
    size_t& count;
    void* _dummy = nullptr;
    BufStep(void*& b, size_t& c) : buf(b), count(c) {}
    BufStep(size_t& c) : buf(_dummy), count(c) {}
    bool operator()(size_t ret, size_t /*n*/) __INLINE__ {
        if (ret > count) {
            count = 0;
            return false;
        }
        buf = (void*)((uintptr_t)buf + ret);  // no arithmetic on a null _dummy
        count -= ret;
        return count > 0;
    }
};

// A doio_loop step over an iovector_view: drops what was transferred. Empty
// elements are skipped (a 0-byte transfer would read as EOF), keeping one
// element before the first transfer so iov[0] is always valid.
struct BufStepV {
    iovector_view& v;
    BufStepV(iovector_view& view) : v(view) { skip_empty(1); }
    bool operator()(size_t ret, size_t /*n*/) __INLINE__ {
        size_t extracted = v.extract_front(ret);
        assert(extracted == ret);
        _unused(extracted);
        skip_empty(0);
        return v.iovcnt > 0;
    }
    void skip_empty(int keep) __INLINE__ {
        while (v.iovcnt > keep && v.front().iov_len == 0) v.pop_front();
    }
};

#define DOIO_LOOP(iocb, step) doio_loop(LAMBDA(iocb), step)
#define DOIO_LOOP_LAMBDA(iocb, step) \
    doio_loop(LAMBDA(iocb), [&](size_t ret, size_t n) __INLINE__ { step; })

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
