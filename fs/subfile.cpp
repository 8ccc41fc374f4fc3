// new_subfile: a window [offset, offset+length) of another file. Reads stop
// at the window's end (short read, then 0); writes past it fail with ENOSPC.
#include <algorithm>

#include <photon/common/alog.h>
#include <photon/fs/subfs.h>

namespace photon {
namespace fs {
namespace {

class sub_file : public IFile {
public:
    sub_file(IFile* f, off_t off, size_t len, bool own) : f_(f), off_(off), len_(len), own_(own) {}
    ~sub_file() override {
        if (own_) delete f_;
    }
    IFileSystem* filesystem() override { return f_->filesystem(); }
    int close() override { return own_ ? f_->close() : 0; }

    ssize_t pread(void* buf, size_t n, off_t off) override {
        if (off < 0) return errno = EINVAL, -1;
        if ((size_t)off >= len_) return 0;
        return f_->pread(buf, std::min(n, len_ - (size_t)off), off_ + off);
    }
    ssize_t pwrite(const void* buf, size_t n, off_t off) override {
        if (off < 0) return errno = EINVAL, -1;
        if ((size_t)off >= len_ && n) return errno = ENOSPC, -1;
        return f_->pwrite(buf, std::min(n, len_ - (size_t)off), off_ + off);
    }
    ssize_t preadv(const iovec* iov, int cnt, off_t off) override {
        return each(iov, cnt, off, false);
    }
    ssize_t pwritev(const iovec* iov, int cnt, off_t off) override {
        return each(iov, cnt, off, true);
    }
    ssize_t read(void* buf, size_t n) override {
        ssize_t r = pread(buf, n, pos_);
        if (r > 0) pos_ += r;
        return r;
    }
    ssize_t write(const void* buf, size_t n) override {
        ssize_t r = pwrite(buf, n, pos_);
        if (r > 0) pos_ += r;
        return r;
    }
    ssize_t readv(const iovec* iov, int cnt) override {
        ssize_t r = preadv(iov, cnt, pos_);
        if (r > 0) pos_ += r;
        return r;
    }
    ssize_t writev(const iovec* iov, int cnt) override {
        ssize_t r = pwritev(iov, cnt, pos_);
        if (r > 0) pos_ += r;
        return r;
    }
    off_t lseek(off_t off, int whence) override {
        off_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? pos_ : (off_t)len_;
        if ((whence != SEEK_SET && whence != SEEK_CUR && whence != SEEK_END) || base + off < 0)
            return errno = EINVAL, -1;
        return pos_ = base + off;
    }
    int fsync() override { return f_->fsync(); }
    int fdatasync() override { return f_->fdatasync(); }
    int fchmod(mode_t m) override { return f_->fchmod(m); }
    int fchown(uid_t u, gid_t g) override { return f_->fchown(u, g); }
    int fstat(struct stat* st) override {
        if (f_->fstat(st) < 0) return -1;
        st->st_size = (off_t)len_;
        return 0;
    }
    int ftruncate(off_t) override { return errno = EPERM, -1; }
    Object* get_underlay_object(int) override { return f_; }

private:
    // Vector I/O one segment at a time, so the window clamps each.
    ssize_t each(const iovec* iov, int cnt, off_t off, bool is_write) {
        ssize_t total = 0;
        for (int i = 0; i < cnt; i++) {
            ssize_t r = is_write ? pwrite(iov[i].iov_base, iov[i].iov_len, off + total)
                                 : pread(iov[i].iov_base, iov[i].iov_len, off + total);
            if (r < 0) return total ? total : -1;
            total += r;
            if ((size_t)r < iov[i].iov_len) break;
        }
        return total;
    }

    IFile* f_;
    off_t off_;
    size_t len_;
    bool own_;
    off_t pos_ = 0;
};

}  // namespace

IFile* new_subfile(IFile* file, off_t offset, size_t length, bool ownership) {
    if (!file || offset < 0) LOG_ERROR_RETURN(EINVAL, nullptr, "subfile: bad file or offset");
    return new sub_file(file, offset, length, ownership);
}

}  // namespace fs
}  // namespace photon
