// The cached file system: names and metadata go to the source, data reads
// through the pool's stores.
#include <photon/fs/cache/cache.h>
#include <photon/fs/cache/full_file_cache/cache_pool.h>
#include <photon/fs/cache/full_file_cache/quota_pool.h>

#include <string>

#include <photon/common/alog-stdstring.h>
#include <photon/common/alog.h>
#include <photon/common/io-alloc.h>
#include <photon/common/utility.h>

namespace photon {
namespace fs {

namespace {

class cached_fs : public ICachedFileSystem, public IFileSystemXAttr {
public:
    cached_fs(IFileSystem* src, ICachePool* pool, size_t page_size, IOAlloc* allocator,
              bool own_allocator, CacheFnTransFunc fn)
        : src_(src),
          pool_(pool),
          page_size_(page_size),
          allocator_(allocator),
          own_allocator_(own_allocator),
          xattr_(dynamic_cast<IFileSystemXAttr*>(src)) {
        pool_->set_trans_func(fn);
    }
    ~cached_fs() {
        delete pool_;
        if (own_allocator_) delete allocator_;
    }

    IFile* open(const char* pathname, int flags, mode_t mode) override;
    IFile* open(const char* pathname, int flags) override { return open(pathname, flags, 0); }

    int mkdir(const char* p, mode_t m) override { return src_ ? src_->mkdir(p, m) : nosrc(); }
    int rmdir(const char* p) override { return src_ ? src_->rmdir(p) : nosrc(); }
    ssize_t readlink(const char* p, char* b, size_t n) override {
        return src_ ? src_->readlink(p, b, n) : nosrc();
    }
    int rename(const char* o, const char* n) override {
        int ret = pool_->rename(abs(o), abs(n));
        return src_ ? src_->rename(o, n) : ret;
    }
    int unlink(const char* p) override {
        int ret = pool_->evict(abs(p));
        return src_ ? src_->unlink(p) : ret;
    }
    int statfs(const char* p, struct statfs* b) override {
        return src_ ? src_->statfs(p, b) : nosrc();
    }
    int statvfs(const char* p, struct statvfs* b) override {
        return src_ ? src_->statvfs(p, b) : nosrc();
    }
    int stat(const char* p, struct stat* b) override { return src_ ? src_->stat(p, b) : nosrc(); }
    int lstat(const char* p, struct stat* b) override { return src_ ? src_->lstat(p, b) : nosrc(); }
    int access(const char* p, int m) override { return src_ ? src_->access(p, m) : nosrc(); }
    DIR* opendir(const char* p) override {
        if (src_) return src_->opendir(p);
        errno = ENOSYS;
        return nullptr;
    }

    IFileSystem* get_source() override { return src_; }
    int set_source(IFileSystem* src) override {
        src_ = src;
        xattr_ = dynamic_cast<IFileSystemXAttr*>(src);
        return 0;
    }
    ICachePool* get_pool() override { return pool_; }
    int set_pool(ICachePool* pool) override {
        pool_ = pool;
        return 0;
    }

    ssize_t getxattr(const char* p, const char* n, void* v, size_t s) override {
        return xattr_ ? xattr_->getxattr(p, n, v, s) : nosrc();
    }
    ssize_t lgetxattr(const char* p, const char* n, void* v, size_t s) override {
        return xattr_ ? xattr_->lgetxattr(p, n, v, s) : nosrc();
    }
    ssize_t listxattr(const char* p, char* l, size_t s) override {
        return xattr_ ? xattr_->listxattr(p, l, s) : nosrc();
    }
    ssize_t llistxattr(const char* p, char* l, size_t s) override {
        return xattr_ ? xattr_->llistxattr(p, l, s) : nosrc();
    }
    int setxattr(const char* p, const char* n, const void* v, size_t s, int f) override {
        return xattr_ ? xattr_->setxattr(p, n, v, s, f) : nosrc();
    }
    int lsetxattr(const char* p, const char* n, const void* v, size_t s, int f) override {
        return xattr_ ? xattr_->lsetxattr(p, n, v, s, f) : nosrc();
    }
    int removexattr(const char* p, const char* n) override {
        return xattr_ ? xattr_->removexattr(p, n) : nosrc();
    }
    int lremovexattr(const char* p, const char* n) override {
        return xattr_ ? xattr_->lremovexattr(p, n) : nosrc();
    }

