// FileCacheStore: one source file's store in a FileCachePool. The media file
// is sparse, sized to the source; a bitmap of refill units says which are
// cached (read from the media's extents when the store opens, set after each
// unit is written). A reader holds rw_lock() shared from the query to the
// end of its read, eviction holds it exclusive, so a read never sees a unit
// evicted under it.
#pragma once

#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include <photon/fs/cache/full_file_cache/cache_pool.h>
#include <photon/fs/cache/pool_store.h>
#include <photon/thread/rwlock.h>

namespace photon {
namespace fs {

class FileCacheStore : public ICacheStore {
public:
    using entry = FileCachePool::file_entry;
    // Owns media. size_known: media's size is the source's (recovered).
    FileCacheStore(FileCachePool* pool, IFile* media, size_t refill_unit, entry* e, off_t size,
                   bool size_known);
    ~FileCacheStore();

    try_preadv_result try_preadv2(const struct iovec* iov, int iovcnt, off_t offset,
                                  int flags) override;
    ssize_t do_preadv2(const struct iovec* iov, int iovcnt, off_t offset, int flags) override;
    ssize_t do_pwritev2(const struct iovec* iov, int iovcnt, off_t offset, int flags) override;
    int set_quota(size_t quota) override;
    int stat(CacheStat* stat) override;
    int evict(off_t offset, size_t count = -1, int flags = 0) override;
    std::pair<off_t, size_t> queryRefillRange(off_t offset, size_t size) override;
    int fstat(struct stat* buf) override;
    int fdatasync() override;

    photon::rwlock& rw_lock() { return rw_lock_; }
    // Bytes the cached units take on the media.
    uint64_t cached_bytes();

private:
    // Marks the units the media's extents cover fully.
    void load_extents(off_t size);
    void mark_range(off_t begin, off_t end, off_t size);
    // Sizes the media file to the source (and records the size) once.
    int size_media(off_t size);
    uint64_t unit_bytes(size_t i, off_t size);

    FileCachePool* file_pool_;
    IFile* media_;
    size_t unit_;
    entry* entry_;
    photon::rwlock rw_lock_;
    photon::spinlock bits_lock_;
    std::vector<uint64_t> bits_;       // under bits_lock_
    uint64_t cached_units_bytes_ = 0;  // under bits_lock_
    photon::mutex size_lock_;
    std::atomic<bool> media_sized_{false};
};

}  // namespace fs
}  // namespace photon
