// The full-file cache (new_full_file_cached_fs) over a local source dir and a
// local media dir: reads equal the source, refills are whole units, eviction
// by capacity (LRU) and by media free space, recovery of the media dir, a
// failing source, and readers on two vCPUs.
#include <photon/fs/cache/cache.h>
#include <photon/fs/cache/full_file_cache/cache_pool.h>
#include <photon/fs/cache/full_file_cache/quota_pool.h>

#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <photon/fs/forwardfs.h>
#include <photon/fs/localfs.h>
#include <photon/photon.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

#include <gtest/gtest.h>

#include "fs_test_util.h"

using namespace photon;
using namespace photon::fs;

namespace {

const uint64_t kUnit = 64 * 1024;

char byte_at(int file_id, uint64_t pos) {
    uint64_t x =
        (pos + 1) * 0x9E3779B97F4A7C15ULL ^ (uint64_t)(file_id + 1) * 0xC2B2AE3D27D4EB4FULL;
    x ^= x >> 29;
    return (char)(x & 0xff);
}

std::string content(int file_id, size_t size) {
    std::string s(size, '\0');
    for (size_t i = 0; i < size; i++) s[i] = byte_at(file_id, i);
    return s;
}

// Counts what reaches the source and can make it fail with EIO.
struct source_stats {
    std::atomic<int> opens{0};
    std::atomic<int> reads{0};
    std::atomic<uint64_t> bytes{0};
    std::atomic<uint64_t> last_offset{0}, last_count{0};
    std::atomic<bool> fail{false};
};

class counting_file : public ForwardFile_Ownership {
public:
    counting_file(IFile* f, source_stats* s) : ForwardFile_Ownership(f, true), s_(s) {}
    ssize_t pread(void* buf, size_t count, off_t offset) override {
        struct iovec v {
            buf, count
        };
        return preadv(&v, 1, offset);
    }
    ssize_t preadv(const struct iovec* iov, int iovcnt, off_t offset) override {
        s_->reads++;
        if (s_->fail) {
            errno = EIO;
            return -1;
        }
        auto n = m_file->preadv(iov, iovcnt, offset);
        if (n > 0) s_->bytes += n;
        s_->last_offset = offset;
        s_->last_count = n;
        return n;
    }
    ssize_t preadv2(const struct iovec* iov, int iovcnt, off_t offset, int) override {
        return preadv(iov, iovcnt, offset);
    }

private:
    source_stats* s_;
};

class counting_fs : public ForwardFS_Ownership {
public:
    counting_fs(IFileSystem* fs, source_stats* s) : ForwardFS_Ownership(fs, true), s_(s) {}
    IFile* open(const char* path, int flags) override { return open(path, flags, 0644); }
    IFile* open(const char* path, int flags, mode_t mode) override {
        s_->opens++;
        auto f = m_fs->open(path, flags, mode);
        return f ? new counting_file(f, s_) : nullptr;
    }

private:
    source_stats* s_;
};

class FullFileCache : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_EQ(0, photon::init(INIT_EVENT_DEFAULT, INIT_IO_NONE));
        ASSERT_TRUE(src_dir_.ok());
        ASSERT_TRUE(media_dir_.ok());
        src_.reset(new counting_fs(new_localfs_adaptor(src_dir_.path().c_str()), &stats_));
    }
    void TearDown() override {
        cfs_.reset();
        src_.reset();
        EXPECT_EQ(0, photon::fini());
    }

    void make_file(const std::string& name, int id, size_t size) {
        src_dir_.write(name, content(id, size));
    }
    // A cache over the media dir; capacity in GiB, free space floor in bytes.
    ICachedFileSystem* open_cache(uint64_t capacity_gb = 1, uint64_t disk_avail = 0,
                                  uint64_t unit = kUnit, int quota_level = 0) {
        cfs_.reset();
        cfs_.reset(new_full_file_cached_fs(
            src_.get(), new_localfs_adaptor(media_dir_.path().c_str()), unit, capacity_gb,
            3600ULL * 1000 * 1000, disk_avail, nullptr, quota_level));
        return cfs_.get();
    }
    // Reads all of name (file id, size) through the cache, checked.
    void read_whole(const char* name, int id, uint64_t size) {
        std::unique_ptr<IFile> f(cfs_->open(name, O_RDONLY));
        ASSERT_TRUE(f) << name;
        expect_read(f.get(), id, size, 0, size);
    }
    // A quota group's usage in units (stat of "/dir/").
    uint64_t group_units(const char* dir) {
        CacheStat st{};
        EXPECT_EQ(0, pool()->stat(&st, dir));
        return st.used_size;
    }
    FileCachePool* pool() { return dynamic_cast<FileCachePool*>(cfs_->get_pool()); }
    bool media_has(const std::string& name) {
        struct stat st;
        return ::stat(media_dir_.path(name).c_str(), &st) == 0 && st.st_size > 0;
    }
    // Reads [off, off + n) through the cache and checks it against the source.
    void expect_read(IFile* f, int id, uint64_t size, uint64_t off, size_t n) {
        std::string buf(n, '\x5a');
        auto r = f->pread(&buf[0], n, off);
        uint64_t want = off >= size ? 0 : std::min<uint64_t>(n, size - off);
        ASSERT_EQ((ssize_t)want, r) << "at " << off << " +" << n;
        for (uint64_t i = 0; i < want; i++)
            ASSERT_EQ(byte_at(id, off + i), buf[i]) << "byte " << off + i;
    }

    photon_test::scratch_dir src_dir_, media_dir_;
    source_stats stats_;
    std::unique_ptr<IFileSystem> src_;
    std::unique_ptr<ICachedFileSystem> cfs_;
};

