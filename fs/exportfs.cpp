// exportfs (exportfs.h). The hub: a queue of calls (a mutex, since any OS
// thread may post) and a semaphore the serving vCPU's loop coroutine waits
// on; each call then runs in a coroutine of its own. An export holds what it
// wraps through a shared_ptr that every queued call copies, so the wrapped
// object goes only after the last of them, and always on the serving vCPU.
#include <dirent.h>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <type_traits>

#include <photon/common/alog.h>
#include <photon/fs/async_filesystem.h>
#include <photon/fs/exportfs.h>
#include <photon/fs/filesystem.h>
#include <photon/thread/awaiter.h>
#include <photon/thread/thread-pool.h>
#include <photon/thread/thread.h>

namespace photon {
namespace fs {
namespace {

class hub {
public:
    int start(uint32_t capacity) {
        if (!CURRENT) LOG_ERROR_RETURN(ENOSYS, -1, "exportfs_init: not on a vCPU");
        std::lock_guard<std::mutex> l(mu_);
        if (vcpu_) LOG_ERROR_RETURN(EALREADY, -1, "exportfs_init: already serving");
        pool_ = capacity ? ThreadPoolBase::new_thread_pool(capacity) : nullptr;
        thread* th = thread_create(&hub::loop, this);
        if (!th) {
            if (pool_) ThreadPoolBase::delete_thread_pool(pool_);
            pool_ = nullptr;
            return -1;
        }
        loop_ = thread_enable_join(th);
        vcpu_ = get_vcpu();
        return 0;
    }

    int stop() {
        {
            std::lock_guard<std::mutex> l(mu_);
            if (!vcpu_ || !CURRENT) LOG_ERROR_RETURN(ENOSYS, -1, "exportfs_fini: not serving");
            if (get_vcpu() != vcpu_)
                LOG_ERROR_RETURN(EINVAL, -1, "exportfs_fini: not the serving vCPU");
            vcpu_ = nullptr;    // later posts fail
            q_.emplace_back();  // the loop ends at this empty call
        }
        sem_.signal(1);
        thread_join(loop_);
        running_done_.wait_no_lock([this] { return running_ == 0; });
        if (pool_) ThreadPoolBase::delete_thread_pool(pool_);
        pool_ = nullptr;
        return 0;
    }

    // Queues f for the serving vCPU: false, with ESHUTDOWN, if none serves.
    bool post(std::function<void()> f) {
        {
            std::lock_guard<std::mutex> l(mu_);
            if (!vcpu_) {
                errno = ESHUTDOWN;
                return false;
            }
            q_.push_back(std::move(f));
        }
        sem_.signal(1);  // callable from any thread
        return true;
    }

    static hub& the();

