// Writes RPC frames to a stream, batching the frames that coroutines of one
// vCPU write in the same scheduling round into one writev (group commit): the
// first writer of a round yields once so that the others ready to write can
// add their frames, then writes them all. With many calls in flight on one
// connection, this turns a syscall per frame into one per round.
#pragma once

#include <cstdint>

#include <photon/common/iovector.h>
#include <photon/common/stream.h>
#include <photon/rpc/rpc.h>
#include <photon/thread/thread.h>

namespace photon {
namespace rpc {

class frame_writer {
public:
    // queue_timed: whether the timeout also bounds the wait for the batches
    // ahead of this one (a stub's call gives up as a whole; a server's reply
    // waits its turn, since a client that reads steadily but slowly is no
    // fault, and each batch ahead is bounded by its own write).
    explicit frame_writer(bool queue_timed = true) : queue_timed_(queue_timed) {}
    frame_writer(const frame_writer&) = delete;
    frame_writer& operator=(const frame_writer&) = delete;

    // Writes *h then payload (may be null) as one frame; returns when it has
    // been written (the memory it points at may be reused then). 0, or -1 with
    // errno; after a failure the stream is shut down (a frame may have gone
    // out in part) and every later write fails with ECONNRESET. The timeout
    // bounds the write of the batch this frame joins (and, if queue_timed,
    // the wait for the batches ahead). `others` says whether
    // other frames may be on their way (more calls in flight): only then does
    // the first writer of a round wait for them.
    int write(IStream* s, const Header* h, iovector* payload, uint64_t timeout = UINT64_MAX,
              bool others = true);
    bool broken() const { return broken_; }
    // For a new stream: no batch may be in flight.
    void reset() { broken_ = false; }

private:
    struct batch;
    int flush(IStream* s, batch* b, uint64_t timeout);

    batch* open_ = nullptr;  // the batch frames of this round join
    mutex wlock_;            // one batch on the wire at a time
    bool broken_ = false;
    bool queue_timed_;
};

}  // namespace rpc
}  // namespace photon
