// The FUSE adaptor tests' environment and fixture: whether FUSE can be
// used here, mount listing and cleanup, file helpers, a file system wrapper
// with hooks that slow calls down, and the FuseMount fixture, which serves a
// scratch directory on a thread and unmounts in its teardown.
#pragma once

#include <dirent.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <photon/fs/filesystem.h>
#include <photon/fs/forwardfs.h>
#include <photon/fs/fuse_adaptor.h>
#include <photon/fs/localfs.h>
#include <photon/io/fuse-adaptor.h>
#include <photon/photon.h>
#include <photon/thread/thread.h>

#include <gtest/gtest.h>

#include "../../thread/fiber_annotations.h"
#include "../util/fd_count.h"
#include "fs_test_util.h"

namespace photon_test {

using namespace photon;

// ---- environment --------------------------------------------------------------

inline std::string fuse_unavailable() {
    int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
    if (fd < 0) return std::string("cannot open /dev/fuse: ").append(strerror(errno));
    close(fd);
    if (geteuid() != 0 && access("/usr/bin/fusermount3", X_OK) != 0 &&
        access("/bin/fusermount3", X_OK) != 0)
        return "not root, and no fusermount3 to mount with";
    return "";
}

// FUSE mount points in /proc/self/mountinfo (paths without spaces).
inline std::vector<std::string> fuse_mounts() {
    std::vector<std::string> out;
    std::ifstream in("/proc/self/mountinfo");
    for (std::string line; std::getline(in, line);) {
        std::istringstream f(line);
        std::string id, parent, dev, root, point;
        f >> id >> parent >> dev >> root >> point;
        auto dash = line.find(" - ");
        if (dash != std::string::npos && line.compare(dash + 3, 4, "fuse") == 0)
            out.push_back(point);
    }
    return out;
}

inline bool is_mounted(const std::string& mnt) {
    for (auto& m : fuse_mounts())
        if (m == mnt) return true;
    return false;
}

// Aborts the FUSE connection mounted at mnt (fusectl's abort): requests
// waiting for a server that cannot answer fail at once. Without it, a
// process whose own server hangs cannot even exit: its threads wait in the
// kernel for replies that the process itself would have to send.
inline void abort_connection(const std::string& mnt) {
    std::ifstream in("/proc/self/mountinfo");
    for (std::string line; std::getline(in, line);) {
        std::istringstream f(line);
        std::string id, parent, dev, root, point;
        f >> id >> parent >> dev >> root >> point;
        if (point != mnt) continue;
        std::string dir = "/sys/fs/fuse/connections";
        std::string conn = dir + "/" + dev.substr(dev.find(':') + 1);
        if (access(conn.c_str(), F_OK) != 0) ::mount("fusectl", dir.c_str(), "fusectl", 0, nullptr);
        std::ofstream(conn + "/abort") << "1";
    }
}

// Detaches the mounts that crashed runs left under the scratch root: each
// test's directory names its process in a file beside the mount point (read
// without touching the mount, which may be dead), and a live process's
// mounts (tests running in parallel) are left alone.
inline void detach_stale_mounts() {
    std::string root = photon_test::scratch_root() + "/";
    for (auto& m : fuse_mounts()) {
        if (m.compare(0, root.size(), root) != 0) continue;
        pid_t owner = 0;
        std::ifstream(m.substr(0, m.rfind('/')) + "/owner") >> owner;
        if (owner > 0 && kill(owner, 0) < 0 && errno == ESRCH) umount2(m.c_str(), MNT_DETACH);
    }
}

// Runs a bash script (set -e); returns its exit status, stdout in *out.
inline int run_script(const std::string& dir, const std::string& script,
                      std::string* out = nullptr) {
    std::string file = dir + "/script.sh";
    {
        std::ofstream f(file);
        f << "set -e\n" << script << "\n";
    }
    FILE* p = popen(("bash " + file + " 2>&1").c_str(), "r");
    if (!p) return -1;
    std::string text;
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof(buf), p)) > 0;) text.append(buf, n);
    int st = pclose(p);
    if (out) *out = text;
    if (st != 0)
        fprintf(stderr, "script failed (%d):\n%s\n--- output:\n%s\n", st, script.c_str(),
                text.c_str());
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

inline void write_pattern(const std::string& path, size_t size, uint64_t seed) {
    std::vector<uint64_t> block(1 << 16);
    FILE* f = fopen(path.c_str(), "w");
    ASSERT_NE(nullptr, f);
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
    for (size_t done = 0; done < size;) {
        for (auto& w : block) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            w = x;
        }
        size_t n = std::min(size - done, block.size() * sizeof(uint64_t));
        ASSERT_EQ(n, fwrite(block.data(), 1, n, f));
        done += n;
    }
    fclose(f);
}

inline std::string read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

inline size_t thread_count() {
    size_t n = 0;
    if (::DIR* d = opendir("/proc/self/task")) {
        while (auto e = readdir(d)) n += e->d_name[0] != '.';
        closedir(d);
    }
    return n;
}

// ---- a file system wrapper with hooks, to slow calls down -------------------------

class hooked_fs;

// Forwards to the file it owns; pread runs its file system's hook first.
class hooked_file : public fs::ForwardFile_Ownership {
public:
    hooked_file(fs::IFile* f, hooked_fs* owner)
        : fs::ForwardFile_Ownership(f, true), owner_(owner) {}
    fs::IFileSystem* filesystem() override;
    ssize_t pread(void* b, size_t n, off_t o) override;

private:
    hooked_fs* owner_;
};