    bool here() {
        std::lock_guard<std::mutex> l(mu_);
        return vcpu_ && CURRENT && get_vcpu() == vcpu_;
    }

private:
    static void* loop(void* arg) {
        auto h = (hub*)arg;
        for (;;) {
            h->sem_.wait(1);
            auto f = new std::function<void()>;
            {
                std::lock_guard<std::mutex> l(h->mu_);
                *f = std::move(h->q_.front());
                h->q_.pop_front();
            }
            if (!*f) {
                delete f;
                return nullptr;
            }
            h->running_++;
            thread* th =
                h->pool_ ? h->pool_->thread_create(&hub::run, f) : thread_create(&hub::run, f);
            if (!th) run(f);  // no coroutine to spare: run it here
        }
    }
    static void* run(void* arg) {
        auto f = (std::function<void()>*)arg;
        (*f)();
        delete f;
        if (--the().running_ == 0) the().running_done_.notify_all();
        return nullptr;
    }
    std::mutex mu_;
    std::deque<std::function<void()>> q_;  // under mu_
    vcpu_base* vcpu_ = nullptr;            // the serving vCPU, under mu_
    photon::semaphore sem_;                // counts q_'s entries
    join_handle* loop_ = nullptr;
    ThreadPoolBase* pool_ = nullptr;
    uint64_t running_ = 0;  // calls in their coroutines; serving vCPU only
    photon::condition_variable running_done_;
};

hub& hub::the() {
    static hub* h = new hub;  // never destroyed: exports may outlive main()
    return *h;
}

// Deletes on the serving vCPU (or here, if it is that vCPU or none serves).
template <typename T>
std::shared_ptr<T> hold(T* p) {
    return std::shared_ptr<T>(p, [](T* q) {
        if (hub::the().here() || !hub::the().post([q] { delete q; })) delete q;
    });
}

// Runs f() on the serving vCPU and reports it to done as operation `id` of
// `obj`; an error number comes with a failure. ESHUTDOWN if none serves.
template <typename R, typename F>
void perform(void* obj, uint32_t id, Done<R> done, F f) {
    auto report = [obj, id, done](AsyncResult<R>& r, int err) mutable {
        r.object = obj;
        r.operation = id;
        if (r.is_failure()) r.error_number = err;
        done(&r);
    };
    bool queued = hub::the().post([f, report]() mutable {
        AsyncResult<R> r;
        if constexpr (std::is_void<R>::value)
            f();
        else
            r.result = f();
        report(r, errno);
    });
    if (!queued) {
        AsyncResult<R> r;
        r.result = AsyncResult<R>::failure();
        report(r, ESHUTDOWN);
    }
}

// A synchronous call on the serving vCPU, waited for (vioctl's va_list must
// not outlive the caller's frame).
template <typename F>
int perform_sync(F f) {
    if (hub::the().here()) return f();
    photon::Awaiter<photon::AutoContext> done;
    int ret = -1, err = 0;
    if (!hub::the().post([&] {
            ret = f();
            err = errno;
            done.resume();  // the last touch of our frame
        }))
        return -1;
    done.suspend();
    if (ret < 0) errno = err;
    return ret;
}

// The async members: each queues the call on u_ (a copy of the holder
// goes along) and reports its result to done.
#define EXPORT_OP(T, NAME, ID, CALL, ...)                             \
    OVERRIDE_ASYNC(T, NAME, __VA_ARGS__) {                            \
        auto u = u_;                                                  \
        perform<T>(self(), ID, done, [=]() -> T { return u->CALL; }); \
    }
#define EXPORT_OP0(T, NAME, ID, CALL)                                 \
    OVERRIDE_ASYNC0(T, NAME) {                                        \
        auto u = u_;                                                  \
        perform<T>(self(), ID, done, [=]() -> T { return u->CALL; }); \
    }
#define EXPORT_XATTR(T, NAME, ID, CALL, ...)         \
    OVERRIDE_ASYNC(T, NAME, __VA_ARGS__) {           \
        auto x = x_;                                 \
        if (!x) return callback_umimplemented(done); \
        auto u = u_; /* keeps x alive too */         \
        perform<T>(self(), ID, done, [=]() -> T {    \
            (void)u;                                 \
            return x->CALL;                          \
        });                                          \
    }

class export_dir : public AsyncDIR {
public:
    explicit export_dir(DIR* d) : u_(hold(d)) {}
    EXPORT_OP0(int, closedir, OPID_CLOSEDIR, closedir())
    EXPORT_OP0(dirent*, get, OPID_GETDIR, get())
    EXPORT_OP0(int, next, OPID_NEXTDIR, next())
    EXPORT_OP0(long long, telldir, OPID_TELLDIR, telldir())
    OVERRIDE_ASYNC0(void, rewinddir) {
        auto u = u_;
        perform<void>(self(), OPID_REWINDDIR, done, [=] { u->rewinddir(); });
    }
    OVERRIDE_ASYNC(void, seekdir, long long loc) {
        auto u = u_;
        perform<void>(self(), OPID_SEEKDIR, done, [=] { u->seekdir(loc); });
    }

private:
    void* self() { return static_cast<AsyncDIR*>(this); }
    std::shared_ptr<DIR> u_;
};

class export_file : public IAsyncFile, public IAsyncFileXAttr {
public:
    export_file(IFile* f, IAsyncFileSystem* fs)
        : x_(dynamic_cast<IFileXAttr*>(f)), u_(hold(f)), fs_(fs) {}
    IAsyncFileSystem* filesystem() override { return fs_; }

