#include "frame_reader.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <algorithm>

namespace photon {
namespace rpc {

namespace {
constexpr size_t kBufSize = 64 * 1024;
// Bodies up to this size are read through the buffer (which may bring the
// next frames with them); larger ones go straight into the caller's memory.
constexpr size_t kThroughBuffer = 16 * 1024;
constexpr int kClosed = -2;  // fill(): the peer closed before the frame began
constexpr int kIdle = -3;    // fill(): the idle deadline passed before the frame began

// Copies n bytes from p into the view's buffers, consuming them from it.
struct sink : iovector_view {
    size_t pipe_from_buffer(const char* p, size_t n) {
        size_t k = memcpy_from(p, n);
        extract_front(k);
        return k;
    }
};
}  // namespace

frame_reader::frame_reader(IStream* stream) { set_stream(stream); }

frame_reader::~frame_reader() { ::free(buf_); }

void frame_reader::set_stream(IStream* s) {
    stream_ = s;
    sock_ = dynamic_cast<net::ISocketStream*>(s);
    begin_ = end_ = 0;
}

ssize_t frame_reader::read_some(char* p, size_t n, uint64_t timeout) {
    stream_->timeout(timeout);
    // A plain IStream reads whole counts only; it gets exact requests.
    return sock_ ? sock_->recv(p, n) : stream_->read(p, n);
}

int frame_reader::fill(size_t n, Timeout deadline, bool idle) {
    if (!buf_ && !(buf_ = (char*)::malloc(kBufSize))) return errno = ENOMEM, -1;
    if (begin_ + n > kBufSize) {  // make room at the end
        memmove(buf_, buf_ + begin_, buffered());
        end_ -= begin_;
        begin_ = 0;
    }
    while (buffered() < n) {
        bool waiting_first = idle && buffered() == 0;
        uint64_t t = deadline.timeout();
        if (t == 0) return waiting_first ? kIdle : (errno = ETIMEDOUT, -1);
        size_t want = sock_ ? kBufSize - end_ : n - buffered();
        ssize_t r = read_some(buf_ + end_, want, t);
        if (r > 0) end_ += r;
        // EOF; a plain stream's short read is one too.
        if (r == 0 || (r > 0 && !sock_ && (size_t)r < want))
            return waiting_first && r == 0 ? kClosed : (errno = ECONNRESET, -1);
        // Before the frame, an expiry is the idle deadline's only when it has
        // passed (the loop's top says so); any other is the stream's own (a
        // TLS record's second part read with a writer's timeout): read on.
        if (r < 0 && errno == ETIMEDOUT && waiting_first) continue;
        if (r < 0) return -1;
    }
    return 0;
}

int frame_reader::read_header(Header* h, uint64_t frame_timeout, uint64_t idle_timeout) {
    if (buffered() == 0) {
        begin_ = end_ = 0;
        int r = fill(1, Timeout(idle_timeout), true);
        if (r == kClosed) return errno = 0, 0;
        if (r == kIdle) return errno = ETIMEDOUT, 0;
        if (r < 0) return -1;
    }
    // The frame has begun: its deadline counts from now, however long the
    // connection was idle before, and covers its body too.
    frame_deadline_ = Timeout(frame_timeout);
    int r = fill(sizeof(Header), frame_deadline_, false);
    if (r < 0) return -1;
    memcpy(h, buf_ + begin_, sizeof(Header));
    begin_ += sizeof(Header);
    return 1;
}

int frame_reader::read_body(iovector* dst, size_t n, Timeout deadline) {
    auto v = dst->view();
    SmartCloneIOV<32> clone(v.iov, v.iovcnt);  // a window on dst, moved as bytes land
    if (!clone.ptr) return errno = ENOMEM, -1;
    sink rest;
    rest.assign(clone.ptr, v.iovcnt);
    if (rest.shrink_to(n) != n) return errno = ENOBUFS, -1;
    // What the buffer holds already; then, for a small rest, fill the buffer
    // (it may bring the next frames too); for a large one, read in place.
    size_t take = std::min(n, buffered());
    begin_ += rest.pipe_from_buffer(buf_ + begin_, take);
    size_t left = n - take;
    if (left == 0) return 0;
    if (sock_ && left <= kThroughBuffer) {
        if (fill(left, deadline, false) < 0) return -1;
        begin_ += rest.pipe_from_buffer(buf_ + begin_, left);
        return 0;
    }
    uint64_t t = deadline.timeout();
    if (t == 0) return errno = ETIMEDOUT, -1;
    stream_->timeout(t);
    ssize_t r = stream_->readv(rest.iov, rest.iovcnt);
    if (r == (ssize_t)left) return 0;
    if (r >= 0) errno = ECONNRESET;
    return -1;
}

int frame_reader::skip(size_t n, Timeout deadline) {
    while (n) {
        if (buffered() == 0) {
            begin_ = end_ = 0;
            if (fill(std::min(n, kBufSize / 2), deadline, false) < 0) return -1;
        }
        size_t k = std::min(n, buffered());
        begin_ += k;
        n -= k;
    }
    return 0;
}

}  // namespace rpc
}  // namespace photon