TEST_F(FullFileCache, ReadsEqualTheSourceAtRandomOffsetsAndPastTheEnd) {
    const uint64_t size = 3 * 1024 * 1024 + 1234;  // not unit aligned
    make_file("dir/a", 1, size);
    auto cfs = open_cache();
    ASSERT_NE(nullptr, cfs);
    std::unique_ptr<IFile> f(cfs->open("/dir/a", O_RDONLY));
    ASSERT_TRUE(f);
    std::mt19937_64 rng(7);
    for (int i = 0; i < 300; i++) {
        uint64_t off = rng() % (size + 2 * kUnit);
        size_t n = 1 + rng() % (3 * kUnit);
        expect_read(f.get(), 1, size, off, n);
    }
    expect_read(f.get(), 1, size, size - 1, 4096);
    expect_read(f.get(), 1, size, size, 4096);
    struct stat st;
    ASSERT_EQ(0, f->fstat(&st));
    EXPECT_EQ((off_t)size, st.st_size);
    // Everything read once more: the misses fill the rest, then all hits.
    for (uint64_t off = 0; off < size; off += kUnit) expect_read(f.get(), 1, size, off, kUnit);
    int reads = stats_.reads;
    for (int i = 0; i < 300; i++) {
        uint64_t off = rng() % size;
        expect_read(f.get(), 1, size, off, 1 + rng() % (3 * kUnit));
    }
    EXPECT_EQ(reads, stats_.reads) << "a warm cache read the source";
}

TEST_F(FullFileCache, MissRefillsTheWholeUnitAroundIt) {
    make_file("u", 2, 10 * kUnit + 100);
    auto cfs = open_cache();
    ASSERT_NE(nullptr, cfs);
    std::unique_ptr<ICachedFile> f(static_cast<ICachedFile*>(cfs->open("/u", O_RDONLY)));
    ASSERT_TRUE(f);
    EXPECT_GT(f->query(kUnit + 10, 1), 0);  // nothing cached yet
    expect_read(f.get(), 2, 10 * kUnit + 100, kUnit + 10, 1);
    EXPECT_EQ(1, stats_.reads);
    EXPECT_EQ(kUnit, stats_.last_offset);
    EXPECT_EQ(kUnit, stats_.last_count);
    EXPECT_EQ(0, f->query(kUnit, kUnit));
    EXPECT_EQ((int)kUnit, f->query(0, kUnit));
    // The last unit is short: refilled up to the end.
    expect_read(f.get(), 2, 10 * kUnit + 100, 10 * kUnit + 50, 4096);
    EXPECT_EQ(10 * kUnit, stats_.last_offset);
    EXPECT_EQ(100u, stats_.last_count);
}