    EXPORT_OP(ssize_t, read, OPID_READ, read(buf, count), void* buf, size_t count)
    EXPORT_OP(ssize_t, readv, OPID_READV, readv(iov, iovcnt), const struct iovec* iov, int iovcnt)
    EXPORT_OP(ssize_t, write, OPID_WRITE, write(buf, count), const void* buf, size_t count)
    EXPORT_OP(ssize_t, writev, OPID_WRITEV, writev(iov, iovcnt), const struct iovec* iov,
              int iovcnt)
    EXPORT_OP(ssize_t, pread, OPID_PREAD, pread(buf, count, offset), void* buf, size_t count,
              off_t offset)
    EXPORT_OP(ssize_t, preadv, OPID_PREADV, preadv(iov, iovcnt, offset), const struct iovec* iov,
              int iovcnt, off_t offset)
    EXPORT_OP(ssize_t, preadv2, OPID_PREADV2, preadv2(iov, iovcnt, offset, flags),
              const struct iovec* iov, int iovcnt, off_t offset, int flags)
    EXPORT_OP(ssize_t, pwrite, OPID_PWRITE, pwrite(buf, count, offset), const void* buf,
              size_t count, off_t offset)
    EXPORT_OP(ssize_t, pwritev, OPID_PWRITEV, pwritev(iov, iovcnt, offset), const struct iovec* iov,
              int iovcnt, off_t offset)
    EXPORT_OP(ssize_t, pwritev2, OPID_PWRITEV2, pwritev2(iov, iovcnt, offset, flags),
              const struct iovec* iov, int iovcnt, off_t offset, int flags)
    EXPORT_OP(off_t, lseek, OPID_LSEEK, lseek(offset, whence), off_t offset, int whence)
    EXPORT_OP0(int, fsync, OPID_FSYNC, fsync())
    EXPORT_OP0(int, fdatasync, OPID_FDATASYNC, fdatasync())
    EXPORT_OP0(int, close, OPID_CLOSE, close())
    EXPORT_OP(int, fchmod, OPID_FCHMOD, fchmod(mode), mode_t mode)
    EXPORT_OP(int, fchown, OPID_FCHOWN, fchown(owner, group), uid_t owner, gid_t group)
    EXPORT_OP(int, fstat, OPID_FSTAT, fstat(buf), struct stat* buf)
    EXPORT_OP(int, ftruncate, OPID_FTRUNCATE, ftruncate(length), off_t length)
    EXPORT_OP(int, sync_file_range, OPID_SYNC_FILE_RANGE, sync_file_range(offset, nbytes, flags),
              off_t offset, off_t nbytes, unsigned int flags)
    EXPORT_OP(ssize_t, do_appendv, OPID_APPENDV, do_appendv(iov, iovcnt, offset, position),
              const struct iovec* iov, int iovcnt, off_t* offset, off_t* position)
    EXPORT_OP(int, fallocate, OPID_FALLOCATE, fallocate(mode, offset, len), int mode, off_t offset,
              off_t len)
    int vioctl(int request, va_list args) override {
        auto u = u_;
        va_list copy;
        va_copy(copy, args);
        int ret = perform_sync([&] { return u->vioctl(request, copy); });
        va_end(copy);
        return ret;
    }

