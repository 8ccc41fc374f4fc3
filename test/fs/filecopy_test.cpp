// filecopy: whole copies through short reads, retries, O_DIRECT outputs with
// an unaligned tail, and outputs that were longer before.
#include <photon/fs/filecopy.h>

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include <photon/fs/localfs.h>

#include "../net/net_test_util.h"
#include "fs_test_util.h"
#include "mem_file.h"

using namespace photon;
using namespace photon::fs;
using photon_test::mem_file;
using photon_test::pattern;

TEST(FileCopy, CopiesEverythingThoughReadsComeUpShort) {
    mem_file in(pattern(1000000, 1)), out;
    in.max_io = 7777;  // Photon stopped at the first short read
    EXPECT_EQ(1000000, filecopy(&in, &out, 65536));
    EXPECT_TRUE(in.data == out.data);
    mem_file empty;
    EXPECT_EQ(0, filecopy(&empty, &out));
    EXPECT_TRUE(out.data.empty());  // truncated to what was copied
}

TEST(FileCopy, ALongerOutputIsCutToTheInputsSize) {
    mem_file in("short"), out(pattern(100000, 2));
    EXPECT_EQ(5, filecopy(&in, &out, 3));  // bs needs no alignment
    EXPECT_EQ("short", out.data);
}

TEST(FileCopy, ShortWritesAreResumed) {
    mem_file in(pattern(300000, 3)), out;
    out.max_io = 1000;
    EXPECT_EQ(300000, filecopy(&in, &out, 65536));
    EXPECT_TRUE(in.data == out.data);
}

TEST(FileCopy, FailuresAreRetriedThenReportedWithTheirErrno) {
    mem_file in(pattern(100000, 4)), out;
    in.fail_next = 3;
    EXPECT_EQ(100000, filecopy(&in, &out, 4096, 5));
    EXPECT_TRUE(in.data == out.data);
    in.fail_next = 10;
    in.fail_errno = ENOLINK;
    EXPECT_EQ(-1, filecopy(&in, &out, 4096, 5));
    EXPECT_EQ(ENOLINK, errno);  // Photon: EIO
    in.fail_next = 0;
    out.fail_next = 6;
    out.fail_errno = ENOSPC;
    EXPECT_EQ(-1, filecopy(&in, &out, 4096, 5));
    EXPECT_EQ(ENOSPC, errno);
}

TEST(FileCopy, AnOutputThatTakesNothingFails) {
    mem_file in("abc"), out;
    out.fixed_size = true;  // size 0: every write takes 0 bytes
    EXPECT_EQ(-1, filecopy(&in, &out));
    EXPECT_EQ(EIO, errno);
}

TEST(FileCopy, BadArgumentsFail) {
    mem_file f;
    EXPECT_EQ(-1, filecopy(nullptr, &f));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, filecopy(&f, nullptr));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, filecopy(&f, &f, 0));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, filecopy(&f, &f, SIZE_MAX));
    EXPECT_EQ(ENOMEM, errno);
}

// An O_DIRECT output takes aligned writes only: the unaligned tail goes
// padded, and the file is then cut to the true size.
TEST(FileCopy, AnODirectOutputGetsItsTailPaddedThenTruncated) {
    ASSERT_EQ(0, photon::init(INIT_EVENT_EPOLL, INIT_IO_NONE));
    {
        photon_test::scratch_dir dir;
        if (dir.on_tmpfs()) {
            photon::fini();
            GTEST_SKIP() << "O_DIRECT needs a real file system; set PHOTON_TEST_FS_DIR";
        }
        std::unique_ptr<IFileSystem> fs(new_localfs_adaptor(dir.path().c_str()));
        std::unique_ptr<IFile> out(fs->open("out", O_CREAT | O_RDWR | O_DIRECT | O_TRUNC, 0644));
        if (!out && errno == EINVAL) {
            photon::fini();
            GTEST_SKIP() << "this file system refuses O_DIRECT";
        }
        ASSERT_TRUE(out);
        mem_file in(pattern(3 * 65536 + 1234, 5));
        EXPECT_EQ((ssize_t)in.data.size(), filecopy(&in, out.get(), 65536));
        out.reset();
        struct stat st;
        ASSERT_EQ(0, ::stat((dir / "out").c_str(), &st));
        EXPECT_EQ((off_t)in.data.size(), st.st_size);
        std::unique_ptr<IFile> back(fs->open("out", O_RDONLY));
        std::string got(in.data.size(), '\0');
        ASSERT_EQ((ssize_t)got.size(), back->pread(&got[0], got.size(), 0));
        EXPECT_TRUE(got == in.data);
    }
    EXPECT_EQ(0, photon::fini());
}
