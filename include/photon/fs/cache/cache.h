// Cached file systems, as PhotonLibOS declares them: an IFileSystem whose
// files read through an ICachePool (pool_store.h) and fill it from a source
// IFileSystem. new_full_file_cached_fs() is the full-file cache: each source
// file is cached as a sparse file of the same name on a media IFileSystem,
// filled a refill unit at a time, and evicted whole files at a time, least
// recently used first, when the cache passes its capacity or the media's
// free space falls below a floor (full_file_cache/cache_pool.h).
//
// Files and file systems are usable from coroutines of any vCPU; reads and
// opens yield (media and source I/O). Delete a cached fs on the vCPU that
// created it (its pool's eviction timer lives there).
//
// A quotaDirLevel above 0 gives per-directory quotas (QuotaFilePool,
// full_file_cache/quota_pool.h).
//
// Differences from PhotonLibOS: doc/compat.md#fscachecacheh
#pragma once

#include <stdlib.h>
#include <sys/fcntl.h>
#include <sys/uio.h>

#include <cinttypes>
#include <cstdint>

#include <photon/fs/cache/pool_store.h>
#include <photon/fs/filesystem.h>

// open() flags of a cached fs.
#define O_WRITE_THROUGH 0x01000000  // write the source and the cache
#define O_WRITE_AROUND 0x02000000   // write the source only (the default)
#define O_WRITE_BACK 0x04000000     // not supported
#define O_CACHE_ONLY 0x08000000     // the cache only: never read the source
#define O_DIRECT_LOCAL 0x20000000
#define O_MMAP_READ 0x00800000

// preadv2/pwritev2 flags of a cached file.
#define RW_V2_HIGH_PRIORITY 0x00000001
#define RW_V2_PROMOTE 0x00000002
#define RW_V2_CACHE_ONLY 0x00000004  // a read served from the cache alone, else -1
#define RW_V2_TO_BUFFER_WITHOUT_SYNC 0x00000010
#define RW_V2_MEMORY_ONLY 0x00000020
#define RW_V2_WRITE_BACK 0x00000040
#define RW_V2_SYNC_MODE 0x00000200
#define RW_V2_PIN_EXTERNAL 0x00001000
// ICacheStore::evict() flags.
#define EVICT_RECYCLE 0x00000001
#define EVICT_FTRUNCATE 0x00000002

#define IS_STRUCT_STAT_SETTED(x) ((*(uint64_t*)x) == 0xF19A336DB7CA28E7ull)
#define SET_STRUCT_STAT(x) ((*(uint64_t*)x) = 0xF19A336DB7CA28E7ull)

const int IOCTL_GET_PAGE_SIZE = 161;

struct IOAlloc;

namespace photon {
namespace fs {

class ICachedFileSystem : public IFileSystem {
public:
    UNIMPLEMENTED_POINTER(IFileSystem* get_source())
    UNIMPLEMENTED(int set_source(IFileSystem* /*src*/))
    UNIMPLEMENTED_POINTER(ICachePool* get_pool())
    UNIMPLEMENTED(int set_pool(ICachePool* /*pool*/))
};

class ICachedFile : public IFile {
public:
    UNIMPLEMENTED_POINTER(IFile* get_source())
    // Sets the source file the cache refills from.
    UNIMPLEMENTED(int set_source(IFile* /*src*/))
    UNIMPLEMENTED_POINTER(ICacheStore* get_store())

    // A client's refill of a file without a source: a pwrite into the cache,
    // page aligned.
    ssize_t refill(const void* buf, size_t count, off_t offset) {
        return pwrite(buf, count, offset);
    }
    ssize_t refill(const struct iovec* iov, int iovcnt, off_t offset) {
        return pwritev(iov, iovcnt, offset);
    }
    ssize_t refill(struct iovec* iov, int iovcnt, off_t offset) {
        return pwritev(iov, iovcnt, offset);
    }
    // A refill without data: a prefetch from the source.
    ssize_t refill(off_t offset, size_t count) {
        return fadvise(offset, count, POSIX_FADV_WILLNEED);
    }
    // Bytes of [offset, offset + count) still to be refilled (0: cached).
    UNIMPLEMENTED(int query(off_t /*offset*/, size_t /*count*/))
    // Drops cached data (a trim).
    ssize_t evict(off_t offset, size_t count) { return trim(offset, count); }

    int vioctl(int request, va_list args) override {
        auto src = get_source();
        if (src) return src->vioctl(request, args);
        return -1;
    }
};

extern "C" {
// A cached fs over `src` through `pool` (owned by the result; src is not).
// allocator: refill buffers (nullptr: malloc). nullptr with errno.
ICachedFileSystem* new_cached_fs(IFileSystem* src, ICachePool* pool, uint64_t pageSize,
                                 IOAlloc* allocator, CacheFnTransFunc fn_trans_func = nullptr);

// A cached file over an opened store (its reference passes to the file).
ICachedFile* new_cached_file(ICacheStore* store, uint64_t pageSize, IFileSystem* fs);

// The full-file cache of srcFs on media_fs (owned by the result; srcFs is
// not). refillUnit: a power of 2, a multiple of 4 KiB (else nullptr EINVAL).
// capacityInGB: the cache's size (GiB); periodInUs: how often eviction
// checks it; diskAvailInBytes: media free space to keep (0: none).
ICachedFileSystem* new_full_file_cached_fs(IFileSystem* srcFs, IFileSystem* media_fs,
                                           uint64_t refillUnit, uint64_t capacityInGB,
                                           uint64_t periodInUs, uint64_t diskAvailInBytes,
                                           IOAlloc* allocator, int quotaDirLevel,
                                           CacheFnTransFunc fn_trans_func = nullptr,
                                           uint64_t storeCacheTTLUsecs = 10'000'000,
                                           bool asyncInit = false);
}  // extern "C"

}  // namespace fs
}  // namespace photon
