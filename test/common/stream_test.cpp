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

TEST(StreamReadAll, ExactlyMaxBufFitsOneByteMoreIsEnobufsKeepingWhatWasRead) {
    memory_stream fits(pattern(4096), 1000);
    EXPECT_EQ(4096, fits.readall(4096, 1024).size);
    std::string data = pattern(4097);
    memory_stream over(data, 1000);
    auto all = over.readall(4096, 1024);
    EXPECT_EQ(-4096, all.size);  // as in Photon: minus the bytes read
    EXPECT_EQ(ENOBUFS, errno);
    ASSERT_NE(nullptr, all.ptr.get());
    EXPECT_EQ(0, memcmp(data.data(), all.ptr.get(), 4096));
}

TEST(StreamReadAll, ReadErrorsPropagateWithThePartialData) {
    std::string data = pattern(10000);
    memory_stream s(data, 1000, 5000);
    auto all = s.readall();
    EXPECT_EQ(EIO, errno);
    ASSERT_LE(all.size, -5000);  // minus what was read before the failure
    ASSERT_GT(all.size, -10000);
    ASSERT_NE(nullptr, all.ptr.get());
    EXPECT_EQ(0, memcmp(data.data(), all.ptr.get(), (size_t)-all.size));
}

TEST(StreamReadAll, AnErrorBeforeAnyByteIsMinusOneNotAnEmptyStream) {
    memory_stream s(pattern(100), 10, 0);
    auto all = s.readall();
    EXPECT_EQ(-1, all.size);
    EXPECT_EQ(EIO, errno);
    EXPECT_EQ(nullptr, all.ptr.get());
}

TEST(StreamReadAll, ZeroOrOversizedMinBufStillReadsEverything) {
    std::string data = pattern(3000);
    memory_stream a(data, 700);
    auto x = a.readall(1 << 20, 0);
    ASSERT_EQ(3000, x.size);
    EXPECT_EQ(0, memcmp(data.data(), x.ptr.get(), 3000));
    memory_stream b(data, 700);
    EXPECT_EQ(3000, b.readall(3000, 1 << 20).size);  // min_buf clamped to max_buf
    memory_stream empty("", 10);
    EXPECT_EQ(0, empty.readall(0, 0).size);  // a zero limit fits an empty stream
    memory_stream one("x", 10);
    EXPECT_EQ(-1, one.readall(0, 0).size);
    EXPECT_EQ(ENOBUFS, errno);
}

// Photon's member-pointer helpers choose read or write at run time.
ssize_t transfer(IStream* s, IStream::FuncIO f, void* buf, size_t n) { return (s->*f)(buf, n); }

class recording_stream : public memory_stream {
public:
    using memory_stream::memory_stream;
    ssize_t write(const void* buf, size_t n) override {
        written.append((const char*)buf, n);
        return n;
    }
    ssize_t writev(const iovec* iov, int n) override {
        ssize_t total = 0;
        for (int i = 0; i < n; i++) total += write(iov[i].iov_base, iov[i].iov_len);
        return total;
    }
    std::string written;
};

TEST(StreamFuncIO, ReadAndWritePointersCallTheVirtuals) {
    recording_stream s("hello", 100);
    char buf[8] = {};
    EXPECT_TRUE(s.is_readf(s._and_read()));
    EXPECT_FALSE(s.is_writef(s._and_read()));
    EXPECT_TRUE(s.is_writef(s._and_write()));
    EXPECT_EQ(5, transfer(&s, s._and_read(), buf, sizeof(buf)));
    EXPECT_STREQ("hello", buf);
    EXPECT_EQ(3, transfer(&s, s._and_write(), buf, 3));
    EXPECT_EQ("hel", s.written);

    char more[] = "!?";
    iovec iov{more, 2};
    EXPECT_TRUE(s.is_writef(s._and_writev_mutable()));
    EXPECT_TRUE(s.is_readf(s._and_readv_mutable()));
    EXPECT_EQ(2, (s.*s._and_writev_mutable())(&iov, 1));
    EXPECT_TRUE(s.is_writef(s._and_writecv()));
    EXPECT_FALSE(s.is_readf(s._and_writecv()));
    EXPECT_EQ(2, (s.*s._and_writecv())(&iov, 1));
    EXPECT_EQ("hel!?!?", s.written);
}