TEST_F(FullFileCache, ReadStraddlingCachedAndUncachedUnitsReturnsTheRightBytes) {
    const uint64_t size = 8 * kUnit;
    make_file("s", 3, size);
    auto cfs = open_cache();
    ASSERT_NE(nullptr, cfs);
    std::unique_ptr<ICachedFile> f(static_cast<ICachedFile*>(cfs->open("/s", O_RDONLY)));
    ASSERT_TRUE(f);
    // Units 1 and 3 cached, 0, 2 and 4 not.
    expect_read(f.get(), 3, size, kUnit, kUnit);
    expect_read(f.get(), 3, size, 3 * kUnit + 5, 7);
    // Starts in cached unit 1, spans holes 2 and 4 around cached 3.
    expect_read(f.get(), 3, size, kUnit + 1000, 3 * kUnit + 777);
    // Starts in hole 0, ends in cached unit 1... now all of 0..4 are cached.
    expect_read(f.get(), 3, size, 100, kUnit + 5);
    EXPECT_EQ(0, f->query(0, 5 * kUnit));
    int reads = stats_.reads;
    expect_read(f.get(), 3, size, 10, 5 * kUnit - 20);
    EXPECT_EQ(reads, stats_.reads);
    // Cached head, uncached tail, through several iovecs.
    std::string a(kUnit, 0), b(2 * kUnit, 0);
    struct iovec iov[2] = {{&a[0], a.size()}, {&b[0], b.size()}};
    ASSERT_EQ((ssize_t)(3 * kUnit), f->preadv(iov, 2, 4 * kUnit));
    EXPECT_EQ(content(3, size).substr(4 * kUnit, 3 * kUnit), a + b);
}

TEST_F(FullFileCache, EvictsTheLeastRecentlyReadFileWhenOverCapacity) {
    for (int i = 0; i < 3; i++) make_file(std::string(1, 'a' + i), 10 + i, 2 * kUnit);
    auto cfs = open_cache();
    ASSERT_NE(nullptr, cfs);
    for (const char* n : {"/a", "/b", "/c", "/a"}) {
        std::unique_ptr<IFile> f(cfs->open(n, O_RDONLY));
        ASSERT_TRUE(f);
        expect_read(f.get(), 10 + (n[1] - 'a'), 2 * kUnit, 0, 2 * kUnit);
    }
    EXPECT_EQ(6 * kUnit, pool()->used_bytes());
    // Capacity 5 units (eviction stops at 90%: 4.5): one file must go, b.
    ASSERT_EQ(0, pool()->resize(5 * kUnit, RSZ_DISK));
    ASSERT_EQ(0, pool()->evict((size_t)0));
    EXPECT_EQ(4 * kUnit, pool()->used_bytes());
    EXPECT_TRUE(media_has("a"));
    EXPECT_FALSE(media_has("b"));
    EXPECT_TRUE(media_has("c"));
    int reads = stats_.reads;
    {
        std::unique_ptr<IFile> f(cfs->open("/a", O_RDONLY));
        expect_read(f.get(), 10, 2 * kUnit, 0, 2 * kUnit);
    }
    EXPECT_EQ(reads, stats_.reads);
    {
        std::unique_ptr<IFile> f(cfs->open("/b", O_RDONLY));
        expect_read(f.get(), 11, 2 * kUnit, 0, 2 * kUnit);
    }
    EXPECT_GT(stats_.reads, reads);
}

