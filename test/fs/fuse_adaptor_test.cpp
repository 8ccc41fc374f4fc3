// The FUSE adaptor with real mounts: a scratch directory served through
// fuser_go / run_fuse / run_fuse_ll, used by ordinary programs (ls, stat,
// cat, cp, sha256sum, dd, mv, ...). Needs /dev/fuse and the right to mount
// (root, or fusermount3); skipped otherwise. Every test unmounts in its
// teardown, and each start detaches mounts that a crashed run left under
// the scratch root.
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
#include <photon/fs/fuse_adaptor.h>
#include <photon/fs/localfs.h>
#include <photon/io/fuse-adaptor.h>
#include <photon/photon.h>
#include <photon/thread/thread.h>

#include <gtest/gtest.h>

#include "../../thread/fiber_annotations.h"
#include "../util/fd_count.h"
#include "fs_test_util.h"

using namespace photon;
using photon_test::scratch_dir;

namespace {

// ---- environment --------------------------------------------------------------

std::string fuse_unavailable() {
    int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
    if (fd < 0) return std::string("cannot open /dev/fuse: ") + strerror(errno);
    close(fd);
    if (geteuid() != 0 && access("/usr/bin/fusermount3", X_OK) != 0 &&
        access("/bin/fusermount3", X_OK) != 0)
        return "not root, and no fusermount3 to mount with";
    return "";
}

// FUSE mount points in /proc/self/mountinfo (paths without spaces).
std::vector<std::string> fuse_mounts() {
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

bool is_mounted(const std::string& mnt) {
    for (auto& m : fuse_mounts())
        if (m == mnt) return true;
    return false;
}

// Aborts the FUSE connection mounted at mnt (fusectl's abort): requests
// waiting for a server that cannot answer fail at once. Without it, a
// process whose own server hangs cannot even exit: its threads wait in the
// kernel for replies that the process itself would have to send.
void abort_connection(const std::string& mnt) {
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
void detach_stale_mounts() {
    std::string root = photon_test::scratch_root() + "/";
    for (auto& m : fuse_mounts()) {
        if (m.compare(0, root.size(), root) != 0) continue;
        pid_t owner = 0;
        std::ifstream(m.substr(0, m.rfind('/')) + "/owner") >> owner;
        if (owner > 0 && kill(owner, 0) < 0 && errno == ESRCH) umount2(m.c_str(), MNT_DETACH);
    }
}

// Runs a bash script (set -e); returns its exit status, stdout in *out.
int run_script(const std::string& dir, const std::string& script, std::string* out = nullptr) {
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

void write_pattern(const std::string& path, size_t size, uint64_t seed) {
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

std::string read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

size_t thread_count() {
    size_t n = 0;
    if (::DIR* d = opendir("/proc/self/task")) {
        while (auto e = readdir(d)) n += e->d_name[0] != '.';
        closedir(d);
    }
    return n;
}

// ---- a file system wrapper with hooks, to slow calls down -------------------------

class hooked_fs;

class hooked_file : public fs::IFile {
public:
    hooked_file(fs::IFile* f, hooked_fs* owner) : f_(f), owner_(owner) {}
    ~hooked_file() override { delete f_; }
    fs::IFileSystem* filesystem() override;
    ssize_t pread(void* b, size_t n, off_t o) override;
    ssize_t pwrite(const void* b, size_t n, off_t o) override { return f_->pwrite(b, n, o); }
    ssize_t preadv(const iovec* v, int c, off_t o) override { return f_->preadv(v, c, o); }
    ssize_t pwritev(const iovec* v, int c, off_t o) override { return f_->pwritev(v, c, o); }
    off_t lseek(off_t o, int w) override { return f_->lseek(o, w); }
    int fsync() override { return f_->fsync(); }
    int fdatasync() override { return f_->fdatasync(); }
    int fchmod(mode_t m) override { return f_->fchmod(m); }
    int fchown(uid_t u, gid_t g) override { return f_->fchown(u, g); }
    int fstat(struct stat* st) override { return f_->fstat(st); }
    int ftruncate(off_t n) override { return f_->ftruncate(n); }
    int close() override { return f_->close(); }
    ssize_t read(void* b, size_t n) override { return f_->read(b, n); }
    ssize_t write(const void* b, size_t n) override { return f_->write(b, n); }
    ssize_t readv(const iovec* v, int c) override { return f_->readv(v, c); }
    ssize_t writev(const iovec* v, int c) override { return f_->writev(v, c); }

private:
    fs::IFile* f_;
    hooked_fs* owner_;
};

class hooked_fs : public fs::IFileSystem {
public:
    explicit hooked_fs(fs::IFileSystem* under) : u_(under) {}
    ~hooked_fs() override { delete u_; }
    std::function<int()> on_pread;  // in the request's coroutine; -1: pread fails with errno
    std::function<void(const char*)> on_lstat;  // likewise

    fs::IFile* open(const char* p, int fl) override { return wrap(u_->open(p, fl)); }
    fs::IFile* open(const char* p, int fl, mode_t m) override { return wrap(u_->open(p, fl, m)); }
    fs::IFile* creat(const char* p, mode_t m) override { return wrap(u_->creat(p, m)); }
    int mkdir(const char* p, mode_t m) override { return u_->mkdir(p, m); }
    int rmdir(const char* p) override { return u_->rmdir(p); }
    int symlink(const char* o, const char* n) override { return u_->symlink(o, n); }
    ssize_t readlink(const char* p, char* b, size_t n) override { return u_->readlink(p, b, n); }
    int link(const char* o, const char* n) override { return u_->link(o, n); }
    int rename(const char* o, const char* n) override { return u_->rename(o, n); }
    int unlink(const char* p) override { return u_->unlink(p); }
    int chmod(const char* p, mode_t m) override { return u_->chmod(p, m); }
    int chown(const char* p, uid_t o, gid_t g) override { return u_->chown(p, o, g); }
    int lchown(const char* p, uid_t o, gid_t g) override { return u_->lchown(p, o, g); }
    int statfs(const char* p, struct statfs* b) override { return u_->statfs(p, b); }
    int statvfs(const char* p, struct statvfs* b) override { return u_->statvfs(p, b); }
    int stat(const char* p, struct stat* b) override { return u_->stat(p, b); }
    int lstat(const char* p, struct stat* b) override {
        if (on_lstat) on_lstat(p);
        return u_->lstat(p, b);
    }
    int access(const char* p, int m) override { return u_->access(p, m); }
    int truncate(const char* p, off_t n) override { return u_->truncate(p, n); }
    int utime(const char* p, const struct utimbuf* t) override { return u_->utime(p, t); }
    int utimes(const char* p, const struct timeval t[2]) override { return u_->utimes(p, t); }
    int lutimes(const char* p, const struct timeval t[2]) override { return u_->lutimes(p, t); }
    int mknod(const char* p, mode_t m, dev_t d) override { return u_->mknod(p, m, d); }
    int syncfs() override { return u_->syncfs(); }
    fs::DIR* opendir(const char* p) override { return u_->opendir(p); }

private:
    fs::IFile* wrap(fs::IFile* f) { return f ? new hooked_file(f, this) : nullptr; }
    fs::IFileSystem* u_;
};

fs::IFileSystem* hooked_file::filesystem() { return owner_; }
ssize_t hooked_file::pread(void* b, size_t n, off_t o) {
    if (owner_->on_pread && owner_->on_pread() < 0) return -1;
    return f_->pread(b, n, o);
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

}  // namespace

// ---- real programs over fuser_go ------------------------------------------------------

TEST_F(FuseMount, LsStatAndCatSeeTheSourceTree) {
    write_pattern(src("data"), 12345, 1);
    ASSERT_EQ(0, ::mkdir(src("dir").c_str(), 0750));
    ASSERT_EQ(0, ::symlink("data", src("link").c_str()));
    { std::ofstream(src("dir/hello.txt")) << "hello, fuse\n"; }
    MOUNT();
    std::string out;
    ASSERT_EQ(0, run_script(dir_.path(), "ls -la " + mnt_ + " " + mnt("dir"), &out));
    for (const char* name : {"data", "dir", "link -> data", "hello.txt", ".."})
        EXPECT_NE(std::string::npos, out.find(name)) << name << " missing from\n" << out;
    ASSERT_EQ(0, run_script(dir_.path(),
                            "stat -c '%s %F %a' " + mnt("data") + " " + mnt("dir") +
                                "; stat -c %N " + mnt("link"),
                            &out));
    mode_t mask = umask(022);
    umask(mask);
    char data_mode[8];
    snprintf(data_mode, sizeof(data_mode), "%o", 0666 & ~mask);
    EXPECT_EQ("12345 regular file " + std::string(data_mode) + "\n4096 directory 750\n'" +
                  mnt("link") + "' -> 'data'\n",
              out);
    ASSERT_EQ(0, run_script(dir_.path(), "cat " + mnt("dir/hello.txt"), &out));
    EXPECT_EQ("hello, fuse\n", out);
    EXPECT_EQ(read_all(src("data")), read_all(mnt("data")));
    // Inode numbers are the source's.
    struct stat a, b;
    ASSERT_EQ(0, ::stat(src("data").c_str(), &a));
    ASSERT_EQ(0, ::stat(mnt("data").c_str(), &b));
    EXPECT_EQ(a.st_ino, b.st_ino);
    EXPECT_EQ(a.st_mtim.tv_sec, b.st_mtim.tv_sec);
}

TEST_F(FuseMount, CopiesA100MiBFileIntact) {
    write_pattern(src("big"), 100 << 20, 2);
    MOUNT();
    std::string out;
    ASSERT_EQ(
        0, run_script(dir_.path(),
                      "cp " + mnt("big") + " " + mnt("copy") + "\n" + "sha256sum < " + src("big") +
                          "\n" + "sha256sum < " + mnt("copy") + "\n" + "sha256sum < " + src("copy"),
                      &out));
    std::istringstream lines(out);
    std::string h1, h2, h3;
    std::getline(lines, h1), std::getline(lines, h2), std::getline(lines, h3);
    EXPECT_EQ(64 + 3u, h1.size());
    EXPECT_EQ(h1, h2);
    EXPECT_EQ(h1, h3);
}

TEST_F(FuseMount, MkdirRenameRemoveTruncateChmodAndSymlinkReachTheSource) {
    std::ofstream(src("f")) << "0123456789";
    MOUNT();
    ASSERT_EQ(0, run_script(dir_.path(), "cd " + mnt_ + R"SH(
mkdir -p a/b
echo moved > a/b/x
mv a/b/x a/y
mv a c
rm -f c/y
rmdir c/b
truncate -s 4 f
truncate -s 8192 f
chmod 640 f
ln -s f sym
ln f hard
touch -d '2001-02-03 04:05:06' f
test "$(readlink sym)" = f
test "$(stat -c %h f)" = 2
test ! -e a
)SH"));
    struct stat st;
    ASSERT_EQ(0, ::stat(src("f").c_str(), &st));
    EXPECT_EQ(8192, st.st_size);
    EXPECT_EQ(0640u, st.st_mode & 07777);
    EXPECT_EQ(2u, st.st_nlink);
    struct tm tm = {};
    strptime("2001-02-03 04:05:06", "%Y-%m-%d %H:%M:%S", &tm);
    EXPECT_EQ(mktime(&tm), st.st_mtim.tv_sec);
    EXPECT_EQ("0123", read_all(src("f")).substr(0, 4));
    EXPECT_EQ(std::string(8188, '\0'), read_all(src("f")).substr(4));
    char target[16] = {};
    ASSERT_EQ(1, ::readlink(src("sym").c_str(), target, sizeof(target)));
    EXPECT_STREQ("f", target);
    EXPECT_EQ(0, ::access(src("c").c_str(), F_OK));
    EXPECT_NE(0, ::access(src("c/y").c_str(), F_OK));
    EXPECT_NE(0, ::access(src("c/b").c_str(), F_OK));
    EXPECT_NE(0, ::access(src("a").c_str(), F_OK));
}

// The caller's umask applies (the kernel's job), ours does not; and the
// process umask stays what it was.
TEST_F(FuseMount, CreatedFilesGetTheModesAskedForAndOurUmaskStays) {
    mode_t mask = umask(077);
    MOUNT();
    ASSERT_EQ(0, run_script(dir_.path(), "cd " + mnt_ +
                                             "; umask 0; touch f; mkdir d; mkfifo p; "
                                             "umask 027; touch g"));
    struct stat st;
    ASSERT_EQ(0, ::stat(src("f").c_str(), &st));
    EXPECT_EQ(0666u, st.st_mode & 07777);
    ASSERT_EQ(0, ::stat(src("d").c_str(), &st));
    EXPECT_EQ(0777u, st.st_mode & 07777);
    ASSERT_EQ(0, ::stat(src("p").c_str(), &st));
    EXPECT_EQ(0666u, st.st_mode & 07777);
    EXPECT_TRUE(S_ISFIFO(st.st_mode));
    ASSERT_EQ(0, ::stat(src("g").c_str(), &st));
    EXPECT_EQ(0640u, st.st_mode & 07777);
    EXPECT_EQ(077u, umask(mask));
}

TEST_F(FuseMount, ErrorsComeBackAsTheSourceGivesThem) {
    ASSERT_EQ(0, ::mkdir(src("full").c_str(), 0755));
    std::ofstream(src("full/x")) << "x";
    std::ofstream(src("y")) << "y";
    MOUNT();
    errno = 0;
    EXPECT_EQ(-1, ::rmdir(mnt("full").c_str()));
    EXPECT_EQ(ENOTEMPTY, errno);
    EXPECT_EQ(-1, ::open(mnt("none").c_str(), O_RDONLY));
    EXPECT_EQ(ENOENT, errno);
    EXPECT_EQ(-1, ::mkdir(mnt("y").c_str(), 0755));
    EXPECT_EQ(EEXIST, errno);
    EXPECT_EQ(-1, ::unlink(mnt("full").c_str()));
    EXPECT_EQ(EISDIR, errno);
    // renameat2(RENAME_NOREPLACE) onto a file refuses; RENAME_EXCHANGE is not offered.
    EXPECT_EQ(-1, renameat2(AT_FDCWD, mnt("full/x").c_str(), AT_FDCWD, mnt("y").c_str(),
                            RENAME_NOREPLACE));
    EXPECT_EQ(EEXIST, errno);
    EXPECT_EQ("y", read_all(src("y")));
    EXPECT_EQ(-1, renameat2(AT_FDCWD, mnt("full/x").c_str(), AT_FDCWD, mnt("y").c_str(),
                            RENAME_EXCHANGE));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(0, renameat2(AT_FDCWD, mnt("full/x").c_str(), AT_FDCWD, mnt("z").c_str(),
                           RENAME_NOREPLACE));
    EXPECT_EQ("x", read_all(src("z")));
}

// A hostile client: opens through the mount until the process (the server
// shares it) has no descriptor left. Each open costs the server one for the
// source file too, so some opens fail in the server, which must answer
// EMFILE, lose none of the files already open, and give every descriptor
// back once the kernel releases them.
TEST_F(FuseMount, RunningOutOfDescriptorsFailsOpensWithEmfileAndRecovers) {
#if defined(PHOTON_ASAN) || defined(PHOTON_TSAN)
    // Their runtimes need descriptors too: UBSan's vptr check reads memory
    // through a pipe and, refused one, reports a false error and aborts the
    // process while its own mount still serves it.
    GTEST_SKIP() << "sanitizer runtimes need descriptors of their own";
#endif
    std::ofstream(src("f")) << "hello";
    MOUNT();
    const int base = photon_test::count_open_fds();
    struct rlimit old;
    ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &old));
    struct rlimit low = old;
    low.rlim_cur = (rlim_t)base + 64;
    ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &low));
    std::vector<int> fds;
    int err = 0;
    for (int i = 0; i < 1000; i++) {
        int fd = ::open(mnt("f").c_str(), O_RDONLY);
        if (fd < 0) {
            err = errno;
            break;
        }
        fds.push_back(fd);
    }
    EXPECT_EQ(EMFILE, err);
    EXPECT_GE(fds.size(), 16u);
    char buf[8];
    for (int fd : fds) {
        ASSERT_EQ(5, ::pread(fd, buf, sizeof(buf), 0));
        EXPECT_EQ(0, memcmp(buf, "hello", 5));
    }
    for (int fd : fds) ::close(fd);
    ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &old));
    // close(2) does not wait for FUSE_RELEASE; the server closes its copies after.
    EXPECT_TRUE(photon_test::wait_for_off_vcpu(
        [&] { return photon_test::count_open_fds() <= base; }, 10000))
        << photon_test::count_open_fds() << " fds open, " << base << " before";
    EXPECT_EQ("hello", read_all(mnt("f")));
}

