// The readiness loop every kernel-socket call shares: try the syscall, park
// on EAGAIN, retry. Private header of net/.
#pragma once

#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>

#include <photon/common/timeout.h>
#include <photon/io/fd-events.h>
#include <photon/thread/thread.h>

namespace photon {
namespace net {

// Closes an fd that the vCPU's engine may watch (any wait on it registers
// it): the engine forgets it first, or the next fd with its number would
// inherit its registration. Keeps close's errno.
inline int close_watched_fd(int fd) {
    if (auto v = get_vcpu())
        if (auto e = v->master_event_engine) e->forget_fd(fd);
    return ::close(fd);
}

// A call's deadline, fixed when the call first has to wait. Arming a
// Timeout reads the clock, and most calls on a busy connection never park:
// three reads per request were ~1% of a loaded HTTP server's CPU. The
// deadline counts from the first wait; before it, the call made only
// non-blocking syscalls.
class lazy_timeout {
public:
    explicit lazy_timeout(uint64_t us) : us_(us) {}
    Timeout get() {
        if (!armed_) {
            t_.timeout(us_);
            armed_ = true;
        }
        return t_;
    }

private:
    Timeout t_;
    uint64_t us_;
    bool armed_ = false;
};

inline Timeout deadline_of(Timeout t) { return t; }
inline Timeout deadline_of(lazy_timeout& t) { return t.get(); }

// io() is the syscall (-1 + errno on failure). `event` is EVENT_READ or
// EVENT_WRITE, with EDGE_TRIGGERED where the caller owns the fd's life (it
// calls forget_fd before close). Returns io()'s result, or -1 with the wait's
// errno (ETIMEDOUT, an interrupter's).
// `timeout` is a Timeout or a lazy_timeout&.
template <typename T, typename IO>
inline ssize_t doio(int fd, uint32_t event, T&& timeout, IO io) {
    while (true) {
        ssize_t r = io();
        if (r >= 0) return r;
        int e = errno;
        if (e == EINTR) continue;
        if (e != EAGAIN && e != EWOULDBLOCK) return -1;
        if (wait_for_fd(fd, event, deadline_of(timeout)) < 0) return -1;
    }
}

inline size_t iov_bytes(const struct iovec* iov, int cnt) {
    size_t n = 0;
    for (int i = 0; i < cnt; i++) n += iov[i].iov_len;
    return n;
}

// Drops `n` bytes from the front of iov[0..cnt); returns the first element
// that still has bytes (iov + cnt if none).
inline struct iovec* iov_advance(struct iovec* iov, int& cnt, size_t n) {
    while (cnt > 0 && n >= iov->iov_len) {
        n -= iov->iov_len;
        iov++;
        cnt--;
    }
    if (cnt > 0 && n) {
        iov->iov_base = (char*)iov->iov_base + n;
        iov->iov_len -= n;
    }
    // Zero-length elements would read as EOF: skip them.
    while (cnt > 0 && iov->iov_len == 0) {
        iov++;
        cnt--;
    }
    return iov;
}

// Repeats one-shot transfers io(iov, cnt) until iov is used up. Returns the
// bytes moved: short at EOF (io returns 0) or when an error follows some
// progress, whose errno then goes to *deferred (the caller reports it on
// its next call: socket errors are one-shot in the kernel, and no byte
// already moved may be lost); -1 if it fails before moving any.
template <typename IO>
inline ssize_t doio_all(struct iovec* iov, int cnt, IO io, int* deferred = nullptr) {
    size_t done = 0;
    iov = iov_advance(iov, cnt, 0);
    while (cnt > 0) {
        ssize_t r = io(iov, cnt);
        if (r < 0) {
            if (!done || !deferred) return -1;
            *deferred = errno;
            return (ssize_t)done;
        }
        if (r == 0) break;
        done += (size_t)r;
        iov = iov_advance(iov, cnt, (size_t)r);
    }
    return (ssize_t)done;
}

}  // namespace net
}  // namespace photon