    EXPORT_XATTR(ssize_t, fgetxattr, OPID_FGETXATTR, fgetxattr(name, value, size), const char* name,
                 void* value, size_t size)
    EXPORT_XATTR(ssize_t, flistxattr, OPID_FLISTXATTR, flistxattr(list, size), char* list,
                 size_t size)
    EXPORT_XATTR(int, fsetxattr, OPID_FSETXATTR, fsetxattr(name, value, size, flags),
                 const char* name, const void* value, size_t size, int flags)
    EXPORT_XATTR(int, fremovexattr, OPID_FREMOVEXATTR, fremovexattr(name), const char* name)

private:
    void* self() { return static_cast<IAsyncFile*>(this); }
    IFileXAttr* x_;  // u_'s, if it has them
    std::shared_ptr<IFile> u_;
    IAsyncFileSystem* fs_;
};

class export_fs : public IAsyncFileSystem, public IAsyncFileSystemXAttr {
public:
    explicit export_fs(IFileSystem* fs) : x_(dynamic_cast<IFileSystemXAttr*>(fs)), u_(hold(fs)) {}
    Object* get_underlay_object(int) override { return u_.get(); }

    OVERRIDE_ASYNC(IAsyncFile*, open, const char* pathname, int flags) {
        auto u = u_;
        perform<IAsyncFile*>(self(), OPID_OPEN, done,
                             [=] { return wrap(u->open(pathname, flags)); });
    }
    OVERRIDE_ASYNC(IAsyncFile*, open, const char* pathname, int flags, mode_t mode) {
        auto u = u_;
        perform<IAsyncFile*>(self(), OPID_OPEN, done,
                             [=] { return wrap(u->open(pathname, flags, mode)); });
    }
    OVERRIDE_ASYNC(IAsyncFile*, creat, const char* pathname, mode_t mode) {
        auto u = u_;
        perform<IAsyncFile*>(self(), OPID_CREATE, done,
                             [=] { return wrap(u->creat(pathname, mode)); });
    }
    OVERRIDE_ASYNC(AsyncDIR*, opendir, const char* name) {
        auto u = u_;
        perform<AsyncDIR*>(self(), OPID_OPENDIR, done, [=]() -> AsyncDIR* {
            DIR* d = u->opendir(name);
            return d ? new export_dir(d) : nullptr;
        });
    }
    EXPORT_OP(int, mkdir, OPID_MKDIR, mkdir(pathname, mode), const char* pathname, mode_t mode)
    EXPORT_OP(int, rmdir, OPID_RMDIR, rmdir(pathname), const char* pathname)
    EXPORT_OP(int, symlink, OPID_SYMLINK, symlink(oldname, newname), const char* oldname,
              const char* newname)
    EXPORT_OP(ssize_t, readlink, OPID_READLINK, readlink(path, buf, bufsiz), const char* path,
              char* buf, size_t bufsiz)
    EXPORT_OP(int, link, OPID_LINK, link(oldname, newname), const char* oldname,
              const char* newname)
    EXPORT_OP(int, rename, OPID_RENAME, rename(oldname, newname), const char* oldname,
              const char* newname)
    EXPORT_OP(int, unlink, OPID_UNLINK, unlink(filename), const char* filename)
    EXPORT_OP(int, chmod, OPID_CHMOD, chmod(pathname, mode), const char* pathname, mode_t mode)
    EXPORT_OP(int, chown, OPID_CHOWN, chown(pathname, owner, group), const char* pathname,
              uid_t owner, gid_t group)
    EXPORT_OP(int, lchown, OPID_LCHOWN, lchown(pathname, owner, group), const char* pathname,
              uid_t owner, gid_t group)
    EXPORT_OP(int, statfs, OPID_STATFS, statfs(path, buf), const char* path, struct statfs* buf)
    EXPORT_OP(int, statvfs, OPID_STATVFS, statvfs(path, buf), const char* path, struct statvfs* buf)
    EXPORT_OP(int, stat, OPID_STAT, stat(path, buf), const char* path, struct stat* buf)
    EXPORT_OP(int, lstat, OPID_LSTAT, lstat(path, buf), const char* path, struct stat* buf)
    EXPORT_OP(int, access, OPID_ACCESS, access(pathname, mode), const char* pathname, int mode)
    EXPORT_OP(int, truncate, OPID_TRUNCATE, truncate(path, length), const char* path, off_t length)
    EXPORT_OP(int, utime, OPID_UTIME, utime(path, file_times), const char* path,
              const struct utimbuf* file_times)
    EXPORT_OP(int, utimes, OPID_UTIMES, utimes(path, times), const char* path,
              const struct timeval* times)
    EXPORT_OP(int, lutimes, OPID_LUTIMES, lutimes(path, times), const char* path,
              const struct timeval* times)
    EXPORT_OP(int, mknod, OPID_MKNOD, mknod(path, mode, dev), const char* path, mode_t mode,
              dev_t dev)
    EXPORT_OP0(int, syncfs, OPID_SYNCFS, syncfs())

