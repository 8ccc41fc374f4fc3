// The aligned-file adaptor makes unaligned I/O work on an O_DIRECT file.
#include <photon/fs/aligned-file.h>
#include <photon/fs/localfs.h>

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <string>

#include "fs_test_util.h"

using namespace photon;
using namespace photon::fs;

namespace {

class AlignedFile : public ::testing::TestWithParam<int> {
protected:
    void SetUp() override {
        if (auto why = photon_test::io_engine_missing(GetParam())) GTEST_SKIP() << why;
        ASSERT_EQ(0, photon::init(INIT_EVENT_EPOLL, INIT_IO_NONE));
        ASSERT_FALSE(dir_.path().empty());
        if (dir_.on_tmpfs()) GTEST_SKIP() << "O_DIRECT needs a real file system";
        auto local = new_localfs_adaptor(dir_.path().c_str(), GetParam());
        ASSERT_TRUE(local);
        fs_.reset(new_aligned_fs_adaptor(local, 4096, true, true));
        ASSERT_TRUE(fs_);
    }
    void TearDown() override {
        fs_.reset();
        photon_test::fini_vcpu();
    }
    photon_test::scratch_dir dir_;
    std::unique_ptr<IFileSystem> fs_;
};

}  // namespace

// Random unaligned writes (odd sizes, odd offsets, unaligned buffers) against
// a shadow copy; the file ends exactly where the furthest write ended.
TEST_P(AlignedFile, UnalignedWritesAndReadsMatchAShadowCopy) {
    std::unique_ptr<IFile> f(fs_->open("f", O_CREAT | O_RDWR | O_DIRECT | O_TRUNC, 0644));
    ASSERT_TRUE(f) << strerror(errno);
    std::mt19937 rng(42);
    std::string shadow;
    std::string buf(20000, '\0');
    for (int i = 0; i < 200; i++) {
        size_t len = 1 + rng() % 9000, off = rng() % 50000;
        for (size_t k = 0; k < len; k++) buf[1 + k] = (char)rng();
        ASSERT_EQ((ssize_t)len, f->pwrite(&buf[1], len, off)) << strerror(errno);
        if (shadow.size() < off + len) shadow.resize(off + len, '\0');
        memcpy(&shadow[off], &buf[1], len);
    }
    struct stat st;
    ASSERT_EQ(0, f->fstat(&st));
    EXPECT_EQ((off_t)shadow.size(), st.st_size);
    for (int i = 0; i < 200; i++) {
        size_t len = 1 + rng() % 9000, off = rng() % (shadow.size() + 100);
        size_t want = off >= shadow.size() ? 0 : std::min(len, shadow.size() - off);
        ASSERT_EQ((ssize_t)want, f->pread(&buf[3], len, off));
        EXPECT_EQ(0, memcmp(&buf[3], shadow.data() + off, want)) << off << "+" << len;
    }
    iovec v[2] = {{&buf[1], 3}, {&buf[100], 5000}};
    ASSERT_EQ(5003, f->preadv(v, 2, 7));
    EXPECT_EQ(0, memcmp(&buf[1], shadow.data() + 7, 3));
    EXPECT_EQ(0, memcmp(&buf[100], shadow.data() + 10, 5000));
    EXPECT_EQ(5003, f->pwritev(v, 2, 11));
}

TEST_P(AlignedFile, StreamCallsKeepTheirOwnPosition) {
    std::unique_ptr<IFile> f(fs_->open("s", O_CREAT | O_RDWR | O_DIRECT | O_TRUNC, 0644));
    ASSERT_TRUE(f) << strerror(errno);
    ASSERT_EQ(5, f->write("hello", 5));
    ASSERT_EQ(6, f->write(" world", 6));
    EXPECT_EQ(11, f->lseek(0, SEEK_END));
    ASSERT_EQ(6, f->lseek(6, SEEK_SET));
    char out[16] = {};
    EXPECT_EQ(5, f->read(out, sizeof(out)));
    EXPECT_STREQ("world", out);
    EXPECT_EQ(0, f->read(out, sizeof(out)));
}

TEST(AlignedFileAdaptor, RejectsAnAlignmentThatIsNotAPowerOfTwo) {
    EXPECT_EQ(nullptr, new_aligned_file_adaptor(nullptr, 4096, true));
    EXPECT_EQ(EINVAL, errno);
    std::unique_ptr<IFileSystem> local(new_localfs_adaptor());
    EXPECT_EQ(nullptr, new_aligned_fs_adaptor(local.get(), 3000, true, false));
    EXPECT_EQ(EINVAL, errno);
}

INSTANTIATE_TEST_SUITE_P(Engines, AlignedFile,
                         ::testing::Values(ioengine_psync, ioengine_libaio, ioengine_iouring),
                         [](const ::testing::TestParamInfo<int>& i) {
                             return std::string(photon_test::io_engine_name(i.param));
                         });
