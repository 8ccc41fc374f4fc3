// read_ahead: the bytes a socket stream read beyond what its caller asked
// for. A caller that asks for a few bytes (a 512 B echo, a length prefix)
// gets them out of one large recv, and the calls that follow are served
// from memory until it runs dry: one syscall, and one window update from
// the kernel, for many small messages instead of one each. The buffer is
// held only while it holds bytes; drained, it goes back to a small
// per-OS-thread cache, so an idle connection holds none. Private header of
// net/.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>

namespace photon {
namespace net {

class read_ahead {
public:
    // Reads of fewer bytes than this go through the buffer; larger ones go
    // straight to the caller's memory (the copy would cost more than the
    // syscall it saves).
    static constexpr size_t kSmallRead = 4096;
    static constexpr size_t kSize = 16384;

    read_ahead() = default;
    read_ahead(const read_ahead&) = delete;
    read_ahead& operator=(const read_ahead&) = delete;
    ~read_ahead() { drop(); }

    size_t size() const { return len_; }

    // Copies up to iov's bytes out of the buffer, consuming them unless
    // `peek`; the buffer goes back to the cache when drained.
    size_t take(const struct iovec* iov, int iovcnt, bool peek);

    // The buffer to recv into (kSize bytes; size() must be 0), then
    // filled(n) with what recv returned (n <= 0: nothing kept).
    char* acquire();
    void filled(ssize_t n);

    // Discards what is buffered.
    void drop();

private:
    char* buf_ = nullptr;
    uint32_t off_ = 0;
    uint32_t len_ = 0;
};

}  // namespace net
}  // namespace photon
