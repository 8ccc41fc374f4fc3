// extfs, the image: make_extfs makes a file system that fsck.ext4 -fn finds
// clean and rejects bad arguments; new_extfs works over O_DIRECT and
// read-only files; resize_extfs grows an image that stays clean; corrupt and
// truncated images fail with errno, not crashes. Files and directories on
// the file system are in extfs_files_test.cpp.
#include <photon/fs/aligned-file.h>
#include <photon/fs/extfs/extfs.h>
#include <photon/fs/localfs.h>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "extfs_test_util.h"

using namespace photon;
using namespace photon::fs;
using namespace photon_test;

namespace {

TEST_F(ExtFs, MakesAFileSystemThatFsckFindsClean) {
    skip_without_tools();
    make();
    unmount();
    expect_fsck_clean();
    std::string out;
    ASSERT_EQ(0, run(debugfs_ + " -R 'ls -l /' " + image_, &out));
    EXPECT_NE(std::string::npos, out.find("lost+found")) << out;
    ASSERT_EQ(0, run(debugfs_ + " -R stats " + image_, &out));
    EXPECT_NE(std::string::npos, out.find("bdf7bb2e-c231-43ce-87c2-299792458ef5")) << out;
    EXPECT_NE(std::string::npos, out.find("Block size:               4096")) << out;
    EXPECT_NE(std::string::npos, out.find("resize_inode")) << out;
}

TEST_F(ExtFs, MakeRejectsBadUuidsAndTinyFiles) {
    make();
    char bad[] = "not-a-uuid";
    errno = 0;
    EXPECT_EQ(-1, make_extfs(file_.get(), bad));
    EXPECT_EQ(EINVAL, errno);
    ASSERT_EQ(0, file_->ftruncate(64 * 1024));
    errno = 0;
    EXPECT_EQ(-1, make_extfs(file_.get()));
    EXPECT_EQ(EINVAL, errno);
}

// The number after `key` in debugfs's answer to `request`, or -1.
long long debugfs_number(const std::string& debugfs, const std::string& image,
                         const std::string& request, const std::string& key) {
    std::string out;
    if (run(debugfs + " -R '" + request + "' " + image, &out) != 0) return -1;
    if (key.empty()) {  // the answer's last line (the first is debugfs's banner)
        while (!out.empty() && out.back() == '\n') out.pop_back();
        return strtoll(out.c_str() + out.rfind('\n') + 1, nullptr, 10);
    }
    size_t at = out.find(key);
    if (at == std::string::npos) return -1;
    return strtoll(out.c_str() + at + key.size(), nullptr, 10);
}

// Random bytes over metadata (a bitmap, the inode table, a directory, a
// file's extent tree) give errors on the calls that read them, not crashes.
TEST_F(ExtFs, CorruptMetadataGivesErrorsNotCrashes) {
    skip_without_tools();
    struct target {
        const char* request;
        const char* key;
    } targets[] = {
        {"stats", "block bitmap at "},
        {"stats", "inode bitmap at "},
        {"stats", "inode table at "},
        {"imap /d", "located at block "},
        {"imap /d/f3", "located at block "},
        {"bmap / 0", ""},
        {"bmap /d 0", ""},
        {"bmap /d/f3 0", ""},
    };
    for (auto& t : targets) {
        make();
        mount(false);
        ASSERT_EQ(0, fs_->mkdir("/d", 0755));
        for (int i = 0; i < 20; i++) write_file("/d/f" + std::to_string(i), pattern(5000, i));
        unmount();
        long long block = debugfs_number(debugfs_, image_, t.request, t.key);
        ASSERT_GT(block, 0) << t.request;
        file_.reset(open_localfile_adaptor(image_.c_str(), O_RDWR));
        ASSERT_TRUE(file_);
        ASSERT_EQ(4096, file_->pwrite(pattern(4096, block).data(), 4096, block * 4096));
        for (bool buffer : {false, true}) {
            fs_.reset(new_extfs(file_.get(), buffer));
            if (!fs_) continue;  // refused: fine
            struct stat st;
            std::unique_ptr<photon::fs::DIR> d(fs_->opendir("/d"));
            for (int i = 0; i < 20; i++) read_file("/d/f" + std::to_string(i));
            fs_->stat("/d/f3", &st);
            fs_->mkdir("/new", 0755);
            fs_->unlink("/d/f5");
            fs_->rename("/d/f6", "/d/g6");
            std::unique_ptr<IFile> f(fs_->open("/d/f3", O_RDWR));
            if (f) f->pwrite("still", 5, 4096);
            f.reset();
            d.reset();
            fs_.reset();
        }
        unmount();
    }
}

// O_DIRECT: through the cache (aligned I/O from aligned memory) as it is, and
// without the cache through the aligned adaptor.
TEST_F(ExtFs, WorksOverODirectFiles) {
    if (dir_.on_tmpfs()) GTEST_SKIP() << "O_DIRECT does not work on tmpfs";
    make();
    unmount();
    for (bool buffer : {true, false}) {
        std::unique_ptr<IFile> raw(open_localfile_adaptor(image_.c_str(), O_RDWR | O_DIRECT));
        ASSERT_TRUE(raw);
        std::unique_ptr<IFile> aligned;
        if (!buffer) {
            aligned.reset(new_aligned_file_adaptor(raw.get(), 4096, true));
            ASSERT_TRUE(aligned);
        }
        fs_.reset(new_extfs(buffer ? raw.get() : aligned.get(), buffer));
        ASSERT_TRUE(fs_) << strerror(errno);
        std::string name = buffer ? "/cached" : "/aligned", data = pattern(300001, buffer);
        ASSERT_EQ(0, fs_->mkdir(name.c_str(), 0755));
        write_file(name + "/f", data);
        EXPECT_TRUE(read_file(name + "/f") == data);
        fs_.reset();
    }
    mount(false);
    EXPECT_TRUE(read_file("/cached/f") == pattern(300001, 1));
    EXPECT_TRUE(read_file("/aligned/f") == pattern(300001, 0));
    unmount();
    skip_without_tools();
    expect_fsck_clean();
}

// A read-only image (say over HTTP): reads work, writes fail, nothing is written.
TEST_F(ExtFs, AReadOnlyFileServesReads) {
    make();
    mount(false);
    ASSERT_EQ(0, fs_->mkdir("/d", 0755));
    std::string data = pattern(50000, 3);
    write_file("/d/f", data);
    unmount();
    struct stat before, after;
    ASSERT_EQ(0, ::stat(image_.c_str(), &before));
    file_.reset(open_localfile_adaptor(image_.c_str(), O_RDONLY));
    ASSERT_TRUE(file_);
    for (bool buffer : {false, true}) {
        fs_.reset(new_extfs(file_.get(), buffer));
        ASSERT_TRUE(fs_);
        EXPECT_TRUE(read_file("/d/f") == data);
        std::unique_ptr<photon::fs::DIR> d(fs_->opendir("/d"));
        ASSERT_TRUE(d);
        std::unique_ptr<IFile> f(fs_->open("/d/g", O_CREAT | O_RDWR, 0644));
        EXPECT_FALSE(f && f->pwrite("x", 1, 0) == 1 && fs_->syncfs() == 0);
        f.reset();
        d.reset();
        fs_.reset();
    }
    ASSERT_EQ(0, ::stat(image_.c_str(), &after));
    EXPECT_EQ(before.st_mtim.tv_sec, after.st_mtim.tv_sec);
    EXPECT_EQ(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
}

// debugfs's "stats" line `key` (e.g. "Block count:"), its value.
std::string stat_line(const std::string& stats, const std::string& key) {
    size_t at = stats.find("\n" + key);
    if (at == std::string::npos) return "";
    size_t from = stats.find_first_not_of(' ', at + 1 + key.size());
    return stats.substr(from, stats.find('\n', from) - from);
}

TEST_F(ExtFs, ResizeGrowsTheFileSystemAndFsckStaysClean) {
    skip_without_tools();
    make();
    mount(true);
    std::string data = pattern(3 * MiB + 5, 11);
    write_file("/before", data);
    unmount();
    file_.reset(open_localfile_adaptor(image_.c_str(), O_RDWR));
    ASSERT_TRUE(file_);
    // Growing as overlaybd does: the device first (the new space must then be
    // initialized), the file system after.
    ASSERT_EQ(0, file_->ftruncate(1024 * MiB));
    ASSERT_EQ(0, resize_extfs(file_.get(), 1024 * MiB));
    expect_fsck_clean();
    std::string out;
    ASSERT_EQ(0, run(debugfs_ + " -R stats " + image_, &out));
    EXPECT_EQ(std::to_string(1024 * MiB / 4096), stat_line(out, "Block count:")) << out;
    EXPECT_EQ(std::to_string(1024 * MiB / 16384), stat_line(out, "Inode count:")) << out;
    mount(false);
    EXPECT_TRUE(read_file("/before") == data);
    struct statvfs sv;
    ASSERT_EQ(0, fs_->statvfs("/", &sv));
    EXPECT_EQ(1024 * MiB / 4096, sv.f_blocks);
    // More than the old file system held, in the new groups.
    std::unique_ptr<IFile> big(fs_->open("/big", O_RDWR | O_CREAT, 0644));
    ASSERT_TRUE(big);
    ASSERT_EQ(0, big->fallocate(0, 0, 600 * MiB)) << strerror(errno);
    std::string tail = pattern(MiB, 12);
    ASSERT_EQ((ssize_t)tail.size(), big->pwrite(tail.data(), tail.size(), 599 * MiB));
    big.reset();
    for (int i = 0; i < 20; i++) write_file("/many" + std::to_string(i), pattern(4096 * i, i));
    unmount();
    expect_fsck_clean();

    // Past 64 groups the descriptors need a second block, from the reserved
    // GDT blocks; resize_extfs grows the file itself this time.
    file_.reset(open_localfile_adaptor(image_.c_str(), O_RDWR));
    ASSERT_EQ(0, resize_extfs(file_.get(), 10 * 1024 * MiB + 4096 * 3));
    struct stat st;
    ASSERT_EQ(0, file_->fstat(&st));
    EXPECT_GE((uint64_t)st.st_size, 10 * 1024 * MiB);
    expect_fsck_clean();
    ASSERT_EQ(0, run(debugfs_ + " -R stats " + image_, &out));
    // The few blocks past 10 GiB are too few for a group of their own.
    EXPECT_EQ(std::to_string(10 * 1024 * MiB / 4096), stat_line(out, "Block count:")) << out;
    mount(true);
    EXPECT_TRUE(read_file("/before") == data);
    EXPECT_EQ(tail, read_file("/big").substr(599 * MiB));
    for (int i = 0; i < 20; i++) {
        EXPECT_TRUE(read_file("/many" + std::to_string(i)) == pattern(4096 * i, i)) << i;
    }
    write_file("/after", data);
    unmount();
    expect_fsck_clean();

    // The same size again is a no-op; smaller, or more groups than the
    // reserved GDT blocks can describe, fail and leave the image as it was.
    file_.reset(open_localfile_adaptor(image_.c_str(), O_RDWR));
    EXPECT_EQ(0, resize_extfs(file_.get(), 10 * 1024 * MiB));
    errno = 0;
    EXPECT_EQ(-1, resize_extfs(file_.get(), 512 * MiB));
    EXPECT_EQ(EOPNOTSUPP, errno);
    errno = 0;
    EXPECT_EQ(-1, resize_extfs(file_.get(), 1024ull * 1024 * MiB));  // 1 TiB
    EXPECT_EQ(ENOSPC, errno);
    ASSERT_EQ(0, file_->fstat(&st));
    EXPECT_LT((uint64_t)st.st_size, 11 * 1024 * MiB);
    expect_fsck_clean();
    mount(false);
    EXPECT_TRUE(read_file("/after") == data);
}

TEST_F(ExtFs, CorruptOrTruncatedImagesFailWithErrno) {
    make();
    unmount();
    std::unique_ptr<IFile> f(open_localfile_adaptor(image_.c_str(), O_RDWR));
    ASSERT_TRUE(f);
    // Random bytes over the superblock.
    std::string junk = pattern(1024, 9);
    ASSERT_EQ(1024, f->pwrite(junk.data(), junk.size(), 1024));
    errno = 0;
    EXPECT_EQ(nullptr, new_extfs(f.get(), true));
    EXPECT_NE(0, errno);
    // A file of zeros: no file system at all.
    ASSERT_EQ(0, f->ftruncate(0));
    ASSERT_EQ(0, f->ftruncate(16 * MiB));
    errno = 0;
    EXPECT_EQ(nullptr, new_extfs(f.get(), false));
    EXPECT_EQ(EINVAL, errno);
    // Truncated images: in the group descriptors, and before group 1's bitmaps.
    for (uint64_t cut : {uint64_t(6000), 100 * MiB}) {
        ASSERT_EQ(0, f->ftruncate(0));
        ASSERT_EQ(0, f->ftruncate(256 * MiB));
        ASSERT_EQ(0, make_extfs(f.get()));
        ASSERT_EQ(0, f->ftruncate(cut));
        for (bool buffer : {true, false}) {
            errno = 0;
            std::unique_ptr<IFileSystem> fs(new_extfs(f.get(), buffer));
            EXPECT_FALSE(fs) << cut;
            EXPECT_NE(0, errno) << cut;
        }
    }
    // Random bytes over the group descriptors.
    ASSERT_EQ(0, f->ftruncate(0));
    ASSERT_EQ(0, f->ftruncate(256 * MiB));
    ASSERT_EQ(0, make_extfs(f.get()));
    ASSERT_EQ(4096, f->pwrite(pattern(4096, 10).data(), 4096, 4096));
    errno = 0;
    EXPECT_EQ(nullptr, new_extfs(f.get(), true));
    EXPECT_NE(0, errno);
    errno = 0;
    EXPECT_EQ(nullptr, new_extfs(nullptr, true));
    EXPECT_EQ(EINVAL, errno);
    errno = 0;
    EXPECT_EQ(nullptr, new_extfs_with_buffer(f.get(), 1000, 300));
    EXPECT_EQ(EINVAL, errno);
}

}  // namespace