TEST_F(FullFileCache, RefillPastCapacityStartsAnEvictionOnItsOwn) {
    const int kFiles = 12;
    for (int i = 0; i < kFiles; i++) make_file("f" + std::to_string(i), i, 2 * kUnit);
    auto cfs = open_cache();
    ASSERT_NE(nullptr, cfs);
    ASSERT_EQ(0, pool()->resize(8 * kUnit, RSZ_DISK));
    for (int i = 0; i < kFiles; i++) {
        std::unique_ptr<IFile> f(cfs->open(("/f" + std::to_string(i)).c_str(), O_RDONLY));
        ASSERT_TRUE(f);
        expect_read(f.get(), i, 2 * kUnit, 0, 2 * kUnit);
    }
    EXPECT_TRUE(photon_test::wait_for([&] { return pool()->used_bytes() <= 8 * kUnit; }))
        << pool()->used_bytes();
    EXPECT_TRUE(media_has("f" + std::to_string(kFiles - 1)));  // the newest stays
    EXPECT_FALSE(media_has("f0"));
}

TEST_F(FullFileCache, EvictsEverythingWhenMediaFreeSpaceIsBelowTheFloor) {
    make_file("x", 20, 3 * kUnit);
    make_file("y", 21, 3 * kUnit);
    // A floor no disk meets: low free space, as far as the pool can tell.
    auto cfs = open_cache(1, 1ULL << 62);
    ASSERT_NE(nullptr, cfs);
    std::unique_ptr<IFile> x(cfs->open("/x", O_RDONLY));
    expect_read(x.get(), 20, 3 * kUnit, 0, 3 * kUnit);
    {
        std::unique_ptr<IFile> y(cfs->open("/y", O_RDONLY));
        expect_read(y.get(), 21, 3 * kUnit, 0, 3 * kUnit);
    }
    ASSERT_EQ(0, pool()->evict((size_t)0));
    EXPECT_EQ(0u, pool()->used_bytes());
    EXPECT_FALSE(media_has("x"));  // open: truncated
    EXPECT_FALSE(media_has("y"));  // closed: unlinked
    // The open file reads on, refilling.
    int reads = stats_.reads;
    expect_read(x.get(), 20, 3 * kUnit, 100, 2 * kUnit);
    EXPECT_GT(stats_.reads, reads);
}

TEST_F(FullFileCache, NewPoolFindsWhatWasCachedWithoutReadingTheSource) {
    const uint64_t size = 5 * kUnit + 333;
    make_file("d/r", 30, size);
    make_file("d/half", 31, 4 * kUnit);
    {
        auto cfs = open_cache();
        ASSERT_NE(nullptr, cfs);
        std::unique_ptr<IFile> f(cfs->open("/d/r", O_RDONLY));
        expect_read(f.get(), 30, size, 0, size);
        std::unique_ptr<IFile> h(cfs->open("/d/half", O_RDONLY));
        expect_read(h.get(), 31, 4 * kUnit, 0, 2 * kUnit);
    }
    auto cfs = open_cache();  // a new pool over the same media dir
    ASSERT_NE(nullptr, cfs);
    EXPECT_EQ(2u, pool()->file_count());
    EXPECT_GE(pool()->used_bytes(), size + 2 * kUnit);
    stats_.opens = 0;
    stats_.reads = 0;
    {
        std::unique_ptr<IFile> f(cfs->open("/d/r", O_RDONLY));
        expect_read(f.get(), 30, size, 0, size + 10);
        struct stat st;
        ASSERT_EQ(0, f->fstat(&st));
        EXPECT_EQ((off_t)size, st.st_size);
    }
    EXPECT_EQ(0, stats_.opens);
    EXPECT_EQ(0, stats_.reads);
    std::unique_ptr<IFile> h(cfs->open("/d/half", O_RDONLY));
    expect_read(h.get(), 31, 4 * kUnit, 0, 2 * kUnit);
    EXPECT_EQ(0, stats_.reads);
    expect_read(h.get(), 31, 4 * kUnit, 0, 4 * kUnit);
    EXPECT_EQ(1, stats_.reads);
    EXPECT_EQ(2 * kUnit, stats_.last_offset);
    EXPECT_EQ(2 * kUnit, stats_.last_count);
}

