// The fixture of the extfs tests (extfs_files_test.cpp, extfs_image_test.cpp):
// an image file in a scratch directory that make() formats with make_extfs and
// mount() opens with new_extfs (with or without the block cache), and
// e2fsprogs' tools (fsck.ext4 -fn, debugfs) to check it from outside.
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>

#include <photon/fs/extfs/extfs.h>
#include <photon/fs/localfs.h>
#include <photon/photon.h>

#include <gtest/gtest.h>

#include "fs_test_util.h"

namespace photon_test {

constexpr uint64_t MiB = 1 << 20;

// The path of an e2fsprogs tool, or "" (they live in /sbin, often off PATH).
inline std::string tool(const char* name) {
    for (const char* dir : {"/usr/sbin/", "/sbin/", "/usr/bin/", "/bin/"}) {
        std::string p = std::string(dir) + name;
        if (::access(p.c_str(), X_OK) == 0) return p;
    }
    return "";
}

// Runs a shell command; its exit status, and its output in *out.
inline int run(const std::string& cmd, std::string* out) {
    FILE* p = popen((cmd + " 2>&1").c_str(), "r");
    if (!p) return -1;
    char buf[4096];
    size_t n;
    out->clear();
    while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out->append(buf, n);
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

inline std::string pattern(size_t size, unsigned seed) {
    std::string s(size, '\0');
    std::mt19937 rng(seed);
    for (auto& c : s) c = (char)rng();
    return s;
}

class ExtFs : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_EQ(0, photon::init(photon::INIT_EVENT_EPOLL, photon::INIT_IO_NONE));
        ASSERT_TRUE(dir_.ok());
        image_ = dir_ / "image.ext4";
    }
    void TearDown() override {
        fs_.reset();
        file_.reset();
        photon_test::fini_vcpu();
    }
    // A fresh sparse image of `size` bytes with a file system on it.
    void make(uint64_t size = 256 * MiB) {
        file_.reset(
            photon::fs::open_localfile_adaptor(image_.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644));
        ASSERT_TRUE(file_);
        ASSERT_EQ(0, file_->ftruncate(size));
        ASSERT_EQ(0, photon::fs::make_extfs(file_.get()));
    }
    void mount(bool buffer) {
        if (!file_) file_.reset(photon::fs::open_localfile_adaptor(image_.c_str(), O_RDWR));
        ASSERT_TRUE(file_);
        fs_.reset(photon::fs::new_extfs(file_.get(), buffer));
        ASSERT_TRUE(fs_) << strerror(errno);
    }
    void unmount() {
        fs_.reset();
        file_.reset();
    }
    void skip_without_tools() {
        fsck_ = tool("fsck.ext4");
        if (fsck_.empty()) fsck_ = tool("e2fsck");
        debugfs_ = tool("debugfs");
        if (fsck_.empty() || debugfs_.empty()) {
            GTEST_SKIP() << "e2fsprogs' e2fsck/debugfs not installed (Debian package e2fsprogs)";
        }
    }
    // fsck.ext4 -fn: exit 0 means it found nothing to fix.
    void expect_fsck_clean() {
        if (fsck_.empty()) return;
        std::string out;
        int rc = run(fsck_ + " -fn " + image_, &out);
        EXPECT_EQ(0, rc) << out;
    }
    void write_file(const std::string& path, const std::string& data, off_t at = 0) {
        std::unique_ptr<photon::fs::IFile> f(fs_->open(path.c_str(), O_RDWR | O_CREAT, 0644));
        ASSERT_TRUE(f) << path << ": " << strerror(errno);
        ASSERT_EQ((ssize_t)data.size(), f->pwrite(data.data(), data.size(), at)) << path;
    }
    std::string read_file(const std::string& path) {
        std::unique_ptr<photon::fs::IFile> f(fs_->open(path.c_str(), O_RDONLY));
        if (!f) return "ERR:" + std::string(strerror(errno));
        struct stat st;
        if (f->fstat(&st) != 0) return "ERR:fstat";
        std::string s(st.st_size, '\0');
        ssize_t n = f->pread(&s[0], s.size(), 0);
        if (n != (ssize_t)s.size()) return "ERR:short";
        char extra;
        if (f->pread(&extra, 1, st.st_size) != 0) return "ERR:past-eof";
        return s;
    }

    photon_test::scratch_dir dir_;
    std::string image_;
    std::string fsck_, debugfs_;
    std::unique_ptr<photon::fs::IFile> file_;
    std::unique_ptr<photon::fs::IFileSystem> fs_;
};

}  // namespace photon_test