    UNIMPLEMENTED_POINTER(IFile* creat(const char*, mode_t) override)
    UNIMPLEMENTED(int symlink(const char*, const char*) override)
    UNIMPLEMENTED(int link(const char*, const char*) override)
    UNIMPLEMENTED(int chmod(const char*, mode_t) override)
    UNIMPLEMENTED(int chown(const char*, uid_t, gid_t) override)
    UNIMPLEMENTED(int lchown(const char*, uid_t, gid_t) override)
    UNIMPLEMENTED(int truncate(const char*, off_t) override)
    UNIMPLEMENTED(int utime(const char*, const struct utimbuf*) override)
    UNIMPLEMENTED(int utimes(const char*, const struct timeval[2]) override)
    UNIMPLEMENTED(int lutimes(const char*, const struct timeval[2]) override)
    UNIMPLEMENTED(int mknod(const char*, mode_t, dev_t) override)
    UNIMPLEMENTED(int syncfs() override)

private:
    static int nosrc() {
        errno = ENOSYS;
        return -1;
    }
    // Store names are absolute.
    static std::string abs(const char* p) {
        std::string s(p ? p : "");
        if (s.empty() || s[0] != '/') s.insert(0, "/");
        return s;
    }

    IFileSystem* src_;
    ICachePool* pool_;
    size_t page_size_;
    IOAlloc* allocator_;
    bool own_allocator_;
    IFileSystemXAttr* xattr_;
};

class CachedFile : public ICachedFile, public IFileXAttr {
public:
    CachedFile(ICacheStore* store, size_t page_size, IFileSystem* fs)
        : store_(store), page_size_(page_size), fs_(fs) {}
    ~CachedFile() { store_->release(); }

    IFileSystem* filesystem() override { return fs_; }

    ssize_t pread(void* buf, size_t count, off_t offset) override {
        struct iovec v {
            buf, count
        };
        return store_->preadv2(&v, 1, offset, 0);
    }
    ssize_t preadv(const struct iovec* iov, int iovcnt, off_t offset) override {
        return store_->preadv2(iov, iovcnt, offset, 0);
    }
    ssize_t preadv2(const struct iovec* iov, int iovcnt, off_t offset, int flags) override {
        return store_->preadv2(iov, iovcnt, offset, flags);
    }
    ssize_t pwrite(const void* buf, size_t count, off_t offset) override {
        struct iovec v {
            const_cast<void*>(buf), count
        };
        return store_->pwritev2(&v, 1, offset, 0);
    }
    ssize_t pwritev(const struct iovec* iov, int iovcnt, off_t offset) override {
        return store_->pwritev2(iov, iovcnt, offset, 0);
    }
    ssize_t pwritev2(const struct iovec* iov, int iovcnt, off_t offset, int flags) override {
        return store_->pwritev2(iov, iovcnt, offset, flags);
    }

    ssize_t read(void* buf, size_t count) override {
        auto n = pread(buf, count, read_off_);
        if (n > 0) read_off_ += n;
        return n;
    }
    ssize_t readv(const struct iovec* iov, int iovcnt) override {
        auto n = preadv(iov, iovcnt, read_off_);
        if (n > 0) read_off_ += n;
        return n;
    }
    ssize_t write(const void* buf, size_t count) override {
        auto n = pwrite(buf, count, write_off_);
        if (n > 0) write_off_ += n;
        return n;
    }
    ssize_t writev(const struct iovec* iov, int iovcnt) override {
        auto n = pwritev(iov, iovcnt, write_off_);
        if (n > 0) write_off_ += n;
        return n;
    }

    // The source's stat, unless the store knows the size (then the media
    // file's, with the source's size): a hit never opens the source.
    int fstat(struct stat* buf) override {
        if (store_->get_actual_size() > 0) return store_->fstat(buf);
        IFile* src = nullptr;
        if (store_->get_src_file(&src) != 0) return -1;
        if (src) return src->fstat(buf);
        return store_->fstat(buf);
    }
    int close() override { return store_->close(); }

    int query(off_t offset, size_t count) override {
        auto r = store_->queryRefillRange(offset, count);
        if (r.first < 0) return -1;
        return (int)r.second;
    }
    // Evicts [offset, offset + len), widened to pages (len -1: to the end).
    int fallocate(int, off_t offset, off_t len) override {
        if (len == 0) return 0;
        if (offset < 0) offset = 0;
        if (len < 0) return store_->evict(offset, -1);
        uint64_t end = photon::sat_add(offset, len);
        uint64_t b = offset / page_size_ * page_size_;
        end = photon::sat_add(end, page_size_ - 1) / page_size_ * page_size_;
        return store_->evict(b, end - b);
    }
    int fadvise(off_t offset, off_t len, int advice) override {
        if (advice != POSIX_FADV_WILLNEED)
            LOG_ERROR_RETURN(ENOSYS, -1, "cache: fadvise ` unsupported", advice);
        return store_->prefetch(len, offset, 0) < 0 ? -1 : 0;
    }