// With attr_timeout=0 every fstat reaches the server, which has no path for
// the node any more: it answers through the open handle.
TEST_F(FuseMount, AnUnlinkedOpenFileStaysUsable) {
    MOUNT({"-o", "attr_timeout=0"});
    int fd = ::open(mnt("tmp").c_str(), O_CREAT | O_RDWR, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(0, ::unlink(mnt("tmp").c_str()));
    EXPECT_EQ(5, ::pwrite(fd, "hello", 5, 0));
    EXPECT_EQ(0, ::ftruncate(fd, 3)) << strerror(errno);
    struct stat st;
    ASSERT_EQ(0, ::fstat(fd, &st)) << strerror(errno);
    EXPECT_EQ(3, st.st_size);
    EXPECT_EQ(0, ::fchmod(fd, 0640)) << strerror(errno);
    EXPECT_EQ(0, ::futimens(fd, nullptr)) << strerror(errno);  // "now"
    ASSERT_EQ(0, ::fstat(fd, &st));
    EXPECT_EQ(0640u, st.st_mode & 07777);
    struct timespec explicit_times[2] = {{1, 0}, {1, 0}};
    EXPECT_EQ(-1, ::futimens(fd, explicit_times));  // IFile cannot set them
    EXPECT_EQ(ENOENT, errno);
    char buf[8] = {};
    EXPECT_EQ(3, ::pread(fd, buf, sizeof(buf), 0));
    EXPECT_STREQ("hel", buf);
    ::close(fd);
    EXPECT_NE(0, ::access(src("tmp").c_str(), F_OK));
}

TEST_F(FuseMount, ListsALargeDirectoryAcrossManyReplies) {
    const int n = 1500;
    for (int i = 0; i < n; i++) std::ofstream(src("file-with-a-long-name-" + std::to_string(i)));
    MOUNT();
    std::string out;
    ASSERT_EQ(0, run_script(dir_.path(),
                            "ls " + mnt_ + " | wc -l; ls -l " + mnt_ +
                                " | grep -c file-with; ls -f " + mnt_ + " | wc -l",
                            &out));
    EXPECT_EQ(std::to_string(n) + "\n" + std::to_string(n) + "\n" + std::to_string(n + 2) + "\n",
              out);
}

// subfs (localfs with a root) has no IFileSystemXAttr: the kernel learns
// ENOSYS once and answers EOPNOTSUPP itself.
TEST_F(FuseMount, ExtendedAttributesOfAFileSystemWithoutThemAreNotSupported) {
    std::ofstream(src("f")) << "x";
    MOUNT();
    char buf[8];
    for (int i = 0; i < 2; i++) {
        EXPECT_EQ(-1, ::setxattr(mnt("f").c_str(), "user.k", "v", 1, 0));
        EXPECT_EQ(EOPNOTSUPP, errno);
        EXPECT_EQ(-1, ::getxattr(mnt("f").c_str(), "user.k", buf, sizeof(buf)));
        EXPECT_EQ(EOPNOTSUPP, errno);
    }
}

TEST_F(FuseMount, ExtendedAttributesGoThrough) {
    std::ofstream(src("f")) << "x";
    if (::setxattr(src("f").c_str(), "user.probe", "1", 1, 0) < 0)
        GTEST_SKIP() << "the scratch file system has no user xattrs";
    fs_ = new xattr_fs(fs_, src_);
    MOUNT();
    ASSERT_EQ(0, ::setxattr(mnt("f").c_str(), "user.k", "value", 5, 0)) << strerror(errno);
    char buf[64] = {};
    EXPECT_EQ(5, ::getxattr(src("f").c_str(), "user.k", buf, sizeof(buf)));
    EXPECT_STREQ("value", buf);
    EXPECT_EQ(5, ::getxattr(mnt("f").c_str(), "user.k", nullptr, 0));  // the size
    EXPECT_EQ(-1, ::getxattr(mnt("f").c_str(), "user.k", buf, 2));
    EXPECT_EQ(ERANGE, errno);
    EXPECT_EQ(-1, ::getxattr(mnt("f").c_str(), "user.none", buf, sizeof(buf)));
    EXPECT_EQ(ENODATA, errno);
    ssize_t n = ::listxattr(mnt("f").c_str(), buf, sizeof(buf));
    EXPECT_NE(std::string::npos, std::string(buf, n > 0 ? n : 0).find("user.k"));
    EXPECT_EQ(0, ::removexattr(mnt("f").c_str(), "user.k"));
    EXPECT_EQ(-1, ::getxattr(src("f").c_str(), "user.k", buf, sizeof(buf)));
}

TEST_F(FuseMount, DdWithODirectMovesAlignedBlocksIntact) {
    MOUNT();
    std::string out;
    int r = run_script(
        dir_.path(),
        "dd if=/dev/urandom of=" + mnt("direct") + " bs=1M count=8 oflag=direct status=none", &out);
    if (r != 0 && out.find("Invalid argument") != std::string::npos)
        GTEST_SKIP() << "the kernel refuses O_DIRECT here: " << out;
    ASSERT_EQ(0, r);
    ASSERT_EQ(0, run_script(dir_.path(),
                            "dd if=" + mnt("direct") +
                                " bs=1M iflag=direct status=none | "
                                "sha256sum; sha256sum < " +
                                src("direct"),
                            &out));
    auto nl = out.find('\n');
    EXPECT_EQ(out.substr(0, nl), out.substr(nl + 1, nl));
    struct stat st;
    ASSERT_EQ(0, ::stat(src("direct").c_str(), &st));
    EXPECT_EQ(8 << 20, st.st_size);
}

// -o splice_write: reads of local files go file -> pipe -> /dev/fuse.
TEST_F(FuseMount, SplicedReadsDeliverTheSameBytes) {
    write_pattern(src("f"), (8 << 20) + 12345, 6);
    MOUNT({"-o", "splice_write,splice_move"});
    std::string out;
    ASSERT_EQ(0, run_script(dir_.path(),
                            "sha256sum < " + mnt("f") + "; dd if=" + mnt("f") +
                                " bs=64k iflag=direct status=none | sha256sum; "
                                "sha256sum < " +
                                src("f"),
                            &out));
    std::istringstream lines(out);
    std::string a, b, c;
    std::getline(lines, a), std::getline(lines, b), std::getline(lines, c);
    EXPECT_EQ(c.substr(0, 64), a.substr(0, 64));
    EXPECT_EQ(c.substr(0, 64), b.substr(0, 64));
    int fd = ::open(mnt("f").c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    std::string want = read_all(src("f")).substr(777777, 100000), got(100000, '\0');
    EXPECT_EQ(100000, ::pread(fd, &got[0], got.size(), 777777));
    EXPECT_EQ(want, got);
    EXPECT_EQ(12345, ::pread(fd, &got[0], got.size(), 8 << 20));  // short at the end
    ::close(fd);
}

// With the writeback cache the kernel reads around partial writes and does
// O_APPEND itself: write-only and append opens still work.
TEST_F(FuseMount, WritebackCacheKeepsWriteOnlyAndAppendOpensWorking) {
    MOUNT({"-o", "writeback_cache"});
    std::string out;
    ASSERT_EQ(0, run_script(dir_.path(),
                            "cd " + mnt_ +
                                "; echo one > f; echo two >> f; "
                                "printf X | dd of=f bs=1 seek=1 conv=notrunc "
                                "status=none; cat f",
                            &out));
    EXPECT_EQ("oXe\ntwo\n", out);
    unmount();
    EXPECT_EQ("oXe\ntwo\n", read_all(src("f")));
}

TEST_F(FuseMount, EightConcurrentReadersSeeTheSameBytes) {
    write_pattern(src("shared"), 24 << 20, 3);
    MOUNT({"-o", "direct_io,max_read=131072"});  // every read reaches the server
    std::string out;
    ASSERT_EQ(0, run_script(dir_.path(),
                            "for i in 1 2 3 4 5 6 7 8; do sha256sum < " + mnt("shared") + " > " +
                                dir_.path() + "/sum$i & done; wait; cat " + dir_.path() +
                                "/sum*; sha256sum < " + src("shared"),
                            &out));
    std::istringstream lines(out);
    std::vector<std::string> sums;
    for (std::string l; std::getline(lines, l);) sums.push_back(l);
    ASSERT_EQ(9u, sums.size());
    for (int i = 0; i < 8; i++) EXPECT_EQ(sums[8], sums[i]) << "reader " << i;
}

// Four reads wait inside the file system until all four are there: possible
// only if requests run concurrently; and no OS thread is made for them.
TEST_F(FuseMount, RequestsRunConcurrentlyWithoutAThreadEach) {
    for (int i = 0; i < 4; i++) std::ofstream(src("f" + std::to_string(i))) << "data" << i;
    auto hooked = new hooked_fs(fs_);
    fs_ = hooked;
    std::atomic<int> arrived{0}, threads_at_peak{0};
    size_t threads_before = 0;
    hooked->on_pread = [&] {
        if (++arrived == 4) threads_at_peak = (int)thread_count();
        for (int i = 0; i < 1000 && arrived < 4; i++) thread_usleep(10 * 1000);
        return 0;
    };
    MOUNT({"-o", "direct_io"});
    threads_before = thread_count();  // the test's and the server's
    std::vector<std::thread> readers;
    std::string got[4];
    for (int i = 0; i < 4; i++)
        readers.emplace_back([&, i] { got[i] = read_all(mnt("f" + std::to_string(i))); });
    for (auto& t : readers) t.join();
    EXPECT_GE(arrived.load(), 4);
    for (int i = 0; i < 4; i++) EXPECT_EQ("data" + std::to_string(i), got[i]);
    EXPECT_EQ(threads_before + 4, (size_t)threads_at_peak.load())
        << "the four readers are the only new threads";
}

// A signal to a program blocked in a read makes the kernel send
// FUSE_INTERRUPT: the request's coroutine is woken and its read fails.
TEST_F(FuseMount, ASignalInterruptsARequestBlockedInTheFileSystem) {
    std::ofstream(src("slow")) << "slow";
    auto hooked = new hooked_fs(fs_);
    fs_ = hooked;
    std::atomic<bool> in_pread{false};
    std::atomic<int> sleep_errno{0};
    hooked->on_pread = [&] {
        in_pread = true;
        int r = thread_usleep(20 * 1000 * 1000);  // 20 s unless woken
        sleep_errno = r < 0 ? errno : 0;
        return r;
    };
    MOUNT({"-o", "direct_io"});
    struct sigaction sa = {}, old;
    sa.sa_handler = [](int) {};
    sigaction(SIGUSR1, &sa, &old);  // no SA_RESTART: read(2) returns EINTR
    std::atomic<ssize_t> got{1};
    std::atomic<int> got_errno{0};
    auto start = std::chrono::steady_clock::now();
    std::thread reader([&] {
        int fd = ::open(mnt("slow").c_str(), O_RDONLY);
        char buf[16];
        got = ::read(fd, buf, sizeof(buf));
        got_errno = errno;
        ::close(fd);
    });
    ASSERT_TRUE(photon_test::wait_for_off_vcpu([&] { return in_pread.load(); }, 10000));
    pthread_kill(reader.native_handle(), SIGUSR1);
    reader.join();
    sigaction(SIGUSR1, &old, nullptr);
    EXPECT_EQ(-1, got.load());
    EXPECT_EQ(EINTR, got_errno.load());
    EXPECT_EQ(EINTR, sleep_errno.load());
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(15));
}

TEST_F(FuseMount, ServesOnTheCallersVcpuWithEitherEventEngine) {
    std::ofstream(src("f")) << "engine";
    for (uint64_t engine : {INIT_EVENT_EPOLL, INIT_EVENT_IOURING}) {
        SCOPED_TRACE(engine == INIT_EVENT_EPOLL ? "epoll" : "io_uring");
        std::atomic<bool> no_engine{false};
        auto run = [&](int c, char** v) {
            if (photon::init(engine, INIT_IO_NONE) < 0) return no_engine = true, -1;
            int r = fs::fuser_go(fs_, c, v);
            photon::fini();
            return r;
        };
        if (mount({}, run) != "") {
            if (no_engine) continue;  // io_uring refused by this kernel
            FAIL() << "did not mount";
        }
        EXPECT_EQ("engine", read_all(mnt("f")));
        unmount();
        EXPECT_EQ(0, rc_.load());
    }
}

TEST_F(FuseMount, SeveralVcpusServeOneMount) {
    write_pattern(src("f"), 4 << 20, 4);
    MOUNT({"-o", "threads=3,direct_io"});
    std::string out;
    ASSERT_EQ(0, run_script(dir_.path(),
                            "for i in 1 2 3 4; do cat " + mnt("f") +
                                " > /dev/null & done; wait; cmp " + mnt("f") + " " + src("f"),
                            &out));
    unmount();
    EXPECT_EQ(0, rc_.load());
}

TEST_F(FuseMount, AnExternalUnmountEndsFuserGoWithZero) {
    MOUNT();
    ASSERT_EQ(0, umount2(mnt_.c_str(), 0));
    ASSERT_TRUE(photon_test::wait_for_off_vcpu([&] { return done_.load(); }, 10000));
    EXPECT_EQ(0, rc_.load());
}

// ---- path-based operations (run_fuse) and user low-level ones (run_fuse_ll) ----------

TEST_F(FuseMount, XmpOperationsServeThroughRunFuse) {
    write_pattern(src("big"), 3 << 20, 5);
    ASSERT_EQ(0, ::mkdir(src("d").c_str(), 0755));
    fs::set_fuse_fs(fs_);
    MOUNT({}, [](int c, char** v) { return fs::run_fuse(c, v, fs::get_fuse_xmp_oper(), nullptr); });
    std::string out;
    ASSERT_EQ(0, run_script(dir_.path(), "cd " + mnt_ + R"(
cp big d/copy
cmp big d/copy
mv d/copy d/moved
touch -d '2002-02-02' d/moved
stat -c %s d/moved
ls -l d
chmod 600 d/moved
ln -s moved d/sym
readlink d/sym
rm d/moved d/sym
rmdir d
)",
                            &out));
    EXPECT_NE(std::string::npos, out.find("3145728\n")) << out;
    EXPECT_NE(std::string::npos, out.find("3145728 Feb  2  2002 moved"))
        << out;  // real sizes in ls -l
    EXPECT_NE(0, ::access(src("d").c_str(), F_OK));
    fs::set_fuse_fs(nullptr);
}

