// extfs, files and directories: a tree of directories, files of many sizes,
// sparse files, symlinks, hard links, renames and unlinks, written through
// new_extfs with and without the block cache, reads back byte for byte and
// e2fsprogs' tools (fsck.ext4 -fn, debugfs) agree from outside; bad paths
// give their errno; the file calls, attributes and xattrs; an unlinked open
// file; the cache reaching the image; eight coroutines writing at once. The
// image itself (making, backing files, resizing, corruption) is in
// extfs_image_test.cpp.
#include <photon/fs/extfs/extfs.h>
#include <photon/thread/thread.h>

#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "extfs_test_util.h"

using namespace photon;
using namespace photon::fs;
using namespace photon_test;

namespace {

// The tree written by the data test, and what it should hold afterwards.
struct model {
    std::map<std::string, std::string> files;  // path -> content
    std::map<std::string, std::string> links;  // symlink -> target
    std::set<std::string> dirs;
};

class ExtFsTree : public ExtFs, public ::testing::WithParamInterface<bool> {
protected:
    model write_tree() {
        model m;
        for (const char* d : {"/tree", "/tree/a", "/tree/a/b", "/tree/a/b/c", "/tree/big",
                              "/tree/gone", "/tree/moved-from"}) {
            EXPECT_EQ(0, fs_->mkdir(d, 0755)) << d;
            m.dirs.insert(d);
        }
        size_t sizes[] = {0, 1, 100, 4095, 4096, 4097, 65536 + 7, MiB + 123, 5 * MiB + 1};
        unsigned seed = 1;
        for (size_t s : sizes) {
            std::string p = "/tree/a/f" + std::to_string(s);
            std::string data = pattern(s, seed++);
            write_file(p, data);
            m.files[p] = data;
        }
        // Enough entries that the directory needs more than one block.
        for (int i = 0; i < 300; i++) {
            std::string p = "/tree/big/entry-with-a-long-name-" + std::to_string(i);
            std::string data = pattern(i, seed++);
            write_file(p, data);
            m.files[p] = data;
        }
        // A sparse file: bytes at 0, at 10 MiB and at 40 MiB + 1, holes between.
        std::string sparse(40 * MiB + 1 + 5000, '\0');
        std::string a = pattern(3000, 77), b = pattern(4096, 78), c = pattern(5000, 79);
        write_file("/tree/sparse", a, 0);
        write_file("/tree/sparse", b, 10 * MiB);
        write_file("/tree/sparse", c, 40 * MiB + 1);
        sparse.replace(0, a.size(), a);
        sparse.replace(10 * MiB, b.size(), b);
        sparse.replace(40 * MiB + 1, c.size(), c);
        m.files["/tree/sparse"] = sparse;

        EXPECT_EQ(0, fs_->symlink("a/f4097", "/tree/link-rel"));
        EXPECT_EQ(0, fs_->symlink("/tree/a/b", "/tree/link-dir"));
        std::string long_target;  // a slow symlink (over 60 bytes)
        for (int i = 0; i < 100; i++) long_target += "dir/";
        EXPECT_EQ(0, fs_->symlink(long_target.c_str(), "/tree/link-long"));
        m.links = {{"/tree/link-rel", "a/f4097"},
                   {"/tree/link-dir", "/tree/a/b"},
                   {"/tree/link-long", long_target}};

        EXPECT_EQ(0, fs_->link("/tree/a/f100", "/tree/hard"));
        m.files["/tree/hard"] = m.files["/tree/a/f100"];

        EXPECT_EQ(0, fs_->rename("/tree/a/f1", "/tree/a/b/c/renamed"));
        m.files["/tree/a/b/c/renamed"] = m.files["/tree/a/f1"];
        m.files.erase("/tree/a/f1");
        write_file("/tree/moved-from/x", "inside");
        EXPECT_EQ(0, fs_->rename("/tree/moved-from", "/tree/a/moved"));
        m.dirs.erase("/tree/moved-from");
        m.dirs.insert("/tree/a/moved");
        m.files["/tree/a/moved/x"] = "inside";
        // Over an existing file: the old one goes.
        write_file("/tree/a/replaced", "old");
        write_file("/tree/a/replacer", "new");
        EXPECT_EQ(0, fs_->rename("/tree/a/replacer", "/tree/a/replaced"));
        m.files["/tree/a/replaced"] = "new";

        EXPECT_EQ(0, fs_->unlink("/tree/a/f4096"));
        m.files.erase("/tree/a/f4096");
        EXPECT_EQ(0, fs_->rmdir("/tree/gone"));
        m.dirs.erase("/tree/gone");
        return m;
    }

