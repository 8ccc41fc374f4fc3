// IFileSystem over the local file system: POSIX errno values, directories,
// links and the O_DIRECT alignment rules.
#include <dirent.h>
#include <photon/fs/filesystem.h>
#include <photon/fs/localfs.h>
#include <photon/io/aio-wrapper.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <string>

#include "fs_test_util.h"

using namespace photon;
using namespace photon::fs;

namespace {

class LocalFs : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_EQ(0, photon::init(INIT_EVENT_EPOLL, INIT_IO_NONE));
        ASSERT_FALSE(dir_.path().empty());
        fs_.reset(new_localfs_adaptor(dir_.path().c_str(), ioengine_psync));
        ASSERT_TRUE(fs_);
    }
    void TearDown() override {
        fs_.reset();
        photon_test::fini_vcpu();
    }
    void touch(const char* name) {
        std::unique_ptr<IFile> f(fs_->open(name, O_CREAT | O_WRONLY, 0644));
        ASSERT_TRUE(f) << name << ": " << strerror(errno);
    }
    // -1 with `err` from a call that returns int.
    static ::testing::AssertionResult fails_with(int r, int err) {
        if (r == -1 && errno == err) return ::testing::AssertionSuccess();
        return ::testing::AssertionFailure()
               << "got " << r << " errno " << strerror(errno) << ", want " << strerror(err);
    }

    photon_test::scratch_dir dir_;
    std::unique_ptr<IFileSystem> fs_;
};

}  // namespace

TEST_F(LocalFs, OpenReportsPosixErrnos) {
    EXPECT_EQ(nullptr, fs_->open("missing", O_RDONLY));
    EXPECT_EQ(ENOENT, errno);
    touch("file");
    EXPECT_EQ(nullptr, fs_->open("file", O_CREAT | O_EXCL | O_WRONLY, 0644));
    EXPECT_EQ(EEXIST, errno);
    EXPECT_EQ(nullptr, fs_->open("file/child", O_RDONLY));
    EXPECT_EQ(ENOTDIR, errno);
    ASSERT_EQ(0, fs_->mkdir("dir", 0755));
    EXPECT_EQ(nullptr, fs_->open("dir", O_WRONLY));
    EXPECT_EQ(EISDIR, errno);
}

TEST_F(LocalFs, MetadataCallsReportPosixErrnos) {
    struct stat st;
    EXPECT_TRUE(fails_with(fs_->stat("missing", &st), ENOENT));
    EXPECT_TRUE(fails_with(fs_->unlink("missing"), ENOENT));
    EXPECT_TRUE(fails_with(fs_->access("missing", F_OK), ENOENT));
    ASSERT_EQ(0, fs_->mkdir("dir", 0755));
    EXPECT_TRUE(fails_with(fs_->mkdir("dir", 0755), EEXIST));
    EXPECT_TRUE(fails_with(fs_->unlink("dir"), EISDIR));
    touch("dir/inner");
    EXPECT_TRUE(fails_with(fs_->rmdir("dir"), ENOTEMPTY));
    touch("file");
    EXPECT_TRUE(fails_with(fs_->rmdir("file"), ENOTDIR));
    EXPECT_TRUE(fails_with(fs_->mkdir("file/sub", 0755), ENOTDIR));
    EXPECT_TRUE(fails_with(fs_->rename("file", "dir"), EISDIR));
    EXPECT_EQ(nullptr, fs_->opendir("file"));
    EXPECT_EQ(ENOTDIR, errno);
}

TEST_F(LocalFs, LinksRenameTruncateAndStat) {
    touch("a");
    ASSERT_EQ(0, fs_->truncate("a", 1234));
    ASSERT_EQ(0, fs_->link("a", "hard"));
    ASSERT_EQ(0, fs_->symlink("a", "soft"));
    char target[64] = {};
    EXPECT_EQ(1, fs_->readlink("soft", target, sizeof(target)));
    EXPECT_STREQ("a", target);
    struct stat st, lst;
    ASSERT_EQ(0, fs_->stat("soft", &st));
    EXPECT_EQ(1234, st.st_size);
    EXPECT_EQ(2u, st.st_nlink);
    ASSERT_EQ(0, fs_->lstat("soft", &lst));
    EXPECT_TRUE(S_ISLNK(lst.st_mode));
    ASSERT_EQ(0, fs_->rename("hard", "renamed"));
    EXPECT_EQ(0, fs_->access("renamed", R_OK));
    EXPECT_EQ(0, fs_->chmod("renamed", 0600));
    ASSERT_EQ(0, fs_->stat("a", &st));
    EXPECT_EQ(0600u, st.st_mode & 0777);
    struct statfs sfs;
    EXPECT_EQ(0, fs_->statfs(".", &sfs));
    struct statvfs svfs;
    EXPECT_EQ(0, fs_->statvfs(".", &svfs));
    EXPECT_EQ(0, fs_->utimes("a", nullptr));
    EXPECT_EQ(0, fs_->sync());
}

