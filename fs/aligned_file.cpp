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
#include <photon/fs/forwardfs.h>
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

// Forwards every call it does not change (fiemap, vioctl, fallocate, ...);
// close() of a file it does not own leaves that file open for its owner.
class aligned_file : public ForwardFile_Ownership, public IFileXAttr {
public:
    aligned_file(IFile* f, uint32_t a, bool mem, bool own)
        : ForwardFile_Ownership(f, own), a_(a), mem_(mem) {}

    ssize_t pread(void* buf, size_t n, off_t off) override;
    ssize_t pwrite(const void* buf, size_t n, off_t off) override;
    ssize_t preadv(const iovec* iov, int cnt, off_t off) override;
    ssize_t pwritev(const iovec* iov, int cnt, off_t off) override;
    // The vector and flag forms come here too, or they would bypass alignment.
    ssize_t preadv_mutable(iovec* iov, int cnt, off_t off) override {
        return preadv(iov, cnt, off);
    }
    ssize_t pwritev_mutable(iovec* iov, int cnt, off_t off) override {
        return pwritev(iov, cnt, off);
    }
    ssize_t preadv2(const iovec* iov, int cnt, off_t off, int flags) override {
        return flags ? (errno = EOPNOTSUPP, -1) : preadv(iov, cnt, off);
    }
    ssize_t pwritev2(const iovec* iov, int cnt, off_t off, int flags) override {
        return flags ? (errno = EOPNOTSUPP, -1) : pwritev(iov, cnt, off);
    }
    ssize_t preadv2_mutable(iovec* iov, int cnt, off_t off, int flags) override {
        return preadv2(iov, cnt, off, flags);
    }
    ssize_t pwritev2_mutable(iovec* iov, int cnt, off_t off, int flags) override {
        return pwritev2(iov, cnt, off, flags);
    }

    ssize_t read(void* buf, size_t n) override { return advance(pread(buf, n, pos_)); }
    ssize_t write(const void* buf, size_t n) override { return advance(pwrite(buf, n, pos_)); }
    ssize_t readv(const iovec* iov, int cnt) override { return advance(preadv(iov, cnt, pos_)); }
    ssize_t writev(const iovec* iov, int cnt) override { return advance(pwritev(iov, cnt, pos_)); }
    ssize_t readv_mutable(iovec* iov, int cnt) override { return readv(iov, cnt); }
    ssize_t writev_mutable(iovec* iov, int cnt) override { return writev(iov, cnt); }
    off_t lseek(off_t off, int whence) override;
    // An append lands at an unaligned end; not supported through the adaptor.
    ssize_t do_appendv(const iovec*, int, off_t*, off_t*) override { return errno = ENOSYS, -1; }

    ssize_t fgetxattr(const char* name, void* value, size_t size) override {
        auto x = xattr();
        return x ? x->fgetxattr(name, value, size) : -1;
    }
    ssize_t flistxattr(char* list, size_t size) override {
        auto x = xattr();
        return x ? x->flistxattr(list, size) : -1;
    }
    int fsetxattr(const char* name, const void* value, size_t size, int flags) override {
        auto x = xattr();
        return x ? x->fsetxattr(name, value, size, flags) : -1;
    }
    int fremovexattr(const char* name) override {
        auto x = xattr();
        return x ? x->fremovexattr(name) : -1;
    }

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
    IFileXAttr* xattr() {
        auto x = dynamic_cast<IFileXAttr*>(m_file);
        if (!x) errno = ENOTSUP;
        return x;
    }

    uint32_t a_;
    bool mem_;
    rwlock wlock_;
    off_t pos_ = 0;
};

ssize_t aligned_file::pread(void* buf, size_t n, off_t off) {
    if (off < 0) return errno = EINVAL, -1;
    if (io_aligned(buf, n, off)) return m_file->pread(buf, n, off);
    off_t lo = align_down(off, a_), hi = align_up(off + (off_t)n, a_);
    auto bounce = alloc_aligned(a_, hi - lo);
    if (!bounce) LOG_ERROR_RETURN(ENOMEM, -1, "aligned file: no bounce buffer of ", hi - lo);
    ssize_t r = m_file->pread(bounce.get(), hi - lo, lo);
    if (r < 0) return -1;
    ssize_t avail = r - (off - lo);
    if (avail <= 0) return 0;
    size_t got = std::min(n, (size_t)avail);
    memcpy(buf, bounce.get() + (off - lo), got);
    return got;
}

// One aligned block at off into dst, zero-filled past the end of the file.
ssize_t aligned_file::read_block(char* dst, off_t off) {
    ssize_t r = m_file->pread(dst, a_, off);
    if (r < 0) return -1;
    memset(dst + r, 0, a_ - r);
    return r;
}

