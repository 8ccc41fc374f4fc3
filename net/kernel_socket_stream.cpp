// kernel_socket_stream: a connected kernel socket whose calls park the
// coroutine on EAGAIN. It owns its fd, so its waits are edge-triggered (no
// syscall per wait) and it tells the engine before it closes the fd. A recv
// that finds data returns without any wait, so a handler that loops on
// recv drains its connection before it switches.
#include <sys/sendfile.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <vector>

#include <photon/common/alog.h>
#include <photon/net/basic_socket.h>

#include "kernel_socket.h"
#include "socket_io.h"

namespace photon {
namespace net {

namespace {
constexpr int kMaxIov = IOV_MAX;
constexpr uint32_t kRead = EVENT_READ | EDGE_TRIGGERED;
constexpr uint32_t kWrite = EVENT_WRITE | EDGE_TRIGGERED;

// A copy of an iovec array that the _mutable calls may advance: on the
// stack when small (coroutine stacks stay shallow), else on the heap.
struct iov_scratch {
    struct iovec small[8];
    std::vector<struct iovec> big;
    struct iovec* v;
    iov_scratch(const struct iovec* iov, int n) {
        if (n < 0) n = 0;
        if (n <= 8) {
            v = small;
        } else {
            big.resize(n);
            v = big.data();
        }
        memcpy(v, iov, sizeof(*iov) * n);
    }
};
}  // namespace

kernel_socket_stream::~kernel_socket_stream() {
    if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
    close();
}

int kernel_socket_stream::close() {
    ahead_.drop();
    if (fd_ < 0) return 0;
    int r = close_watched_fd(fd_);
    fd_ = -1;
    return r;
}

int kernel_socket_stream::shutdown(ShutdownHow how) {
    static const int kHow[] = {SHUT_RD, SHUT_WR, SHUT_RDWR};
    return ::shutdown(fd_, kHow[(int)how]);
}

// A transfer shorter than asked for drained the kernel's queue (receive) or
// filled it (send), so the next call would only hear EAGAIN: it waits for
// the next edge first and saves that syscall (nginx reasons the same way).
// The engine keeps edges that came meanwhile, so none is missed. "Asked"
// is what went to the kernel: an injected short transfer drains nothing.
ssize_t kernel_socket_stream::transfer(bool& short_before, uint32_t event, const struct iovec* iov,
                                       int iovcnt, int flags, lazy_timeout& t, bool sending) {
    size_t asked = 0;
    if (flags & MSG_DONTWAIT) {  // the caller wants EAGAIN, not a wait
        short_before = false;
        if (uint32_t f = fault::draw(kTransferFaults))
            return errno = (f == fault::RESET ? ECONNRESET : EAGAIN), -1;
        return syscall_once(iov, iovcnt, flags, sending, &asked);
    }
    if (short_before) {
        short_before = false;
        if (wait_fd(fd_, event, t) < 0) return -1;
    }
    ssize_t r =
        doio(fd_, event, t, [&] { return syscall_once(iov, iovcnt, flags, sending, &asked); });
    if (r > 0 && !(flags & MSG_PEEK)) short_before = (size_t)r < asked;
    return r;
}

ssize_t kernel_socket_stream::syscall_once(const struct iovec* iov, int iovcnt, int flags,
                                           bool sending, size_t* asked) {
    struct iovec one;
    if (fault::armed(fault::SHORT_IO) && !(flags & MSG_WAITALL) && may_cut(flags, sending))
        iov = maybe_short(iov, iovcnt, one);
    *asked = iov_bytes(iov, iovcnt);
    if (iovcnt == 1)
        return sending ? ::send(fd_, iov->iov_base, iov->iov_len, flags)
                       : ::recv(fd_, iov->iov_base, iov->iov_len, flags);
    struct msghdr msg = {};
    msg.msg_iov = const_cast<struct iovec*>(iov);
    msg.msg_iovlen = iovcnt > kMaxIov ? kMaxIov : iovcnt;
    return sending ? ::sendmsg(fd_, &msg, flags) : ::recvmsg(fd_, &msg, flags);
}

ssize_t kernel_socket_stream::recv_once(const struct iovec* iov, int iovcnt, int flags,
                                        lazy_timeout& t) {
    return transfer(recv_short_, kRead, iov, iovcnt, flags, t, false);
}

ssize_t kernel_socket_stream::send_once(const struct iovec* iov, int iovcnt, int flags,
                                        lazy_timeout& t) {
    if (flags & ZEROCOPY_FLAG) return send_zerocopy(iov, iovcnt, flags & ~ZEROCOPY_FLAG, t);
    // MSG_NOSIGNAL: EPIPE, never SIGPIPE.
    return transfer(send_short_, kWrite, iov, iovcnt, flags | MSG_NOSIGNAL, t, true);
}

// Buffered bytes come first (MSG_PEEK leaves them there). Then a small
// plain read goes through the read-ahead buffer; anything else (large
// reads, other flags) goes to the kernel as asked.
ssize_t kernel_socket_stream::recv_some(const struct iovec* iov, int iovcnt, int flags,
                                        lazy_timeout& t) {
    if (ahead_.size()) {
        size_t n = ahead_.take(iov, iovcnt, flags & MSG_PEEK);
        if (!(flags & MSG_WAITALL) || n == iov_bytes(iov, iovcnt)) return (ssize_t)n;
        iov_scratch rest(iov, iovcnt);
        int cnt = iovcnt;
        struct iovec* v = iov_advance(rest.v, cnt, n);
        ssize_t r = recv_once(v, cnt, flags, t);
        if (r < 0) read_err_ = errno;  // reported by the next call
        return (ssize_t)n + (r > 0 ? r : 0);
    }
    if (read_ahead_on_ && !(flags & ~MSG_DONTWAIT) &&
        iov_bytes(iov, iovcnt) < read_ahead::kSmallRead)
        return recv_ahead(iov, iovcnt, flags, t);
    return recv_once(iov, iovcnt, flags, t);
}

// Parks (holding no buffer) until the socket is readable, then takes what
// the kernel has, up to read_ahead::kSize, and hands out the front.
ssize_t kernel_socket_stream::recv_ahead(const struct iovec* iov, int iovcnt, int flags,
                                         lazy_timeout& t) {
    bool dontwait = flags & MSG_DONTWAIT;
    bool wait = recv_short_ && !dontwait;
    uint32_t event = kRead;
    recv_short_ = false;
    while (true) {
        if (wait && wait_fd(fd_, event, t) < 0) return -1;
        event = kRead;
        if (uint32_t f = fault::draw(kTransferFaults)) {  // injected (fault_injection.h)
            if (f == fault::RESET) return errno = ECONNRESET, -1;
            if (f == fault::EAGAIN_STORM && dontwait) return errno = EAGAIN, -1;
            // The queue was not drained: no new edge may come.
            wait = f == fault::EAGAIN_STORM;
            event = EVENT_READ;
            continue;
        }
        char* b = ahead_.acquire();
        if (!b) return recv_once(iov, iovcnt, flags, t);  // no memory: unbuffered
        size_t ask = read_ahead::kSize;
        if (fault::armed(fault::SHORT_IO) && may_cut(flags, false) && fault::hit(fault::SHORT_IO))
            ask = fault::short_length(ask);
        ssize_t r = ::recv(fd_, b, ask, MSG_DONTWAIT);
        int e = errno;
        ahead_.filled(r);
        if (r > 0) {
            recv_short_ = (size_t)r < ask;
            return (ssize_t)ahead_.take(iov, iovcnt, false);
        }
        if (r == 0) return 0;
        errno = e;
        if (e == EINTR) {
            wait = false;
            continue;
        }
        if ((e != EAGAIN && e != EWOULDBLOCK) || dontwait) return -1;
        wait = true;
    }
}

ssize_t kernel_socket_stream::recv(void* buf, size_t count, int flags) {
    struct iovec iov = {buf, count};
    return recv(&iov, 1, flags);
}

ssize_t kernel_socket_stream::recv(const struct iovec* iov, int iovcnt, int flags) {
    if (!ahead_.size() && take_deferred(read_err_)) return -1;
    lazy_timeout t(timeout_);
    return recv_some(iov, iovcnt, flags, t);
}

ssize_t kernel_socket_stream::send(const void* buf, size_t count, int flags) {
    if (take_deferred(write_err_)) return -1;
    struct iovec iov = {const_cast<void*>(buf), count};
    lazy_timeout t(timeout_);
    return send_once(&iov, 1, flags, t);
}

ssize_t kernel_socket_stream::send_now(const void* buf, size_t count) {
    if (write_err_) {  // left for the next send() to report
        errno = write_err_;
        return -1;
    }
    ssize_t r = ::send(fd_, buf, count, MSG_DONTWAIT | MSG_NOSIGNAL);
    bool full = r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    // Full: the next send waits for the edge instead of trying first.
    send_short_ = r >= 0 ? (size_t)r < count : full;
    // The kernel reports a reset once: keep it for the next send() to say.
    if (r < 0 && !full && errno != EINTR) write_err_ = errno;
    return r;
}

ssize_t kernel_socket_stream::send(const struct iovec* iov, int iovcnt, int flags) {
    if (take_deferred(write_err_)) return -1;
    lazy_timeout t(timeout_);
    return send_once(iov, iovcnt, flags, t);
}

ssize_t kernel_socket_stream::read(void* buf, size_t count) {
    struct iovec iov = {buf, count};
    return readv_mutable(&iov, 1);
}

ssize_t kernel_socket_stream::readv(const struct iovec* iov, int iovcnt) {
    iov_scratch copy(iov, iovcnt);
    return readv_mutable(copy.v, iovcnt);
}

bool kernel_socket_stream::take_deferred(int& err) {
    if (!err) return false;
    errno = err;
    err = 0;
    return true;
}

ssize_t kernel_socket_stream::readv_mutable(struct iovec* iov, int iovcnt) {
    if (!ahead_.size() && take_deferred(read_err_)) return -1;
    lazy_timeout t(timeout_);  // one deadline for the whole call
    return doio_all(
        iov, iovcnt, [&](struct iovec* v, int n) { return recv_some(v, n, 0, t); }, &read_err_);
}

ssize_t kernel_socket_stream::write(const void* buf, size_t count) {
    struct iovec iov = {const_cast<void*>(buf), count};
    return writev_mutable(&iov, 1);
}

ssize_t kernel_socket_stream::writev(const struct iovec* iov, int iovcnt) {
    iov_scratch copy(iov, iovcnt);
    return writev_mutable(copy.v, iovcnt);
}

ssize_t kernel_socket_stream::writev_mutable(struct iovec* iov, int iovcnt) {
    if (take_deferred(write_err_)) return -1;
    lazy_timeout t(timeout_);
    return doio_all(
        iov, iovcnt,
        [&](struct iovec* v, int n) -> ssize_t {
            ssize_t r = send_once(v, n, 0, t);
            if (r == 0) {  // not EOF for a send: the kernel took nothing
                errno = EPIPE;
                return -1;
            }
            return r;
        },
        &write_err_);
}

ssize_t kernel_socket_stream::sendfile(int in_fd, off_t offset, size_t count) {
    lazy_timeout t(timeout_);
    size_t done = 0;
    while (done < count) {
        size_t n = count - done;
        if (n > 1 && fault::hit(fault::SHORT_IO)) n = fault::short_length(n);
        ssize_t r = doio(fd_, kWrite, t, [&] { return ::sendfile(fd_, in_fd, &offset, n); });
        // Bytes already sent stay counted (as write does): the error, if it
        // persists, comes back from the next call.
        if (r < 0) return done ? (ssize_t)done : -1;
        if (r == 0) break;  // end of the file
        done += (size_t)r;
    }
    return (ssize_t)done;
}

Object* kernel_socket_stream::get_underlay_object(uint64_t recursion) {
    return (Object*)(intptr_t)fd_;  // Photon's convention: the fd, for any recursion
}

int kernel_socket_stream::setsockopt(int level, int name, const void* value, socklen_t len) {
    return ::setsockopt(fd_, level, name, value, len);
}

int kernel_socket_stream::getsockopt(int level, int name, void* value, socklen_t* len) {
    return ::getsockopt(fd_, level, name, value, len);
}

int kernel_socket_stream::getsockname(EndPoint& addr) { return get_socket_name(fd_, addr); }
int kernel_socket_stream::getpeername(EndPoint& addr) { return get_peer_name(fd_, addr); }
int kernel_socket_stream::getsockname(char* path, size_t count) {
    return get_socket_name(fd_, path, count);
}
int kernel_socket_stream::getpeername(char* path, size_t count) {
    return get_peer_name(fd_, path, count);
}

// ---- ISocketStream helpers ----------------------------------------------------

ssize_t ISocketStream::recv_at_least(void* buf, size_t count, size_t least, int flags) {
    struct iovec iov = {buf, count};
    return recv_at_least_mutable(&iov, 1, least, flags);
}

ssize_t ISocketStream::recv_at_least_mutable(struct iovec* iov, int iovcnt, size_t least,
                                             int flags) {
    size_t got = 0;
    iov = iov_advance(iov, iovcnt, 0);
    while (iovcnt > 0) {
        ssize_t r = recv(iov, iovcnt, flags);
        if (r < 0) return -1;
        if (r == 0) break;  // EOF before `least`
        got += (size_t)r;
        if (got >= least) break;
        iov = iov_advance(iov, iovcnt, (size_t)r);
    }
    return (ssize_t)got;
}

bool ISocketStream::skip_read(size_t count) {
    char buf[4096];
    while (count) {
        ssize_t r = read(buf, count < sizeof(buf) ? count : sizeof(buf));
        if (r <= 0) return false;
        count -= (size_t)r;
    }
    return true;
}

}  // namespace net
}  // namespace photon
