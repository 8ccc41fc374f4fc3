// Zero-copy TCP: sends of at least kZerocopyMin bytes (or any send with
// ISocketStream::ZEROCOPY_FLAG) let the NIC read the caller's pages and
// return only when the kernel has released them, so the caller may reuse the
// buffer at once. Smaller sends copy: pinning pages and fielding a completion
// costs more than copying a few KiB.
//
// Under an io_uring master a send is IORING_OP_SEND_ZC (its notification CQE
// says the buffer is free). Under epoll it is sendmsg(MSG_ZEROCOPY), then the
// socket's error queue is read until the notification that covers this send
// arrives (the kernel numbers a socket's zero-copy sends 0, 1, 2... and
// reports released ones as ranges).
#include <sys/socket.h>
#include <time.h>  // before errqueue.h, which uses timespec

#include <linux/errqueue.h>

#include <climits>
#include <utility>
#include <vector>

#include <photon/common/alog.h>
#include <photon/io/iouring-wrapper.h>

#include "kernel_socket.h"
#include "socket_io.h"

#ifndef SO_EE_ORIGIN_ZEROCOPY
#define SO_EE_ORIGIN_ZEROCOPY 5
#endif
#ifndef SO_EE_CODE_ZEROCOPY_COPIED
#define SO_EE_CODE_ZEROCOPY_COPIED 1
#endif

namespace photon {
namespace net {

namespace {
constexpr size_t kZerocopyMin = 16 * 1024;

struct msghdr make_msg(const struct iovec* iov, int iovcnt) {
    struct msghdr msg = {};
    msg.msg_iov = const_cast<struct iovec*>(iov);
    msg.msg_iovlen = iovcnt > IOV_MAX ? IOV_MAX : iovcnt;
    return msg;
}

size_t total_len(const struct iovec* iov, int iovcnt) {
    size_t n = 0;
    for (int i = 0; i < iovcnt; i++) n += iov[i].iov_len;
    return n;
}

// Kernels or sockets without IORING_OP_SEND_ZC: copying is the fallback.
bool zc_unsupported(int e) { return e == ENOSYS || e == EINVAL || e == EOPNOTSUPP; }

// Which MSG_ZEROCOPY sends of a socket the kernel has released. Sequence
// numbers are 32-bit and wrap, so they are compared by signed difference.
class zc_tracker {
public:
    uint32_t next() { return next_++; }  // the number of the send just made
    bool released(uint32_t seq) const {
        if ((int32_t)(seq - done_) < 0) return true;
        for (auto& r : ahead_)
            if ((int32_t)(seq - r.first) >= 0 && (int32_t)(r.second - seq) >= 0) return true;
        return false;
    }
    // The inclusive range [lo, hi] was released (possibly out of order).
    void release(uint32_t lo, uint32_t hi) {
        ahead_.emplace_back(lo, hi);
        for (bool moved = true; moved;) {  // fold ranges that reach done_
            moved = false;
            for (size_t i = 0; i < ahead_.size(); i++) {
                if ((int32_t)(ahead_[i].first - done_) > 0) continue;
                if ((int32_t)(ahead_[i].second + 1 - done_) > 0) done_ = ahead_[i].second + 1;
                ahead_[i] = ahead_.back();
                ahead_.pop_back();
                moved = true;
                break;
            }
        }
    }

private:
    uint32_t next_ = 0;
    uint32_t done_ = 0;  // every send before this one is released
    std::vector<std::pair<uint32_t, uint32_t>> ahead_;
};

class zerocopy_socket_stream : public kernel_socket_stream {
public:
    explicit zerocopy_socket_stream(int fd) : kernel_socket_stream(fd) {
        int one = 1;
        // Without SO_ZEROCOPY the kernel ignores MSG_ZEROCOPY: we copy then.
        errqueue_ok_ = ::setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)) == 0;
    }

protected:
    ssize_t send_once(const struct iovec* iov, int iovcnt, int flags, lazy_timeout& t) override;
    ssize_t send_zerocopy(const struct iovec* iov, int iovcnt, int flags, lazy_timeout& t) override;

private:
    ssize_t send_errqueue(const struct iovec* iov, int iovcnt, int flags, lazy_timeout& t);
    int wait_released(uint32_t seq, Timeout t);
    int drain_errqueue();

