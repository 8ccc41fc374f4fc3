// ICachePool and ICacheStore: the two halves of photon's file caches, as
// PhotonLibOS declares them. A pool owns the cache media and hands out one
// store per cached file (by name, shared by every opener); a store keeps the
// cached ranges of one source file and fills the missing ones from the source
// on a read (ICacheStore::preadv2). fs/cache/cache.h wraps a pool into an
// IFileSystem; full_file_cache/cache_pool.h is the pool over a media
// IFileSystem.
//
// Pools and stores are usable from coroutines of any vCPU (their state is
// guarded by photon locks); calls that touch media or source yield.
//
// Differences from PhotonLibOS: doc/compat.md#fscachepool_storeh
#pragma once

#include <assert.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include <photon/common/callback.h>
#include <photon/common/object.h>
#include <photon/common/range-lock.h>
#include <photon/common/string_view.h>
#include <photon/fs/filesystem.h>
#include <photon/thread/mutex.h>
#include <photon/thread/spinlock.h>

struct IOAlloc;

enum ListType : int {
    LIST_ALL = 0,
    LIST_FILES = 1,
    LIST_DIRS = 2,
};

// ICachePool::reset() flags.
enum ResetType : int {
    RST_ALL = 0x0,
    RST_MEMORY = 0x1,
    RST_DISK = 0x2,
    RST_UPPER = 0x10,
    RST_LOWER = 0x20,
};

// ICachePool::resize() flags.
enum ResizeType : int {
    RSZ_MEMORY = 0x1,
    RSZ_DISK = 0x2,
    RSZ_UPPER = 0x10,
    RSZ_LOWER = 0x20,
};

namespace photon {
namespace fs {

// Maps a source file name to the key its store is kept under: writes at
// most `size_t` bytes to the buffer and returns their count, or 0 to keep the
// source name as the key.
using CacheFnTransFunc = Delegate<size_t, std::string_view, char*, size_t>;

class ICacheStore;

struct CacheStat {
    uint32_t struct_size = sizeof(CacheStat);
    uint32_t refill_unit;   // bytes
    uint32_t total_size;    // in refill units
    uint32_t used_size;     // in refill units
    uint64_t evict_other;   // bytes
    uint64_t evict_global;  // bytes
    uint64_t evict_user;    // bytes
};

class ICachePool : public Object {
public:
    ICachePool(uint32_t pool_size = 128, uint32_t max_refilling = 128,
               uint32_t refilling_threshold = -1U, bool pin_write = false,
               uint64_t store_cache_ttl_usecs = 10'000'000);
    // Deletes the stores still open (their users must be gone).
    ~ICachePool();

    // The store of `filename` (after fn_trans_func), opened by do_open() on
    // first use and shared after; the caller calls release() on it once.
    // nullptr with errno.
    ICacheStore* open(std::string_view filename, int flags, mode_t mode);

    // Quota of a dir or a file; ENOSYS where a pool has none.
    virtual int set_quota(std::string_view pathname, size_t quota) = 0;
    // The pool's stat for {nullptr, 0} or "/", else the file's.
    virtual int stat(CacheStat* stat, std::string_view pathname = std::string_view(nullptr, 0)) = 0;
    // Drops a file's cached data.
    virtual int evict(std::string_view filename) = 0;
    // Frees at least `size` bytes, and whatever the pool's limits ask for.
    virtual int evict(size_t size = 0) = 0;

    // Called by ICacheStore::release(): drops a reference, deleting the
    // store after the last one; `detach` unlists it at once (a later open()
    // makes a new store).
    int store_release(ICacheStore* store, bool detach = false);
    // Deletes every listed store (their users must be gone).
    void stores_clear();
    void set_trans_func(CacheFnTransFunc fn_trans_func);

    virtual int rename(std::string_view oldname, std::string_view newname) = 0;

    virtual ssize_t list(const char* /*dirname*/, ListType /*type*/, const struct iovec* /*iov*/,
                         int /*iovcnt*/, const char* /*marker*/, uint32_t /*count*/) {
        errno = ENOSYS;
        return -1;
    }

    UNIMPLEMENTED_POINTER(void* get_underlay_object(int /*i*/ = 0))

    virtual int reset(int /*flags*/ = 0) {
        errno = ENOSYS;
        return -1;
    }
    // Sets the capacity to n bytes (RSZ_DISK).
    virtual int resize(size_t /*n*/, int /*flags*/ = 0) {
        errno = ENOSYS;
        return -1;
    }
    // 0 when flushed, > 0 while flushing, -1 on error.
    virtual int sync_pool() {
        errno = ENOSYS;
        return -1;
    }

protected:
    virtual ICacheStore* do_open(std::string_view filename, int flags, mode_t mode) = 0;

    // The listed store of `key` with a reference added, or nullptr; the
    // caller holds stores_lock().
    ICacheStore* find_store_locked(std::string_view key);
    photon::mutex& stores_lock();

    CacheFnTransFunc fn_trans_func;

private:
    struct store_table;
    store_table* stores_;
    friend class ICacheStore;
};

class ICacheStore : public Object {
public:
    virtual ~ICacheStore();

    // Reads through the cache: cached ranges from the store, missing ones
    // refilled from the source (a refill unit at a time, one refill per
    // range however many readers want it). Clipped at the source's end;
    // -1 with the source's errno (EIO for a short source read).
    ssize_t preadv2(const struct iovec* iov, int iovcnt, off_t offset, int flags);
    // Writes into the cache (a client's refill): offset and size aligned to
    // the page size, except a write that ends at the file's end. -1 EINVAL
    // otherwise.
    ssize_t pwritev2(const struct iovec* iov, int iovcnt, off_t offset, int flags);
    // Refills [offset, offset + count) without reading it out; bytes
    // covered, or -1.
    virtual ssize_t prefetch(size_t count, off_t offset, int flags) {
        if (offset < 0) offset = 0;
        return do_prefetch(count, offset, flags);
    }

