// The local file system: metadata calls are plain syscalls; open() hands the
// fd to a local file of the chosen I/O engine.
#include <dirent.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstdio>

#include <photon/common/alog.h>
#include <photon/fs/localfs.h>
#include <photon/fs/subfs.h>

#include "local_file.h"

namespace photon {
namespace fs {
namespace {

// A failed call is an answer the caller handles, as the syscall's would be
// (EEXIST from mkdir, ENOENT from stat...): -1 with errno, logged at DEBUG
// only, as PhotonLibOS's localfs is silent there.
int checked(int r, const char* op, const char* path) {
    if (r < 0) LOG_DEBUG("localfs: ", op, "(", path, ") failed: ", ERRNO());
    return r;
}

class local_dir : public DIR {
public:
    explicit local_dir(::DIR* d) : dir_(d) { next(); }
    ~local_dir() override { closedir(); }
    int closedir() override {
        if (!dir_) return 0;
        int r = ::closedir(dir_);
        dir_ = nullptr;
        return r;
    }
    struct dirent* get() override {
        return cur_;
    }
    int next() override {
        if (!dir_) return errno = EBADF, -1;
        loc_ = ::telldir(dir_);
        errno = 0;
        cur_ = ::readdir(dir_);
        if (!cur_ && errno) return -1;
        return cur_ ? 1 : 0;
    }
    void rewinddir() override {
        ::rewinddir(dir_);
        next();
    }
    void seekdir(long long loc) override {
        ::seekdir(dir_, (long)loc);
        next();
    }
    long long telldir() override { return loc_; }  // where get()'s entry was read

private:
    ::DIR* dir_;
    struct dirent* cur_ = nullptr;
    long long loc_ = 0;
};

class local_fs : public IFileSystem, public IFileSystemXAttr {
public:
    explicit local_fs(int io_engine) : engine_(io_engine) {}

    IFile* open(const char* path, int flags) override { return open(path, flags, 0644); }
    IFile* open(const char* path, int flags, mode_t mode) override {
        int fd = ::open(path, local_open_flags(flags, engine_), mode);
        if (fd < 0) {  // a normal outcome (ENOENT...): like open(2), no error log
            int e = errno;
            LOG_DEBUG("localfs: cannot open ", path, " ", ERRNO(e));
            errno = e;
            return nullptr;
        }
        IFile* f = new_local_file(fd, engine_, this);
        if (!f) ::close(fd);
        return f;
    }
    IFile* creat(const char* path, mode_t mode) override {
        return open(path, O_CREAT | O_WRONLY | O_TRUNC, mode);
    }
    int mkdir(const char* p, mode_t mode) override { return checked(::mkdir(p, mode), "mkdir", p); }
    int rmdir(const char* p) override { return checked(::rmdir(p), "rmdir", p); }
    int symlink(const char* o, const char* n) override {
        return checked(::symlink(o, n), "symlink", n);
    }
    ssize_t readlink(const char* p, char* buf, size_t n) override {
        ssize_t r = ::readlink(p, buf, n);
        if (r < 0) return checked(-1, "readlink", p);
        return r;
    }
    int link(const char* o, const char* n) override { return checked(::link(o, n), "link", n); }
    int rename(const char* o, const char* n) override {
        return checked(::rename(o, n), "rename", o);
    }
    int unlink(const char* p) override { return checked(::unlink(p), "unlink", p); }
    int chmod(const char* p, mode_t m) override { return checked(::chmod(p, m), "chmod", p); }
    int chown(const char* p, uid_t u, gid_t g) override {
        return checked(::chown(p, u, g), "chown", p);
    }
    int lchown(const char* p, uid_t u, gid_t g) override {
        return checked(::lchown(p, u, g), "lchown", p);
    }
    int statfs(const char* p, struct statfs* b) override {
        return checked(::statfs(p, b), "statfs", p);
    }
    int statvfs(const char* p, struct statvfs* b) override {
        return checked(::statvfs(p, b), "statvfs", p);
    }
    int stat(const char* p, struct stat* b) override { return checked(::stat(p, b), "stat", p); }
    int lstat(const char* p, struct stat* b) override { return checked(::lstat(p, b), "lstat", p); }
    int access(const char* p, int mode) override { return checked(::access(p, mode), "access", p); }
    int truncate(const char* p, off_t len) override {
        return checked(::truncate(p, len), "truncate", p);
    }
    int utime(const char* p, const struct utimbuf* t) override {
        return checked(::utime(p, t), "utime", p);
    }
    int utimes(const char* p, const struct timeval t[2]) override {
        return checked(::utimes(p, t), "utimes", p);
    }
    int lutimes(const char* p, const struct timeval t[2]) override {
        return checked(::lutimes(p, t), "lutimes", p);
    }
    int mknod(const char* p, mode_t m, dev_t d) override {
        return checked(::mknod(p, m, d), "mknod", p);
    }
    int syncfs() override {
        ::sync();
        return 0;
    }
    DIR* opendir(const char* p) override {
        ::DIR* d = ::opendir(p);
        if (!d) return checked(-1, "opendir", p), nullptr;
        return new local_dir(d);
    }

    ssize_t getxattr(const char* p, const char* name, void* v, size_t n) override {
        return ::getxattr(p, name, v, n);
    }
    ssize_t lgetxattr(const char* p, const char* name, void* v, size_t n) override {
        return ::lgetxattr(p, name, v, n);
    }
    ssize_t listxattr(const char* p, char* list, size_t n) override {
        return ::listxattr(p, list, n);
    }
    ssize_t llistxattr(const char* p, char* list, size_t n) override {
        return ::llistxattr(p, list, n);
    }
    int setxattr(const char* p, const char* name, const void* v, size_t n, int fl) override {
        return ::setxattr(p, name, v, n, fl);
    }
    int lsetxattr(const char* p, const char* name, const void* v, size_t n, int fl) override {
        return ::lsetxattr(p, name, v, n, fl);
    }
    int removexattr(const char* p, const char* name) override { return ::removexattr(p, name); }
    int lremovexattr(const char* p, const char* name) override { return ::lremovexattr(p, name); }

private:
    int engine_;
};

}  // namespace

int IFileSystem::closedir(DIR*& dirp) {
    if (!dirp) return errno = EBADF, -1;
    int r = dirp->closedir();
    delete dirp;
    dirp = nullptr;
    return r;
}

extern "C" IFileSystem* new_localfs_adaptor(const char* root_path, int io_engine_type) {
    auto fs = new local_fs(io_engine_type);
    if (!root_path || !*root_path) return fs;
    return new_subfs(fs, root_path, true);
}

}  // namespace fs
}  // namespace photon
