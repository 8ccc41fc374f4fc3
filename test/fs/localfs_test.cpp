// The local file system's data path under every I/O engine (psync, posixaio,
// libaio, io_uring) and both master engines (epoll, io_uring).
#include <photon/fs/localfs.h>

#include <photon/common/utility.h>
#include <photon/thread/thread.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "../thread/test_util.h"
#include "fs_test_util.h"

using namespace photon;
using namespace photon::fs;
using photon_test::FsEngineTest;

namespace {

struct free_deleter {
    void operator()(void* p) const { free(p); }
};
using buffer = std::unique_ptr<char, free_deleter>;

buffer aligned_buffer(size_t n, uint8_t fill = 0) {
    void* p = nullptr;
    if (posix_memalign(&p, 4096, n)) return nullptr;
    memset(p, fill, n);
    return buffer(static_cast<char*>(p));
}

uint64_t fnv1a(const void* data, size_t n) {
    uint64_t h = 1469598103934665603ULL;
    auto p = static_cast<const uint8_t*>(data);
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

struct fs_and_file {
    std::unique_ptr<IFileSystem> fs;
    std::unique_ptr<IFile> file;
};

fs_and_file open_scratch(const std::string& root, int engine, const char* name) {
    fs_and_file r;
    r.fs.reset(new_localfs_adaptor(root.c_str(), engine));
    if (r.fs) r.file.reset(r.fs->open(name, O_RDWR | O_CREAT | O_TRUNC, 0644));
    return r;
}

}  // namespace

TEST_P(FsEngineTest, ConcurrentRandomExtentsReadBackIntact) {
    constexpr int kCoroutines = 256;
    constexpr size_t kRegion = 64 * 1024;
    constexpr int kRounds = 6;
    auto h = open_scratch(dir_.path(), io_engine(), "data");
    ASSERT_TRUE(h.file) << strerror(errno);
    ASSERT_EQ(0, h.file->ftruncate(kCoroutines * kRegion));
    const bool align = needs_alignment();
    int mismatches = 0, failures = 0;

    auto worker = [&](int id) {
        std::mt19937_64 rng(id * 7919 + 1);
        std::string shadow(kRegion, '\0');  // what the region must hold
        auto wbuf = aligned_buffer(kRegion), rbuf = aligned_buffer(kRegion);
        const off_t base = (off_t)id * kRegion;
        for (int round = 0; round < kRounds; round++) {
            size_t len = align ? 4096 * (1 + rng() % 4) : 1 + rng() % 9000;
            size_t off = rng() % (kRegion - len);
            if (align) off = align_down(off, 4096);
            for (size_t i = 0; i < len; i++) wbuf.get()[i] = (char)rng();
            ssize_t w;
            if (round % 2) {  // two segments, split at a block boundary
                size_t cut = align ? align_down(len / 2, 4096) : len / 2;
                iovec v[2] = {{wbuf.get(), cut}, {wbuf.get() + cut, len - cut}};
                w = h.file->pwritev(v, 2, base + off);
            } else {
                w = h.file->pwrite(wbuf.get(), len, base + off);
            }
            if (w != (ssize_t)len) failures++;
            memcpy(&shadow[off], wbuf.get(), len);
            if (h.file->pread(rbuf.get(), len, base + off) != (ssize_t)len) failures++;
            if (fnv1a(rbuf.get(), len) != fnv1a(wbuf.get(), len)) mismatches++;
        }
        iovec halves[2] = {{rbuf.get(), kRegion / 2}, {rbuf.get() + kRegion / 2, kRegion / 2}};
        if (h.file->preadv(halves, 2, base) != (ssize_t)kRegion) failures++;
        if (fnv1a(rbuf.get(), kRegion) != fnv1a(shadow.data(), kRegion)) mismatches++;
    };
    std::vector<photon_test::task> tasks;
    for (int i = 0; i < kCoroutines; i++)
        tasks.push_back(photon_test::spawn([&, i] {
            worker(i);
            return nullptr;
        }));
    for (auto& t : tasks) t.join();
    EXPECT_EQ(0, failures);
    EXPECT_EQ(0, mismatches);
    EXPECT_EQ(0, h.file->fdatasync());
    EXPECT_EQ(0, h.file->fsync());
}

TEST_P(FsEngineTest, ReadsAreShortAtEndOfFile) {
    auto h = open_scratch(dir_.path(), io_engine(), "short");
    ASSERT_TRUE(h.file) << strerror(errno);
    auto buf = aligned_buffer(8192, 'x');
    ASSERT_EQ(8192, h.file->pwrite(buf.get(), 8192, 0));
    ASSERT_EQ(0, h.file->ftruncate(5000));  // the last block is now partial

    auto rd = aligned_buffer(8192, 0);
    EXPECT_EQ(5000 - 4096, h.file->pread(rd.get(), 8192, 4096));
    EXPECT_EQ('x', rd.get()[0]);
    EXPECT_EQ('x', rd.get()[5000 - 4096 - 1]);
    EXPECT_EQ(0, h.file->pread(rd.get(), 4096, 8192));
    EXPECT_EQ(0, h.file->pread(rd.get(), 4096, 1 << 20));
    struct stat st;
    ASSERT_EQ(0, h.file->fstat(&st));
    EXPECT_EQ(5000, st.st_size);
}

TEST_P(FsEngineTest, StreamCallsFollowTheFilePosition) {
    auto h = open_scratch(dir_.path(), io_engine(), "stream");
    ASSERT_TRUE(h.file) << strerror(errno);
    auto a = aligned_buffer(4096, 'a'), b = aligned_buffer(4096, 'b');
    ASSERT_EQ(4096, h.file->write(a.get(), 4096));
    iovec v = {b.get(), 4096};
    ASSERT_EQ(4096, h.file->writev(&v, 1));
    EXPECT_EQ(8192, h.file->lseek(0, SEEK_CUR));
    ASSERT_EQ(0, h.file->lseek(0, SEEK_SET));

    auto rd = aligned_buffer(4096);
    ASSERT_EQ(4096, h.file->read(rd.get(), 4096));
    EXPECT_EQ('a', rd.get()[4095]);
    iovec rv = {rd.get(), 4096};
    ASSERT_EQ(4096, h.file->readv(&rv, 1));
    EXPECT_EQ('b', rd.get()[0]);
    EXPECT_EQ(0, h.file->read(rd.get(), 4096));
}

// An interrupted call returns either its full result (it had started and
// finished) or -1 EINTR, and in both cases the kernel is done with the
// buffer: what we write into it afterwards stays.
TEST_P(FsEngineTest, InterruptedReadLeavesTheBufferToTheCaller) {
    if (io_engine() == ioengine_psync) GTEST_SKIP() << "psync blocks the vCPU: nothing to cancel";
    constexpr size_t kSize = 8 << 20;
    auto h = open_scratch(dir_.path(), io_engine(), "big");
    ASSERT_TRUE(h.file) << strerror(errno);
    auto src = aligned_buffer(kSize, 'd');
    ASSERT_EQ((ssize_t)kSize, h.file->pwrite(src.get(), kSize, 0));

    for (int attempt = 0; attempt < 4; attempt++) {
        auto buf = aligned_buffer(kSize);
        ssize_t r = 0;
        int err = 0;
        bool untouched = true;
        auto t = photon_test::spawn([&] {
            r = h.file->pread(buf.get(), kSize, 0);
            err = errno;
            memset(buf.get(), 0xAB, kSize);
            thread_usleep(20 * 1000);  // a late kernel write would land now
            for (size_t i = 0; i < kSize; i += 512) untouched &= (uint8_t)buf.get()[i] == 0xAB;
            return nullptr;
        });
        ASSERT_TRUE(photon_test::until_sleeping(t.th));
        for (int i = 0; i < attempt; i++) thread_yield();  // vary the moment
        thread_interrupt(t.th, EINTR);
        t.join();
        EXPECT_TRUE(r == (ssize_t)kSize || (r == -1 && err == EINTR)) << r << " " << err;
        EXPECT_TRUE(untouched);
    }
}

TEST_P(FsEngineTest, FallocateTrimAndZeroRangeWork) {
    auto h = open_scratch(dir_.path(), io_engine(), "alloc");
    ASSERT_TRUE(h.file) << strerror(errno);
    ASSERT_EQ(0, h.file->fallocate(0, 0, 1 << 20));
    struct stat st;
    ASSERT_EQ(0, h.file->fstat(&st));
    EXPECT_EQ(1 << 20, st.st_size);
    auto buf = aligned_buffer(8192, 'z');
    ASSERT_EQ(8192, h.file->pwrite(buf.get(), 8192, 0));
    if (h.file->zero_range(0, 4096) < 0) GTEST_SKIP() << "zero_range: " << strerror(errno);
    ASSERT_EQ(0, h.file->trim(4096, 4096)) << strerror(errno);
    auto rd = aligned_buffer(8192, 1);
    ASSERT_EQ(8192, h.file->pread(rd.get(), 8192, 0));
    EXPECT_EQ(0, rd.get()[0]);
    EXPECT_EQ(0, rd.get()[8191]);
    EXPECT_EQ(0, h.file->fadvise(0, 0, POSIX_FADV_SEQUENTIAL));
    EXPECT_EQ(0, h.file->sync_file_range(0, 0, SYNC_FILE_RANGE_WRITE));
}

PHOTON_INSTANTIATE_FS_ENGINE_TESTS(FsEngineTest);
