// Throttled files (throttled-file.h): each data call takes its concurrency
// slots, then one operation and its bytes from token buckets (photon::throttle),
// for RW and for its own direction, before it runs in block_size pieces.
#include <algorithm>
#include <memory>
#include <vector>

#include <photon/common/alog.h>
#include <photon/common/throttle.h>
#include <photon/fs/filesystem.h>
#include <photon/fs/forwardfs.h>
#include <photon/fs/throttled-file.h>
#include <photon/thread/thread.h>

namespace photon {
namespace fs {
namespace {

// One column of ThrottleLimits: the parts that are limited are made.
struct limiter {
    std::unique_ptr<photon::semaphore> slots;
    std::unique_ptr<photon::throttle> ops, bytes;

    limiter(const ThrottleLimits::UpperLimits& l, uint64_t window_s) {
        uint64_t window_us = window_s * 1000 * 1000;
        if (l.concurent_ops) slots.reset(new photon::semaphore(l.concurent_ops));
        if (l.IOPS) ops.reset(new photon::throttle(l.IOPS * window_s, window_us));
        if (l.throughput) bytes.reset(new photon::throttle(l.throughput * window_s, window_us));
    }
};

struct limits_set {
    limiter rw, r, w;
    uint64_t r_block, w_block;
    explicit limits_set(const ThrottleLimits& l)
        : rw(l.RW, window(l)),
          r(l.R, window(l)),
          w(l.W, window(l)),
          r_block(l.R.block_size),
          w_block(l.W.block_size) {}
    static uint64_t window(const ThrottleLimits& l) { return l.time_window ? l.time_window : 1; }
};

// Holds the concurrency slots of one request; charges its operation and
// bytes. ok() is false (errno set) if a wait was interrupted.
class admission {
public:
    admission(limiter& all, limiter& dir, uint64_t bytes) : all_(all), dir_(dir) {
        ok_ = take(all_, &all_held_) && take(dir_, &dir_held_) && charge(all_, bytes) == 0 &&
              charge(dir_, bytes) == 0;
    }
    ~admission() {
        if (dir_held_) dir_.slots->signal(1);
        if (all_held_) all_.slots->signal(1);
    }
    bool ok() const { return ok_; }

private:
    // A concurrency slot, if limited: false (errno set) if the wait failed.
    static bool take(limiter& l, bool* held) {
        if (!l.slots) return true;
        *held = l.slots->wait(1) == 0;
        return *held;
    }
    static int charge(limiter& l, uint64_t bytes) {
        if (l.ops && l.ops->consume(1) < 0) return -1;
        if (l.bytes && bytes && l.bytes->consume(bytes) < 0) return -1;
        return 0;
    }
    limiter &all_, &dir_;
    bool all_held_ = false, dir_held_ = false;
    bool ok_;
};

size_t iov_sum(const struct iovec* iov, int iovcnt) {
    size_t n = 0;
    for (int i = 0; i < iovcnt; i++) n += iov[i].iov_len;
    return n;
}

// out = the bytes [skip, skip + len) of iov[].
void iov_window(const struct iovec* iov, int iovcnt, size_t skip, size_t len,
                std::vector<struct iovec>& out) {
    out.clear();
    for (int i = 0; i < iovcnt && len; i++) {
        if (skip >= iov[i].iov_len) {
            skip -= iov[i].iov_len;
            continue;
        }
        size_t k = std::min(len, iov[i].iov_len - skip);
        out.push_back({(char*)iov[i].iov_base + skip, k});
        len -= k;
        skip = 0;
    }
}

// Runs piece(done, len) over `total` bytes in `block`-byte pieces (0: one
// piece), stopping at a short one: the bytes done, or -1 if the first fails.
template <typename Piece>
ssize_t in_pieces(size_t total, uint64_t block, Piece piece) {
    if (block == 0 || total <= block) return piece(0, total);
    size_t done = 0;
    while (done < total) {
        size_t len = std::min<uint64_t>(block, total - done);
        ssize_t n = piece(done, len);
        if (n < 0) return done ? (ssize_t)done : -1;
        done += n;
        if ((size_t)n < len) break;
    }
    return done;
}

class throttled_file : public ForwardFile_Ownership {
public:
    throttled_file(IFile* file, std::shared_ptr<limits_set> limits, bool ownership)
        : ForwardFile_Ownership(file, ownership), l_(std::move(limits)) {}

    ssize_t pread(void* buf, size_t count, off_t offset) override {
        return rd(count,
                  [&](size_t d, size_t n) { return m_file->pread((char*)buf + d, n, offset + d); });
    }
    ssize_t read(void* buf, size_t count) override {
        return rd(count, [&](size_t d, size_t n) { return m_file->read((char*)buf + d, n); });
    }
    ssize_t preadv(const struct iovec* iov, int iovcnt, off_t offset) override {
        return preadv2(iov, iovcnt, offset, 0);
    }
    ssize_t preadv_mutable(struct iovec* iov, int iovcnt, off_t offset) override {
        return preadv2(iov, iovcnt, offset, 0);
    }
    ssize_t preadv2_mutable(struct iovec* iov, int iovcnt, off_t offset, int flags) override {
        return preadv2(iov, iovcnt, offset, flags);
    }
    ssize_t preadv2(const struct iovec* iov, int iovcnt, off_t offset, int flags) override {
        return rdv(iov, iovcnt, [&](const iovec* v, int c, size_t d) {
            return m_file->preadv2(v, c, offset + d, flags);
        });
    }
    ssize_t readv(const struct iovec* iov, int iovcnt) override {
        return rdv(iov, iovcnt, [&](const iovec* v, int c, size_t) { return m_file->readv(v, c); });
    }
    ssize_t readv_mutable(struct iovec* iov, int iovcnt) override { return readv(iov, iovcnt); }