    void check_inside(const model& m) {
        for (auto& kv : m.files) {
            std::string got = read_file(kv.first);
            EXPECT_TRUE(got == kv.second)
                << kv.first << ": " << got.size() << " bytes, expected " << kv.second.size();
        }
        for (auto& kv : m.links) {
            char buf[4096];
            ssize_t n = fs_->readlink(kv.first.c_str(), buf, sizeof(buf));
            ASSERT_GT(n, 0) << kv.first;
            EXPECT_EQ(kv.second, std::string(buf, n));
        }
        for (auto& d : m.dirs) {
            struct stat st;
            ASSERT_EQ(0, fs_->stat(d.c_str(), &st)) << d;
            EXPECT_TRUE(S_ISDIR(st.st_mode)) << d;
        }
        EXPECT_EQ(m.files.at("/tree/a/f4097"), read_file("/tree/link-rel"));  // through the link
        struct stat st;
        ASSERT_EQ(0, fs_->stat("/tree/hard", &st));
        EXPECT_EQ(2u, st.st_nlink);
        ASSERT_EQ(0, fs_->stat("/tree/sparse", &st));
        EXPECT_LT((uint64_t)st.st_blocks * 512, 1 * MiB);  // the holes take no blocks
        EXPECT_EQ(-1, fs_->stat("/tree/a/f4096", &st));
        EXPECT_EQ(ENOENT, errno);
    }

    // What debugfs's rdump makes of /tree matches the model.
    void check_outside(const model& m) {
        std::string out, host = dir_ / "rdump";
        ASSERT_EQ(0, ::mkdir(host.c_str(), 0755));
        ASSERT_EQ(0, run(debugfs_ + " -R 'rdump /tree " + host + "' " + image_, &out)) << out;
        size_t found = 0;
        for (auto& e : std::filesystem::recursive_directory_iterator(host)) {
            std::string rel = "/" + e.path().lexically_relative(host).string();
            if (e.is_symlink()) {
                ASSERT_TRUE(m.links.count(rel)) << rel;
                EXPECT_EQ(m.links.at(rel), std::filesystem::read_symlink(e.path()).string());
            } else if (e.is_directory()) {
                EXPECT_TRUE(m.dirs.count(rel)) << rel;
            } else {
                ASSERT_TRUE(m.files.count(rel)) << rel;
                std::ifstream in(e.path(), std::ios::binary);
                std::string data((std::istreambuf_iterator<char>(in)),
                                 std::istreambuf_iterator<char>());
                EXPECT_TRUE(data == m.files.at(rel)) << rel;
            }
            found++;
        }
        EXPECT_EQ(m.files.size() + m.links.size() + m.dirs.size(), found);
    }
};

TEST_P(ExtFsTree, WritesATreeThatReadsBackAndE2fsprogsAgrees) {
    skip_without_tools();
    make();
    mount(GetParam());
    model m = write_tree();
    check_inside(m);
    unmount();
    expect_fsck_clean();
    check_outside(m);
    mount(!GetParam());  // the other cache mode reads the same
    check_inside(m);
    unmount();
    expect_fsck_clean();
}

INSTANTIATE_TEST_SUITE_P(Buffer, ExtFsTree, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& i) {
                             return i.param ? "Cached" : "Direct";
                         });

