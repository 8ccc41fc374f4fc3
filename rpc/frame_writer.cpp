#include "frame_writer.h"

#include <cerrno>
#include <vector>

namespace photon {
namespace rpc {

struct frame_writer::batch {
    std::vector<iovec> iov;
    size_t bytes = 0;
    int frames = 0;  // writers still referring to the batch; the last frees it
    bool written = false;
    int result = 0, err = 0;
    condition_variable done;
};

int frame_writer::write(IStream* s, const Header* h, iovector* payload, uint64_t timeout,
                        bool others) {
    if (broken_) return errno = ECONNRESET, -1;
    bool leader = !open_;
    if (leader && !(open_ = new (std::nothrow) batch)) return errno = ENOMEM, -1;
    batch* b = open_;
    b->frames++;
    b->iov.push_back({const_cast<Header*>(h), sizeof(*h)});
    b->bytes += sizeof(*h);
    if (payload) {
        for (auto& v : *payload) {
            if (!v.iov_len) continue;
            b->iov.push_back(v);
            b->bytes += v.iov_len;
        }
    }
    if (leader) {
        if (others) thread_yield();  // the others ready to write join this batch
        open_ = nullptr;             // later frames start the next one
        flush(s, b, timeout);
        b->written = true;
        b->done.notify_all();
    }
    while (!b->written) b->done.wait_no_lock();
    int result = b->result, err = b->err;
    if (--b->frames == 0) delete b;
    if (result < 0) errno = err;
    return result;
}

int frame_writer::flush(IStream* s, batch* b, uint64_t timeout) {
    // A full socket keeps the previous batch writing.
    if (wlock_.lock(queue_timed_ ? timeout : UINT64_MAX) < 0) {
        b->result = -1;
        b->err = errno;
        // Nothing of this batch went out: the stream is still in step.
        return -1;
    }
    ssize_t r = -1;
    int e = ECONNRESET;  // an earlier batch broke the stream
    if (!broken_) {
        s->timeout(timeout);
        r = s->writev(b->iov.data(), (int)b->iov.size());
        e = errno;
    }
    wlock_.unlock();
    if (r == (ssize_t)b->bytes) return b->result = 0;
    if (!broken_) {
        broken_ = true;
        s->shutdown(ShutdownHow::ReadWrite);
    }
    b->result = -1;
    b->err = r < 0 ? e : ECONNRESET;
    return -1;
}

}  // namespace rpc
}  // namespace photon