// libfuse's path layer locks paths with pthread locks; an unlink that waited
// for a getattr yielding in the file system blocked the vCPU for good.
TEST_F(FuseMount, RunFuseUnlinkWhileAPathCallYieldsDoesNotDeadlock) {
    std::ofstream(src("victim")) << "v";
    auto hooked = new hooked_fs(fs_);
    fs_ = hooked;
    std::atomic<bool> armed{false}, in_lstat{false};
    hooked->on_lstat = [&](const char* p) {
        if (!armed || strcmp(p, "/victim") != 0) return;
        in_lstat = true;
        thread_usleep(300 * 1000);  // yields, holding libfuse's read lock on the path
    };
    fs::set_fuse_fs(fs_);
    MOUNT({"-o", "entry_timeout=60,attr_timeout=0"},
          [](int c, char** v) { return fs::run_fuse(c, v, fs::get_fuse_xmp_oper(), nullptr); });
    struct stat st;
    ASSERT_EQ(0, ::stat(mnt("victim").c_str(), &st));  // looked up; the name stays cached
    armed = true;
    std::thread getattr([&] { ::stat(mnt("victim").c_str(), &st); });
    ASSERT_TRUE(photon_test::wait_for_off_vcpu([&] { return in_lstat.load(); }, 10000));
    std::atomic<int> unlinked{1};
    std::thread remover([&] { unlinked = ::unlink(mnt("victim").c_str()); });
    bool finished = photon_test::wait_for_off_vcpu([&] { return unlinked.load() != 1; }, 10000);
    EXPECT_TRUE(finished) << "unlink hangs: the vCPU is deadlocked";
    if (!finished) {  // the server cannot recover: fail its requests, leave it
        abort_connection(mnt_);
        getattr.join(), remover.join();
        umount2(mnt_.c_str(), MNT_DETACH);
        server_.detach();
        leak_fs_ = true;
        return;
    }
    getattr.join(), remover.join();
    EXPECT_EQ(0, unlinked.load());
    EXPECT_NE(0, ::access(src("victim").c_str(), F_OK));
    fs::set_fuse_fs(nullptr);
}

