// MemStream: an in-memory IStream for HTTP tests and fuzzers. read() hands
// out the input in pieces of 1..max_piece bytes (random, seeded), as a
// socket might, so parsers prove they cope with any split; write() appends
// to `out`.
#pragma once

#include <cstring>
#include <random>
#include <string>

#include <photon/common/stream.h>

namespace photon_test {

class MemStream : public IStream {
public:
    explicit MemStream(std::string in, size_t max_piece = SIZE_MAX, uint32_t seed = 1)
        : in_(std::move(in)), max_piece_(max_piece ? max_piece : 1), rng_(seed) {}

    std::string out;
    size_t reads = 0;  // read() calls made
    size_t consumed() const { return pos_; }

    int close() override { return 0; }
    ssize_t read(void* buf, size_t count) override {
        reads++;
        size_t left = in_.size() - pos_, n = count < left ? count : left;
        if (max_piece_ < n) n = std::uniform_int_distribution<size_t>(1, max_piece_)(rng_);
        memcpy(buf, in_.data() + pos_, n);
        pos_ += n;
        return (ssize_t)n;
    }
    ssize_t readv(const struct iovec* iov, int iovcnt) override {
        return iovcnt ? read(iov[0].iov_base, iov[0].iov_len) : 0;
    }
    ssize_t write(const void* buf, size_t count) override {
        out.append((const char*)buf, count);
        return (ssize_t)count;
    }
    ssize_t writev(const struct iovec* iov, int iovcnt) override {
        ssize_t n = 0;
        for (int i = 0; i < iovcnt; i++) n += write(iov[i].iov_base, iov[i].iov_len);
        return n;
    }

private:
    std::string in_;
    size_t pos_ = 0, max_piece_;
    std::mt19937 rng_;
};

}  // namespace photon_test