    EXPORT_XATTR(ssize_t, getxattr, OPID_GETXATTR, getxattr(path, name, value, size),
                 const char* path, const char* name, void* value, size_t size)
    EXPORT_XATTR(ssize_t, lgetxattr, OPID_LGETXATTR, lgetxattr(path, name, value, size),
                 const char* path, const char* name, void* value, size_t size)
    EXPORT_XATTR(ssize_t, listxattr, OPID_LISTXATTR, listxattr(path, list, size), const char* path,
                 char* list, size_t size)
    EXPORT_XATTR(ssize_t, llistxattr, OPID_LLISTXATTR, llistxattr(path, list, size),
                 const char* path, char* list, size_t size)
    EXPORT_XATTR(int, setxattr, OPID_SETXATTR, setxattr(path, name, value, size, flags),
                 const char* path, const char* name, const void* value, size_t size, int flags)
    EXPORT_XATTR(int, lsetxattr, OPID_LSETXATTR, lsetxattr(path, name, value, size, flags),
                 const char* path, const char* name, const void* value, size_t size, int flags)
    EXPORT_XATTR(int, removexattr, OPID_REMOVEXATTR, removexattr(path, name), const char* path,
                 const char* name)
    EXPORT_XATTR(int, lremovexattr, OPID_LREMOVEXATTR, lremovexattr(path, name), const char* path,
                 const char* name)

private:
    void* self() { return static_cast<IAsyncFileSystem*>(this); }
    IAsyncFile* wrap(IFile* f) { return f ? new export_file(f, this) : nullptr; }
    IFileSystemXAttr* x_;  // u_'s, if it has them
    std::shared_ptr<IFileSystem> u_;
};

#undef EXPORT_OP
#undef EXPORT_OP0
#undef EXPORT_XATTR

}  // namespace

int exportfs_init(uint32_t thread_pool_capacity) { return hub::the().start(thread_pool_capacity); }
int exportfs_fini() { return hub::the().stop(); }

IAsyncFile* export_as_async_file(IFile* file) {
    if (!file) LOG_ERROR_RETURN(EINVAL, nullptr, "exportfs: no file");
    return new export_file(file, nullptr);
}
IAsyncFileSystem* export_as_async_fs(IFileSystem* fs) {
    if (!fs) LOG_ERROR_RETURN(EINVAL, nullptr, "exportfs: no file system");
    return new export_fs(fs);
}
AsyncDIR* export_as_async_dir(DIR* dir) {
    if (!dir) LOG_ERROR_RETURN(EINVAL, nullptr, "exportfs: no directory");
    return new export_dir(dir);
}

IFile* export_as_sync_file(IFile* file) {
    return new_async_file_adaptor(export_as_async_file(file), -1);
}
IFileSystem* export_as_sync_fs(IFileSystem* fs) {
    return new_async_fs_adaptor(export_as_async_fs(fs), -1);
}
DIR* export_as_sync_dir(DIR* dir) { return new_async_dir_adaptor(export_as_async_dir(dir), -1); }

}  // namespace fs
}  // namespace photon
