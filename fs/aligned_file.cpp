// The aligned-file adaptor: aligned requests pass through; others go through
// an aligned bounce buffer covering the enclosing aligned range. An unaligned
// write reads its edge blocks, patches them and writes the whole range back,
// then trims the file to its true size if the range ran past the end. It
// holds the write lock exclusively (aligned writes share it), so no other
// write of this adaptor can land between its read and its write.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <photon/common/alog.h>
#include <photon/common/utility.h>
#include <photon/fs/aligned-file.h>
#include <photon/thread/thread.h>

namespace photon {
namespace fs {
namespace {

struct free_deleter {
    void operator()(void* p) const { free(p); }
};
using bounce_ptr = std::unique_ptr<char, free_deleter>;

bounce_ptr alloc_aligned(size_t align, size_t n) {
    void* p = nullptr;
    if (posix_memalign(&p, align, n ? n : align)) return nullptr;
    return bounce_ptr(static_cast<char*>(p));
}

size_t iov_sum(const iovec* iov, int cnt) {
    size_t n = 0;
    for (int i = 0; i < cnt; i++) n += iov[i].iov_len;
    return n;
}

class aligned_file : public IFile {
public:
    aligned_file(IFile* f, uint32_t a, bool mem, bool own) : f_(f), a_(a), mem_(mem), own_(own) {}
    ~aligned_file() override {
        if (own_) delete f_;
    }
    IFileSystem* filesystem() override { return f_->filesystem(); }
    int close() override { return f_->close(); }

    ssize_t pread(void* buf, size_t n, off_t off) override;
    ssize_t pwrite(const void* buf, size_t n, off_t off) override;
    ssize_t preadv(const iovec* iov, int cnt, off_t off) override;
    ssize_t pwritev(const iovec* iov, int cnt, off_t off) override;

    ssize_t read(void* buf, size_t n) override { return advance(pread(buf, n, pos_)); }
    ssize_t write(const void* buf, size_t n) override { return advance(pwrite(buf, n, pos_)); }
    ssize_t readv(const iovec* iov, int cnt) override { return advance(preadv(iov, cnt, pos_)); }
    ssize_t writev(const iovec* iov, int cnt) override { return advance(pwritev(iov, cnt, pos_)); }
    off_t lseek(off_t off, int whence) override;

    int fsync() override { return f_->fsync(); }
    int fdatasync() override { return f_->fdatasync(); }
    int fchmod(mode_t m) override { return f_->fchmod(m); }
    int fchown(uid_t u, gid_t g) override { return f_->fchown(u, g); }
    int fstat(struct stat* st) override { return f_->fstat(st); }
    int ftruncate(off_t n) override { return f_->ftruncate(n); }
    int fadvise(off_t o, off_t n, int adv) override { return f_->fadvise(o, n, adv); }
    int sync_file_range(off_t o, off_t n, unsigned fl) override {
        return f_->sync_file_range(o, n, fl);
    }
    int fallocate(int mode, off_t o, off_t n) override { return f_->fallocate(mode, o, n); }
    Object* get_underlay_object(int) override { return f_; }

private:
    bool aligned(uint64_t x) const { return (x & (a_ - 1)) == 0; }
    bool io_aligned(const void* buf, size_t n, off_t off) const {
        return aligned(off) && aligned(n) && (!mem_ || aligned((uintptr_t)buf));
    }
    ssize_t advance(ssize_t r) {
        if (r > 0) pos_ += r;
        return r;
    }
    ssize_t read_block(char* dst, off_t off);
    ssize_t patch_and_write(const void* buf, size_t n, off_t off);