    virtual int set_quota(size_t quota) = 0;
    virtual int stat(CacheStat* stat) = 0;
    virtual int evict(off_t offset, size_t count = -1, int flags = 0) = 0;
    // The range to refill so that [offset, offset + size) is cached:
    // {offset, 0} when it is; {-1, 0} on error.
    virtual std::pair<off_t, size_t> queryRefillRange(off_t offset, size_t size) = 0;
    virtual int fstat(struct stat* buf) = 0;
    virtual int set_crc(uint32_t /*crc*/) {
        errno = ENOSYS;
        return -1;
    }
    virtual int get_crc(uint32_t* /*crc*/) {
        errno = ENOSYS;
        return -1;
    }
    virtual uint64_t get_handle() { return -1ULL; }
    virtual int fdatasync() {
        errno = ENOSYS;
        return -1;
    }
    virtual int close() { return 0; }

    // Drops the caller's reference (see ICachePool::store_release()).
    void release(bool detach = false);

    ssize_t pread(void* buf, size_t count, off_t offset) {
        struct iovec iov {
            buf, count
        };
        return do_preadv2(&iov, 1, offset, 0);
    }
    ssize_t pwrite(const void* buf, size_t count, off_t offset) {
        struct iovec iov {
            (void*)buf, count
        };
        return do_pwritev2(&iov, 1, offset, 0);
    }

    std::string_view get_src_name() { return src_name_; }
    void set_src_name(std::string_view pathname) {
        src_name_.assign(pathname.data(), pathname.size());
    }
    std::string_view get_store_key() { return store_key_; }
    void set_store_key(std::string_view pathname) {
        store_key_.assign(pathname.data(), pathname.size());
    }
    void set_pool(ICachePool* pool) { pool_ = pool; }
    // Evicts what lies past cached_size.
    void set_cached_size(off_t cached_size, int flags = 0);
    off_t get_actual_size() { return actual_size_.load(std::memory_order_acquire); }
    void set_actual_size(off_t actual_size) {
        actual_size_.store(actual_size, std::memory_order_release);
    }
    int get_open_flags() { return open_flags_; }
    void set_open_flags(int open_flags) { open_flags_ = open_flags; }
    // The source file, opened on first use (O_RDONLY or O_RDWR); 0 or -1.
    int get_src_file(photon::fs::IFile** src_file, int flags = O_RDONLY);
    void set_src_file(photon::fs::IFile* src_file) { src_file_ = src_file; }
    photon::fs::IFileSystem* get_src_fs() { return src_fs_; }
    void set_src_fs(photon::fs::IFileSystem* src_fs) { src_fs_ = src_fs; }
    size_t get_page_size() { return page_size_; }
    void set_page_size(size_t page_size) { page_size_ = page_size; }
    IOAlloc* get_allocator() { return allocator_; }
    void set_allocator(IOAlloc* allocator) { allocator_ = allocator; }

    struct try_preadv_result {
        size_t iov_sum;      // bytes asked for
        size_t refill_size;  // 0: a hit
        union {
            off_t refill_offset;  // on a miss; -1 when the cache failed
            ssize_t size;         // on a hit: what the read returned
        };
    };
    // A read from the cache alone, if [offset, offset + sum) is cached.
    virtual try_preadv_result try_preadv2(const struct iovec* iov, int iovcnt, off_t offset,
                                          int flags);
    // The store's own I/O (no refill). Override do_preadv2 or the _mutable form.
    virtual ssize_t do_preadv2(const struct iovec* iov, int iovcnt, off_t offset, int flags);
    virtual ssize_t do_preadv2_mutable(struct iovec* iov, int iovcnt, off_t offset, int flags);
    virtual ssize_t do_pwritev2(const struct iovec* iov, int iovcnt, off_t offset, int flags);
    virtual ssize_t do_pwritev2_mutable(struct iovec* iov, int iovcnt, off_t offset, int flags);

protected:
    int open_src_file(photon::fs::IFile** src_file, int flags = O_RDONLY);
    // Learns the source's size once (fstat of the source), unless known.
    int tryget_size();
    ssize_t do_prefetch(size_t count, off_t offset, int flags,
                        uint64_t batch_size = 32 * 1024 * 1024ULL);
    // Whether actual_size_ is the source's size (a store that recovered its
    // size from the media sets it; else the first read asks the source).
    void set_size_known(bool known) { size_known_.store(known, std::memory_order_release); }
    bool size_known() const { return size_known_.load(std::memory_order_acquire); }

    std::string src_name_;
    std::string store_key_;
    ICachePool* pool_ = nullptr;
    off_t cached_size_ = 0;
    std::atomic<off_t> actual_size_{0};
    int open_flags_ = 0;
    std::atomic<uint32_t> ref_{0};
    photon::fs::IFile* src_file_ = nullptr;
    photon::fs::IFile* src_rwfile_ = nullptr;
    photon::fs::IFileSystem* src_fs_ = nullptr;
    size_t page_size_ = 4096;
    IOAlloc* allocator_ = nullptr;
    RangeLock range_lock_;
    photon::mutex open_lock_;
    photon::spinlock mt_;
    bool detached_ = false;
    friend class ICachePool;

private:
    std::atomic<bool> size_known_{false};
    ssize_t refill_and_read(off_t refill_off, size_t refill_size, const struct iovec* iov,
                            int iovcnt, off_t offset, size_t count, int flags);
    ssize_t read_rest(const struct iovec* iov, int iovcnt, off_t offset, size_t from, size_t to,
                      int flags);
};

}  // namespace fs
}  // namespace photon
