// Reads RPC frames from a stream through a read-ahead buffer, so that small
// frames arriving together cost one read. Waiting for a frame's first byte
// is bounded by the idle timeout (none on a stub, the skeleton's on a
// server); once a frame has begun, the rest of it must arrive within the
// frame timeout, counted from its first byte.
#pragma once

#include <cstddef>
#include <cstdint>

#include <photon/common/iovector.h>
#include <photon/common/stream.h>
#include <photon/common/timeout.h>
#include <photon/net/socket.h>
#include <photon/rpc/rpc.h>

namespace photon {
namespace rpc {

constexpr uint64_t DEFAULT_FRAME_TIMEOUT = 30ull * 1000 * 1000;
// A server connection silent between frames this long is closed.
constexpr uint64_t DEFAULT_IDLE_TIMEOUT = 300ull * 1000 * 1000;
// Requests of one server connection running at once, at most.
constexpr uint32_t DEFAULT_MAX_INFLIGHT = 1024;

class frame_reader {
public:
    explicit frame_reader(IStream* stream);
    ~frame_reader();
    frame_reader(const frame_reader&) = delete;
    frame_reader& operator=(const frame_reader&) = delete;

    // Reads the next header: 1; 0 if the peer closed between frames (errno 0),
    // or sent nothing for idle_timeout (errno ETIMEDOUT); -1 with errno
    // (ECONNRESET: closed mid-frame; ETIMEDOUT: the frame stalled, its
    // header not whole within frame_timeout of its first byte; EINTR:
    // interrupted; ENOMEM) otherwise. Checks nothing in it.
    int read_header(Header* h, uint64_t frame_timeout, uint64_t idle_timeout = UINT64_MAX);
    // Reads the next n bytes into dst's buffers (dst holds at least n); 0 or -1.
    int read_body(iovector* dst, size_t n, Timeout deadline);
    // Reads and drops the next n bytes; 0 or -1.
    int skip(size_t n, Timeout deadline);

    // The deadline of the frame whose header read_header returned last: the
    // frame timeout from its first byte. For its read_body or skip.
    Timeout frame_deadline() const { return frame_deadline_; }

    IStream* stream() const { return stream_; }
    void set_stream(IStream* s);

private:
    size_t buffered() const { return end_ - begin_; }
    // Reads into the buffer until it holds n bytes (n <= capacity). idle:
    // nothing is buffered and the frame has not begun (EOF and, with a
    // finite deadline, its expiry are the ends between frames).
    int fill(size_t n, Timeout deadline, bool idle);
    ssize_t read_some(char* p, size_t n, uint64_t timeout);

    IStream* stream_;
    net::ISocketStream* sock_;  // the same stream, when it can read "some"
    char* buf_ = nullptr;
    size_t begin_ = 0, end_ = 0;
    Timeout frame_deadline_;
};

}  // namespace rpc
}  // namespace photon