TEST_F(FullFileCache, TruncatedOrMislabelledMediaFilesAreDroppedOnRecovery) {
    const uint64_t size = 4 * kUnit;
    make_file("t", 40, size);
    make_file("m", 41, size);
    {
        auto cfs = open_cache();
        ASSERT_NE(nullptr, cfs);
        for (const char* n : {"/t", "/m"}) {
            std::unique_ptr<IFile> f(cfs->open(n, O_RDONLY));
            expect_read(f.get(), n[1] == 't' ? 40 : 41, size, 0, size);
        }
    }
    ASSERT_EQ(0, ::truncate(media_dir_.path("t").c_str(), 2 * kUnit));
    const char bogus[] = "12345";
    ASSERT_EQ(0, ::setxattr(media_dir_.path("m").c_str(), "user.photon.cache.size", bogus,
                            sizeof(bogus) - 1, 0));
    media_dir_.write("stray", "no size recorded");
    auto cfs = open_cache();
    ASSERT_NE(nullptr, cfs);
    EXPECT_FALSE(media_has("t"));
    EXPECT_FALSE(media_has("m"));
    EXPECT_FALSE(media_has("stray"));
    EXPECT_EQ(0u, pool()->file_count());
    stats_.reads = 0;
    for (const char* n : {"/t", "/m"}) {
        std::unique_ptr<IFile> f(cfs->open(n, O_RDONLY));
        expect_read(f.get(), n[1] == 't' ? 40 : 41, size, 0, size + 1);
    }
    EXPECT_EQ(2, stats_.reads);
}

TEST_F(FullFileCache, FailingSourceGivesEioAndCachesNothing) {
    const uint64_t size = 3 * kUnit;
    make_file("e", 50, size);
    auto cfs = open_cache();
    ASSERT_NE(nullptr, cfs);
    std::unique_ptr<ICachedFile> f(static_cast<ICachedFile*>(cfs->open("/e", O_RDONLY)));
    ASSERT_TRUE(f);
    stats_.fail = true;
    char buf[100];
    errno = 0;
    EXPECT_EQ(-1, f->pread(buf, sizeof(buf), kUnit));
    EXPECT_EQ(EIO, errno);
    EXPECT_EQ((int)kUnit, f->query(kUnit, 1));
    EXPECT_EQ(0u, pool()->used_bytes());
    stats_.fail = false;
    expect_read(f.get(), 50, size, 0, size);
    EXPECT_EQ(0, f->query(0, size));
}

TEST_F(FullFileCache, ManyCoroutinesOnTwoVcpusReadTheSameAndDifferentFiles) {
    const int kFiles = 4;
    const uint64_t size = 1024 * 1024 + 4097;
    for (int i = 0; i < kFiles; i++) make_file("c" + std::to_string(i), 60 + i, size);
    auto cfs = open_cache();
    ASSERT_NE(nullptr, cfs);
    std::atomic<int> bad{0}, done{0};
    auto worker = [&](int seed) {
        if (photon::init(INIT_EVENT_DEFAULT, INIT_IO_NONE) != 0) {
            bad++;
            return;
        }
        std::vector<photon::join_handle*> jh;
        for (int c = 0; c < 24; c++) {
            jh.push_back(photon::thread_enable_join(photon::thread_create11([&, c] {
                std::mt19937_64 rng(seed * 1000 + c);
                for (int k = 0; k < 60; k++) {
                    int id = (c % 2) ? 0 : (int)(rng() % kFiles);  // half share file 0
                    std::unique_ptr<IFile> f(cfs->open(("/c" + std::to_string(id)).c_str(), 0));
                    if (!f) {
                        bad++;
                        continue;
                    }
                    uint64_t off = rng() % size;
                    size_t n = 1 + rng() % (2 * kUnit);
                    std::string buf(n, 0);
                    auto r = f->pread(&buf[0], n, off);
                    size_t want = std::min<uint64_t>(n, size - off);
                    if (r != (ssize_t)want) {
                        bad++;
                        continue;
                    }
                    for (size_t i = 0; i < want; i++)
                        if (buf[i] != byte_at(60 + id, off + i)) {
                            bad++;
                            break;
                        }
                    done++;
                }
            })));
        }
        for (auto h : jh) photon::thread_join(h);
        photon::fini();
    };
    std::thread t1(worker, 1), t2(worker, 2);
    t1.join();
    t2.join();
    EXPECT_EQ(0, bad.load());
    EXPECT_EQ(2 * 24 * 60, done.load());
    // Now whole files through one reader: what is missing is filled once.
    for (int i = 0; i < kFiles; i++) {
        std::unique_ptr<IFile> f(cfs->open(("/c" + std::to_string(i)).c_str(), O_RDONLY));
        expect_read(f.get(), 60 + i, size, 0, size);
    }
    int reads = stats_.reads;
    for (int i = 0; i < kFiles; i++) {
        std::unique_ptr<IFile> f(cfs->open(("/c" + std::to_string(i)).c_str(), O_RDONLY));
        expect_read(f.get(), 60 + i, size, 0, size);
    }
    EXPECT_EQ(reads, stats_.reads);
}

