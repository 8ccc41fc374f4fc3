// VirtualFile's defaults: the position, vector I/O built on pread/pwrite (and
// the other way round), and VirtualReadOnlyFile.
#include <photon/fs/virtual-file.h>

#include <gtest/gtest.h>

#include <climits>
#include <cstring>
#include <string>

#include "../net/net_test_util.h"
#include "mem_file.h"

using namespace photon::fs;
using photon_test::mem_file;

namespace {

// Exposes the protected helpers.
struct probe_file : mem_file {
    using mem_file::mem_file;
    using VirtualFile::piov_copy;
    using VirtualFile::piov_nocopy;
};

// Implements preadv only: pread and read come from VirtualFile.
struct vec_only_file : VirtualReadOnlyFile {
    std::string data = "0123456789";
    int calls = 0;
    ssize_t preadv(const struct iovec* iov, int iovcnt, off_t off) override {
        calls++;
        ssize_t done = 0;
        for (int i = 0; i < iovcnt && (size_t)off < data.size(); i++) {
            size_t n = std::min(iov[i].iov_len, data.size() - off);
            memcpy(iov[i].iov_base, data.data() + off, n);
            off += n, done += n;
        }
        return done;
    }
    int fstat(struct stat* st) override {
        memset(st, 0, sizeof(*st));
        st->st_size = data.size();
        return 0;
    }
    IFileSystem* filesystem() override { return nullptr; }
};

}  // namespace

TEST(VirtualFile, ThePositionFollowsReadsWritesAndSeeks) {
    mem_file f;
    EXPECT_EQ(5, f.write("hello", 5));
    EXPECT_EQ(6, f.write(" world", 6));
    EXPECT_EQ("hello world", f.data);
    EXPECT_EQ(0, f.lseek(0, SEEK_SET));
    char buf[16] = {};
    EXPECT_EQ(5, f.read(buf, 5));
    EXPECT_STREQ("hello", buf);
    EXPECT_EQ(8, f.lseek(3, SEEK_CUR));
    EXPECT_EQ(3, f.read(buf, sizeof(buf)));
    EXPECT_EQ(0, memcmp(buf, "rld", 3));
    EXPECT_EQ(0, f.read(buf, sizeof(buf)));  // at the end
    EXPECT_EQ(9, f.lseek(-2, SEEK_END));
    EXPECT_EQ(20, f.lseek(20, SEEK_SET));  // past the end is allowed
}

TEST(VirtualFile, BadSeeksFailAndKeepThePosition) {
    mem_file f("abc");
    ASSERT_EQ(2, f.lseek(2, SEEK_SET));
    EXPECT_EQ(-1, f.lseek(-3, SEEK_CUR));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, f.lseek(-4, SEEK_END));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, f.lseek(0, 42));
    EXPECT_EQ(EINVAL, errno);
    ASSERT_EQ(LLONG_MAX, f.lseek(LLONG_MAX, SEEK_SET));
    EXPECT_EQ(-1, f.lseek(1, SEEK_CUR));
    EXPECT_EQ(EOVERFLOW, errno);
    ASSERT_EQ(2, f.lseek(2, SEEK_SET));
    EXPECT_EQ(2, f.lseek(0, SEEK_CUR));
}

TEST(VirtualFile, VectorIoBouncesThroughOneCall) {
    mem_file f;
    struct iovec w[] = {{(void*)"ab", 2}, {(void*)"", 0}, {(void*)"cde", 3}};
    EXPECT_EQ(5, f.pwritev(w, 3, 1));
    EXPECT_EQ(1, f.writes);
    EXPECT_EQ(std::string("\0abcde", 6), f.data);
    char a[1], b[4];
    struct iovec r[] = {{a, 1}, {b, 4}};
    EXPECT_EQ(5, f.preadv(r, 2, 1));
    EXPECT_EQ(1, f.reads);
    EXPECT_EQ('a', a[0]);
    EXPECT_EQ(0, memcmp(b, "bcde", 4));
    // Past the end: what there is.
    EXPECT_EQ(2, f.preadv(r, 2, 4));
    EXPECT_EQ('d', a[0]);
    EXPECT_EQ('e', b[0]);
    EXPECT_EQ(0, f.preadv(r, 0, 0));
}

TEST(VirtualFile, LargeVectorIoGoesIn4MiBPieces) {
    const std::string data = photon_test::pattern(10 << 20, 3);
    probe_file f(data);
    std::string x(6 << 20, '\0'), y(4 << 20, '\0');
    struct iovec r[] = {{&x[0], x.size()}, {&y[0], y.size()}};
    EXPECT_EQ((ssize_t)data.size(), f.preadv(r, 2, 0));
    EXPECT_EQ(3, f.reads);
    EXPECT_TRUE(x + y == data);
    // A short piece ends it with the bytes done so far.
    f.max_io = 1 << 20;
    f.reads = 0;
    EXPECT_EQ(1 << 20, f.preadv(r, 2, 0));
    EXPECT_EQ(1, f.reads);
}

TEST(VirtualFile, PiovNocopyReturnsTheBytesDoneWhenAPartComesUpShort) {
    probe_file f("0123456789");
    char a[4], b[4], c[4];
    struct iovec r[] = {{a, 4}, {b, 4}, {c, 4}};
    EXPECT_EQ(10, f.piov_nocopy(f._and_pread(), r, 3, 0));  // Photon: -1
    EXPECT_EQ(0, memcmp(c, "89", 2));
    f.fail_next = 1;
    EXPECT_EQ(-1, f.piov_nocopy(f._and_pread(), r, 3, 0));
    EXPECT_EQ(EIO, errno);
    struct iovec w[] = {{(void*)"xy", 2}, {(void*)"z", 1}};
    EXPECT_EQ(3, f.piov_nocopy(f._and_pwrite(), w, 2, 8));
    EXPECT_EQ("01234567xyz", f.data);
    EXPECT_EQ(3, f.piov_copy(f._and_pwrite(), w, 2, 0));
    EXPECT_EQ("xyz34567xyz", f.data);
    EXPECT_TRUE(f.is_readf(f._and_pread()));
    EXPECT_TRUE(f.is_writef(f._and_pwrite()));
    EXPECT_FALSE(f.is_readf(f._and_pwrite()));
}

TEST(VirtualFile, AFileWithOnlyPreadvGetsPreadAndReadToo) {
    vec_only_file f;
    char buf[4] = {};
    EXPECT_EQ(3, f.pread(buf, 3, 2));
    EXPECT_EQ(0, memcmp(buf, "234", 3));
    EXPECT_EQ(7, f.lseek(-3, SEEK_END));
    EXPECT_EQ(3, f.read(buf, 4));
    EXPECT_EQ(0, memcmp(buf, "789", 3));
    EXPECT_EQ(2, f.calls);
}

TEST(VirtualReadOnlyFile, WritesAreUnsupportedAndCloseSucceeds) {
    vec_only_file f;
    EXPECT_EQ(-1, f.pwrite("x", 1, 0));
    EXPECT_EQ(ENOSYS, errno);
    EXPECT_EQ(-1, f.write("x", 1));
    EXPECT_EQ(ENOSYS, errno);
    EXPECT_EQ(-1, f.ftruncate(0));
    EXPECT_EQ(ENOSYS, errno);
    EXPECT_EQ(-1, f.fsync());
    EXPECT_EQ(0, f.close());
    EXPECT_EQ("0123456789", f.data);
}
