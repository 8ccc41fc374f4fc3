// ICachePool's table of open stores and ICacheStore's read-through path:
// a miss refills the unit-aligned range around it from the source under a
// range lock (one refill per range however many readers want it), writes it
// to the store and serves the reader from the refill buffer.
#include <photon/fs/cache/cache.h>
#include <photon/fs/cache/pool_store.h>

#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <unordered_map>
#include <vector>

#include <photon/common/alog-stdstring.h>
#include <photon/common/alog.h>
#include <photon/common/io-alloc.h>
#include <photon/common/utility.h>

namespace photon {
namespace fs {

namespace {

size_t iov_sum(const struct iovec* iov, int iovcnt) {
    size_t n = 0;
    for (int i = 0; i < iovcnt; i++) n += iov[i].iov_len;
    return n;
}

// The bytes [from, to) of an iovec array, as iovecs.
std::vector<struct iovec> iov_slice(const struct iovec* iov, int iovcnt, size_t from, size_t to) {
    std::vector<struct iovec> out;
    size_t pos = 0;
    for (int i = 0; i < iovcnt && pos < to; i++) {
        size_t b = pos, e = pos + iov[i].iov_len;
        pos = e;
        if (e <= from) continue;
        size_t s = std::max(b, from), t = std::min(e, to);
        if (s < t) out.push_back({static_cast<char*>(iov[i].iov_base) + (s - b), t - s});
    }
    return out;
}

// Copies n bytes from buf into the iovecs' bytes starting at `skip`.
void copy_into(const struct iovec* iov, int iovcnt, size_t skip, const char* buf, size_t n) {
    auto v = iov_slice(iov, iovcnt, skip, skip + n);
    for (auto& x : v) {
        memcpy(x.iov_base, buf, x.iov_len);
        buf += x.iov_len;
    }
}

// A refill buffer from the store's allocator (or malloc).
struct refill_buffer {
    IOAlloc* alloc;
    char* p = nullptr;
    refill_buffer(IOAlloc* a, size_t n) : alloc(a) {
        p = static_cast<char*>(alloc ? alloc->alloc(n) : ::malloc(n ? n : 1));
    }
    ~refill_buffer() {
        if (!p) return;
        if (alloc)
            alloc->dealloc(p);
        else
            ::free(p);
    }
};

const int kMaxRetries = 16;

}  // namespace

struct ICachePool::store_table {
    photon::mutex lock;
    std::unordered_map<std::string, ICacheStore*> map;
};

ICachePool::ICachePool(uint32_t, uint32_t, uint32_t, bool, uint64_t) : stores_(new store_table) {}

ICachePool::~ICachePool() {
    stores_clear();
    delete stores_;
}

void ICachePool::stores_clear() {
    std::vector<ICacheStore*> all;
    {
        SCOPED_LOCK(stores_->lock);
        for (auto& kv : stores_->map) all.push_back(kv.second);
        stores_->map.clear();
    }
    for (auto s : all) delete s;
}

void ICachePool::set_trans_func(CacheFnTransFunc f) { fn_trans_func = f; }

photon::mutex& ICachePool::stores_lock() { return stores_->lock; }

ICacheStore* ICachePool::find_store_locked(std::string_view key) {
    auto it = stores_->map.find(std::string(key));
    if (it == stores_->map.end()) return nullptr;
    it->second->ref_.fetch_add(1, std::memory_order_relaxed);
    return it->second;
}

ICacheStore* ICachePool::open(std::string_view filename, int flags, mode_t mode) {
    char key_buf[4096];
    size_t len = fn_trans_func ? fn_trans_func(filename, key_buf, sizeof(key_buf)) : 0;
    std::string_view key = len ? std::string_view(key_buf, len) : filename;
    SCOPED_LOCK(stores_->lock);
    if (auto s = find_store_locked(key)) return s;
    auto store = do_open(key, flags, mode);
    if (!store) return nullptr;
    store->set_store_key(key);
    store->set_src_name(filename);
    store->set_pool(this);
    store->set_open_flags(flags);
    store->ref_.store(1, std::memory_order_relaxed);
    stores_->map.emplace(std::string(key), store);
    return store;
}

int ICachePool::store_release(ICacheStore* store, bool detach) {
    {
        SCOPED_LOCK(stores_->lock);
        if ((detach && !store->detached_) ||
            (store->ref_.load(std::memory_order_relaxed) == 1 && !store->detached_)) {
            auto it = stores_->map.find(std::string(store->get_store_key()));
            if (it != stores_->map.end() && it->second == store) stores_->map.erase(it);
            store->detached_ = true;
        }
        if (store->ref_.fetch_sub(1, std::memory_order_acq_rel) != 1) return 0;
    }
    delete store;
    return 0;
}

ICacheStore::~ICacheStore() {
    if (src_rwfile_ != src_file_) delete src_rwfile_;
    delete src_file_;
}

void ICacheStore::release(bool detach) {
    if (pool_) {
        pool_->store_release(this, detach);
        return;
    }
    if (ref_.fetch_sub(1, std::memory_order_acq_rel) <= 1) delete this;
}

int ICacheStore::open_src_file(IFile** src_file, int flags) {
    if (!src_fs_ || (open_flags_ & O_CACHE_ONLY)) return 0;
    SCOPED_LOCK(open_lock_);
    if (*src_file) return 0;
    auto f = src_fs_->open(src_name_.c_str(), flags, 0644);
    if (!f) LOG_ERRNO_RETURN(0, -1, "cache: opening source ` failed", src_name_);
    *src_file = f;
    return 0;
}

int ICacheStore::get_src_file(IFile** src_file, int flags) {
    int ret;
    IFile* f;
    if ((flags & O_ACCMODE) == O_RDONLY) {
        ret = open_src_file(&src_file_, flags);
        f = src_file_;
    } else {
        ret = open_src_file(&src_rwfile_, (flags & ~O_ACCMODE) | O_RDWR);
        f = src_rwfile_;
    }
    if (ret == 0 && src_file) *src_file = f;
    return ret;
}

int ICacheStore::tryget_size() {
    if (size_known_.load(std::memory_order_acquire)) return 0;
    if (open_src_file(&src_file_) != 0) return -1;
    struct stat st;
    if (src_file_) {
        if (src_file_->fstat(&st) != 0) return -1;
    } else if (fstat(&st) != 0) {
        return -1;
    }
    set_actual_size(st.st_size);
    size_known_.store(true, std::memory_order_release);
    return 0;
}

void ICacheStore::set_cached_size(off_t cached_size, int flags) {
    if (cached_size < cached_size_) evict(cached_size, -1ULL, flags);
    cached_size_ = cached_size;
}

ICacheStore::try_preadv_result ICacheStore::try_preadv2(const struct iovec* iov, int iovcnt,
                                                        off_t offset, int flags) {
    try_preadv_result r;
    r.iov_sum = iov_sum(iov, iovcnt);
    auto q = queryRefillRange(offset, r.iov_sum);
    if (q.first >= 0 && q.second == 0) {
        r.refill_size = 0;
        r.size = do_preadv2(iov, iovcnt, offset, flags);
        if (r.size != (ssize_t)r.iov_sum) {
            r.refill_size = (size_t)-1;
            r.refill_offset = -1;
        }
    } else {
        r.refill_size = q.second;
        r.refill_offset = q.first;
    }
    return r;
}

ssize_t ICacheStore::do_preadv2(const struct iovec* iov, int iovcnt, off_t offset, int flags) {
    std::vector<struct iovec> v(iov, iov + iovcnt);
    return do_preadv2_mutable(v.data(), iovcnt, offset, flags);
}

ssize_t ICacheStore::do_preadv2_mutable(struct iovec*, int, off_t, int) {
    errno = ENOSYS;
    return -1;
}

ssize_t ICacheStore::do_pwritev2(const struct iovec* iov, int iovcnt, off_t offset, int flags) {
    std::vector<struct iovec> v(iov, iov + iovcnt);
    return do_pwritev2_mutable(v.data(), iovcnt, offset, flags);
}

ssize_t ICacheStore::do_pwritev2_mutable(struct iovec*, int, off_t, int) {
    errno = ENOSYS;
    return -1;
}

ssize_t ICacheStore::preadv2(const struct iovec* iov, int iovcnt, off_t offset, int flags) {
    if (offset < 0) LOG_ERROR_RETURN(EINVAL, -1, "cache: negative offset `", offset);
    size_t want = iov_sum(iov, iovcnt);
    if (want == 0) return 0;
    if (tryget_size() != 0) return -1;
    off_t size = get_actual_size();
    if (offset >= size) return 0;
    size_t count = std::min<uint64_t>(want, size - offset);
    std::vector<struct iovec> clipped;
    if (count < want) {
        clipped = iov_slice(iov, iovcnt, 0, count);
        iov = clipped.data();
        iovcnt = (int)clipped.size();
    }
    bool cache_only = (flags & RW_V2_CACHE_ONLY) || (open_flags_ & O_CACHE_ONLY);
    for (int i = 0; i < kMaxRetries; i++) {
        auto tr = try_preadv2(iov, iovcnt, offset, flags);
        if (tr.refill_size == 0 && tr.size >= 0) return tr.size;
        if (cache_only) {
            if (tr.refill_size != (size_t)-1) errno = ENODATA;
            return -1;
        }
        if (open_src_file(&src_file_) != 0) return -1;
        if (!src_file_) LOG_ERROR_RETURN(ENOENT, -1, "cache: ` has no source", src_name_);
        if (tr.refill_offset < 0) break;  // the cache failed: read the source
        auto ret =
            refill_and_read(tr.refill_offset, tr.refill_size, iov, iovcnt, offset, count, flags);
        if (ret != -EAGAIN) return ret;
    }
    if (open_src_file(&src_file_) != 0 || !src_file_) return -1;
    return src_file_->preadv(iov, iovcnt, offset);
}

// Reads bytes [from, to) of the request (cached, as the query said) from
// the cache, else from the source.
ssize_t ICacheStore::read_rest(const struct iovec* iov, int iovcnt, off_t offset, size_t from,
                               size_t to, int flags) {
    if (from >= to) return 0;
    auto part = iov_slice(iov, iovcnt, from, to);
    auto tr = try_preadv2(part.data(), (int)part.size(), offset + from, flags | RW_V2_CACHE_ONLY);
    if (tr.refill_size == 0 && tr.size == (ssize_t)(to - from)) return tr.size;
    auto n = src_file_->preadv(part.data(), (int)part.size(), offset + from);
    if (n == (ssize_t)(to - from)) return n;
    if (n >= 0) errno = EIO;
    ERRNO err;
    LOG_EVERY_T(1,
                LOG_WARN("cache: reading source ` at ` failed: `", src_name_, offset + from, err));
    errno = err.no;
    return -1;
}

ssize_t ICacheStore::refill_and_read(off_t refill_off, size_t refill_size, const struct iovec* iov,
                                     int iovcnt, off_t offset, size_t count, int flags) {
    off_t size = get_actual_size();
    if (refill_off + (off_t)refill_size > size) refill_size = size - refill_off;
    auto h = range_lock_.lock(refill_off, refill_size);
    if (!h) return -1;
    // Another reader may have refilled (part of) the range while we waited.
    auto q = queryRefillRange(offset, count);
    if (q.first != refill_off || q.second != refill_size) {
        range_lock_.unlock(h);
        return -EAGAIN;
    }
    refill_buffer buf(allocator_, refill_size);
    if (!buf.p) {
        range_lock_.unlock(h);
        errno = ENOMEM;
        return -1;
    }
    auto n = src_file_->pread(buf.p, refill_size, refill_off);
    if (n != (ssize_t)refill_size) {
        range_lock_.unlock(h);
        if (n >= 0) errno = EIO;
        ERRNO err;
        LOG_EVERY_T(1, LOG_WARN("cache: refilling ` [`, +`) from the source failed (got `): `",
                                src_name_, refill_off, refill_size, n, err));
        errno = err.no;
        return -1;
        LOG_ERRNO_RETURN(0, -1, "cache: refilling ` [`, +`) from the source failed (got `)",
                         src_name_, refill_off, refill_size, n);
    }
    struct iovec v {
        buf.p, refill_size
    };
    auto w = do_pwritev2(&v, 1, refill_off, flags);
    if (w != (ssize_t)refill_size && errno != ENOSPC)
        LOG_EVERY_T(1, LOG_WARN("cache: writing ` [`, +`) to the cache failed: `", src_name_,
                                refill_off, refill_size, ERRNO()));
    range_lock_.unlock(h);

    // The request is [offset, offset + count); the refill covered [rb, re).
    size_t rb = std::max(refill_off, offset) - offset;
    size_t re = std::min<uint64_t>(refill_off + refill_size, offset + count) - offset;
    if (rb < re) copy_into(iov, iovcnt, rb, buf.p + (offset + rb - refill_off), re - rb);
    if (read_rest(iov, iovcnt, offset, 0, std::min(rb, count), flags) < 0) return -1;
    if (read_rest(iov, iovcnt, offset, std::max(re, rb), count, flags) < 0) return -1;
    return count;
}

ssize_t ICacheStore::pwritev2(const struct iovec* iov, int iovcnt, off_t offset, int flags) {
    size_t n = iov_sum(iov, iovcnt);
    if (offset < 0) LOG_ERROR_RETURN(EINVAL, -1, "cache: negative offset `", offset);
    if (tryget_size() != 0 && !(open_flags_ & O_CACHE_ONLY)) return -1;
    off_t size = get_actual_size();
    if (offset >= size) return 0;
    if (offset + (off_t)n > size) n = size - offset;
    if (offset % page_size_ != 0 || (n % page_size_ != 0 && offset + (off_t)n < size))
        LOG_ERROR_RETURN(EINVAL, -1, "cache: write [`, +`) not aligned to `", offset, n,
                         page_size_);
    auto v = iov_slice(iov, iovcnt, 0, n);
    auto h = range_lock_.lock(offset, n);
    if (!h) return -1;
    auto ret = do_pwritev2(v.data(), (int)v.size(), offset, flags);
    range_lock_.unlock(h);
    return ret;
}

ssize_t ICacheStore::do_prefetch(size_t count, off_t offset, int flags, uint64_t batch_size) {
    if (tryget_size() != 0) return -1;
    off_t size = get_actual_size();
    uint64_t end = std::min<uint64_t>(photon::sat_add(offset, count), size);
    offset = offset / page_size_ * page_size_;
    ssize_t done = 0;
    while ((uint64_t)offset < end) {
        size_t n = std::min<uint64_t>(batch_size, end - offset);
        for (int i = 0;; i++) {
            auto q = queryRefillRange(offset, n);
            if (q.first < 0) return -1;
            if (q.second == 0) break;
            if (i == kMaxRetries) LOG_ERROR_RETURN(EBUSY, -1, "cache: prefetch kept racing");
            if (open_src_file(&src_file_) != 0) return -1;
            if (!src_file_) LOG_ERROR_RETURN(ENOENT, -1, "cache: ` has no source", src_name_);
            // A refill into a scratch buffer: the refill itself is what we want.
            refill_buffer tmp(allocator_, n);
            if (!tmp.p) return errno = ENOMEM, -1;
            struct iovec v {
                tmp.p, n
            };
            auto r = refill_and_read(q.first, q.second, &v, 1, offset, n, flags);
            if (r >= 0) break;
            if (r != -EAGAIN) return -1;
        }
        done += n;
        offset += n;
    }
    (void)flags;
    return done;
}

}  // namespace fs
}  // namespace photon
