// open_file_cache: a map from path to entry plus an LRU list, both under
// one spinlock; entries are reference-counted so that eviction never closes
// a file a request is still sending.
#include "open_file_cache.h"

#include <photon/common/timeout.h>

#include "mime_types.h"

namespace photon {
namespace net {
namespace http {

namespace {
size_t put_hex(char* p, uint64_t v) {
    char tmp[16];
    size_t n = 0;
    do {
        tmp[n++] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    for (size_t i = 0; i < n; i++) p[i] = tmp[n - 1 - i];
    return n;
}
}  // namespace

file_validators::file_validators(const struct stat& st) : mtime(st.st_mtim.tv_sec) {
    uint64_t ns = (uint64_t)st.st_mtim.tv_sec * 1000000000 + (uint64_t)st.st_mtim.tv_nsec;
    char* p = etag_buf;
    *p++ = '"';
    p += put_hex(p, ns);
    *p++ = '-';
    p += put_hex(p, (uint64_t)st.st_size);
    *p++ = '"';
    etag_len = (size_t)(p - etag_buf);
    format_http_date(mtime < 0 ? 0 : mtime, last_modified_buf);
}

open_file_cache::~open_file_cache() {
    for (entry* e : lru_) {
        e->mapped = false;
        release(e);
    }
}

open_file_cache::entry* open_file_cache::get(std::string_view path, snapshot_ptr* snap) {
    SCOPED_LOCK(lock_);
    evict_old();
    auto it = map_.find(path);
    if (it == map_.end()) return nullptr;
    entry* e = it->second;
    e->used = photon::now;
    lru_.splice(lru_.begin(), lru_, e->lru);
    e->refs.fetch_add(1, std::memory_order_relaxed);
    *snap = e->snap;
    return e;
}

void open_file_cache::update(entry* e, snapshot_ptr snap) {
    SCOPED_LOCK(lock_);
    e->snap.swap(snap);
}  // the old snapshot is freed outside the lock, if this held the last reference

open_file_cache::entry* open_file_cache::put(std::string_view path, fs::IFile* file, int fd,
                                             const struct stat& st, snapshot_ptr* snap) {
    entry* e = new entry(path, file, fd, st, photon::now);
    e->mime = mime_type(e->path);
    e->snap = *snap = std::make_shared<snapshot>(st);
    e->refs.store(2, std::memory_order_relaxed);  // the cache's and the caller's
    SCOPED_LOCK(lock_);
    auto it = map_.find(path);
    if (it != map_.end()) unmap(it->second);
    lru_.push_front(e);
    e->lru = lru_.begin();
    map_.emplace(std::string_view(e->path), e);
    while (map_.size() > max_) unmap(lru_.back());
    evict_old();
    return e;
}

void open_file_cache::release(entry* e) {
    if (e->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    delete e->file;
    delete e;
}

void open_file_cache::erase(entry* e) {
    SCOPED_LOCK(lock_);
    if (e->mapped) unmap(e);
}

bool open_file_cache::due(const entry* e) {
    return photon::now - e->validated.load(std::memory_order_relaxed) >= kValidUs;
}

void open_file_cache::validated(entry* e) {
    e->validated.store(photon::now, std::memory_order_relaxed);
}

void open_file_cache::unmap(entry* e) {
    map_.erase(std::string_view(e->path));
    lru_.erase(e->lru);
    e->mapped = false;
    release(e);  // the cache's reference
}

void open_file_cache::evict_old() {
    // One or two per call: amortized, and the lock stays short.
    for (int i = 0; i < 2 && !lru_.empty(); i++) {
        entry* e = lru_.back();
        if (photon::now - e->used < kInactiveUs) break;
        unmap(e);
    }
}

}  // namespace http
}  // namespace net
}  // namespace photon