namespace {
// A read-only file system of one file, /hello, in libfuse's low-level API.
const char kHello[] = "hello from the low-level API\n";

void hello_stat(fuse_ino_t ino, struct stat* st) {
    memset(st, 0, sizeof(*st));
    st->st_ino = ino;
    st->st_mode = ino == 1 ? (S_IFDIR | 0755) : (S_IFREG | 0444);
    st->st_nlink = ino == 1 ? 2 : 1;
    st->st_size = ino == 1 ? 0 : sizeof(kHello) - 1;
}
void hello_lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
    if (parent != 1 || strcmp(name, "hello") != 0) return (void)fuse_reply_err(req, ENOENT);
    struct fuse_entry_param e;
    memset(&e, 0, sizeof(e));
    e.ino = 2;
    hello_stat(2, &e.attr);
    fuse_reply_entry(req, &e);
}
void hello_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info*) {
    if (ino > 2) return (void)fuse_reply_err(req, ENOENT);
    struct stat st;
    hello_stat(ino, &st);
    fuse_reply_attr(req, &st, 1.0);
}
void hello_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info*) {
    char buf[512];
    size_t used = 0;
    const char* names[] = {".", "..", "hello"};
    for (off_t i = off; i < 3; i++) {
        struct stat st;
        hello_stat(i == 2 ? 2 : 1, &st);
        size_t n = fuse_add_direntry(req, buf + used, std::min(size, sizeof(buf)) - used, names[i],
                                     &st, i + 1);
        if (used + n > std::min(size, sizeof(buf))) break;
        used += n;
    }
    fuse_reply_buf(req, buf, used);
}
void hello_read(fuse_req_t req, fuse_ino_t, size_t size, off_t off, struct fuse_file_info*) {
    thread_usleep(1000);  // handlers run in coroutines: they may sleep
    size_t len = sizeof(kHello) - 1;
    if ((size_t)off >= len) return (void)fuse_reply_buf(req, nullptr, 0);
    fuse_reply_buf(req, kHello + off, std::min(size, len - off));
}
}  // namespace