TEST_F(FullFileCache, EvictionStartedOnAnotherVcpuRunsOnThePoolsOwn) {
    const int kFiles = 8;
    const uint64_t size = 4 * kUnit;
    for (int i = 0; i < kFiles; i++) make_file("v" + std::to_string(i), 80 + i, size);
    auto cfs = open_cache();
    ASSERT_NE(nullptr, cfs);
    ASSERT_EQ(0, pool()->resize(12 * kUnit, RSZ_DISK));
    std::atomic<int> bad{0}, finished{0};
    auto worker = [&](int seed) {
        if (photon::init(INIT_EVENT_DEFAULT, INIT_IO_NONE) != 0) {
            bad++;
            return;
        }
        std::vector<photon::join_handle*> jh;
        for (int c = 0; c < 8; c++) {
            jh.push_back(photon::thread_enable_join(photon::thread_create11([&, c] {
                std::mt19937_64 rng(seed * 100 + c);
                for (int k = 0; k < 40; k++) {
                    int id = (int)(rng() % kFiles);
                    std::unique_ptr<IFile> f(cfs->open(("/v" + std::to_string(id)).c_str(), 0));
                    uint64_t off = rng() % size;
                    size_t n = 1 + rng() % kUnit;
                    std::string buf(n, 0);
                    size_t want = std::min<uint64_t>(n, size - off);
                    if (!f || f->pread(&buf[0], n, off) != (ssize_t)want) {
                        bad++;
                        continue;
                    }
                    for (size_t i = 0; i < want; i++)
                        if (buf[i] != byte_at(80 + id, off + i)) {
                            bad++;
                            break;
                        }
                }
            })));
        }
        for (auto h : jh) photon::thread_join(h);
        photon::fini();  // evictions these readers started do not run here
        finished++;
    };
    std::thread t1(worker, 1), t2(worker, 2);
    // This vCPU runs the evictions meanwhile, under the readers' feet.
    EXPECT_TRUE(photon_test::wait_for([&] { return finished == 2; }, 120000));
    t1.join();
    t2.join();
    EXPECT_EQ(0, bad.load());
    EXPECT_TRUE(photon_test::wait_for([&] { return pool()->used_bytes() <= 12 * kUnit; }))
        << pool()->used_bytes();
}

