// forwardfs.h: decorators that override one call pass every other call to
// the wrapped file / file system, and the _Ownership forms own it.
#include <photon/fs/forwardfs.h>

#include <dirent.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>

#include <photon/fs/localfs.h>

#include "fs_test_util.h"
#include "mem_file.h"

using namespace photon;
using namespace photon::fs;
using photon_test::mem_file;

namespace {

struct tracked_file : mem_file {
    bool* deleted;
    explicit tracked_file(bool* d) : mem_file("0123456789"), deleted(d) {}
    ~tracked_file() override { *deleted = true; }
    int fadvise(off_t, off_t, int advice) override { return advice; }
    int vioctl(int request, va_list) override { return request + 1; }
};

// Counts preads, forwards everything.
struct counting_file : ForwardFile_Ownership {
    counting_file(IFile* f, bool own) : ForwardFile_Ownership(f, own) {}
    int preads = 0;
    ssize_t pread(void* buf, size_t n, off_t off) override {
        preads++;
        return m_file->pread(buf, n, off);
    }
};

struct plain_forward : ForwardFile {
    explicit plain_forward(IFile* f) : ForwardFile(f) {}
};

// Refuses unlink, forwards everything else.
struct no_unlink_fs : ForwardFS_Ownership {
    no_unlink_fs(IFileSystem* fs, bool own) : ForwardFS_Ownership(fs, own) {}
    int unlink(const char*) override {
        errno = EPERM;
        return -1;
    }
};

}  // namespace

TEST(ForwardFile, EveryCallReachesTheWrappedFile) {
    bool deleted = false;
    auto inner = new tracked_file(&deleted);
    {
        counting_file* c = new counting_file(inner, true);
        std::unique_ptr<IFile> f(c);
        char buf[8] = {};
        EXPECT_EQ(3, f->pread(buf, 3, 2));
        EXPECT_EQ(1, c->preads);
        EXPECT_EQ(2, f->pwrite("ab", 2, 10));
        EXPECT_EQ("0123456789ab", inner->data);
        struct iovec v[] = {{buf, 2}, {buf + 2, 2}};
        EXPECT_EQ(4, f->preadv(v, 2, 0));
        EXPECT_EQ(0, memcmp(buf, "0123", 4));
        EXPECT_EQ(4, f->pwritev(v, 2, 12));
        EXPECT_EQ(4, f->lseek(4, SEEK_SET));
        EXPECT_EQ(2, f->read(buf, 2));
        EXPECT_EQ(0, memcmp(buf, "45", 2));
        struct stat st;
        ASSERT_EQ(0, f->fstat(&st));
        EXPECT_EQ(16, st.st_size);
        EXPECT_EQ(0, f->ftruncate(5));
        EXPECT_EQ("01234", inner->data);
        EXPECT_EQ(0, f->fsync());
        EXPECT_EQ(0, f->fdatasync());
        EXPECT_EQ(2, inner->syncs);
        EXPECT_EQ(7, f->fadvise(0, 0, 7));
        EXPECT_EQ(43, f->ioctl(42));
        EXPECT_EQ(-1, f->fallocate(0, 0, 1));  // the wrapped file's ENOSYS
        EXPECT_EQ(ENOSYS, errno);
        EXPECT_EQ(nullptr, f->filesystem());
        EXPECT_EQ(inner, f->get_underlay_object());
        EXPECT_EQ(0, f->close());
        EXPECT_EQ(1, inner->closes);
        EXPECT_FALSE(deleted);
    }
    EXPECT_TRUE(deleted);  // owned: deleted with the decorator
}

TEST(ForwardFile, WithoutOwnershipTheFileStaysOpenAndAlive) {
    bool deleted = false;
    tracked_file inner(&deleted);
    {
        std::unique_ptr<IFile> f(new counting_file(&inner, false));
        EXPECT_EQ(0, f->close());  // not ours to close
        EXPECT_EQ(0, inner.closes);
    }
    EXPECT_FALSE(deleted);
    {
        std::unique_ptr<IFile> f(new plain_forward(&inner));
        EXPECT_EQ(0, f->close());  // the plain form always forwards
        EXPECT_EQ(1, inner.closes);
    }
    EXPECT_FALSE(deleted);
}

TEST(ForwardFS, EveryCallReachesTheWrappedFileSystem) {
    ASSERT_EQ(0, photon::init(INIT_EVENT_EPOLL, INIT_IO_NONE));
    {
        photon_test::scratch_dir dir;
        ASSERT_FALSE(dir.path().empty());
        std::unique_ptr<IFileSystem> fs(
            new no_unlink_fs(new_localfs_adaptor(dir.path().c_str()), true));
        ASSERT_EQ(0, fs->mkdir("d", 0755));
        std::unique_ptr<IFile> f(fs->open("d/f", O_CREAT | O_RDWR, 0644));
        ASSERT_TRUE(f);
        EXPECT_EQ(3, f->pwrite("abc", 3, 0));
        f.reset(fs->creat("g", 0600));
        ASSERT_TRUE(f);
        struct stat st;
        ASSERT_EQ(0, fs->stat("d/f", &st));
        EXPECT_EQ(3, st.st_size);
        ASSERT_EQ(0, fs->symlink("d/f", "l"));
        ASSERT_EQ(0, fs->lstat("l", &st));
        EXPECT_TRUE(S_ISLNK(st.st_mode));
        char target[16] = {};
        EXPECT_EQ(3, fs->readlink("l", target, sizeof(target)));
        EXPECT_EQ(0, fs->rename("d/f", "d/h"));
        EXPECT_EQ(0, fs->link("d/h", "d/i"));
        EXPECT_EQ(0, fs->truncate("d/h", 1));
        EXPECT_EQ(0, fs->chmod("d/h", 0600));
        EXPECT_EQ(0, fs->access("d/h", R_OK));
        EXPECT_EQ(-1, fs->unlink("d/h"));  // the decorator's own
        EXPECT_EQ(EPERM, errno);
        std::set<std::string> names;
        std::unique_ptr<photon::fs::DIR> d(fs->opendir("d"));
        ASSERT_TRUE(d);
        for (auto& e : FileList(d.get())) names.insert(e.d_name);
        EXPECT_EQ(1u, names.count("h"));
        EXPECT_EQ(1u, names.count("i"));
        struct statfs sfs;
        EXPECT_EQ(0, fs->statfs("d", &sfs));
        EXPECT_EQ(0, fs->syncfs());
        EXPECT_NE(nullptr, fs->get_underlay_object());
        EXPECT_EQ(-1, fs->rmdir("d"));
        EXPECT_EQ(ENOTEMPTY, errno);
    }
    EXPECT_EQ(0, photon::fini());
}
