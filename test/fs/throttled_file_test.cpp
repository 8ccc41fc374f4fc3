// throttled-file.h: the concurrency, IOPS and throughput limits hold (lower
// bounds on time; "not held" is checked as no turn for other coroutines, as
// a loaded machine stretches any time), requests are cut at block_size, and the files
// of a throttled file system share its limits, even after it is gone.
#include <photon/fs/throttled-file.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <photon/fs/filesystem.h>
#include <photon/fs/forwardfs.h>
#include <photon/thread/thread.h>

#include "../net/net_test_util.h"
#include "../thread/test_util.h"
#include "mem_file.h"

using namespace photon;
using namespace photon::fs;
using photon_test::mem_file;
using photon_test::pattern;

namespace {

// Each read takes `delay` us of the coroutine's time; counts reads in flight.
struct slow_file : mem_file {
    using mem_file::mem_file;
    uint64_t delay = 0;
    int in_flight = 0, max_in_flight = 0;
    std::vector<size_t> sizes;  // of each pread
    ssize_t pread(void* buf, size_t count, off_t offset) override {
        sizes.push_back(count);
        max_in_flight = std::max(max_in_flight, ++in_flight);
        if (delay) thread_usleep(delay);
        in_flight--;
        return mem_file::pread(buf, count, offset);
    }
};

// A file system whose files are slow_files (owned by the caller).
struct slow_fs : ForwardFS {
    slow_fs() : ForwardFS(nullptr) {}
    slow_file file{pattern(100000, 1)};
    struct view : ForwardFile {
        explicit view(IFile* f) : ForwardFile(f) {}
        int close() override { return 0; }
    };
    IFile* open(const char*, int) override { return new view(&file); }
    IFile* open(const char* p, int f, mode_t) override { return open(p, f); }
};

class ThrottledFile : public photon_test::VcpuTest {};

}  // namespace

TEST_F(ThrottledFile, ConcurrentOpsAreCapped) {
    slow_file f(pattern(4096, 1));
    f.delay = 20 * 1000;
    ThrottleLimits l;
    l.RW.concurent_ops = 2;
    std::unique_ptr<IFile> t(new_throttled_file(&f, l));
    std::vector<join_handle*> jhs;
    for (int i = 0; i < 6; i++) {
        jhs.push_back(thread_enable_join(thread_create(
            [](void* p) -> void* {
                char buf[100];
                ((IFile*)p)->pread(buf, sizeof(buf), 0);
                return nullptr;
            },
            t.get())));
    }
    for (auto j : jhs) thread_join(j);
    EXPECT_EQ(6u, f.sizes.size());
    EXPECT_EQ(2, f.max_in_flight);
}

TEST_F(ThrottledFile, IopsAreLimited) {
    mem_file f(pattern(4096, 1));
    ThrottleLimits l;
    l.R.IOPS = 50;  // the bucket starts full: 50 at once, then 50 per second
    std::unique_ptr<IFile> t(new_throttled_file(&f, l));
    auto t0 = photon_test::Clock::now();
    char c;
    for (int i = 0; i < 80; i++) ASSERT_EQ(1, t->pread(&c, 1, i));
    EXPECT_GE(photon_test::us_since(t0), 500u * 1000);  // 30 more at 50/s
    // A hang guard, 16x the expected 0.6 s: a refill far too slow.
    EXPECT_LT(photon_test::us_since(t0), 10u * 1000 * 1000);
    // Writes are not held by a read limit (its bucket is empty now).
    auto writes = [&] {
        for (int i = 0; i < 80; i++) ASSERT_EQ(1, t->pwrite("x", 1, i));
    };
    EXPECT_EQ(0, photon_test::turns_of_others_during(writes));
}

TEST_F(ThrottledFile, ThroughputIsLimitedForAnyDirection) {
    mem_file f;
    ThrottleLimits l;
    l.RW.throughput = 4 << 20;  // bytes per second
    std::unique_ptr<IFile> t(new_throttled_file(&f, l));
    std::string chunk = pattern(1 << 20, 2);
    auto t0 = photon_test::Clock::now();
    for (int i = 0; i < 6; i++) ASSERT_EQ(1 << 20, t->pwrite(chunk.data(), chunk.size(), i << 20));
    EXPECT_GE(photon_test::us_since(t0), 400u * 1000);  // 2 MiB past the first 4, at 4 MiB/s
    std::string back(1 << 20, '\0');
    t0 = photon_test::Clock::now();
    ASSERT_EQ(1 << 20, t->pread(&back[0], back.size(), 0));
    EXPECT_GE(photon_test::us_since(t0), 200u * 1000);
    EXPECT_TRUE(back == chunk);
}