TEST_F(FullFileCache, AGroupPastItsQuotaLosesItsOwnLeastRecentFilesOnly) {
    for (const char* d : {"a", "b"}) ASSERT_EQ(0, ::mkdir(src_dir_.path(d).c_str(), 0755));
    for (const char* n : {"a/x", "a/y", "a/z", "b/w"}) make_file(n, n[2], 2 * kUnit);
    ASSERT_NE(nullptr, open_cache(1, 0, kUnit, 1));
    ASSERT_TRUE(dynamic_cast<QuotaFilePool*>(pool()));
    // 5 units: water mark 4.5, risk mark 4.75.
    ASSERT_EQ(0, pool()->set_quota("/a/", 5 * kUnit));
    for (const char* n : {"/b/w", "/a/x", "/a/y"}) read_whole(n, n[3], 2 * kUnit);
    EXPECT_EQ(4u, group_units("/a/"));
    EXPECT_EQ(2u, group_units("/b/"));
    // z takes a to 6 units, past its risk mark: an eviction starts on its own.
    read_whole("/a/z", 'z', 2 * kUnit);
    EXPECT_TRUE(photon_test::wait_for([&] { return group_units("/a/") <= 4; }));
    ASSERT_EQ(0, pool()->evict((size_t)0));  // (and wait for one in progress)
    EXPECT_FALSE(media_has("a/x"));          // the least recent of a
    EXPECT_TRUE(media_has("a/y"));
    EXPECT_TRUE(media_has("a/z"));
    EXPECT_TRUE(media_has("b/w"));  // another group's file, older still, stays
    EXPECT_EQ(4u, group_units("/a/"));
    EXPECT_EQ(6u, pool()->used_bytes() / kUnit);
    CacheStat st{};
    ASSERT_EQ(0, pool()->stat(&st, "/a/"));
    EXPECT_EQ(5u, st.total_size);
    // Below its water mark again, a caches what it reads.
    int reads = stats_.reads;
    read_whole("/a/y", 'y', 2 * kUnit);
    EXPECT_EQ(reads, stats_.reads);
    // A quota below its usage: the group is evicted down to its water mark at once.
    ASSERT_EQ(0, pool()->set_quota("/a/", 3 * kUnit));  // water mark 2.7 units
    EXPECT_TRUE(photon_test::wait_for([&] { return group_units("/a/") <= 2; }));
    ASSERT_EQ(0, pool()->evict((size_t)0));
    EXPECT_EQ(2u, group_units("/a/"));
    EXPECT_FALSE(media_has("a/z"));  // y was read last
    EXPECT_TRUE(media_has("a/y"));
    EXPECT_TRUE(media_has("b/w"));
}

TEST_F(FullFileCache, AGroupOverQuotaServesReadsFromTheSourceWithoutCaching) {
    ASSERT_EQ(0, ::mkdir(src_dir_.path("a").c_str(), 0755));
    make_file("a/big", 7, 4 * kUnit);
    ASSERT_NE(nullptr, open_cache(1, 0, kUnit, 1));
    ASSERT_EQ(0, pool()->set_quota("/a/", kUnit / 2));  // below one unit: full at once
    std::unique_ptr<IFile> f(cfs_->open("/a/big", O_RDONLY));
    ASSERT_TRUE(f);
    for (int round = 0; round < 3; round++) {
        expect_read(f.get(), 7, 4 * kUnit, 0, 4 * kUnit);
        expect_read(f.get(), 7, 4 * kUnit, kUnit - 100, 200);  // straddles two units
    }
    f.reset();
    ASSERT_EQ(0, pool()->evict((size_t)0));
    EXPECT_LE(group_units("/a/"), 1u);
    EXPECT_LE(pool()->used_bytes(), kUnit);
}

TEST_F(FullFileCache, QuotaGroupsNeedADirectoryOfTheirLevel) {
    for (const char* d : {"d1", "d1/d2"}) ASSERT_EQ(0, ::mkdir(src_dir_.path(d).c_str(), 0755));
    make_file("top", 1, kUnit);
    make_file("d1/mid", 2, kUnit);
    make_file("d1/d2/low", 3, kUnit);
    ASSERT_NE(nullptr, open_cache(1, 0, kUnit, 2));
    errno = 0;
    EXPECT_EQ(nullptr, cfs_->open("/top", O_RDONLY));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(nullptr, cfs_->open("/d1/mid", O_RDONLY));
    read_whole("/d1/d2/low", 3, kUnit);
    EXPECT_EQ(1u, group_units("/d1/d2/"));
    EXPECT_EQ(-1, pool()->set_quota("/d1/", kUnit));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(0, pool()->set_quota("/d1/d2/", 8 * kUnit));
    CacheStat st{};
    ASSERT_EQ(0, pool()->stat(&st, "/d1/d2/"));
    EXPECT_EQ(8u, st.total_size);
    // Without quota levels, a plain pool: set_quota is not supported.
    ASSERT_NE(nullptr, open_cache());
    EXPECT_EQ(-1, pool()->set_quota("/d1/d2/", kUnit));
    EXPECT_EQ(ENOSYS, errno);
}

