// checked_stream: the object storage client's view of a body as it goes out or comes in
// (client.cpp), counting its bytes and computing CRC-64 (OSS's x-oss-hash-crc64ecma), MD5
// (S3's ETags) and CRC32C (S3's flexible checksums) on the way.
#pragma once

#include <algorithm>
#include <cstdint>
#include <sys/uio.h>

#include <photon/common/checksum/crc32c.h>
#include <photon/common/checksum/crc64ecma.h>
#include <photon/common/checksum/digest.h>
#include <photon/common/stream.h>

namespace photon {
namespace objstore {
namespace detail {

// Reads or writes through another stream, counting bytes and computing
// CRC-64, MD5 and CRC32C of them. Restarted for each attempt.
class checked_stream : public IStream {
public:
    IStream* inner = nullptr;
    uint64_t bytes = 0, crc = 0;
    photon::md5 md5;
    bool want_md5 = false;
    bool want_crc = true;
    bool want_crc32c = false;

    // with_crc false: no CRC-64 (a GET whose service sent none to compare with).
    void reset(IStream* s, bool with_md5, bool with_crc = true, bool with_crc32c = false) {
        inner = s, bytes = 0, crc = 0, md5 = photon::md5(), want_md5 = with_md5;
        want_crc = with_crc, want_crc32c = with_crc32c, crc32c_state_ = ~0u;
    }
    // The standard CRC-32C (Castagnoli) of the bytes so far.
    uint32_t crc32c() const { return ~crc32c_state_; }
    int close() override { return 0; }
    ssize_t read(void* buf, size_t n) override {
        ssize_t r = inner->read(buf, n);
        if (r > 0) account(buf, r);
        return r;
    }
    ssize_t readv(const struct iovec* iov, int iovcnt) override {
        return each(iov, iovcnt, [this](const iovec& v) { return read(v.iov_base, v.iov_len); });
    }
    // In pieces, each hashed right after it went out, so that the hashing overlaps the
    // transfer of the piece before: one large write then one large hash left the peer idle
    // while the client hashed (a single 1 GiB PUT: all sent, then all hashed).
    ssize_t write(const void* buf, size_t n) override {
        const char* p = (const char*)buf;
        size_t done = 0;
        while (done < n) {
            size_t k = std::min(n - done, kPiece);
            ssize_t r = inner->write(p + done, k);
            if (r > 0) account(p + done, r), done += r;
            if (r != (ssize_t)k) return done ? (ssize_t)done : r;
        }
        return (ssize_t)done;
    }
    ssize_t writev(const struct iovec* iov, int iovcnt) override {
        return each(iov, iovcnt, [this](const iovec& v) { return write(v.iov_base, v.iov_len); });
    }

private:
    static constexpr size_t kPiece = 256 * 1024;
    uint32_t crc32c_state_ = ~0u;
    // op on each iovec in turn until one falls short: the bytes moved, or op's -1 if none.
    template <typename Op>
    static ssize_t each(const struct iovec* iov, int iovcnt, Op op) {
        ssize_t total = 0;
        for (int i = 0; i < iovcnt; i++) {
            ssize_t r = op(iov[i]);
            if (r < 0) return total ? total : r;
            total += r;
            if ((size_t)r < iov[i].iov_len) break;
        }
        return total;
    }
    void account(const void* buf, size_t n) {
        if (want_crc) crc = crc64ecma_extend(buf, n, crc);
        if (want_md5) md5.update(buf, n);
        if (want_crc32c) crc32c_state_ = crc32c_extend(buf, n, crc32c_state_);
        bytes += n;
    }
};

}  // namespace detail
}  // namespace objstore
}  // namespace photon