    ssize_t pwrite(const void* buf, size_t count, off_t offset) override {
        return wr(count, [&](size_t d, size_t n) {
            return m_file->pwrite((const char*)buf + d, n, offset + d);
        });
    }
    ssize_t write(const void* buf, size_t count) override {
        return wr(count,
                  [&](size_t d, size_t n) { return m_file->write((const char*)buf + d, n); });
    }
    ssize_t pwritev(const struct iovec* iov, int iovcnt, off_t offset) override {
        return pwritev2(iov, iovcnt, offset, 0);
    }
    ssize_t pwritev_mutable(struct iovec* iov, int iovcnt, off_t offset) override {
        return pwritev2(iov, iovcnt, offset, 0);
    }
    ssize_t pwritev2_mutable(struct iovec* iov, int iovcnt, off_t offset, int flags) override {
        return pwritev2(iov, iovcnt, offset, flags);
    }
    ssize_t pwritev2(const struct iovec* iov, int iovcnt, off_t offset, int flags) override {
        return wrv(iov, iovcnt, [&](const iovec* v, int c, size_t d) {
            return m_file->pwritev2(v, c, offset + d, flags);
        });
    }
    ssize_t writev(const struct iovec* iov, int iovcnt) override {
        return wrv(iov, iovcnt,
                   [&](const iovec* v, int c, size_t) { return m_file->writev(v, c); });
    }
    ssize_t writev_mutable(struct iovec* iov, int iovcnt) override { return writev(iov, iovcnt); }
    ssize_t do_appendv(const struct iovec* iov, int iovcnt, off_t* offset,
                       off_t* position) override {
        admission a(l_->rw, l_->w, iov_sum(iov, iovcnt));
        return a.ok() ? m_file->do_appendv(iov, iovcnt, offset, position) : -1;
    }

private:
    template <typename Piece>
    ssize_t rd(size_t count, Piece piece) {
        admission a(l_->rw, l_->r, count);
        return a.ok() ? in_pieces(count, l_->r_block, piece) : -1;
    }
    template <typename Piece>
    ssize_t wr(size_t count, Piece piece) {
        admission a(l_->rw, l_->w, count);
        return a.ok() ? in_pieces(count, l_->w_block, piece) : -1;
    }
    // Vector forms: each piece is a window of the caller's iovecs.
    template <typename Call>
    ssize_t rdv(const struct iovec* iov, int iovcnt, Call call) {
        return vec(l_->r, l_->r_block, iov, iovcnt, call);
    }
    template <typename Call>
    ssize_t wrv(const struct iovec* iov, int iovcnt, Call call) {
        return vec(l_->w, l_->w_block, iov, iovcnt, call);
    }
    template <typename Call>
    ssize_t vec(limiter& dir, uint64_t block, const struct iovec* iov, int iovcnt, Call call) {
        size_t total = iov_sum(iov, iovcnt);
        admission a(l_->rw, dir, total);
        if (!a.ok()) return -1;
        if (block == 0 || total <= block) return call(iov, iovcnt, 0);
        std::vector<struct iovec> w;
        return in_pieces(total, block, [&](size_t d, size_t n) {
            iov_window(iov, iovcnt, d, n, w);
            return call(w.data(), (int)w.size(), d);
        });
    }

    std::shared_ptr<limits_set> l_;
};

class throttled_fs : public ForwardFS_Ownership {
public:
    throttled_fs(IFileSystem* fs, const ThrottleLimits& limits, bool ownership)
        : ForwardFS_Ownership(fs, ownership), l_(std::make_shared<limits_set>(limits)) {}

    IFile* open(const char* pathname, int flags) override {
        return wrap(m_fs->open(pathname, flags));
    }
    IFile* open(const char* pathname, int flags, mode_t mode) override {
        return wrap(m_fs->open(pathname, flags, mode));
    }
    IFile* creat(const char* pathname, mode_t mode) override {
        return wrap(m_fs->creat(pathname, mode));
    }

private:
    IFile* wrap(IFile* f) { return f ? new throttled_file(f, l_, true) : nullptr; }
    std::shared_ptr<limits_set> l_;
};

}  // namespace

IFile* new_throttled_file(IFile* file, const ThrottleLimits& limits, bool ownership) {
    if (!file) LOG_ERROR_RETURN(EINVAL, nullptr, "throttled file: no file");
    return new throttled_file(file, std::make_shared<limits_set>(limits), ownership);
}

IFileSystem* new_throttled_fs(IFileSystem* fs, const ThrottleLimits& limits, bool ownership) {
    if (!fs) LOG_ERROR_RETURN(EINVAL, nullptr, "throttled fs: no file system");
    return new throttled_fs(fs, limits, ownership);
}

}  // namespace fs
}  // namespace photon
