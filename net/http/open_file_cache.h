// open_file_cache: local files the fs handler keeps open, by request path,
// with what it knows of them: their stat and, for small files, their bytes.
// A hit within kValidUs of the last check costs no system call at all; a
// due one costs a stat of the path and an fstat of the fd (instead of open +
// fstat + close, and subfs's lstat per component, on every request). Only
// files with an fd are kept: they are read by pread(2) / sendfile(2) on the
// fd, which any vCPU may do at once. Private to net/http. Thread-safe: a
// spinlock guards the map and the snapshots for a few operations and is
// never held across a yield.
// Floor: bridge (tools/floors.txt), above its folder's: it joins net and fs.
#pragma once

#include <sys/stat.h>

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include <photon/fs/filesystem.h>
#include <photon/thread/thread.h>

#include "http_date.h"

namespace photon {
namespace net {
namespace http {

// A file version's validators: a strong ETag "<mtime ns hex>-<size hex>"
// (like nginx's, but with nanoseconds) and Last-Modified.
struct file_validators {
    char etag_buf[36];
    char last_modified_buf[kHttpDateLength];
    size_t etag_len;
    time_t mtime;

    explicit file_validators(const struct stat& st);
    std::string_view etag() const { return {etag_buf, etag_len}; }
    std::string_view last_modified() const { return {last_modified_buf, kHttpDateLength}; }
};

class open_file_cache {
public:
    // A path's entry is checked against the file system (stat of the path:
    // same dev and inode; fstat of the fd: a new snapshot if size, mtime or
    // ctime changed) when it is older than kValidUs; until then changes to
    // the file or its path go unseen (nginx's open_file_cache_valid, 60 s by
    // default, is the same idea). Entries unused for kInactiveUs are closed
    // as later requests pass by.
    static constexpr uint64_t kValidUs = 1'000'000;
    static constexpr uint64_t kInactiveUs = 30'000'000;

    // What a request may use of a file without asking the kernel again,
    // and what responses say about it (formatted once, not per request).
    // Immutable once published: a change makes a new one.
    struct snapshot {
        struct stat st;
        file_validators val;
        std::string bytes;  // the whole file, if loaded (small files)
        bool loaded = false;
        explicit snapshot(const struct stat& s) : st(s), val(s) {}
    };
    using snapshot_ptr = std::shared_ptr<const snapshot>;

    struct entry {
        std::string path;
        std::string_view mime;  // the path's Content-Type
        fs::IFile* file;
        int fd;
        dev_t dev;
        ino_t ino;
        snapshot_ptr snap;                // under the lock
        std::atomic<uint64_t> validated;  // photon::now when last checked
        uint64_t used = 0;                // photon::now of the last hit, under the lock
        std::atomic<int> refs{1};         // the cache's own, and one per user
        std::list<entry*>::iterator lru;
        bool mapped = true;
        entry(std::string_view p, fs::IFile* f, int d, const struct stat& st, uint64_t t)
            : path(p), file(f), fd(d), dev(st.st_dev), ino(st.st_ino), validated(t), used(t) {}
    };

    explicit open_file_cache(size_t max_entries = 1024) : max_(max_entries) {}
    ~open_file_cache();

    // The entry of path with a reference taken, and its snapshot; or
    // nullptr. It may be due for validation: see due().
    entry* get(std::string_view path, snapshot_ptr* snap);
    // Publishes a new snapshot of e (after a check, or with loaded bytes).
    void update(entry* e, snapshot_ptr snap);
    // Keeps file (owned from now on) open under path and returns its entry
    // with a reference taken for the caller, and its first snapshot (st).
    // Replaces an entry of the path.
    entry* put(std::string_view path, fs::IFile* file, int fd, const struct stat& st,
               snapshot_ptr* snap);
    // Drops the caller's reference; the last one closes the file.
    static void release(entry* e);
    // Forgets e (stale): later gets miss; users keep their references.
    void erase(entry* e);
    static bool due(const entry* e);
    static void validated(entry* e);

private:
    void unmap(entry* e);  // under the lock
    void evict_old();      // under the lock

    size_t max_;
    photon::spinlock lock_;
    std::unordered_map<std::string_view, entry*> map_;  // keys view entry::path
    std::list<entry*> lru_;                             // most recently used first
};

}  // namespace http
}  // namespace net
}  // namespace photon
