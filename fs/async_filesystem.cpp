// The adaptors of async_filesystem.h. One set of adaptor classes serves both
// kinds, with a policy that performs a call of the wrapped object:
//   on_helpers: a blocking call, run on a helper OS thread while the caller
//               is parked (new_sync_*_adaptor);
//   on_async:   an async call, the caller parked until its `done`
//               (new_async_*_adaptor).
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include <photon/common/alog.h>
#include <photon/fs/async_filesystem.h>
#include <photon/fs/filesystem.h>
#include <photon/thread/awaiter.h>
#include <photon/thread/thread.h>

namespace photon {
namespace fs {
namespace {

// OS threads for blocking calls: one is started whenever the queue holds more
// calls than there are idle threads, up to kMax; they are kept for later
// calls. Never destroyed: a call still blocked at exit must not find its
// thread's pool gone.
class blocking_pool {
public:
    static constexpr size_t kMax = 64;

    void run(std::function<void()> f) {
        std::lock_guard<std::mutex> l(mu_);
        q_.push_back(std::move(f));
        if (q_.size() > idle_ && threads_ < kMax) {
            threads_++;
            std::thread(&blocking_pool::work, this).detach();
        } else {
            cv_.notify_one();
        }
    }

private:
    void work() {
        std::unique_lock<std::mutex> l(mu_);
        for (;;) {
            while (q_.empty()) {
                idle_++;
                cv_.wait(l);
                idle_--;
            }
            auto f = std::move(q_.front());
            q_.pop_front();
            l.unlock();
            f();
            l.lock();
        }
    }

    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<std::function<void()>> q_;
    size_t idle_ = 0, threads_ = 0;
};

blocking_pool& helpers() {
    static blocking_pool* pool = new blocking_pool;
    return *pool;
}

// f() on a helper thread, the calling coroutine parked meanwhile; errno
// comes back with the result. Outside a vCPU there is nothing to keep
// running, so f() runs right here.
template <typename F>
auto run_blocking(F f) -> decltype(f()) {
    using R = decltype(f());
    if (!CURRENT) return f();
    photon::Awaiter<photon::AutoContext> done;
    int err = 0;
    if constexpr (std::is_void<R>::value) {
        helpers().run([&] {
            f();
            err = errno;
            done.resume();  // the last touch of our frame
        });
        done.suspend();
        errno = err;
    } else {
        R r{};
        helpers().run([&] {
            r = f();
            err = errno;
            done.resume();
        });
        done.suspend();
        errno = err;
        return r;
    }
}

struct on_helpers {
    template <typename T, typename F, typename... A>
    auto perform(T* obj, F f, A... a) {
        return run_blocking([&] { return (obj->*f)(a...); });
    }
};

struct on_async {
    uint64_t timeout;
    template <typename T, typename F, typename... A>
    typename af_traits<F>::result_type perform(T* obj, F f, A... a) {
        using R = typename af_traits<F>::result_type;
        return AsyncFuncWrapper<R, T, A...>(obj, f, timeout).call(a...);
    }
};

// What goes with what, per kind of wrapped file system.
template <typename UFS>
struct kinds;
template <>
struct kinds<IFileSystem> {
    using file = IFile;
    using dir = DIR;
    using file_xattr = IFileXAttr;
    using fs_xattr = IFileSystemXAttr;
    using open2 = IFile* (IFileSystem::*)(const char*, int);
    using open3 = IFile* (IFileSystem::*)(const char*, int, mode_t);
};
template <>
struct kinds<IAsyncFileSystem> {
    using file = IAsyncFile;
    using dir = AsyncDIR;
    using file_xattr = IAsyncFileXAttr;
    using fs_xattr = IAsyncFileSystemXAttr;
    using open2 = AsyncFunc<IAsyncFile*, IAsyncFileSystem, const char*, int>;
    using open3 = AsyncFunc<IAsyncFile*, IAsyncFileSystem, const char*, int, mode_t>;
};

#define PERFORM(obj, T, func, ...) p_.perform(obj, &T::func, ##__VA_ARGS__)

template <typename UF, typename P>
class file_adaptor : public IFile {
public:
    file_adaptor(UF* f, IFileSystem* fs, P p) : f_(f), fs_(fs), p_(p) {}
    ~file_adaptor() override { delete f_; }