// Forwards to the file system it owns, wrapping the files it opens.
class hooked_fs : public fs::ForwardFS_Ownership {
public:
    explicit hooked_fs(fs::IFileSystem* under) : fs::ForwardFS_Ownership(under, true) {}
    std::function<int()> on_pread;  // in the request's coroutine; -1: pread fails with errno
    std::function<void(const char*)> on_lstat;  // likewise

    fs::IFile* open(const char* p, int fl) override { return wrap(m_fs->open(p, fl)); }
    fs::IFile* open(const char* p, int fl, mode_t m) override { return wrap(m_fs->open(p, fl, m)); }
    fs::IFile* creat(const char* p, mode_t m) override { return wrap(m_fs->creat(p, m)); }
    int lstat(const char* p, struct stat* b) override {
        if (on_lstat) on_lstat(p);
        return m_fs->lstat(p, b);
    }

private:
    fs::IFile* wrap(fs::IFile* f) { return f ? new hooked_file(f, this) : nullptr; }
};

inline fs::IFileSystem* hooked_file::filesystem() { return owner_; }
inline ssize_t hooked_file::pread(void* b, size_t n, off_t o) {
    if (owner_->on_pread && owner_->on_pread() < 0) return -1;
    return m_file->pread(b, n, o);
}

// hooked_fs with extended attributes, on the real paths under `base`.
class xattr_fs : public hooked_fs, public fs::IFileSystemXAttr {
public:
    xattr_fs(fs::IFileSystem* under, std::string base) : hooked_fs(under), base_(base) {}
    ssize_t getxattr(const char* p, const char* n, void* v, size_t s) override {
        return ::getxattr(real(p), n, v, s);
    }
    ssize_t lgetxattr(const char* p, const char* n, void* v, size_t s) override {
        return ::lgetxattr(real(p), n, v, s);
    }
    ssize_t listxattr(const char* p, char* l, size_t s) override {
        return ::listxattr(real(p), l, s);
    }
    ssize_t llistxattr(const char* p, char* l, size_t s) override {
        return ::llistxattr(real(p), l, s);
    }
    int setxattr(const char* p, const char* n, const void* v, size_t s, int f) override {
        return ::setxattr(real(p), n, v, s, f);
    }
    int lsetxattr(const char* p, const char* n, const void* v, size_t s, int f) override {
        return ::lsetxattr(real(p), n, v, s, f);
    }
    int removexattr(const char* p, const char* n) override { return ::removexattr(real(p), n); }
    int lremovexattr(const char* p, const char* n) override { return ::lremovexattr(real(p), n); }

private:
    const char* real(const char* p) { return (path_ = base_ + p).c_str(); }
    std::string base_, path_;
};

// ---- the fixture -------------------------------------------------------------------

using runner_t = std::function<int(int, char**)>;

class FuseMount : public ::testing::Test {
protected:
    void SetUp() override {
        auto why = fuse_unavailable();
        if (!why.empty()) GTEST_SKIP() << "FUSE unavailable: " << why;
        ASSERT_FALSE(dir_.path().empty());
        detach_stale_mounts();
        std::ofstream(dir_ / "owner") << getpid();
        src_ = dir_ / "src";
        mnt_ = dir_ / "mnt";
        ASSERT_EQ(0, ::mkdir(src_.c_str(), 0755));
        ASSERT_EQ(0, ::mkdir(mnt_.c_str(), 0755));
        fs_ = fs::new_localfs_adaptor(src_.c_str(), fs::ioengine_psync);
        ASSERT_NE(nullptr, fs_);
    }
    void TearDown() override {
        unmount();
        if (!leak_fs_) delete fs_;
    }

    // Serves on a new thread (fuser_go over fs_ unless `run` is given) and
    // waits for the mount. "" or what went wrong.
    std::string mount(std::vector<std::string> opts = {}, runner_t run = nullptr) {
        args_ = {"fuse-test", mnt_, "-f"};
        args_.insert(args_.end(), opts.begin(), opts.end());
        argv_.clear();
        for (auto& a : args_) argv_.push_back(&a[0]);
        argv_.push_back(nullptr);
        if (!run) run = [this](int c, char** v) { return fs::fuser_go(fs_, c, v); };
        done_ = false;
        server_ = std::thread([this, run] {
            rc_ = run((int)args_.size(), argv_.data());
            done_ = true;
        });
        if (!photon_test::wait_for_off_vcpu([&] { return is_mounted(mnt_) || done_; }, 10000) ||
            !is_mounted(mnt_)) {
            unmount();
            return "not mounted; the server returned " + std::to_string(rc_.load());
        }
        return "";
    }
    void unmount() {
        if (!server_.joinable()) return;
        for (int i = 0; i < 20 && is_mounted(mnt_); i++) {
            if (umount2(mnt_.c_str(), 0) == 0) break;
            usleep(100 * 1000);  // EBUSY: a program still has it open
        }
        if (is_mounted(mnt_)) umount2(mnt_.c_str(), MNT_DETACH);
        if (photon_test::wait_for_off_vcpu([&] { return done_.load(); }, 15000)) {
            server_.join();
        } else {
            ADD_FAILURE() << "the FUSE server did not end after the unmount";
            server_.detach();
            leak_fs_ = true;  // it may still use fs_
        }
    }
    std::string src(const std::string& n) const { return src_ + "/" + n; }
    std::string mnt(const std::string& n) const { return mnt_ + "/" + n; }

    scratch_dir dir_;
    std::string src_, mnt_;
    fs::IFileSystem* fs_ = nullptr;
    bool leak_fs_ = false;
    std::thread server_;
    std::atomic<bool> done_{false};
    std::atomic<int> rc_{0};
    std::vector<std::string> args_;
    std::vector<char*> argv_;
};

#define MOUNT(...) ASSERT_EQ("", mount(__VA_ARGS__))

}  // namespace photon_test
