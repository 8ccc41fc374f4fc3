// The readiness loop every kernel-socket call shares: try the syscall, park
// on EAGAIN, retry. Private header of net/.
#pragma once

#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>

#include <photon/common/fault_injection.h>
#include <photon/common/timeout.h>
#include <photon/io/fd-events.h>
#include <photon/thread/thread.h>

#include "lazy_timeout.h"

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

inline Timeout deadline_of(Timeout t) { return t; }
inline Timeout deadline_of(lazy_timeout& t) { return t.get(); }

// The injected faults (fault_injection.h) a socket call may get: a
// stream transfer any of these; an accept or a datagram only those a correct
// caller never sees.
constexpr uint32_t kTransferFaults = fault::EAGAIN_STORM | fault::EINTR_RETRY | fault::RESET;
constexpr uint32_t kRetryFaults = fault::EAGAIN_STORM | fault::EINTR_RETRY;

// An injected wake-up fault: a spurious return (the caller's retry hears
// EAGAIN and waits again) or a late one.
inline int wait_fd_faulty(int fd, uint32_t event, Timeout t) {
    if (fault::hit(fault::SPURIOUS)) {
        // An interrupt that comes while we are ready is the yield's result:
        // the wait's caller must see it, as it would have in the wait.
        if (int e = thread_yield()) return errno = e, -1;
        return 0;
    }
    if (wait_for_fd(fd, event, t) < 0) return -1;
    return fault::late_wakeup();
}

// wait_for_fd, with the wake-up faults when they are armed.
template <typename T>
inline int wait_fd(int fd, uint32_t event, T&& timeout) {
    if (fault::armed(fault::SPURIOUS | fault::DELAY))
        return wait_fd_faulty(fd, event, deadline_of(timeout));
    return wait_for_fd(fd, event, deadline_of(timeout));
}

// An injected fault before a non-blocking syscall: 0 (none; make the call),
// 1 (an EINTR or an EAGAIN handled: try again), -1 (fail with errno). An
// injected EAGAIN waits level-triggered: the kernel's queue was not drained,
// so no new edge may come.
template <typename T>
inline int inject_before_io(int fd, uint32_t event, T&& timeout, uint32_t faults) {
    uint32_t f = fault::draw(faults);
    if (!f) return 0;
    if (f == fault::RESET) return errno = ECONNRESET, -1;
    if (f == fault::EAGAIN_STORM && wait_fd(fd, event & ~EDGE_TRIGGERED, timeout) < 0) return -1;
    return 1;
}

// io() is the syscall (-1 + errno on failure). `event` is EVENT_READ or
// EVENT_WRITE, with EDGE_TRIGGERED where the caller owns the fd's life (it
// calls forget_fd before close). Returns io()'s result, or -1 with the wait's
// errno (ETIMEDOUT, an interrupter's).
// `timeout` is a Timeout or a lazy_timeout&. `faults`: the injected faults
// it may get.
template <typename T, typename IO>
inline ssize_t doio(int fd, uint32_t event, T&& timeout, IO io, uint32_t faults = kTransferFaults) {
    while (true) {
        if (fault::armed(faults)) {
            int f = inject_before_io(fd, event, timeout, faults);
            if (f < 0) return -1;
            if (f > 0) continue;
        }
        ssize_t r = io();
        if (r >= 0) return r;
        int e = errno;
        if (e == EINTR) continue;
        if (e != EAGAIN && e != EWOULDBLOCK) return -1;
        if (wait_fd(fd, event, timeout) < 0) return -1;
    }
}

// A one-element stand-in for iov[0..cnt) that an injected short transfer
// passes to the kernel instead: a prefix of the first non-empty element.
// Returns the iovec array to use, and its count in cnt.
inline const struct iovec* maybe_short(const struct iovec* iov, int& cnt, struct iovec& one) {
    if (!fault::hit(fault::SHORT_IO)) return iov;
    int i = 0;
    while (i < cnt && iov[i].iov_len == 0) i++;
    if (i == cnt || iov[i].iov_len < 2) return iov;
    one.iov_base = iov[i].iov_base;
    one.iov_len = fault::short_length(iov[i].iov_len);
    cnt = 1;
    return &one;
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