    IFileSystem* filesystem() override { return fs_; }
    Object* get_underlay_object(int) override { return f_; }
    int close() override { return PERFORM(f_, UF, close); }
    ssize_t read(void* buf, size_t count) override { return PERFORM(f_, UF, read, buf, count); }
    ssize_t readv(const struct iovec* iov, int iovcnt) override {
        return PERFORM(f_, UF, readv, iov, iovcnt);
    }
    ssize_t readv_mutable(struct iovec* iov, int iovcnt) override {
        return PERFORM(f_, UF, readv_mutable, iov, iovcnt);
    }
    ssize_t write(const void* buf, size_t count) override {
        return PERFORM(f_, UF, write, buf, count);
    }
    ssize_t writev(const struct iovec* iov, int iovcnt) override {
        return PERFORM(f_, UF, writev, iov, iovcnt);
    }
    ssize_t writev_mutable(struct iovec* iov, int iovcnt) override {
        return PERFORM(f_, UF, writev_mutable, iov, iovcnt);
    }
    ssize_t pread(void* buf, size_t count, off_t offset) override {
        return PERFORM(f_, UF, pread, buf, count, offset);
    }
    ssize_t pwrite(const void* buf, size_t count, off_t offset) override {
        return PERFORM(f_, UF, pwrite, buf, count, offset);
    }
    ssize_t preadv(const struct iovec* iov, int iovcnt, off_t offset) override {
        return PERFORM(f_, UF, preadv, iov, iovcnt, offset);
    }
    ssize_t preadv_mutable(struct iovec* iov, int iovcnt, off_t offset) override {
        return PERFORM(f_, UF, preadv_mutable, iov, iovcnt, offset);
    }
    ssize_t preadv2(const struct iovec* iov, int iovcnt, off_t offset, int flags) override {
        return PERFORM(f_, UF, preadv2, iov, iovcnt, offset, flags);
    }
    ssize_t preadv2_mutable(struct iovec* iov, int iovcnt, off_t offset, int flags) override {
        return PERFORM(f_, UF, preadv2_mutable, iov, iovcnt, offset, flags);
    }
    ssize_t pwritev(const struct iovec* iov, int iovcnt, off_t offset) override {
        return PERFORM(f_, UF, pwritev, iov, iovcnt, offset);
    }
    ssize_t pwritev_mutable(struct iovec* iov, int iovcnt, off_t offset) override {
        return PERFORM(f_, UF, pwritev_mutable, iov, iovcnt, offset);
    }
    ssize_t pwritev2(const struct iovec* iov, int iovcnt, off_t offset, int flags) override {
        return PERFORM(f_, UF, pwritev2, iov, iovcnt, offset, flags);
    }
    ssize_t pwritev2_mutable(struct iovec* iov, int iovcnt, off_t offset, int flags) override {
        return PERFORM(f_, UF, pwritev2_mutable, iov, iovcnt, offset, flags);
    }
    off_t lseek(off_t offset, int whence) override {
        return PERFORM(f_, UF, lseek, offset, whence);
    }
    int fstat(struct stat* buf) override { return PERFORM(f_, UF, fstat, buf); }
    int fsync() override { return PERFORM(f_, UF, fsync); }
    int fdatasync() override { return PERFORM(f_, UF, fdatasync); }
    int sync_file_range(off_t offset, off_t nbytes, unsigned int flags) override {
        return PERFORM(f_, UF, sync_file_range, offset, nbytes, flags);
    }
    int fchmod(mode_t mode) override { return PERFORM(f_, UF, fchmod, mode); }
    int fchown(uid_t owner, gid_t group) override { return PERFORM(f_, UF, fchown, owner, group); }
    int ftruncate(off_t length) override { return PERFORM(f_, UF, ftruncate, length); }
    int fallocate(int mode, off_t offset, off_t len) override {
        return PERFORM(f_, UF, fallocate, mode, offset, len);
    }
    ssize_t do_appendv(const struct iovec* iov, int iovcnt, off_t* offset,
                       off_t* position) override {
        return PERFORM(f_, UF, do_appendv, iov, iovcnt, offset, position);
    }
    // va_list stays on the caller's thread: a synchronous call in both kinds.
    int vioctl(int request, va_list args) override { return f_->vioctl(request, args); }

protected:
    UF* f_;
    IFileSystem* fs_;
    P p_;
};

template <typename UF, typename P>
class file_xattr_adaptor : public file_adaptor<UF, P>, public IFileXAttr {
    using X = typename kinds<std::conditional_t<std::is_same<UF, IFile>::value, IFileSystem,
                                                IAsyncFileSystem>>::file_xattr;

public:
    file_xattr_adaptor(UF* f, X* x, IFileSystem* fs, P p) : file_adaptor<UF, P>(f, fs, p), x_(x) {}
    ssize_t fgetxattr(const char* name, void* value, size_t size) override {
        return this->p_.perform(x_, &X::fgetxattr, name, value, size);
    }
    ssize_t flistxattr(char* list, size_t size) override {
        return this->p_.perform(x_, &X::flistxattr, list, size);
    }
    int fsetxattr(const char* name, const void* value, size_t size, int flags) override {
        return this->p_.perform(x_, &X::fsetxattr, name, value, size, flags);
    }
    int fremovexattr(const char* name) override {
        return this->p_.perform(x_, &X::fremovexattr, name);
    }

private:
    X* x_;
};

template <typename UFS, typename P>
IFile* wrap_file(typename kinds<UFS>::file* f, IFileSystem* fs, P p) {
    using UF = typename kinds<UFS>::file;
    if (!f) return nullptr;
    auto x = dynamic_cast<typename kinds<UFS>::file_xattr*>(f);
    if (x) return new file_xattr_adaptor<UF, P>(f, x, fs, p);
    return new file_adaptor<UF, P>(f, fs, p);
}

template <typename UD, typename P>
class dir_adaptor : public DIR {
public:
    dir_adaptor(UD* d, P p) : d_(d), p_(p) {}
    ~dir_adaptor() override { delete d_; }
    Object* get_underlay_object(int) override { return d_; }
    int closedir() override { return PERFORM(d_, UD, closedir); }
    dirent* get() override { return PERFORM(d_, UD, get); }
    int next() override { return PERFORM(d_, UD, next); }
    void rewinddir() override { PERFORM(d_, UD, rewinddir); }
    void seekdir(long long loc) override { PERFORM(d_, UD, seekdir, loc); }
    long long telldir() override { return PERFORM(d_, UD, telldir); }

private:
    UD* d_;
    P p_;
};

template <typename UD, typename P>
DIR* wrap_dir(UD* d, P p) {
    return d ? new dir_adaptor<UD, P>(d, p) : nullptr;
}

template <typename UFS, typename P>
class fs_adaptor : public IFileSystem {
public:
    fs_adaptor(UFS* fs, P p) : fs_(fs), p_(p) {}
    ~fs_adaptor() override { delete fs_; }
    Object* get_underlay_object(int) override { return fs_; }