TEST_F(FullFileCache, AGroupsUsageIsRecoveredFromTheMedia) {
    ASSERT_EQ(0, ::mkdir(src_dir_.path("g").c_str(), 0755));
    make_file("g/f", 4, 3 * kUnit);
    ASSERT_NE(nullptr, open_cache(1, 0, kUnit, 1));
    read_whole("/g/f", 4, 3 * kUnit);
    EXPECT_EQ(3u, group_units("/g/"));
    ASSERT_NE(nullptr, open_cache(1, 0, kUnit, 1));  // a new pool over the same media
    EXPECT_EQ(3u, group_units("/g/"));
    int reads = stats_.reads;
    read_whole("/g/f", 4, 3 * kUnit);
    EXPECT_EQ(reads, stats_.reads);
    EXPECT_EQ(3u, group_units("/g/"));
}

TEST_F(FullFileCache, RejectsARefillUnitThatIsNotAPowerOfTwo) {
    errno = 0;
    auto media = new_localfs_adaptor(media_dir_.path().c_str());
    EXPECT_EQ(nullptr,
              new_full_file_cached_fs(src_.get(), media, 3 * 4096, 1, 1000000, 0, nullptr, 0));
    EXPECT_EQ(EINVAL, errno);
    delete media;
}

}  // namespace

// Not a test: warm 4 KiB random reads through the cache against the same
// reads of the source file straight from the local fs (psync both; files in
// the page cache), alternating rounds. Run with
//   --gtest_also_run_disabled_tests --gtest_filter='*WarmRandomReads*'
TEST_F(FullFileCache, DISABLED_WarmRandomReadsAgainstLocalReads) {
    const uint64_t size = 64ULL << 20;
    make_file("big", 70, size);
    auto cfs = open_cache(1, 0, 1 << 20);
    ASSERT_NE(nullptr, cfs);
    std::unique_ptr<IFile> cached(cfs->open("/big", O_RDONLY));
    std::unique_ptr<IFileSystem> local(new_localfs_adaptor(src_dir_.path().c_str()));
    std::unique_ptr<IFile> direct(local->open("big", O_RDONLY));
    ASSERT_TRUE(cached && direct);
    std::string buf(1 << 20, 0);
    for (uint64_t off = 0; off < size; off += buf.size())  // warm both
        ASSERT_EQ((ssize_t)buf.size(), cached->pread(&buf[0], buf.size(), off));
    for (uint64_t off = 0; off < size; off += buf.size())
        ASSERT_EQ((ssize_t)buf.size(), direct->pread(&buf[0], buf.size(), off));
    const int kReads = 300000;
    auto run = [&](IFile* f) {
        std::mt19937_64 rng(1);
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < kReads; i++) {
            uint64_t off = (rng() % (size / 4096)) * 4096;
            if (f->pread(&buf[0], 4096, off) != 4096) return -1.0;
        }
        std::chrono::duration<double> d = std::chrono::steady_clock::now() - t0;
        return kReads / d.count();
    };
    int reads = stats_.reads;
    for (int round = 0; round < 3; round++) {
        double c = run(cached.get()), l = run(direct.get());
        ASSERT_GT(c, 0);
        ASSERT_GT(l, 0);
        printf("round %d: cached %.0f IOPS, local %.0f IOPS, ratio %.3f\n", round, c, l, c / l);
    }
    EXPECT_EQ(reads, stats_.reads);
}
