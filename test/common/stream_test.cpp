// IStream::readall: reads to EOF through a growing buffer.
#include <photon/common/stream.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace {

// Serves `data` in reads of at most `chunk` bytes; fails with EIO after
// `fail_after` bytes if set.
class memory_stream : public IStream {
public:
    memory_stream(std::string data, size_t chunk, size_t fail_after = SIZE_MAX)
        : data_(std::move(data)), chunk_(chunk), fail_after_(fail_after) {}
    int close() override { return 0; }
    ssize_t read(void* buf, size_t n) override {
        if (pos_ >= fail_after_) return errno = EIO, -1;
        size_t k = std::min({n, chunk_, data_.size() - pos_});
        memcpy(buf, data_.data() + pos_, k);
        pos_ += k;
        return k;
    }
    ssize_t readv(const iovec* iov, int) override { return read(iov->iov_base, iov->iov_len); }
    ssize_t write(const void*, size_t) override { return errno = ENOSYS, -1; }
    ssize_t writev(const iovec*, int) override { return errno = ENOSYS, -1; }

private:
    std::string data_;
    size_t chunk_, fail_after_, pos_ = 0;
};

std::string pattern(size_t n) {
    std::string s(n, '\0');
    for (size_t i = 0; i < n; i++) s[i] = (char)(i * 31 + 7);
    return s;
}

}  // namespace

TEST(StreamReadAll, ReadsEverythingAcrossManyGrowths) {
    std::string data = pattern(300000);
    memory_stream s(data, 4096);
    auto all = s.readall(1 << 20, 16);
    ASSERT_EQ((ssize_t)data.size(), all.size);
    EXPECT_EQ(0, memcmp(data.data(), all.ptr.get(), data.size()));
}

TEST(StreamReadAll, EmptyStreamGivesZeroBytes) {
    memory_stream s("", 100);
    auto all = s.readall();
    EXPECT_EQ(0, all.size);
}

TEST(StreamReadAll, ExactlyMaxBufFitsOneByteMoreIsEfbig) {
    memory_stream fits(pattern(4096), 1000);
    EXPECT_EQ(4096, fits.readall(4096, 1024).size);
    memory_stream over(pattern(4097), 1000);
    auto all = over.readall(4096, 1024);
    EXPECT_EQ(-1, all.size);
    EXPECT_EQ(EFBIG, errno);
    EXPECT_EQ(nullptr, all.ptr.get());
}

TEST(StreamReadAll, ReadErrorsPropagate) {
    memory_stream s(pattern(10000), 1000, 5000);
    auto all = s.readall();
    EXPECT_EQ(-1, all.size);
    EXPECT_EQ(EIO, errno);
}
