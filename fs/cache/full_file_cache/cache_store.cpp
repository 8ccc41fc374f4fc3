#include "cache_store.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include <photon/common/alog-stdstring.h>
#include <photon/common/alog.h>
#include <photon/fs/cache/cache.h>
#include <photon/fs/fiemap.h>

#include "size_xattr.h"

namespace photon {
namespace fs {

namespace {

uint64_t round_up_4k(uint64_t n) { return (n + 4095) / 4096 * 4096; }

// The data ranges of a media file: fiemap, else SEEK_DATA / SEEK_HOLE; an
// empty list if neither works (then nothing counts as cached).
std::vector<std::pair<uint64_t, uint64_t>> data_ranges(IFile* f, uint64_t size) {
    std::vector<std::pair<uint64_t, uint64_t>> out;
    uint64_t start = 0;
    bool fiemap_ok = true;
    while (start < size) {
        fiemap_t<128> fm(start, size - start);
        if (f->fiemap(&fm) != 0) {
            fiemap_ok = false;
            break;
        }
        if (fm.fm_mapped_extents == 0) break;
        bool last = false;
        for (uint32_t i = 0; i < fm.fm_mapped_extents; i++) {
            auto& e = fm.fm_extents[i];
            if (e.fe_flags & FIEMAP_EXTENT_UNKNOWN) {
                fiemap_ok = false;  // overlayfs and the like: locations unknown
                break;
            }
            // Allocated but unwritten space reads as zeros: not cached.
            if (!(e.fe_flags & FIEMAP_EXTENT_UNWRITTEN))
                out.push_back({e.fe_logical, e.fe_logical + e.fe_length});
            start = e.fe_logical + e.fe_length;
            if (e.fe_flags & FIEMAP_EXTENT_LAST) last = true;
        }
        if (!fiemap_ok || last) break;
    }
    if (fiemap_ok) return out;
    out.clear();
    off_t pos = 0;
    while ((uint64_t)pos < size) {
        off_t d = f->lseek(pos, SEEK_DATA);
        if (d < 0) {
            if (errno == ENXIO) break;  // no data after pos
            out.clear();
            return out;
        }
        off_t h = f->lseek(d, SEEK_HOLE);
        if (h < 0) h = size;
        out.push_back({(uint64_t)d, (uint64_t)h});
        pos = h;
    }
    return out;
}

}  // namespace

FileCacheStore::FileCacheStore(FileCachePool* pool, IFile* media, size_t refill_unit, entry* e,
                               off_t size, bool size_known)
    : file_pool_(pool), media_(media), unit_(refill_unit), entry_(e) {
    if (size_known) {
        set_actual_size(size);
        cached_size_ = size;
        set_size_known(true);
        media_sized_ = true;
        load_extents(size);
    }
}

FileCacheStore::~FileCacheStore() {
    delete media_;
    file_pool_->store_closed(entry_);
}

uint64_t FileCacheStore::unit_bytes(size_t i, off_t size) {
    uint64_t b = i * unit_, e = std::min<uint64_t>(b + unit_, size);
    return e > b ? round_up_4k(e - b) : 0;
}

void FileCacheStore::load_extents(off_t size) {
    auto ranges = data_ranges(media_, size);
    std::sort(ranges.begin(), ranges.end());
    uint64_t b = 0, e = 0;
    for (auto& r : ranges) {
        if (r.first > e) {
            mark_range(b, e, size);
            b = r.first;
        }
        e = std::max(e, r.second);
    }
    mark_range(b, e, size);
}

void FileCacheStore::mark_range(off_t begin, off_t end, off_t size) {
    if (begin >= end || size <= 0) return;
    size_t units = (size + unit_ - 1) / unit_;
    size_t first = (begin + unit_ - 1) / unit_;
    size_t last = end >= size ? units : end / unit_;
    uint64_t added = 0;
    {
        SCOPED_LOCK(bits_lock_);
        if (bits_.size() * 64 < units) bits_.resize((units + 63) / 64);
        for (size_t i = first; i < last; i++) {
            uint64_t m = 1ULL << (i % 64);
            if (bits_[i / 64] & m) continue;
            bits_[i / 64] |= m;
            added += unit_bytes(i, size);
        }
        cached_units_bytes_ += added;
    }
    if (added) file_pool_->add_used(entry_, added);
}

uint64_t FileCacheStore::cached_bytes() {
    SCOPED_LOCK(bits_lock_);
    return cached_units_bytes_;
}

std::pair<off_t, size_t> FileCacheStore::queryRefillRange(off_t offset, size_t count) {
    off_t size = get_actual_size();
    if (offset < 0) return {-1, 0};
    if (count == 0) return {offset, 0};
    if (!size_known()) return {offset, count};  // nothing is known to be cached yet
    if (offset >= size) return {offset, 0};
    off_t end = std::min<uint64_t>(offset + count, size);
    size_t u0 = offset / unit_, u1 = (end + unit_ - 1) / unit_;
    ssize_t first = -1, last = -1;
    {
        SCOPED_LOCK(bits_lock_);
        for (size_t i = u0; i < u1; i++) {
            bool cached = i / 64 < bits_.size() && (bits_[i / 64] & (1ULL << (i % 64)));
            if (cached) continue;
            if (first < 0) first = i;
            last = i;
        }
    }
    if (first < 0) return {offset, 0};
    off_t b = first * unit_, e = std::min<uint64_t>((last + 1) * unit_, size);
    return {b, (size_t)(e - b)};
}

ICacheStore::try_preadv_result FileCacheStore::try_preadv2(const struct iovec* iov, int iovcnt,
                                                           off_t offset, int flags) {
    photon::scoped_rwlock l(rw_lock_, photon::RLOCK);
    auto r = ICacheStore::try_preadv2(iov, iovcnt, offset, flags);
    if (r.refill_size == 0) file_pool_->touch(entry_);
    return r;
}

ssize_t FileCacheStore::do_preadv2(const struct iovec* iov, int iovcnt, off_t offset, int) {
    return media_->preadv(iov, iovcnt, offset);
}

int FileCacheStore::size_media(off_t size) {
    if (media_sized_.load(std::memory_order_acquire)) return 0;
    SCOPED_LOCK(size_lock_);
    if (media_sized_.load(std::memory_order_relaxed)) return 0;
    struct stat st;
    if (media_->fstat(&st) != 0) return -1;
    if (st.st_size != size && media_->ftruncate(size) != 0)
        LOG_ERRNO_RETURN(0, -1, "cache: sizing the media file of ` failed", src_name_);
    if (cache_size_xattr::set(media_, size) != 0)
        LOG_ERRNO_RETURN(0, -1, "cache: recording the size of ` failed", src_name_);
    media_sized_.store(true, std::memory_order_release);
    return 0;
}

ssize_t FileCacheStore::do_pwritev2(const struct iovec* iov, int iovcnt, off_t offset, int) {
    // A quota group past its risk mark caches nothing more until an eviction: the refill's
    // reader is served from the source all the same.
    if (file_pool_->dir_full(entry_)) {
        errno = ENOSPC;
        return -1;
    }
    ssize_t n;
    {
        photon::scoped_rwlock l(rw_lock_, photon::RLOCK);
        off_t size = get_actual_size();
        if (size_media(size) != 0) return -1;
        n = media_->pwritev(iov, iovcnt, offset);
        if (n > 0) mark_range(offset, offset + n, size);
    }
    if (n > 0) file_pool_->touch(entry_);
    return n;
}

int FileCacheStore::evict(off_t offset, size_t count, int) {
    photon::scoped_rwlock l(rw_lock_, photon::WLOCK);
    off_t size = get_actual_size();
    if (offset < 0) offset = 0;
    uint64_t end = std::min<uint64_t>(photon::sat_add(offset, count), size);
    int64_t freed = 0;
    int ret = 0;
    if (offset == 0 && end >= (uint64_t)size) {
        // All of it: the media file goes back to empty (and unsized).
        SCOPED_LOCK(size_lock_);
        ret = media_->ftruncate(0);
        media_sized_.store(false, std::memory_order_release);
        SCOPED_LOCK(bits_lock_);
        bits_.clear();
        freed = cached_units_bytes_;
        cached_units_bytes_ = 0;
    } else if ((uint64_t)offset < end) {
        {
            SCOPED_LOCK(bits_lock_);
            for (size_t i = offset / unit_; i < (end + unit_ - 1) / unit_; i++) {
                uint64_t m = 1ULL << (i % 64);
                if (i / 64 >= bits_.size() || !(bits_[i / 64] & m)) continue;
                bits_[i / 64] &= ~m;
                freed += unit_bytes(i, size);
            }
            cached_units_bytes_ -= freed;
        }
        ret = media_->trim(offset, end - offset);
        if (ret != 0 && errno == ENOSYS) ret = 0;  // bits cleared: refilled on next read
    }
    if (freed) file_pool_->add_used(entry_, -freed);
    return ret;
}

int FileCacheStore::set_quota(size_t) {
    errno = ENOSYS;
    return -1;
}

int FileCacheStore::stat(CacheStat* st) {
    off_t size = get_actual_size();
    st->refill_unit = unit_;
    st->total_size = (size + unit_ - 1) / unit_;
    uint32_t used = 0;
    {
        SCOPED_LOCK(bits_lock_);
        for (auto w : bits_) used += __builtin_popcountll(w);
    }
    st->used_size = used;
    st->evict_other = st->evict_global = st->evict_user = 0;
    return 0;
}

int FileCacheStore::fstat(struct stat* buf) {
    if (media_->fstat(buf) != 0) return -1;
    buf->st_size = get_actual_size();
    return 0;
}

int FileCacheStore::fdatasync() { return media_->fdatasync(); }

}  // namespace fs
}  // namespace photon