TEST_F(FuseMount, RunFuseLlServesAUsersLowLevelOperations) {
    struct fuse_lowlevel_ops ops;
    memset(&ops, 0, sizeof(ops));
    ops.lookup = hello_lookup;
    ops.getattr = hello_getattr;
    ops.readdir = hello_readdir;
    ops.read = hello_read;
    MOUNT({}, [&](int c, char** v) { return fs::run_fuse_ll(c, v, &ops, nullptr); });
    std::string out;
    ASSERT_EQ(0, run_script(dir_.path(), "ls " + mnt_ + "; cat " + mnt("hello"), &out));
    EXPECT_EQ("hello\n" + std::string(kHello), out);
}

// ---- arguments -------------------------------------------------------------------------

TEST(FuseArguments, BadOnesFailWithEinvalAndMountNothing) {
    auto fs = fs::new_localfs_adaptor();
    scratch_dir dir;
    std::string mnt = dir.path();
    auto go = [&](std::vector<std::string> args) {
        std::vector<char*> v;
        for (auto& a : args) v.push_back(&a[0]);
        v.push_back(nullptr);
        errno = 0;
        return fs::fuser_go(fs, (int)args.size(), v.data());
    };
    errno = 0;
    EXPECT_EQ(-1, fs::fuser_go(nullptr, 0, nullptr));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, go({"x", "-f"}));  // no mount point
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, go({"x", "/no/such/dir", "-f"}));
    EXPECT_EQ(-1, go({"x", mnt, "-f", "-o", "threads=0"}));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, go({"x", mnt, "-f", "-o", "max_inflight=0"}));
    EXPECT_EQ(-1, go({"x", mnt, "-f", "-o", "no_such_option"}));
    EXPECT_EQ(0, go({"x", "-h"}));
    EXPECT_EQ(0, go({"x", "-V"}));
    errno = 0;
    EXPECT_EQ(-1, fs::run_fuse(0, nullptr, nullptr, nullptr));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, fs::run_fuse_ll(0, nullptr, nullptr, nullptr));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_FALSE(is_mounted(mnt));
    delete fs;
}