TEST_F(ExtFs, BadPathsGiveTheirErrno) {
    make();
    mount(true);
    ASSERT_EQ(0, fs_->mkdir("/d", 0755));
    write_file("/d/file", "x");
    struct stat st;
    auto expect_errno = [](int e, bool failed, const char* what) {
        EXPECT_TRUE(failed) << what;
        EXPECT_EQ(e, errno) << what << ": " << strerror(errno);
    };
    expect_errno(ENOENT, !fs_->open("/missing", O_RDONLY), "open missing");
    expect_errno(ENOENT, fs_->stat("/d/missing", &st) == -1, "stat missing");
    expect_errno(ENOENT, fs_->mkdir("/no/such", 0755) == -1, "mkdir under missing");
    expect_errno(ENOENT, fs_->unlink("/d/missing") == -1, "unlink missing");
    expect_errno(ENOENT, fs_->rename("/d/missing", "/d/x") == -1, "rename missing");
    expect_errno(EEXIST, fs_->mkdir("/d", 0755) == -1, "mkdir existing");
    expect_errno(EEXIST, fs_->mkdir("/", 0755) == -1, "mkdir /");
    expect_errno(EEXIST, !fs_->open("/d/file", O_CREAT | O_EXCL | O_RDWR, 0644), "O_EXCL");
    expect_errno(EEXIST, fs_->symlink("x", "/d/file") == -1, "symlink over a file");
    expect_errno(EEXIST, fs_->link("/d/file", "/d/file") == -1, "link over a file");
    expect_errno(ENOTDIR, !fs_->open("/d/file/x", O_RDONLY), "open through a file");
    expect_errno(ENOTDIR, fs_->mkdir("/d/file/x", 0755) == -1, "mkdir under a file");
    expect_errno(ENOTDIR, !fs_->opendir("/d/file"), "opendir a file");
    expect_errno(ENOTDIR, !fs_->open("/d/file", O_RDONLY | O_DIRECTORY), "O_DIRECTORY");
    expect_errno(ENOTDIR, fs_->rmdir("/d/file") == -1, "rmdir a file");
    expect_errno(ENOTDIR, fs_->stat("/d/file/", &st) == -1, "file with a slash");
    expect_errno(EISDIR, !fs_->open("/d", O_RDWR), "open a dir for writing");
    expect_errno(EISDIR, fs_->unlink("/d") == -1, "unlink a dir");
    expect_errno(EISDIR, fs_->truncate("/d", 0) == -1, "truncate a dir");
    ASSERT_EQ(0, fs_->mkdir("/e", 0755));
    write_file("/e/x", "y");
    expect_errno(ENOTEMPTY, fs_->rmdir("/d") == -1, "rmdir non-empty");
    expect_errno(ENOTEMPTY, fs_->rename("/d", "/e") == -1, "rename over non-empty");
    expect_errno(EISDIR, fs_->rename("/d/file", "/e") == -1, "file over a dir");
    expect_errno(ENOTDIR, fs_->rename("/e", "/d/file") == -1, "dir over a file");
    ASSERT_EQ(0, fs_->mkdir("/d/sub", 0755));
    expect_errno(EINVAL, fs_->rename("/d", "/d/sub/d") == -1, "a dir into itself");
    expect_errno(EINVAL, fs_->readlink("/d/file", nullptr, 0) == -1, "readlink a file");
    expect_errno(EPERM, fs_->link("/d", "/d2") == -1, "hard link a dir");
    std::string long_name(300, 'n');
    expect_errno(ENAMETOOLONG, !fs_->open(("/" + long_name).c_str(), O_CREAT | O_RDWR, 0644),
                 "long name");
    std::unique_ptr<IFile> ro(fs_->open("/d/file", O_RDONLY));
    ASSERT_TRUE(ro);
    expect_errno(EBADF, ro->pwrite("z", 1, 0) == -1, "write a read-only file");
    std::unique_ptr<IFile> dir(fs_->open("/d", O_RDONLY));
    ASSERT_TRUE(dir);
    char c;
    expect_errno(EISDIR, dir->pread(&c, 1, 0) == -1, "read a dir");
    // A dir moved elsewhere keeps working, with its ".." updated.
    ASSERT_EQ(0, fs_->rename("/d/sub", "/e/sub"));
    ASSERT_EQ(0, fs_->stat("/e/sub/..", &st));
    struct stat e;
    ASSERT_EQ(0, fs_->stat("/e", &e));
    EXPECT_EQ(e.st_ino, st.st_ino);
    EXPECT_EQ(3u, e.st_nlink);
    dir.reset();
    ro.reset();
    unmount();
    skip_without_tools();
    expect_fsck_clean();
}

// FileCallsAttributesAndXattrs, in steps on one file /f, each building on
// the ones before it.