TEST_F(ThrottledFile, RequestsAreCutAtBlockSize) {
    slow_file f(pattern(10000, 3));
    ThrottleLimits l;
    l.R.block_size = 1000;
    l.W.block_size = 4096;
    std::unique_ptr<IFile> t(new_throttled_file(&f, l));
    std::string buf(3500, '\0');
    ASSERT_EQ(3500, t->pread(&buf[0], buf.size(), 100));
    EXPECT_EQ((std::vector<size_t>{1000, 1000, 1000, 500}), f.sizes);
    EXPECT_EQ(f.data.substr(100, 3500), buf);
    // Vector reads: each piece a window of the caller's iovecs.
    f.sizes.clear();
    std::string a(700, '\0'), b(1800, '\0');
    struct iovec iov[] = {{&a[0], a.size()}, {&b[0], b.size()}};
    ASSERT_EQ(2500, t->preadv(iov, 2, 9));
    EXPECT_EQ(3u, f.sizes.size());  // 1000, 1000, 500 through VirtualFile's preadv
    EXPECT_EQ(f.data.substr(9, 2500), a + b);
    // A short piece ends the request with the bytes so far.
    f.sizes.clear();
    ASSERT_EQ(1500, t->pread(&buf[0], 3000, 8500));
    std::string w = pattern(9000, 4);
    ASSERT_EQ(9000, t->pwrite(w.data(), w.size(), 0));
    EXPECT_EQ(3, f.writes);
    EXPECT_EQ(w, f.data.substr(0, 9000));
}

TEST_F(ThrottledFile, NoLimitsPassStraightThrough) {
    mem_file f(pattern(1 << 20, 5));
    std::unique_ptr<IFile> t(new_throttled_file(&f, ThrottleLimits()));
    std::string buf(1 << 20, '\0');
    auto reads = [&] {
        for (int i = 0; i < 100; i++) ASSERT_EQ(1 << 20, t->pread(&buf[0], buf.size(), 0));
    };
    EXPECT_EQ(0, photon_test::turns_of_others_during(reads));  // nothing waited
    EXPECT_EQ(100, f.reads);
    EXPECT_EQ(0, t->fsync());  // metadata calls pass
    EXPECT_EQ(1, f.syncs);
}

TEST_F(ThrottledFile, FilesOfAThrottledFsShareItsLimitsAndMayOutliveIt) {
    auto under = new slow_fs;
    under->file.delay = 20 * 1000;
    ThrottleLimits l;
    l.R.concurent_ops = 1;
    std::unique_ptr<IFileSystem> fs(new_throttled_fs(under, l, true));
    std::unique_ptr<IFile> a(fs->open("a", O_RDONLY)), b(fs->open("b", O_RDONLY));
    auto read_one = [](void* p) -> void* {
        char buf[10];
        ((IFile*)p)->pread(buf, sizeof(buf), 0);
        return nullptr;
    };
    auto ja = thread_enable_join(thread_create(read_one, a.get()));
    auto jb = thread_enable_join(thread_create(read_one, b.get()));
    thread_join(ja);
    thread_join(jb);
    EXPECT_EQ(1, under->file.max_in_flight);     // one limit for both files
    std::unique_ptr<slow_fs> keep(new slow_fs);  // `under` goes with fs: read a's own
    fs.reset(new_throttled_fs(keep.get(), l, false));
    std::unique_ptr<IFile> c(fs->open("c", O_RDONLY));
    fs.reset();  // Photon's files pointed into the deleted file system
    char buf[10];
    EXPECT_EQ(10, c->pread(buf, sizeof(buf), 0));
}

TEST(ThrottledFileArgs, NullObjectsAreRejected) {
    EXPECT_EQ(nullptr, new_throttled_file(nullptr, ThrottleLimits()));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(nullptr, new_throttled_fs(nullptr, ThrottleLimits()));
    EXPECT_EQ(EINVAL, errno);
}