TEST(FuseArguments, ExportfsFormRefusesAThreadThatIsAVcpu) {
    ASSERT_EQ(0, photon::init(INIT_EVENT_EPOLL, INIT_IO_NONE));
    auto fs = fs::new_localfs_adaptor();
    char a0[] = "x";
    char* argv[] = {a0, nullptr};
    errno = 0;
    EXPECT_EQ(-1, fs::fuser_go_exportfs(fs, 1, argv));
    EXPECT_EQ(EALREADY, errno);
    delete fs;
    photon::fini();
}

TEST_F(FuseMount, ForkingIntoTheBackgroundIsRefusedOnceAVcpuExists) {
    std::atomic<int> rc{0}, err{0};
    std::thread t([&] {
        photon::init(INIT_EVENT_EPOLL, INIT_IO_NONE);
        std::string a0 = "x", m = mnt_;
        char* argv[] = {&a0[0], &m[0], nullptr};  // no -f
        rc = fs::fuser_go(fs_, 2, argv);
        err = errno;
        photon::fini();
    });
    t.join();
    EXPECT_EQ(-1, rc.load());
    EXPECT_EQ(EINVAL, err.load());
    EXPECT_FALSE(is_mounted(mnt_));
}

// ---- the server process ending ------------------------------------------------------------