// Writes, reads and seeks; a gathered write past the end leaves a gap of zeros.
void write_and_read_back(IFile* f) {
    EXPECT_EQ(5, f->write("hello", 5));
    EXPECT_EQ(6, f->write(" world", 6));
    EXPECT_EQ(0, f->lseek(0, SEEK_SET));
    char buf[64] = {};
    EXPECT_EQ(11, f->read(buf, sizeof(buf)));
    EXPECT_STREQ("hello world", buf);
    EXPECT_EQ(0, f->read(buf, sizeof(buf)));
    EXPECT_EQ(11, f->lseek(0, SEEK_END));
    struct iovec iov[2] = {{(void*)"ab", 2}, {(void*)"cd", 2}};
    EXPECT_EQ(4, f->pwritev(iov, 2, 20));
    char x[2], y[2];
    struct iovec riov[2] = {{x, 2}, {y, 2}};
    EXPECT_EQ(4, f->preadv(riov, 2, 20));
    EXPECT_EQ(0, memcmp(x, "ab", 2));
    EXPECT_EQ(0, memcmp(y, "cd", 2));
    EXPECT_EQ(9, f->pread(buf, 9, 11));
    EXPECT_EQ(std::string(9, '\0'), std::string(buf, 9));  // the gap reads as zeros
}

// Truncation, then mode, owner and times, through the file and by path.
void truncate_and_set_attributes(IFileSystem* fs, IFile* f) {
    char buf[64] = {};
    EXPECT_EQ(0, f->ftruncate(5));
    struct stat st;
    ASSERT_EQ(0, f->fstat(&st));
    EXPECT_EQ(5, st.st_size);
    EXPECT_EQ(0640u, st.st_mode & 07777);
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_EQ(geteuid(), st.st_uid);
    EXPECT_EQ(0, f->ftruncate(8192));
    EXPECT_EQ(3, f->pread(buf, 3, 4));
    EXPECT_EQ(std::string("o\0\0", 3), std::string(buf, 3));  // cut bytes do not come back
    EXPECT_EQ(0, f->fchmod(0600));
    EXPECT_EQ(0, f->fchown(1234, 5678));
    ASSERT_EQ(0, fs->stat("/f", &st));
    EXPECT_EQ(0600u, st.st_mode & 07777);
    EXPECT_EQ(1234u, st.st_uid);
    EXPECT_EQ(5678u, st.st_gid);
    struct timeval tv[2] = {{1000000000, 250000}, {1200000000, 500000}};
    EXPECT_EQ(0, fs->utimes("/f", tv));
    ASSERT_EQ(0, fs->stat("/f", &st));
    EXPECT_EQ(1000000000, st.st_atim.tv_sec);
    EXPECT_EQ(250000000, st.st_atim.tv_nsec);
    EXPECT_EQ(1200000000, st.st_mtim.tv_sec);
    EXPECT_EQ(500000000, st.st_mtim.tv_nsec);
}

// fallocate grows the file; a punched hole reads as zeros.
void allocate_and_punch_a_hole(IFile* f) {
    char buf[64] = {};
    struct stat st;
    EXPECT_EQ(0, f->fallocate(0, 0, 1 * MiB));
    ASSERT_EQ(0, f->fstat(&st));
    EXPECT_EQ((off_t)MiB, st.st_size);
    EXPECT_EQ(3, f->pread(buf, 3, 8192));
    EXPECT_EQ(std::string(3, '\0'), std::string(buf, 3));
    EXPECT_EQ(5, f->pwrite("12345", 5, 100000));
    EXPECT_EQ(0, f->fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 4096, 200000));
    EXPECT_EQ(5, f->pread(buf, 5, 100000));
    EXPECT_EQ(std::string(5, '\0'), std::string(buf, 5));
    EXPECT_EQ(5, f->pread(buf, 5, 0));
    EXPECT_EQ(std::string("hello"), std::string(buf, 5));
}

void check_xattrs(IFileSystem* fs, IFile* f) {
    char buf[64] = {};
    auto* xf = dynamic_cast<IFileXAttr*>(f);
    auto* xfs = dynamic_cast<IFileSystemXAttr*>(fs);
    ASSERT_TRUE(xf && xfs);
    EXPECT_EQ(0, xf->fsetxattr("user.a", "1", 1, 0));
    EXPECT_EQ(0, xfs->setxattr("/f", "user.bb", "22", 2, XATTR_CREATE));
    EXPECT_EQ(-1, xfs->setxattr("/f", "user.bb", "22", 2, XATTR_CREATE));
    EXPECT_EQ(EEXIST, errno);
    EXPECT_EQ(-1, xfs->setxattr("/f", "user.cc", "3", 1, XATTR_REPLACE));
    EXPECT_EQ(ENODATA, errno);
    EXPECT_EQ(2, xfs->getxattr("/f", "user.bb", nullptr, 0));
    EXPECT_EQ(2, xf->fgetxattr("user.bb", buf, sizeof(buf)));
    EXPECT_EQ(0, memcmp(buf, "22", 2));
    EXPECT_EQ(-1, xfs->getxattr("/f", "user.bb", buf, 1));
    EXPECT_EQ(ERANGE, errno);
    ssize_t n = xfs->listxattr("/f", buf, sizeof(buf));
    EXPECT_EQ(std::string("user.a\0user.bb\0", 15), std::string(buf, n > 0 ? n : 0));
    EXPECT_EQ(0, xfs->removexattr("/f", "user.a"));
    EXPECT_EQ(-1, xf->fgetxattr("user.a", buf, sizeof(buf)));
    EXPECT_EQ(ENODATA, errno);
    EXPECT_EQ(-1, xf->fremovexattr("user.a"));
    EXPECT_EQ(ENODATA, errno);
}

