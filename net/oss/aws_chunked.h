// aws_chunked_stream: S3's aws-chunked body framing, unsigned, with one trailer
// (STREAMING-UNSIGNED-PAYLOAD-TRAILER): what lets a streamed upload carry a checksum the
// service checks, computed as the bytes go instead of in a pass before them.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <string>
#include <sys/uio.h>

#include <photon/common/stream.h>
#include <photon/common/string_view.h>

namespace photon {
namespace objstore {
namespace detail {

// Writes a body of a size known in advance as "<hex size>\r\n<data>\r\n" chunks of kChunk
// bytes (the last one shorter), then "0\r\n<trailer>\r\n\r\n". The chunk boundaries depend on
// the size only, never on how the caller's writes fall, so encoded_size() is exact before the
// first byte, as Content-Length needs (S3 refuses Transfer-Encoding: chunked). The caller's
// bytes are not copied: each write goes out as one writev of the framing and the data.
class aws_chunked_stream : public IStream {
public:
    // At least 8 KiB: S3 and versitygw refuse smaller chunks but the last.
    static constexpr size_t kChunk = 64 * 1024;

    // Bytes on the wire for a body of n bytes and a trailer line of trailer_len bytes.
    static uint64_t encoded_size(uint64_t n, size_t trailer_len) {
        uint64_t full = n / kChunk, rem = n % kChunk;
        uint64_t size = full * (hex_len(kChunk) + 4 + kChunk);
        if (rem) size += hex_len(rem) + 4 + rem;
        return size + 3 + trailer_len + 4;  // "0\r\n", "<trailer>\r\n\r\n"
    }

    void reset(IStream* inner, uint64_t total) { inner_ = inner, total_ = total, done_ = 0; }

    int close() override { return 0; }
    ssize_t read(void*, size_t) override { return errno = ENOSYS, -1; }
    ssize_t readv(const struct iovec*, int) override { return errno = ENOSYS, -1; }

    ssize_t write(const void* buf, size_t n) override {
        if (n > total_ - done_) return errno = EIO, -1;  // more than the size announced
        const char* p = (const char*)buf;
        size_t left = n;
        while (left) {
            size_t k = write_some(p, left);
            if (k == 0) return n - left ? (ssize_t)(n - left) : -1;
            p += k, left -= k;
        }
        return (ssize_t)n;
    }
    ssize_t writev(const struct iovec* iov, int iovcnt) override {
        ssize_t total = 0;
        for (int i = 0; i < iovcnt; i++) {
            ssize_t r = write(iov[i].iov_base, iov[i].iov_len);
            if (r < 0) return total ? total : r;
            total += r;
        }
        return total;
    }

    // Ends the body with its trailer ("name:value"); -1 unless all total bytes went.
    int finish(std::string_view trailer) {
        if (done_ != total_) return errno = EIO, -1;
        std::string tail = "0\r\n";
        tail.append(trailer.data(), trailer.size());
        tail += "\r\n\r\n";
        return inner_->write(tail.data(), tail.size()) == (ssize_t)tail.size() ? 0 : -1;
    }

private:
    static constexpr int kChunksPerWrite = 16;
    IStream* inner_ = nullptr;
    uint64_t total_ = 0, done_ = 0;

    static size_t hex_len(uint64_t v) {
        size_t n = 1;
        while (v >>= 4) n++;
        return n;
    }

    // Frames and writes up to kChunksPerWrite chunks' worth of p; the data bytes written, or 0.
    size_t write_some(const char* p, size_t n) {
        char heads[kChunksPerWrite][20];
        struct iovec v[kChunksPerWrite * 3];
        int cnt = 0, chunks = 0;
        size_t took = 0, wire = 0;
        auto add = [&](const void* b, size_t len) {
            v[cnt++] = {(void*)b, len};
            wire += len;
        };
        while (took < n && chunks < kChunksPerWrite) {
            uint64_t at = done_ + took, in_chunk = at % kChunk;
            uint64_t this_chunk = std::min<uint64_t>(kChunk, total_ - (at - in_chunk));
            if (in_chunk == 0) {
                int len = snprintf(heads[chunks], sizeof(heads[0]), "%llx\r\n",
                                   (unsigned long long)this_chunk);
                add(heads[chunks], (size_t)len);
            }
            size_t k = (size_t)std::min<uint64_t>(n - took, this_chunk - in_chunk);
            add(p + took, k);
            took += k;
            if (in_chunk + k == this_chunk)
                add("\r\n", 2), chunks++;
            else
                break;  // the caller's bytes end inside this chunk
        }
        if (inner_->writev(v, cnt) != (ssize_t)wire) return 0;
        done_ += took;
        return took;
    }
};

}  // namespace detail
}  // namespace objstore
}  // namespace photon