TEST_F(LocalFs, DirectoryListingSeesEveryEntryOnce) {
    ASSERT_EQ(0, fs_->mkdir("d", 0755));
    for (auto n : {"d/x", "d/y", "d/z"}) touch(n);
    std::set<std::string> seen;
    {
        FileList list(fs_->opendir("d"), true);
        ASSERT_TRUE(list.dirp);
        for (auto& ent : list) seen.insert(ent.d_name);
    }
    EXPECT_EQ((std::set<std::string>{".", "..", "x", "y", "z"}), seen);

    photon::fs::DIR* d = fs_->opendir("d");
    ASSERT_TRUE(d);
    int n = 0;
    while (fs_->readdir(d)) n++;
    EXPECT_EQ(5, n);
    struct dirent* ent;
    EXPECT_EQ(-1, fs_->readdir(d, &ent));
    fs_->rewinddir(d);
    ASSERT_EQ(0, fs_->readdir(d, &ent));
    long long second = fs_->telldir(d);
    std::string name = fs_->readdir(d)->d_name;
    fs_->seekdir(d, second);
    EXPECT_EQ(name, d->get()->d_name);
    EXPECT_EQ(0, fs_->closedir(d));
    EXPECT_EQ(nullptr, d);
}

TEST_F(LocalFs, AdaptorsOwnTheirFd) {
    std::string path = dir_ / "owned";
    int fd = ::open(path.c_str(), O_CREAT | O_RDWR, 0644);
    ASSERT_GE(fd, 0);
    IFile* f = new_localfile_adaptor(fd, ioengine_psync);
    ASSERT_TRUE(f);
    EXPECT_EQ(nullptr, f->filesystem());
    delete f;
    EXPECT_EQ(-1, fcntl(fd, F_GETFD));  // closed with the adaptor
    EXPECT_EQ(EBADF, errno);
    EXPECT_EQ(nullptr, new_localfile_adaptor(-1, ioengine_psync));
    EXPECT_EQ(EINVAL, errno);

    std::unique_ptr<IFile> g(open_localfile_adaptor(path.c_str(), O_RDONLY, 0, ioengine_psync));
    ASSERT_TRUE(g);
    std::unique_ptr<IFileSystem> plain(new_localfs_adaptor());
    std::unique_ptr<IFile> h(plain->open(path.c_str(), O_RDONLY));
    ASSERT_TRUE(h);
    EXPECT_EQ(plain.get(), h->filesystem());
    // fiemap is the kernel's FS_IOC_FIEMAP: a null map is EFAULT, or EOPNOTSUPP first on a file
    // system without FIEMAP (tmpfs).
    EXPECT_EQ(-1, h->fiemap(nullptr));
    EXPECT_TRUE(errno == EFAULT || errno == EOPNOTSUPP) << strerror(errno);
}

TEST_F(LocalFs, DirectIoRejectsUnalignedRequestsWithEinval) {
    if (dir_.on_tmpfs()) GTEST_SKIP() << "O_DIRECT needs a real file system";
    std::unique_ptr<IFile> f(fs_->open("direct", O_CREAT | O_RDWR | O_DIRECT, 0644));
    ASSERT_TRUE(f) << strerror(errno);
    void* p = nullptr;
    ASSERT_EQ(0, posix_memalign(&p, 4096, 8192));
    std::unique_ptr<char, decltype(&free)> buf(static_cast<char*>(p), &free);
    ASSERT_EQ(4096, f->pwrite(buf.get(), 4096, 0));
    EXPECT_EQ(-1, f->pread(buf.get() + 1, 4096, 0));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, f->pwrite(buf.get(), 100, 0));
    EXPECT_EQ(EINVAL, errno);
}

TEST_F(LocalFs, LibaioNeedsAlignmentAndSaysEinval) {
    if (auto why = photon_test::io_engine_missing(ioengine_libaio)) GTEST_SKIP() << why;
    if (dir_.on_tmpfs()) GTEST_SKIP() << "O_DIRECT needs a real file system";
    std::unique_ptr<IFileSystem> aio(new_localfs_adaptor(dir_.path().c_str(), ioengine_libaio));
    ASSERT_TRUE(aio);
    std::unique_ptr<IFile> f(aio->open("aio", O_CREAT | O_RDWR, 0644));
    ASSERT_TRUE(f) << strerror(errno);
    void* p = nullptr;
    ASSERT_EQ(0, posix_memalign(&p, 4096, 8192));
    std::unique_ptr<char, decltype(&free)> buf(static_cast<char*>(p), &free);
    memset(buf.get(), 'q', 8192);
    EXPECT_EQ(-1, f->pwrite(buf.get() + 3, 4096, 0));  // buffer
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, f->pwrite(buf.get(), 4096, 7));  // offset
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, f->pread(buf.get(), 1000, 0));  // size
    EXPECT_EQ(EINVAL, errno);
    ASSERT_EQ(4096, f->pwrite(buf.get(), 4096, 0));
    ASSERT_EQ(4096, f->pread(buf.get() + 4096, 4096, 0));
    EXPECT_EQ(0, memcmp(buf.get(), buf.get() + 4096, 4096));
}