    zc_tracker zc_;
    bool errqueue_ok_ = false;
    bool copied_ = false;  // the kernel copied anyway: size-chosen sends copy from now on
    int broken_ = 0;       // a send whose release we could not await
};

ssize_t zerocopy_socket_stream::send_once(const struct iovec* iov, int iovcnt, int flags,
                                          lazy_timeout& t) {
    if (broken_)
        LOG_ERROR_RETURN(EIO, -1, "zero-copy stream broken by an earlier ", ERRNO(broken_));
    bool forced = flags & ZEROCOPY_FLAG;
    flags &= ~ZEROCOPY_FLAG;
    if (forced || (!copied_ && total_len(iov, iovcnt) >= kZerocopyMin))
        return send_zerocopy(iov, iovcnt, flags, t);
    return kernel_socket_stream::send_once(iov, iovcnt, flags, t);
}

ssize_t zerocopy_socket_stream::send_zerocopy(const struct iovec* iov, int iovcnt, int flags,
                                              lazy_timeout& t) {
    if (master_event_engine_kind() == INIT_EVENT_IOURING || !errqueue_ok_)
        return kernel_socket_stream::send_zerocopy(iov, iovcnt, flags, t);
    return send_errqueue(iov, iovcnt, flags, t);
}

ssize_t zerocopy_socket_stream::send_errqueue(const struct iovec* iov, int iovcnt, int flags,
                                              lazy_timeout& t) {
    struct msghdr msg = make_msg(iov, iovcnt);
    flags |= MSG_ZEROCOPY | MSG_NOSIGNAL;
    ssize_t r =
        doio(fd_, EVENT_WRITE | EDGE_TRIGGERED, t, [&] { return ::sendmsg(fd_, &msg, flags); });
    if (r < 0 && errno == ENOBUFS)  // over the socket's optmem for pinned pages
        return kernel_socket_stream::send_once(iov, iovcnt, flags & ~MSG_ZEROCOPY, t);
    if (r <= 0) return r;  // a failed send takes no sequence number
    if (wait_released(zc_.next(), t.get()) < 0) {
        // The kernel may still read the buffer, and the caller cannot tell
        // what was sent: fail this and every later send.
        broken_ = errno;
        LOG_ERRNO_RETURN(0, -1, "zero-copy send: no completion notification");
    }
    return r;
}

int zerocopy_socket_stream::wait_released(uint32_t seq, Timeout t) {
    while (!zc_.released(seq)) {
        int n = drain_errqueue();
        if (n < 0) return -1;
        if (n > 0) continue;
        int err = 0;
        socklen_t len = sizeof(err);
        // A pending socket error also raises EVENT_ERROR: report it rather
        // than spin. Reset connections drop their queued data anyway.
        if (::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err) {
            read_err_ = err;  // the next read reports it too
            errno = err;
            return -1;
        }
        if (wait_for_fd(fd_, EVENT_ERROR, t) < 0) return -1;
    }
    return 0;
}

// Reads every notification queued now; how many, or -1.
int zerocopy_socket_stream::drain_errqueue() {
    for (int n = 0;; n++) {
        char control[CMSG_SPACE(sizeof(struct sock_extended_err)) * 4];
        struct msghdr msg = {};
        msg.msg_control = control;
        msg.msg_controllen = sizeof(control);
        if (::recvmsg(fd_, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) return n;
            if (errno == EINTR) continue;
            LOG_ERRNO_RETURN(0, -1, "recvmsg(MSG_ERRQUEUE) failed");
        }
        for (auto cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
            auto serr = (const struct sock_extended_err*)CMSG_DATA(cm);
            if (serr->ee_origin != SO_EE_ORIGIN_ZEROCOPY || serr->ee_errno != 0) continue;
            zc_.release(serr->ee_info, serr->ee_data);
            if (serr->ee_code & SO_EE_CODE_ZEROCOPY_COPIED) copied_ = true;
        }
    }
}

ISocketStream* make_zerocopy_stream(int fd) { return new zerocopy_socket_stream(fd); }
}  // namespace

// For any kernel stream: io_uring's SEND_ZC (on the master ring, else the
// vCPU's sidecar ring); a plain copying send where io_uring lacks it.
ssize_t kernel_socket_stream::send_zerocopy(const struct iovec* iov, int iovcnt, int flags,
                                            lazy_timeout& t) {
    flags |= MSG_NOSIGNAL;
    ssize_t r;
    if (iovcnt == 1) {
        r = iouring_send_zc(fd_, iov->iov_base, iov->iov_len, (uint32_t)flags, t.get());
    } else {
        struct msghdr msg = make_msg(iov, iovcnt);
        r = iouring_sendmsg_zc(fd_, &msg, (uint32_t)flags, t.get());
    }
    if (r >= 0 || !zc_unsupported(errno)) return r;
    return kernel_socket_stream::send_once(iov, iovcnt, flags, t);  // not virtual: no loop
}

}  // namespace net
}  // namespace photon

using namespace photon::net;

extern "C" ISocketClient* new_zerocopy_tcp_client() {
    return new kernel_socket_client(AF_INET, &make_zerocopy_stream);
}
extern "C" ISocketServer* new_zerocopy_tcp_server() {
    return new kernel_socket_server(AF_INET, &make_zerocopy_stream);
}