    IFile* open(const char* pathname, int flags) override {
        auto open2 = static_cast<typename kinds<UFS>::open2>(&UFS::open);
        return wrap(p_.perform(fs_, open2, pathname, flags));
    }
    IFile* open(const char* pathname, int flags, mode_t mode) override {
        auto open3 = static_cast<typename kinds<UFS>::open3>(&UFS::open);
        return wrap(p_.perform(fs_, open3, pathname, flags, mode));
    }
    IFile* creat(const char* pathname, mode_t mode) override {
        return wrap(PERFORM(fs_, UFS, creat, pathname, mode));
    }
    DIR* opendir(const char* pathname) override {
        return wrap_dir(PERFORM(fs_, UFS, opendir, pathname), p_);
    }
    int mkdir(const char* pathname, mode_t mode) override {
        return PERFORM(fs_, UFS, mkdir, pathname, mode);
    }
    int rmdir(const char* pathname) override { return PERFORM(fs_, UFS, rmdir, pathname); }
    int symlink(const char* oldname, const char* newname) override {
        return PERFORM(fs_, UFS, symlink, oldname, newname);
    }
    ssize_t readlink(const char* pathname, char* buf, size_t bufsiz) override {
        return PERFORM(fs_, UFS, readlink, pathname, buf, bufsiz);
    }
    int link(const char* oldname, const char* newname) override {
        return PERFORM(fs_, UFS, link, oldname, newname);
    }
    int rename(const char* oldname, const char* newname) override {
        return PERFORM(fs_, UFS, rename, oldname, newname);
    }
    int unlink(const char* pathname) override { return PERFORM(fs_, UFS, unlink, pathname); }
    int chmod(const char* pathname, mode_t mode) override {
        return PERFORM(fs_, UFS, chmod, pathname, mode);
    }
    int chown(const char* pathname, uid_t owner, gid_t group) override {
        return PERFORM(fs_, UFS, chown, pathname, owner, group);
    }
    int lchown(const char* pathname, uid_t owner, gid_t group) override {
        return PERFORM(fs_, UFS, lchown, pathname, owner, group);
    }
    int stat(const char* path, struct stat* buf) override {
        return PERFORM(fs_, UFS, stat, path, buf);
    }
    int lstat(const char* path, struct stat* buf) override {
        return PERFORM(fs_, UFS, lstat, path, buf);
    }
    int access(const char* path, int mode) override {
        return PERFORM(fs_, UFS, access, path, mode);
    }
    int truncate(const char* path, off_t length) override {
        return PERFORM(fs_, UFS, truncate, path, length);
    }
    int syncfs() override { return PERFORM(fs_, UFS, syncfs); }
    int statfs(const char* path, struct statfs* buf) override {
        return PERFORM(fs_, UFS, statfs, path, buf);
    }
    int statvfs(const char* path, struct statvfs* buf) override {
        return PERFORM(fs_, UFS, statvfs, path, buf);
    }
    int utime(const char* path, const struct utimbuf* file_times) override {
        return PERFORM(fs_, UFS, utime, path, file_times);
    }
    int utimes(const char* path, const struct timeval* times) override {
        return PERFORM(fs_, UFS, utimes, path, times);
    }
    int lutimes(const char* path, const struct timeval* times) override {
        return PERFORM(fs_, UFS, lutimes, path, times);
    }
    int mknod(const char* path, mode_t mode, dev_t dev) override {
        return PERFORM(fs_, UFS, mknod, path, mode, dev);
    }

protected:
    IFile* wrap(typename kinds<UFS>::file* f) { return wrap_file<UFS>(f, this, p_); }
    UFS* fs_;
    P p_;
};

template <typename UFS, typename P>
class fs_xattr_adaptor : public fs_adaptor<UFS, P>, public IFileSystemXAttr {
    using X = typename kinds<UFS>::fs_xattr;

public:
    fs_xattr_adaptor(UFS* fs, X* x, P p) : fs_adaptor<UFS, P>(fs, p), x_(x) {}
    ssize_t getxattr(const char* path, const char* name, void* value, size_t size) override {
        return this->p_.perform(x_, &X::getxattr, path, name, value, size);
    }
    ssize_t lgetxattr(const char* path, const char* name, void* value, size_t size) override {
        return this->p_.perform(x_, &X::lgetxattr, path, name, value, size);
    }
    ssize_t listxattr(const char* path, char* list, size_t size) override {
        return this->p_.perform(x_, &X::listxattr, path, list, size);
    }
    ssize_t llistxattr(const char* path, char* list, size_t size) override {
        return this->p_.perform(x_, &X::llistxattr, path, list, size);
    }
    int setxattr(const char* path, const char* name, const void* value, size_t size,
                 int flags) override {
        return this->p_.perform(x_, &X::setxattr, path, name, value, size, flags);
    }
    int lsetxattr(const char* path, const char* name, const void* value, size_t size,
                  int flags) override {
        return this->p_.perform(x_, &X::lsetxattr, path, name, value, size, flags);
    }
    int removexattr(const char* path, const char* name) override {
        return this->p_.perform(x_, &X::removexattr, path, name);
    }
    int lremovexattr(const char* path, const char* name) override {
        return this->p_.perform(x_, &X::lremovexattr, path, name);
    }

private:
    X* x_;
};

#undef PERFORM

template <typename UFS, typename P>
IFileSystem* wrap_fs(UFS* fs, P p) {
    if (!fs) return nullptr;
    auto x = dynamic_cast<typename kinds<UFS>::fs_xattr*>(fs);
    if (x) return new fs_xattr_adaptor<UFS, P>(fs, x, p);
    return new fs_adaptor<UFS, P>(fs, p);
}

}  // namespace

IFile* new_async_file_adaptor(IAsyncFile* afile, uint64_t timeout) {
    return wrap_file<IAsyncFileSystem>(afile, nullptr, on_async{timeout});
}
IFileSystem* new_async_fs_adaptor(IAsyncFileSystem* afs, uint64_t timeout) {
    return wrap_fs(afs, on_async{timeout});
}
DIR* new_async_dir_adaptor(AsyncDIR* adir, uint64_t timeout) {
    return wrap_dir(adir, on_async{timeout});
}

IFile* new_sync_file_adaptor(IFile* file) {
    return wrap_file<IFileSystem>(file, nullptr, on_helpers{});
}
IFileSystem* new_sync_fs_adaptor(IFileSystem* fs) { return wrap_fs(fs, on_helpers{}); }
DIR* new_sync_dir_adaptor(DIR* dir) { return wrap_dir(dir, on_helpers{}); }

}  // namespace fs
}  // namespace photon
