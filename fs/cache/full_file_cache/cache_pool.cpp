#include <photon/fs/cache/full_file_cache/cache_pool.h>

#include <dirent.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <photon/common/alog-stdstring.h>
#include <photon/common/alog.h>
#include <photon/common/utility.h>
#include <photon/fs/path.h>
#include <photon/thread/thread.h>
#include <photon/thread/timer.h>

#include "cache_store.h"
#include "size_xattr.h"

namespace photon {
namespace fs {

namespace {

const uint64_t kGiB = 1ULL << 30;
const uint64_t kDiskCheckIntervalUs = 100 * 1000;
const uint64_t kDirMaxFree = 15 * kGiB;  // a group's water mark is at most this below its quota
const uint64_t kDirRiskGap = 2 * kGiB;   // and its risk mark at most this

uint64_t dir_water_mark(uint64_t quota) {
    return quota - std::min(quota / 100 * (100 - FileCachePool::kWaterMarkRatio), kDirMaxFree);
}

uint64_t dir_risk_mark(uint64_t quota) {
    uint64_t half = dir_water_mark(quota) / 2 + quota / 2;
    return std::max(quota > kDirRiskGap ? quota - kDirRiskGap : 0, half);
}

// Whether a media file is a complete one: sized as its xattr says (or the
// media has no xattrs) and not empty.
bool media_file_valid(IFile* f, off_t size) {
    if (size <= 0) return false;
    off_t recorded = 0;
    int r = cache_size_xattr::get(f, &recorded);
    return r == 0 || (r == 1 && recorded == size);
}

}  // namespace

FileCachePool::FileCachePool(IFileSystem* mediaFs, uint64_t capacityInGB, uint64_t periodInUs,
                             uint64_t diskAvailInBytes, uint64_t refillUnit,
                             uint64_t storeCacheTTLUsecs, bool)
    : ICachePool(0, 128, -1U, false, storeCacheTTLUsecs),
      media_fs_(mediaFs),
      capacity_(capacityInGB * kGiB),
      period_us_(periodInUs ? periodInUs : 1000 * 1000),
      disk_avail_(diskAvailInBytes),
      refill_unit_(refillUnit) {}

FileCachePool::~FileCachePool() {
    delete timer_;  // waits for a running eviction
    while (eviction_threads_.load() > 0) photon::thread_usleep(1000);
    stores_clear();  // the stores call back into this pool
    delete media_fs_;
}

void FileCachePool::Init() {
    traverse("/");
    home_ = photon::get_vcpu();
    timer_ = new photon::Timer(period_us_, {this, &FileCachePool::on_timer}, true);
}

int FileCachePool::traverse(const std::string& dir) {
    struct found {
        struct timespec mtime;
        std::string name;
        uint64_t used;
    };
    std::vector<found> files;
    std::vector<std::string> dirs{dir};
    while (!dirs.empty()) {
        std::string d = dirs.back();
        dirs.pop_back();
        auto dp = media_fs_->opendir(d.c_str());
        if (!dp) {
            LOG_WARN("cache: cannot list media dir `: `", d, ERRNO());
            continue;
        }
        std::vector<std::string> names;
        for (auto& ent : FileList(dp, true)) {
            std::string n = ent.d_name;
            if (n != "." && n != "..") names.push_back(n);
        }
        for (auto& n : names) {
            std::string path = (d == "/" ? "/" : d + "/") + n;
            struct stat st;
            if (media_fs_->lstat(path.c_str(), &st) != 0) continue;
            if (S_ISDIR(st.st_mode)) {
                dirs.push_back(path);
                continue;
            }
            if (!S_ISREG(st.st_mode)) continue;
            std::unique_ptr<IFile> f(media_fs_->open(path.c_str(), O_RDONLY));
            if (!f || !media_file_valid(f.get(), st.st_size)) {
                LOG_INFO("cache: dropping incomplete media file ` (size `)", path, st.st_size);
                f.reset();
                media_fs_->unlink(path.c_str());
                continue;
            }
            files.push_back({st.st_mtim, path, (uint64_t)st.st_blocks * kDiskBlockSize});
        }
    }
    std::sort(files.begin(), files.end(), [](const found& a, const found& b) {
        return a.mtime.tv_sec != b.mtime.tv_sec ? a.mtime.tv_sec < b.mtime.tv_sec
                                                : a.mtime.tv_nsec < b.mtime.tv_nsec;
    });
    SCOPED_LOCK(lock_);
    for (auto& f : files) {
        auto ins = files_.try_emplace(f.name);
        auto& e = ins.first->second;
        if (ins.second) e.dir = join_dir(f.name);
        set_used(&e, f.used);
        e.last_use = ++clock_;
    }
    return 0;
}

bool FileCachePool::quota_dir(std::string_view path, std::string_view* dir) const {
    size_t pos = 0;
    for (int i = 0; i < quota_level_; i++) {
        pos = path.find('/', pos + 1);
        if (pos == std::string_view::npos) return false;
    }
    *dir = path.substr(1, pos - 1);
    return true;
}

FileCachePool::dir_quota& FileCachePool::group(std::string_view d) {
    auto it = dirs_.find(d);
    if (it == dirs_.end()) it = dirs_.try_emplace(std::string(d)).first;
    return it->second;
}

FileCachePool::dir_quota* FileCachePool::join_dir(std::string_view path) {
    std::string_view d;
    if (!quota_level_ || !quota_dir(path, &d)) return nullptr;
    auto& q = group(d);
    q.files++;
    return &q;
}

void FileCachePool::set_used(file_entry* e, uint64_t used) {
    used_ = used_ - e->used + used;
    if (auto q = e->dir) q->used = q->used - std::min(q->used, e->used) + used;
    e->used = used;
}

// Under lock_, as e's file (its bytes gone) leaves the index: a group with no files and no
// quota of its own goes.
void FileCachePool::leave_dir(file_entry* e) {
    auto q = e->dir;
    if (!q) return;
    e->dir = nullptr;
    if (--q->files || q->quota_set) return;
    for (auto it = dirs_.begin(); it != dirs_.end(); ++it)
        if (&it->second == q) return (void)dirs_.erase(it);
}

ICacheStore* FileCachePool::do_open(std::string_view pathname, int flags, mode_t mode) {
    if (pathname.empty() || pathname[0] != '/')
        LOG_ERROR_RETURN(EINVAL, nullptr, "cache: store name ` is not absolute", pathname);
    std::string name(pathname);
    std::string_view group;
    if (quota_level_ && !quota_dir(name, &group))
        LOG_ERROR_RETURN(EINVAL, nullptr, "cache: ` is in no directory of quota level `", name,
                         quota_level_);
    // The last component is the file's name: only its directories are made.
    if (name.rfind('/') > 0 && mkdir_recursive(name, media_fs_) != 0)
        LOG_ERRNO_RETURN(0, nullptr, "cache: making the media dir of ` failed", name);
    (void)flags;
    IFile* f = media_fs_->open(name.c_str(), O_RDWR | O_CREAT, mode ? mode : 0644);
    if (!f) LOG_ERRNO_RETURN(0, nullptr, "cache: opening media file ` failed", name);
    struct stat st;
    if (f->fstat(&st) != 0) {
        delete f;
        LOG_ERRNO_RETURN(0, nullptr, "cache: fstat of media file ` failed", name);
    }
    bool known = media_file_valid(f, st.st_size);
    if (!known && st.st_size > 0) {
        LOG_INFO("cache: media file ` is incomplete, dropping its data", name);
        f->ftruncate(0);
    }
    file_entry* e;
    {
        SCOPED_LOCK(lock_);
        auto ins = files_.try_emplace(name);
        e = &ins.first->second;
        if (ins.second) e->dir = join_dir(name);
        e->open_count++;
        set_used(e, 0);  // the store counts its cached units afresh
        e->last_use = ++clock_;
    }
    return new FileCacheStore(this, f, refill_unit_, e, known ? st.st_size : 0, known);
}

void FileCachePool::touch(file_entry* e) {
    e->last_use.store(clock_.fetch_add(1, std::memory_order_relaxed) + 1,
                      std::memory_order_relaxed);
}

void FileCachePool::store_closed(file_entry* e) {
    SCOPED_LOCK(lock_);
    e->open_count--;
}

void FileCachePool::add_used(file_entry* e, int64_t delta) {
    bool over;
    {
        SCOPED_LOCK(lock_);
        set_used(e, e->used + delta);
        over = delta > 0 && used_ > capacity_;
        auto q = e->dir;
        if (delta > 0 && q && q->used > dir_risk_mark(q->quota)) over = true, q->full = true;
    }
    if (delta <= 0) return;
    if (!over && disk_avail_) {
        uint64_t last = last_disk_check_.load(std::memory_order_relaxed);
        if (photon::now - last >= kDiskCheckIntervalUs &&
            last_disk_check_.compare_exchange_strong(last, photon::now)) {
            struct statvfs sv;
            if (media_fs_->statvfs("/", &sv) == 0)
                over = (uint64_t)sv.f_bavail * sv.f_frsize < disk_avail_;
        }
    }
    if (!over) return;
    full_ = true;
    start_eviction();
}

void FileCachePool::start_eviction() {
    again_ = true;  // a running eviction thread goes round once more
    int idle = 0;
    if (!eviction_threads_.compare_exchange_strong(idle, 1)) return;
    auto th = photon::thread_create(&FileCachePool::eviction_thread, this);
    if (!th) {
        eviction_threads_ = 0;
        return;
    }
    // A refill may run on any vCPU; the eviction runs where the pool lives,
    // which outlives the other vCPUs' users.
    if (home_ && home_ != photon::get_vcpu()) photon::thread_migrate(th, home_);
}

void* FileCachePool::eviction_thread(void* self) {
    auto pool = static_cast<FileCachePool*>(self);
    // Refills that went over the limits while this ran ask for another round;
    // one that asked just as it was ending finds eviction_threads_ 0 and is
    // taken on here unless it started a thread of its own.
    for (int rounds = 0; rounds < 64;) {
        while (rounds < 64 && pool->again_.exchange(false)) {
            pool->eviction();
            rounds++;
        }
        pool->eviction_threads_ = 0;
        int idle = 0;
        if (!pool->again_.load() || !pool->eviction_threads_.compare_exchange_strong(idle, 1))
            return nullptr;
    }
    pool->eviction_threads_ = 0;
    return nullptr;
}

uint64_t FileCachePool::on_timer(void* self) {
    static_cast<FileCachePool*>(self)->eviction();
    return 0;
}

uint64_t FileCachePool::water_mark() { return capacity_ / 100 * kWaterMarkRatio; }

int64_t FileCachePool::evict_one(const std::string& name) {
    auto& sl = stores_lock();
    sl.lock();
    auto store = static_cast<FileCacheStore*>(find_store_locked(name));
    if (store) {
        sl.unlock();
        uint64_t before = store->cached_bytes();
        int ret = store->evict(0);
        store->release();
        if (ret != 0) LOG_ERRNO_RETURN(0, -1, "cache: evicting open file ` failed", name);
        return before;
    }
    int64_t freed = 0;
    {
        SCOPED_LOCK(lock_);
        auto it = files_.find(name);
        if (it != files_.end() && it->second.open_count == 0) {
            if (media_fs_->unlink(name.c_str()) != 0 && errno != ENOENT) {
                LOG_WARN("cache: unlinking media file ` failed: `", name, ERRNO());
                freed = -1;
            } else {
                freed = it->second.used;
                set_used(&it->second, 0);
                leave_dir(&it->second);
                files_.erase(it);
            }
        }
    }
    sl.unlock();
    return freed;
}

void FileCachePool::evict_dirs() {
    struct over_dir {
        dir_quota* q;
        std::vector<std::pair<uint64_t, std::string>> lru;  // (last use, name)
        size_t next = 0;
    };
    std::vector<over_dir> over;
    {
        SCOPED_LOCK(lock_);
        std::map<dir_quota*, size_t> at;
        for (auto& kv : dirs_) {
            auto q = &kv.second;
            if (q->used <= dir_water_mark(q->quota)) {
                q->full = false;
                continue;
            }
            at[q] = over.size();
            over.push_back({q, {}, 0});
        }
        for (auto& kv : files_) {
            auto it = kv.second.dir ? at.find(kv.second.dir) : at.end();
            if (it != at.end() && kv.second.used > 0)
                over[it->second].lru.push_back({kv.second.last_use.load(), kv.first});
        }
    }
    for (auto& o : over) std::sort(o.lru.begin(), o.lru.end());
    // One file from each group in turn, so that no group waits for another's whole eviction.
    for (bool more = true; more;) {
        more = false;
        for (auto& o : over) {
            bool below;
            {
                SCOPED_LOCK(lock_);
                below = o.q->used <= dir_water_mark(o.q->quota);
                if (below) o.q->full = false;
            }
            if (below || o.next == o.lru.size()) continue;
            evict_one(o.lru[o.next++].second);
            more = true;
        }
    }
}

void FileCachePool::eviction(uint64_t extra) {
    SCOPED_LOCK(evict_lock_);
    evicting_ = true;
    DEFER(evicting_ = false);
    if (quota_level_) evict_dirs();
    uint64_t need = extra;
    {
        SCOPED_LOCK(lock_);
        uint64_t wm = water_mark();
        if (used_ > wm) need = std::max(need, used_ - wm);
    }
    if (disk_avail_) {
        struct statvfs sv;
        if (media_fs_->statvfs("/", &sv) == 0) {
            uint64_t avail = (uint64_t)sv.f_bavail * sv.f_frsize;
            if (avail < disk_avail_) need = std::max(need, disk_avail_ - avail);
        }
    }
    std::vector<std::pair<uint64_t, std::string>> lru;
    std::vector<std::string> empty;
    {
        SCOPED_LOCK(lock_);
        for (auto& kv : files_) {
            if (kv.second.used > 0)
                lru.push_back({kv.second.last_use.load(), kv.first});
            else if (kv.second.open_count == 0)
                empty.push_back(kv.first);
        }
    }
    for (auto& name : empty) evict_one(name);  // closed files with nothing cached
    if (need == 0) {
        full_ = false;
        return;
    }
    LOG_DEBUG("cache: evicting ` bytes (` files cached)", need, lru.size());
    std::sort(lru.begin(), lru.end());
    for (auto& v : lru) {
        if (need == 0) break;
        auto freed = evict_one(v.second);
        if (freed > 0) need -= std::min<uint64_t>(need, freed);
    }
    full_ = false;
}

int FileCachePool::set_quota(std::string_view pathname, size_t quota) {
    if (!quota_level_) LOG_ERROR_RETURN(ENOSYS, -1, "cache: the pool has no quota groups");
    std::string_view d;
    if (!quota_dir(pathname, &d))
        LOG_ERROR_RETURN(EINVAL, -1, "cache: ` names no directory of quota level `", pathname,
                         quota_level_);
    bool over;
    {
        SCOPED_LOCK(lock_);
        auto& q = group(d);
        q.quota = quota;
        q.quota_set = true;
        over = q.used > dir_risk_mark(quota);
        if (over) q.full = true;
    }
    if (over) start_eviction();
    return 0;
}

int FileCachePool::stat(CacheStat* st, std::string_view pathname) {
    SCOPED_LOCK(lock_);
    st->refill_unit = refill_unit_;
    st->evict_other = st->evict_global = st->evict_user = 0;
    if (pathname.empty() || pathname == "/") {
        st->total_size = capacity_ / refill_unit_;
        st->used_size = (used_ + refill_unit_ - 1) / refill_unit_;
        return 0;
    }
    std::string_view d;
    if (quota_level_ && pathname.back() == '/' && quota_dir(pathname, &d)) {
        auto it = dirs_.find(d);
        uint64_t quota = it == dirs_.end() ? kDefaultDirQuota : it->second.quota;
        uint64_t used = it == dirs_.end() ? 0 : it->second.used;
        st->total_size = quota / refill_unit_;
        st->used_size = (used + refill_unit_ - 1) / refill_unit_;
        return 0;
    }
    auto it = files_.find(pathname);
    if (it == files_.end()) LOG_ERROR_RETURN(ENOENT, -1, "cache: ` is not cached", pathname);
    st->total_size = 0;
    st->used_size = (it->second.used + refill_unit_ - 1) / refill_unit_;
    return 0;
}

int FileCachePool::evict(std::string_view filename) {
    std::string name(filename);
    if (name.empty() || name[0] != '/') name.insert(0, "/");
    return evict_one(name) < 0 ? -1 : 0;
}

int FileCachePool::evict(size_t size) {
    eviction(size);
    return 0;
}

int FileCachePool::rename(std::string_view oldname, std::string_view) { return evict(oldname); }

int FileCachePool::resize(size_t n, int flags) {
    if (flags & ~(RSZ_DISK | RSZ_LOWER | RSZ_UPPER))
        LOG_ERROR_RETURN(EINVAL, -1, "cache: resize flags ` unsupported", flags);
    SCOPED_LOCK(lock_);
    capacity_ = n;
    return 0;
}

bool FileCachePool::isFull() { return full_; }

void FileCachePool::forceRecycle() { eviction(); }

uint64_t FileCachePool::used_bytes() {
    SCOPED_LOCK(lock_);
    return used_;
}

size_t FileCachePool::file_count() {
    SCOPED_LOCK(lock_);
    return files_.size();
}

}  // namespace fs
}  // namespace photon