namespace {
// Forks a child that serves src on mnt with fuser_go (extra args appended);
// `serve` replaces fuser_go in the child. Returns its pid once it serves,
// or -1.
pid_t fork_server(const std::string& src, const std::string& mnt, std::vector<std::string> extra,
                  std::function<int(fs::IFileSystem*, int, char**)> serve = nullptr) {
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        auto fs = fs::new_localfs_adaptor(src.c_str());
        std::vector<std::string> args = {"fuse-child", mnt, "-f"};
        args.insert(args.end(), extra.begin(), extra.end());
        std::vector<char*> v;
        for (auto& a : args) v.push_back(&a[0]);
        v.push_back(nullptr);
        int r = serve ? serve(fs, (int)args.size(), v.data())
                      : fs::fuser_go(fs, (int)args.size(), v.data());
        _exit(r == 0 ? 0 : 3);
    }
    // Mounted and answering: with auto_unmount, fusermount3 mounts before
    // handing the server its fd, and a server killed before it took the fd
    // would leave fusermount3 nothing to watch.
    struct stat st;
    if (pid < 0 || !photon_test::wait_for_off_vcpu([&] { return is_mounted(mnt); }, 10000) ||
        ::stat(mnt.c_str(), &st) < 0)
        return -1;
    return pid;
}