// Device nodes, a fifo and a symlink to /f (owned by 1234 by now).
void make_special_files(IFileSystem* fs) {
    struct stat st;
    EXPECT_EQ(0, fs->mknod("/fifo", S_IFIFO | 0644, 0));
    EXPECT_EQ(0, fs->mknod("/chr", S_IFCHR | 0600, makedev(1, 3)));
    EXPECT_EQ(0, fs->mknod("/blk", S_IFBLK | 0600, makedev(259, 70000)));
    ASSERT_EQ(0, fs->lstat("/fifo", &st));
    EXPECT_TRUE(S_ISFIFO(st.st_mode));
    ASSERT_EQ(0, fs->lstat("/chr", &st));
    EXPECT_EQ(makedev(1, 3), st.st_rdev);
    ASSERT_EQ(0, fs->lstat("/blk", &st));
    EXPECT_EQ(makedev(259, 70000), st.st_rdev);
    EXPECT_EQ(0, fs->symlink("/f", "/sl"));
    EXPECT_EQ(0, fs->lchown("/sl", 42, 43));
    ASSERT_EQ(0, fs->lstat("/sl", &st));
    EXPECT_TRUE(S_ISLNK(st.st_mode));
    EXPECT_EQ(42u, st.st_uid);
    ASSERT_EQ(0, fs->stat("/sl", &st));
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_EQ(1234u, st.st_uid);
    EXPECT_EQ(0, fs->access("/f", F_OK));
    EXPECT_EQ(-1, fs->access("/nope", F_OK));
    EXPECT_EQ(ENOENT, errno);
}

// An O_APPEND handle, left open in *app as the test had it, and a read-only one.
void append_and_read_only(IFileSystem* fs, std::unique_ptr<IFile>* app) {
    struct stat st;
    app->reset(fs->open("/f", O_WRONLY | O_APPEND));
    ASSERT_TRUE(*app);
    EXPECT_EQ(3, (*app)->pwrite("end", 3, 0));  // O_APPEND: at the end, as Linux does
    ASSERT_EQ(0, fs->stat("/f", &st));
    EXPECT_EQ((off_t)MiB + 3, st.st_size);
    std::unique_ptr<IFile> ro(fs->open("/f", O_RDONLY));
    ASSERT_TRUE(ro);
    EXPECT_EQ(-1, ro->ftruncate(0));
    EXPECT_EQ(EBADF, errno);
    ro.reset();
}

void check_statvfs(IFileSystem* fs) {
    struct statvfs sv;
    ASSERT_EQ(0, fs->statvfs(nullptr, &sv));  // Photon's callers pass no path
    ASSERT_EQ(0, fs->statvfs("/", &sv));
    EXPECT_EQ(4096u, sv.f_bsize);
    EXPECT_EQ(256 * MiB / 4096, sv.f_blocks);
    EXPECT_GT(sv.f_bfree, sv.f_bavail);
    EXPECT_EQ(256 * MiB / 16384, sv.f_files);
}

// The root lists what the steps above made; *d is left open.
void check_root_listing(IFileSystem* fs, std::unique_ptr<photon::fs::DIR>* d) {
    std::set<std::string> names;
    d->reset(fs->opendir("/"));
    ASSERT_TRUE(*d);
    while (auto* e = (*d)->readdir()) names.insert(e->d_name);
    EXPECT_EQ((std::set<std::string>{".", "..", "lost+found", "f", "fifo", "chr", "blk", "sl"}),
              names);
    (*d)->rewinddir();
    ASSERT_TRUE((*d)->get());
    EXPECT_STREQ(".", (*d)->get()->d_name);
}