    IFile* f_;
    uint32_t a_;
    bool mem_, own_;
    rwlock wlock_;
    off_t pos_ = 0;
};

ssize_t aligned_file::pread(void* buf, size_t n, off_t off) {
    if (off < 0) return errno = EINVAL, -1;
    if (io_aligned(buf, n, off)) return f_->pread(buf, n, off);
    off_t lo = align_down(off, a_), hi = align_up(off + (off_t)n, a_);
    auto bounce = alloc_aligned(a_, hi - lo);
    if (!bounce) LOG_ERROR_RETURN(ENOMEM, -1, "aligned file: no bounce buffer of ", hi - lo);
    ssize_t r = f_->pread(bounce.get(), hi - lo, lo);
    if (r < 0) return -1;
    ssize_t avail = r - (off - lo);
    if (avail <= 0) return 0;
    size_t got = std::min(n, (size_t)avail);
    memcpy(buf, bounce.get() + (off - lo), got);
    return got;
}

// One aligned block at off into dst, zero-filled past the end of the file.
ssize_t aligned_file::read_block(char* dst, off_t off) {
    ssize_t r = f_->pread(dst, a_, off);
    if (r < 0) return -1;
    memset(dst + r, 0, a_ - r);
    return r;
}

ssize_t aligned_file::pwrite(const void* buf, size_t n, off_t off) {
    if (off < 0) return errno = EINVAL, -1;
    if (io_aligned(buf, n, off)) {
        wlock_.lock(RLOCK);
        DEFER(wlock_.unlock());
        return f_->pwrite(buf, n, off);
    }
    wlock_.lock(WLOCK);
    DEFER(wlock_.unlock());
    return patch_and_write(buf, n, off);
}

ssize_t aligned_file::patch_and_write(const void* buf, size_t n, off_t off) {
    struct stat st;
    if (f_->fstat(&st) < 0) return -1;
    off_t end = off + (off_t)n, lo = align_down(off, a_), hi = align_up(end, a_);
    auto bounce = alloc_aligned(a_, hi - lo);
    if (!bounce) LOG_ERROR_RETURN(ENOMEM, -1, "aligned file: no bounce buffer of ", hi - lo);
    char* b = bounce.get();
    if (off != lo && read_block(b, lo) < 0) return -1;
    if (end != hi && (hi - a_ != lo || off == lo) && read_block(b + (hi - lo - a_), hi - a_) < 0)
        return -1;
    memcpy(b + (off - lo), buf, n);
    ssize_t w = f_->pwrite(b, hi - lo, lo);
    if (w < 0) return -1;
    // The range may have extended the file past its true new end.
    off_t size = std::max((off_t)st.st_size, end);
    if (hi > size && lo + w > size && f_->ftruncate(size) < 0) return -1;
    ssize_t mine = std::min((ssize_t)n, w - (off - lo));
    return mine > 0 ? mine : (n ? (errno = EIO, -1) : 0);
}

ssize_t aligned_file::preadv(const iovec* iov, int cnt, off_t off) {
    bool ok = true;
    for (int i = 0; i < cnt && ok; i++) ok = io_aligned(iov[i].iov_base, iov[i].iov_len, 0);
    if (ok && aligned(off)) return f_->preadv(iov, cnt, off);
    size_t n = iov_sum(iov, cnt);
    auto bounce = alloc_aligned(a_, n);
    if (!bounce) LOG_ERROR_RETURN(ENOMEM, -1, "aligned file: no bounce buffer of ", n);
    ssize_t r = pread(bounce.get(), n, off);
    if (r <= 0) return r;
    size_t done = 0;
    for (int i = 0; i < cnt && done < (size_t)r; i++) {
        size_t k = std::min(iov[i].iov_len, (size_t)r - done);
        memcpy(iov[i].iov_base, bounce.get() + done, k);
        done += k;
    }
    return r;
}

ssize_t aligned_file::pwritev(const iovec* iov, int cnt, off_t off) {
    size_t n = iov_sum(iov, cnt);
    auto bounce = alloc_aligned(a_, n);
    if (!bounce) LOG_ERROR_RETURN(ENOMEM, -1, "aligned file: no bounce buffer of ", n);
    size_t done = 0;
    for (int i = 0; i < cnt; i++) {
        memcpy(bounce.get() + done, iov[i].iov_base, iov[i].iov_len);
        done += iov[i].iov_len;
    }
    return pwrite(bounce.get(), n, off);
}

off_t aligned_file::lseek(off_t off, int whence) {
    off_t base = 0;
    if (whence == SEEK_CUR) {
        base = pos_;
    } else if (whence == SEEK_END) {
        struct stat st;
        if (f_->fstat(&st) < 0) return -1;
        base = st.st_size;
    } else if (whence != SEEK_SET) {
        return errno = EINVAL, -1;
    }
    if (base + off < 0) return errno = EINVAL, -1;
    return pos_ = base + off;
}

class aligned_fs : public IFileSystem {
public:
    aligned_fs(IFileSystem* fs, uint32_t a, bool mem, bool own)
        : fs_(fs), a_(a), mem_(mem), own_(own) {}
    ~aligned_fs() override {
        if (own_) delete fs_;
    }
    IFile* open(const char* p, int fl) override { return wrap(fs_->open(p, fl)); }
    IFile* open(const char* p, int fl, mode_t m) override { return wrap(fs_->open(p, fl, m)); }
    IFile* creat(const char* p, mode_t m) override { return wrap(fs_->creat(p, m)); }
    int mkdir(const char* p, mode_t m) override { return fs_->mkdir(p, m); }
    int rmdir(const char* p) override { return fs_->rmdir(p); }
    int symlink(const char* o, const char* n) override { return fs_->symlink(o, n); }
    ssize_t readlink(const char* p, char* b, size_t n) override { return fs_->readlink(p, b, n); }
    int link(const char* o, const char* n) override { return fs_->link(o, n); }
    int rename(const char* o, const char* n) override { return fs_->rename(o, n); }
    int unlink(const char* p) override { return fs_->unlink(p); }
    int chmod(const char* p, mode_t m) override { return fs_->chmod(p, m); }
    int chown(const char* p, uid_t u, gid_t g) override { return fs_->chown(p, u, g); }
    int lchown(const char* p, uid_t u, gid_t g) override { return fs_->lchown(p, u, g); }
    int statfs(const char* p, struct statfs* b) override { return fs_->statfs(p, b); }
    int statvfs(const char* p, struct statvfs* b) override { return fs_->statvfs(p, b); }
    int stat(const char* p, struct stat* b) override { return fs_->stat(p, b); }
    int lstat(const char* p, struct stat* b) override { return fs_->lstat(p, b); }
    int access(const char* p, int m) override { return fs_->access(p, m); }
    int truncate(const char* p, off_t n) override { return fs_->truncate(p, n); }
    int utime(const char* p, const struct utimbuf* t) override { return fs_->utime(p, t); }
    int utimes(const char* p, const struct timeval t[2]) override { return fs_->utimes(p, t); }
    int lutimes(const char* p, const struct timeval t[2]) override { return fs_->lutimes(p, t); }
    int mknod(const char* p, mode_t m, dev_t d) override { return fs_->mknod(p, m, d); }
    int syncfs() override { return fs_->syncfs(); }
    DIR* opendir(const char* p) override { return fs_->opendir(p); }
    Object* get_underlay_object(int) override { return fs_; }

private:
    IFile* wrap(IFile* f) { return f ? new aligned_file(f, a_, mem_, true) : nullptr; }

    IFileSystem* fs_;
    uint32_t a_;
    bool mem_, own_;
};

bool power_of_two(uint32_t a) { return a && (a & (a - 1)) == 0; }

}  // namespace

IFile* new_aligned_file_adaptor(IFile* file, uint32_t alignment, bool align_memory, bool ownership,
                                IOAlloc*) {
    if (!file || !power_of_two(alignment))
        LOG_ERROR_RETURN(EINVAL, nullptr, "aligned file: bad file or alignment ", alignment);
    return new aligned_file(file, alignment, align_memory, ownership);
}

IFileSystem* new_aligned_fs_adaptor(IFileSystem* fs, uint32_t alignment, bool align_memory,
                                    bool ownership, IOAlloc*) {
    if (!fs || !power_of_two(alignment))
        LOG_ERROR_RETURN(EINVAL, nullptr, "aligned fs: bad fs or alignment ", alignment);
    return new aligned_fs(fs, alignment, align_memory, ownership);
}

}  // namespace fs
}  // namespace photon
