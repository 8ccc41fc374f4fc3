// FileCachePool: the pool of the full-file cache (cache.h). Each source file
// is cached as a sparse file under the same path on the media IFileSystem,
// sized to the source and filled a refill unit at a time; its size is kept
// in the xattr "user.photon.cache.size" where the media has xattrs. Which
// units are cached is read from the media file's extents (fiemap, else
// SEEK_DATA/SEEK_HOLE) when a store opens, then kept in memory.
//
// Init() finds what an earlier pool left on the media: files whose size
// disagrees with their xattr (truncated, or never completed) are dropped.
// Eviction drops whole files, least recently read first, until the cache is
// below 90% of its capacity and the media has diskAvailInBytes free; it runs
// every periodInUs, and at once (in a coroutine of its own) when a refill
// takes the cache past its capacity or the media below its free space floor.
//
// With per-directory quotas (QuotaFilePool, quota_pool.h), files are grouped
// by the first quotaDirLevel directories of their path, and each group has a
// quota (16 TiB until set_quota()). A group past its risk mark (its quota less
// 2 GiB, or halfway between its water mark and its quota if higher) caches no
// more (its reads go to the source) until an eviction, which drops its least
// recently read files, one group after another in turn, until it is below its
// water mark (the quota less 10% of it, at most 15 GiB); then the capacity
// eviction above runs.
//
// Usable from coroutines of any vCPU; create, Init() and delete it on one
// vCPU (its timer lives there). Calls that touch the media yield.
#pragma once

#include <atomic>
#include <map>
#include <string>

#include <photon/fs/cache/pool_store.h>
#include <photon/fs/filesystem.h>
#include <photon/thread/mutex.h>

namespace photon {

class Timer;
struct vcpu_base;

namespace fs {

class FileCacheStore;

class FileCachePool : public photon::fs::ICachePool {
public:
    // Owns mediaFs. storeCacheTTLUsecs and asyncInit are accepted and unused.
    FileCachePool(photon::fs::IFileSystem* mediaFs, uint64_t capacityInGB, uint64_t periodInUs,
                  uint64_t diskAvailInBytes, uint64_t refillUnit,
                  uint64_t storeCacheTTLUsecs = 10'000'000, bool asyncInit = false);
    ~FileCachePool();

    static const uint64_t kDiskBlockSize = 512;
    static const uint64_t kDeleteDelayInUs = 1000;
    static const uint32_t kWaterMarkRatio = 90;  // eviction stops below this % of capacity

    // Recovers the media's files and starts the eviction timer.
    void Init();

    // The quota (bytes) of pathname's group ("/a/" or any path under it at
    // level 1): 0, or -1 with EINVAL if pathname has no group, ENOSYS if the
    // pool has no quota levels (a plain FileCachePool).
    int set_quota(std::string_view pathname, size_t quota) override;
    // The pool's (pathname empty or "/"), a quota group's (a path that ends in
    // '/': its quota and usage) or one file's usage, in refill units.
    int stat(photon::fs::CacheStat* stat,
             std::string_view pathname = std::string_view(nullptr, 0)) override;
    int evict(std::string_view filename) override;
    // Runs an eviction now, freeing at least `size` bytes besides.
    int evict(size_t size = 0) override;
    // Drops oldname's cached data (the source's rename is the caller's).
    int rename(std::string_view oldname, std::string_view newname) override;
    // RSZ_DISK: the capacity in bytes (the constructor's is in GiB).
    int resize(size_t n, int flags = 0) override;

    // Whether the last refill found the cache over its limits.
    bool isFull();
    // Runs an eviction now (as evict(0)).
    void forceRecycle();

    // Bytes cached (as the pool accounts them) and files known.
    uint64_t used_bytes();
    size_t file_count();

protected:
    photon::fs::ICacheStore* do_open(std::string_view pathname, int flags, mode_t mode) override;
    virtual void eviction(uint64_t extra = 0);

    int quota_level_ = 0;  // directories that make a quota group; 0: no groups

private:
    friend class FileCacheStore;
    struct dir_quota {
        uint64_t quota = kDefaultDirQuota;  // the fields under lock_
        uint64_t used = 0;
        size_t files = 0;
        bool quota_set = false;
        std::atomic<bool> full{false};  // past its risk mark: refills of its files are not cached
    };
    struct file_entry {
        uint64_t used = 0;                  // bytes, under lock_
        int open_count = 0;                 // under lock_
        std::atomic<uint64_t> last_use{0};  // pool clock at the last read
        dir_quota* dir = nullptr;           // its quota group, if any
    };
    static const uint64_t kDefaultDirQuota = 16ULL << 40;
    using file_map = std::map<std::string, file_entry, std::less<>>;

    static uint64_t on_timer(void* self);
    static void* eviction_thread(void* self);
    // Called by stores.
    void touch(file_entry* e);
    void add_used(file_entry* e, int64_t delta);
    void store_closed(file_entry* e);
    bool dir_full(const file_entry* e) const { return e->dir && e->dir->full.load(); }
    // Starts an eviction in a coroutine of the pool's vCPU unless one runs.
    void start_eviction();
    // The quota group of path ("a" of "/a/b/f" at level 1); false if none.
    bool quota_dir(std::string_view path, std::string_view* dir) const;
    // Under lock_: the group named d, made if new.
    dir_quota& group(std::string_view d);
    // Under lock_: path's group (made if new), its file count up; nullptr if none.
    dir_quota* join_dir(std::string_view path);
    // Under lock_: e's bytes become `used`; the pool's and its group's totals follow.
    void set_used(file_entry* e, uint64_t used);
    void leave_dir(file_entry* e);
    // Evicts from the groups past their water marks, one file each in turn.
    void evict_dirs();
    // Frees one file: the bytes freed (0 if unknown or busy), or -1.
    int64_t evict_one(const std::string& name);
    int traverse(const std::string& dir);
    bool over_limits();
    uint64_t water_mark();

    photon::fs::IFileSystem* media_fs_;
    uint64_t capacity_;
    uint64_t period_us_;
    uint64_t disk_avail_;
    uint64_t refill_unit_;
    photon::Timer* timer_ = nullptr;
    photon::vcpu_base* home_ = nullptr;  // where Init() ran: the timer's and evictions' vCPU
    photon::mutex lock_;                 // files_, used_
    photon::mutex evict_lock_;           // one eviction at a time
    file_map files_;
    std::map<std::string, dir_quota, std::less<>> dirs_;  // under lock_
    uint64_t used_ = 0;
    std::atomic<uint64_t> clock_{0};
    std::atomic<bool> full_{false};
    std::atomic<bool> evicting_{false};
    std::atomic<bool> again_{false};  // over the limits since the eviction thread's last round
    std::atomic<int> eviction_threads_{0};
    std::atomic<uint64_t> last_disk_check_{0};
    bool xattr_ok_ = false;
};

}  // namespace fs
}  // namespace photon