ssize_t aligned_file::pwrite(const void* buf, size_t n, off_t off) {
    if (off < 0) return errno = EINVAL, -1;
    if (io_aligned(buf, n, off)) {
        wlock_.lock(RLOCK);
        DEFER(wlock_.unlock());
        return m_file->pwrite(buf, n, off);
    }
    wlock_.lock(WLOCK);
    DEFER(wlock_.unlock());
    return patch_and_write(buf, n, off);
}

ssize_t aligned_file::patch_and_write(const void* buf, size_t n, off_t off) {
    struct stat st;
    if (m_file->fstat(&st) < 0) return -1;
    off_t end = off + (off_t)n, lo = align_down(off, a_), hi = align_up(end, a_);
    auto bounce = alloc_aligned(a_, hi - lo);
    if (!bounce) LOG_ERROR_RETURN(ENOMEM, -1, "aligned file: no bounce buffer of ", hi - lo);
    char* b = bounce.get();
    if (off != lo && read_block(b, lo) < 0) return -1;
    if (end != hi && (hi - a_ != lo || off == lo) && read_block(b + (hi - lo - a_), hi - a_) < 0)
        return -1;
    memcpy(b + (off - lo), buf, n);
    ssize_t w = m_file->pwrite(b, hi - lo, lo);
    if (w < 0) return -1;
    // The range may have extended the file past its true new end.
    off_t size = std::max((off_t)st.st_size, end);
    if (hi > size && lo + w > size && m_file->ftruncate(size) < 0) return -1;
    ssize_t mine = std::min((ssize_t)n, w - (off - lo));
    return mine > 0 ? mine : (n ? (errno = EIO, -1) : 0);
}

ssize_t aligned_file::preadv(const iovec* iov, int cnt, off_t off) {
    bool ok = true;
    for (int i = 0; i < cnt && ok; i++) ok = io_aligned(iov[i].iov_base, iov[i].iov_len, 0);
    if (ok && aligned(off)) return m_file->preadv(iov, cnt, off);
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
        if (m_file->fstat(&st) < 0) return -1;
        base = st.st_size;
    } else if (whence != SEEK_SET) {
        return errno = EINVAL, -1;
    }
    if (base + off < 0) return errno = EINVAL, -1;
    return pos_ = base + off;
}

// Wraps every file it opens; every other call goes through unchanged.
class aligned_fs : public ForwardFS_Ownership, public IFileSystemXAttr {
public:
    aligned_fs(IFileSystem* fs, uint32_t a, bool mem, bool own)
        : ForwardFS_Ownership(fs, own), a_(a), mem_(mem) {}
    IFile* open(const char* p, int fl) override { return wrap(m_fs->open(p, fl)); }
    IFile* open(const char* p, int fl, mode_t m) override { return wrap(m_fs->open(p, fl, m)); }
    IFile* creat(const char* p, mode_t m) override { return wrap(m_fs->creat(p, m)); }

    ssize_t getxattr(const char* p, const char* n, void* v, size_t sz) override {
        auto x = xattr();
        return x ? x->getxattr(p, n, v, sz) : -1;
    }
    ssize_t lgetxattr(const char* p, const char* n, void* v, size_t sz) override {
        auto x = xattr();
        return x ? x->lgetxattr(p, n, v, sz) : -1;
    }
    ssize_t listxattr(const char* p, char* l, size_t sz) override {
        auto x = xattr();
        return x ? x->listxattr(p, l, sz) : -1;
    }
    ssize_t llistxattr(const char* p, char* l, size_t sz) override {
        auto x = xattr();
        return x ? x->llistxattr(p, l, sz) : -1;
    }
    int setxattr(const char* p, const char* n, const void* v, size_t sz, int fl) override {
        auto x = xattr();
        return x ? x->setxattr(p, n, v, sz, fl) : -1;
    }
    int lsetxattr(const char* p, const char* n, const void* v, size_t sz, int fl) override {
        auto x = xattr();
        return x ? x->lsetxattr(p, n, v, sz, fl) : -1;
    }
    int removexattr(const char* p, const char* n) override {
        auto x = xattr();
        return x ? x->removexattr(p, n) : -1;
    }
    int lremovexattr(const char* p, const char* n) override {
        auto x = xattr();
        return x ? x->lremovexattr(p, n) : -1;
    }

private:
    IFile* wrap(IFile* f) { return f ? new aligned_file(f, a_, mem_, true) : nullptr; }
    IFileSystemXAttr* xattr() {
        auto x = dynamic_cast<IFileSystemXAttr*>(m_fs);
        if (!x) errno = ENOTSUP;
        return x;
    }

    uint32_t a_;
    bool mem_;
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
