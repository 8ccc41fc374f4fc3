#include "read_ahead.h"

#include <cstdlib>
#include <cstring>

#include <photon/common/fault_injection.h>

namespace photon {
namespace net {
namespace {

// Drained buffers of this OS thread, for the next read-ahead: a busy vCPU
// reuses a few warm buffers instead of a malloc per batch of messages.
struct buffer_cache {
    static constexpr int kMax = 16;
    char* free_[kMax];
    int n_ = 0;
    bool gone_ = false;  // a stream that outlives the thread's cache frees its own

    ~buffer_cache() {
        gone_ = true;
        while (n_) ::free(free_[--n_]);
    }
    char* get() { return n_ ? free_[--n_] : static_cast<char*>(::malloc(read_ahead::kSize)); }
    void put(char* b) {
        if (n_ < kMax && !gone_)
            free_[n_++] = b;
        else
            ::free(b);
    }
};

thread_local buffer_cache t_cache;

}  // namespace

size_t read_ahead::take(const struct iovec* iov, int iovcnt, bool peek) {
    size_t done = 0;
    for (int i = 0; i < iovcnt && done < len_; i++) {
        size_t n = iov[i].iov_len < len_ - done ? iov[i].iov_len : len_ - done;
        memcpy(iov[i].iov_base, buf_ + off_ + done, n);
        done += n;
    }
    if (!peek) {
        off_ += (uint32_t)done;
        len_ -= (uint32_t)done;
        if (!len_) drop();
    }
    return done;
}

char* read_ahead::acquire() {
    if (!buf_ && fault::hit(fault::NOMEM)) return nullptr;  // injected: read unbuffered
    if (!buf_) buf_ = t_cache.get();
    off_ = len_ = 0;
    return buf_;
}

void read_ahead::filled(ssize_t n) {
    if (n > 0) {
        off_ = 0;
        len_ = (uint32_t)n;
    } else {
        drop();
    }
}

void read_ahead::drop() {
    if (buf_) t_cache.put(buf_);
    buf_ = nullptr;
    off_ = len_ = 0;
}

}  // namespace net
}  // namespace photon