TEST_F(ExtFs, FileCallsAttributesAndXattrs) {
    make();
    mount(false);
    std::unique_ptr<IFile> f(fs_->open("/f", O_RDWR | O_CREAT | O_TRUNC, 0640));
    ASSERT_TRUE(f);
    ASSERT_NO_FATAL_FAILURE(write_and_read_back(f.get()));
    ASSERT_NO_FATAL_FAILURE(truncate_and_set_attributes(fs_.get(), f.get()));
    ASSERT_NO_FATAL_FAILURE(allocate_and_punch_a_hole(f.get()));
    ASSERT_NO_FATAL_FAILURE(check_xattrs(fs_.get(), f.get()));
    ASSERT_NO_FATAL_FAILURE(make_special_files(fs_.get()));
    std::unique_ptr<IFile> app;
    ASSERT_NO_FATAL_FAILURE(append_and_read_only(fs_.get(), &app));
    ASSERT_NO_FATAL_FAILURE(check_statvfs(fs_.get()));
    std::unique_ptr<photon::fs::DIR> d;
    ASSERT_NO_FATAL_FAILURE(check_root_listing(fs_.get(), &d));
    EXPECT_EQ(0, fs_->syncfs());
    f.reset();
    app.reset();
    d.reset();
    unmount();
    skip_without_tools();
    expect_fsck_clean();
}

TEST_F(ExtFs, AnUnlinkedOpenFileLivesUntilClosed) {
    make();
    mount(true);
    std::string data = pattern(100000, 5);
    write_file("/f", data);
    std::unique_ptr<IFile> f(fs_->open("/f", O_RDWR));
    ASSERT_TRUE(f);
    ASSERT_EQ(0, fs_->unlink("/f"));
    write_file("/g", pattern(200000, 6));  // would take the freed blocks
    std::string got(data.size(), '\0');
    EXPECT_EQ((ssize_t)data.size(), f->pread(&got[0], got.size(), 0));
    EXPECT_TRUE(got == data);
    f.reset();
    unmount();
    skip_without_tools();
    expect_fsck_clean();
}

// Overwriting blocks in place dirties no metadata; the cache still reaches the image.
TEST_F(ExtFs, OverwritesInTheCacheReachTheImageAtUnmount) {
    make();
    mount(false);
    write_file("/f", pattern(300000, 1));
    unmount();
    mount(true);
    std::string data = pattern(300000, 2);
    write_file("/f", data);
    unmount();
    mount(false);
    EXPECT_TRUE(read_file("/f") == data);
}

TEST_F(ExtFs, EightCoroutinesWriteDifferentFilesAtOnce) {
    make();
    mount(true);
    struct job {
        IFileSystem* fs;
        int id;
        int failures;
    };
    std::vector<job> jobs;
    for (int i = 0; i < 8; i++) jobs.push_back(job{fs_.get(), i, 0});
    std::vector<join_handle*> jhs;
    for (auto& j : jobs) {
        jhs.push_back(thread_enable_join(thread_create(
            [](void* p) -> void* {
                auto* j = static_cast<job*>(p);
                std::string dir = "/w" + std::to_string(j->id);
                if (j->fs->mkdir(dir.c_str(), 0755) != 0) j->failures++;
                std::string data = pattern(3 * MiB + j->id * 777, 100 + j->id);
                std::unique_ptr<IFile> f(
                    j->fs->open((dir + "/data").c_str(), O_RDWR | O_CREAT, 0644));
                if (!f) return j->failures++, nullptr;
                for (size_t at = 0; at < data.size(); at += 65536) {
                    size_t n = std::min<size_t>(65536, data.size() - at);
                    if (f->pwrite(&data[at], n, at) != (ssize_t)n) j->failures++;
                    thread_yield();
                }
                return nullptr;
            },
            &j)));
    }
    for (auto* jh : jhs) thread_join(jh);
    for (auto& j : jobs) EXPECT_EQ(0, j.failures) << j.id;
    unmount();
    mount(false);
    for (int i = 0; i < 8; i++) {
        std::string got = read_file("/w" + std::to_string(i) + "/data");
        EXPECT_TRUE(got == pattern(3 * MiB + i * 777, 100 + i)) << i;
    }
    unmount();
    skip_without_tools();
    expect_fsck_clean();
}

}  // namespace