// The child's exit status (as waitpid), or -1 if it did not end in 10 s.
int wait_child(pid_t pid) {
    int st = 0;
    bool ended =
        photon_test::wait_for_off_vcpu([&] { return waitpid(pid, &st, WNOHANG) == pid; }, 10000);
    if (ended) return st;
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return -1;
}
}  // namespace

TEST_F(FuseMount, SigtermAndSigintUnmountAndEndWithZero) {
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
        SCOPED_TRACE(strsignal(sig));
        pid_t pid = fork_server(src_, mnt_, {});
        ASSERT_GT(pid, 0);
        std::ofstream(src("f")) << "x";
        EXPECT_EQ("x", read_all(mnt("f")));
        kill(pid, sig);
        int st = wait_child(pid);
        EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "status " << st;
        EXPECT_FALSE(is_mounted(mnt_));
        if (is_mounted(mnt_)) umount2(mnt_.c_str(), MNT_DETACH);
    }
}

TEST_F(FuseMount, ExitWhileServingDetachesTheMount) {
    int go[2];
    ASSERT_EQ(0, pipe(go));
    auto serve_then_exit = [go](fs::IFileSystem* fs, int c, char** v) {
        std::thread([=] { fs::fuser_go(fs, c, v); }).detach();
        char b;
        ssize_t n = ::read(go[0], &b, 1);  // until the parent saw the mount served
        (void)n;
        exit(0);  // the at-exit hook detaches the mount
        return 0;
    };
    pid_t pid = fork_server(src_, mnt_, {}, serve_then_exit);
    ASSERT_EQ(1, ::write(go[1], "x", 1));
    close(go[0]), close(go[1]);
    ASSERT_GT(pid, 0);
    int st = wait_child(pid);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "status " << st;
    EXPECT_TRUE(photon_test::wait_for_off_vcpu([&] { return !is_mounted(mnt_); }, 5000));
    if (is_mounted(mnt_)) umount2(mnt_.c_str(), MNT_DETACH);
}

// What a crash leaves, and the two ways out the header documents.
TEST_F(FuseMount, AKilledServerLeavesADeadMountThatFusermountClears) {
    pid_t pid = fork_server(src_, mnt_, {});
    ASSERT_GT(pid, 0);
    kill(pid, SIGKILL);
    wait_child(pid);
    errno = 0;  // (opening asks the server; stat could answer from the cache)
    EXPECT_EQ(-1, ::open(mnt_.c_str(), O_RDONLY | O_DIRECTORY));
    EXPECT_TRUE(errno == ENOTCONN || errno == ECONNABORTED) << strerror(errno);
    EXPECT_TRUE(is_mounted(mnt_));
    std::string out;
    EXPECT_EQ(0, run_script(dir_.path(), "fusermount3 -u " + mnt_, &out));
    EXPECT_FALSE(is_mounted(mnt_));
    if (is_mounted(mnt_)) umount2(mnt_.c_str(), MNT_DETACH);
}

TEST_F(FuseMount, AutoUnmountClearsTheMountOfAKilledServer) {
    pid_t pid = fork_server(src_, mnt_, {"-o", "auto_unmount"});
    ASSERT_GT(pid, 0);
    kill(pid, SIGKILL);
    wait_child(pid);
    EXPECT_TRUE(photon_test::wait_for_off_vcpu([&] { return !is_mounted(mnt_); }, 10000));
    if (is_mounted(mnt_)) umount2(mnt_.c_str(), MNT_DETACH);
}