    IFile* get_source() override {
        IFile* src = nullptr;
        return store_->get_src_file(&src) == 0 ? src : nullptr;
    }
    int set_source(IFile* src) override {
        store_->set_src_file(src);
        return 0;
    }
    ICacheStore* get_store() override { return store_; }

    // Drops the cached data past `length` (the source is not changed).
    int ftruncate(off_t length) override {
        if (length < 0) length = 0;
        store_->set_cached_size(length, EVICT_FTRUNCATE);
        return 0;
    }

    ssize_t fgetxattr(const char* n, void* v, size_t s) override {
        auto x = src_xattr();
        return x ? x->fgetxattr(n, v, s) : noattr();
    }
    ssize_t flistxattr(char* l, size_t s) override {
        auto x = src_xattr();
        return x ? x->flistxattr(l, s) : noattr();
    }
    int fsetxattr(const char* n, const void* v, size_t s, int f) override {
        auto x = src_xattr();
        return x ? x->fsetxattr(n, v, s, f) : noattr();
    }
    int fremovexattr(const char* n) override {
        auto x = src_xattr();
        return x ? x->fremovexattr(n) : noattr();
    }

    int fsync() override { return store_->fdatasync(); }
    int fdatasync() override { return store_->fdatasync(); }

    UNIMPLEMENTED(off_t lseek(off_t, int) override)
    UNIMPLEMENTED(int fchmod(mode_t) override)
    UNIMPLEMENTED(int fchown(uid_t, gid_t) override)
    UNIMPLEMENTED(int fiemap(struct fiemap*) override)

private:
    static int noattr() {
        errno = ENOSYS;
        return -1;
    }
    IFileXAttr* src_xattr() { return dynamic_cast<IFileXAttr*>(get_source()); }

    ICacheStore* store_;
    size_t page_size_;
    IFileSystem* fs_;
    off_t read_off_ = 0;
    off_t write_off_ = 0;
};

IFile* cached_fs::open(const char* pathname, int flags, mode_t) {
    if (!pathname) LOG_ERROR_RETURN(EINVAL, nullptr, "cache: null pathname");
    if ((flags & O_WRITE_BACK))
        LOG_ERROR_RETURN(ENOTSUP, nullptr, "cache: O_WRITE_BACK is not supported");
    auto store = pool_->open(abs(pathname), flags, 0644);
    if (!store) LOG_ERRNO_RETURN(0, nullptr, "cache: opening the store of ` failed", pathname);
    store->set_src_fs(src_);
    store->set_page_size(page_size_);
    store->set_allocator(allocator_);
    return new_cached_file(store, page_size_, this);
}

}  // namespace

extern "C" ICachedFileSystem* new_cached_fs(IFileSystem* src, ICachePool* pool, uint64_t pageSize,
                                            IOAlloc* allocator, CacheFnTransFunc fn_trans_func) {
    if (!pool) LOG_ERROR_RETURN(EINVAL, nullptr, "cache: null pool");
    if (pageSize == 0) pageSize = 4096;
    return new cached_fs(src, pool, pageSize, allocator, false, fn_trans_func);
}

extern "C" ICachedFile* new_cached_file(ICacheStore* store, uint64_t pageSize, IFileSystem* fs) {
    if (!store) LOG_ERROR_RETURN(EINVAL, nullptr, "cache: null store");
    return new CachedFile(store, pageSize ? pageSize : 4096, fs);
}

extern "C" ICachedFileSystem* new_full_file_cached_fs(
    IFileSystem* srcFs, IFileSystem* media_fs, uint64_t refillUnit, uint64_t capacityInGB,
    uint64_t periodInUs, uint64_t diskAvailInBytes, IOAlloc* allocator, int quotaDirLevel,
    CacheFnTransFunc fn_trans_func, uint64_t storeCacheTTLUsecs, bool asyncInit) {
    if (!media_fs) LOG_ERROR_RETURN(EINVAL, nullptr, "cache: null media fs");
    if (refillUnit == 0 || refillUnit % 4096 != 0 || (refillUnit & (refillUnit - 1)) != 0)
        LOG_ERROR_RETURN(EINVAL, nullptr, "cache: refill unit ` is not a power of 2 >= 4 KiB",
                         refillUnit);
    FileCachePool* pool =
        quotaDirLevel > 0 ? new QuotaFilePool(media_fs, capacityInGB, periodInUs, diskAvailInBytes,
                                              refillUnit, quotaDirLevel)
                          : new FileCachePool(media_fs, capacityInGB, periodInUs, diskAvailInBytes,
                                              refillUnit, storeCacheTTLUsecs, asyncInit);
    pool->Init();
    return new cached_fs(srcFs, pool, 4096, allocator, false, fn_trans_func);
}

}  // namespace fs
}  // namespace photon
