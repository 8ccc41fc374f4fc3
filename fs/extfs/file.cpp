// The IFile of an extfs inode and the DIR of a listing. A file keeps only its
// inode number, open flags and position; every call goes to the file system
// under its mutex.
#include <fcntl.h>

#include <algorithm>
#include <vector>

#include "ext_fs.h"

namespace photon {
namespace fs {
namespace extfs {
namespace {

class ext_file : public IFile, public IFileXAttr {
public:
    ext_file(ext_filesystem* fs, ext2_ino_t ino, int flags, bool is_dir)
        : fs_(fs), ino_(ino), flags_(flags), is_dir_(is_dir) {}
    ~ext_file() override { close(); }

    IFileSystem* filesystem() override { return fs_; }
    Object* get_underlay_object(int) override { return fs_->get_underlay_object(0); }

    int close() override {
        if (closed_) return 0;
        closed_ = true;
        fs_->file_closed(ino_);
        return 0;
    }

    ssize_t pread(void* buf, size_t count, off_t offset) override {
        if (int e = check_read()) return errno = e, -1;
        SCOPED_LOCK(fs_->mutex());
        return fs_->read_locked(ino_, buf, count, offset);
    }
    ssize_t pwrite(const void* buf, size_t count, off_t offset) override {
        if (int e = check_write()) return errno = e, -1;
        SCOPED_LOCK(fs_->mutex());
        return fs_->write_locked(ino_, buf, count, offset, flags_ & O_APPEND);
    }
    ssize_t preadv(const struct iovec* iov, int iovcnt, off_t offset) override {
        if (int e = check_read()) return errno = e, -1;
        SCOPED_LOCK(fs_->mutex());
        ssize_t done = 0;
        for (int i = 0; i < iovcnt; i++) {
            ssize_t n = fs_->read_locked(ino_, iov[i].iov_base, iov[i].iov_len, offset + done);
            if (n < 0) return done ? done : -1;
            done += n;
            if ((size_t)n < iov[i].iov_len) break;
        }
        return done;
    }
    ssize_t pwritev(const struct iovec* iov, int iovcnt, off_t offset) override {
        if (int e = check_write()) return errno = e, -1;
        SCOPED_LOCK(fs_->mutex());
        ssize_t done = 0;
        bool append = flags_ & O_APPEND;
        for (int i = 0; i < iovcnt; i++) {
            ssize_t n =
                fs_->write_locked(ino_, iov[i].iov_base, iov[i].iov_len, offset + done, append);
            if (n < 0) return done ? done : -1;
            done += n;
            if ((size_t)n < iov[i].iov_len) break;
        }
        return done;
    }

    // read/write at the file's own position (O_APPEND: writes at the end).
    ssize_t read(void* buf, size_t count) override {
        ssize_t n = pread(buf, count, pos_);
        if (n > 0) pos_ += n;
        return n;
    }
    ssize_t readv(const struct iovec* iov, int iovcnt) override {
        ssize_t n = preadv(iov, iovcnt, pos_);
        if (n > 0) pos_ += n;
        return n;
    }
    ssize_t write(const void* buf, size_t count) override {
        struct iovec v = {const_cast<void*>(buf), count};
        return writev(&v, 1);
    }
    ssize_t writev(const struct iovec* iov, int iovcnt) override {
        ssize_t n = pwritev(iov, iovcnt, pos_);
        if (n > 0) {
            if (flags_ & O_APPEND) {
                struct stat st;
                if (fstat(&st) == 0) pos_ = st.st_size;
            } else {
                pos_ += n;
            }
        }
        return n;
    }

    off_t lseek(off_t offset, int whence) override {
        off_t base;
        struct stat st;
        switch (whence) {
            case SEEK_SET:
                base = 0;
                break;
            case SEEK_CUR:
                base = pos_;
                break;
            case SEEK_END:
            case SEEK_DATA:
            case SEEK_HOLE:
                if (fstat(&st) < 0) return -1;
                base = st.st_size;
                break;
            default:
                return errno = EINVAL, -1;
        }
        off_t at;
        if (whence == SEEK_DATA || whence == SEEK_HOLE) {  // the whole file counts as data
            if (offset < 0 || offset >= base) return errno = ENXIO, -1;
            at = whence == SEEK_DATA ? offset : base;
        } else {
            if (__builtin_add_overflow(base, offset, &at) || at < 0) return errno = EINVAL, -1;
        }
        return pos_ = at;
    }

    int fsync() override {
        SCOPED_LOCK(fs_->mutex());
        return fs_->sync_locked();
    }
    int fdatasync() override { return fsync(); }
    int fchmod(mode_t mode) override {
        SCOPED_LOCK(fs_->mutex());
        return fs_->chmod_locked(ino_, mode);
    }
    int fchown(uid_t owner, gid_t group) override {
        SCOPED_LOCK(fs_->mutex());
        return fs_->chown_locked(ino_, owner, group);
    }
    int fstat(struct stat* buf) override {
        SCOPED_LOCK(fs_->mutex());
        return fs_->stat_locked(ino_, buf);
    }
    int ftruncate(off_t length) override {
        if (int e = check_write()) return errno = e, -1;  // EBADF read-only, as Photon's
        SCOPED_LOCK(fs_->mutex());
        return fs_->truncate_locked(ino_, length);
    }
    int fallocate(int mode, off_t offset, off_t len) override {
        if (int e = check_write()) return errno = e, -1;
        SCOPED_LOCK(fs_->mutex());
        return fs_->fallocate_locked(ino_, mode, offset, len);
    }

    ssize_t fgetxattr(const char* name, void* value, size_t size) override {
        SCOPED_LOCK(fs_->mutex());
        return fs_->getxattr_locked(ino_, name, value, size);
    }
    ssize_t flistxattr(char* list, size_t size) override {
        SCOPED_LOCK(fs_->mutex());
        return fs_->listxattr_locked(ino_, list, size);
    }
    int fsetxattr(const char* name, const void* value, size_t size, int flags) override {
        SCOPED_LOCK(fs_->mutex());
        return fs_->setxattr_locked(ino_, name, value, size, flags);
    }
    int fremovexattr(const char* name) override {
        SCOPED_LOCK(fs_->mutex());
        return fs_->removexattr_locked(ino_, name);
    }

private:
    bool writes() const {
        int acc = flags_ & O_ACCMODE;
        return acc == O_WRONLY || acc == O_RDWR;
    }
    int check_read() const {
        if (closed_ || (flags_ & O_ACCMODE) == O_WRONLY) return EBADF;
        return is_dir_ ? EISDIR : 0;
    }
    int check_write() const {
        if (closed_ || !writes()) return EBADF;
        return is_dir_ ? EISDIR : 0;
    }

    ext_filesystem* fs_;
    ext2_ino_t ino_;
    int flags_;
    bool is_dir_;
    bool closed_ = false;
    off_t pos_ = 0;
};

class ext_dir : public DIR {
public:
    explicit ext_dir(std::vector<struct dirent>&& entries) : entries_(std::move(entries)) {}
    int closedir() override { return 0; }
    struct dirent* get() override {
        return at_ < entries_.size() ? &entries_[at_] : nullptr;
    }
    int next() override {
        if (at_ < entries_.size()) at_++;
        return at_ < entries_.size() ? 1 : 0;
    }
    void rewinddir() override { at_ = 0; }
    void seekdir(long long loc) override {
        at_ = loc < 0 ? entries_.size() : std::min<size_t>(loc, entries_.size());
    }
    long long telldir() override { return at_; }

private:
    std::vector<struct dirent> entries_;
    size_t at_ = 0;
};

}  // namespace

IFile* new_ext_file(ext_filesystem* fs, ext2_ino_t ino, int flags, bool is_dir) {
    return new ext_file(fs, ino, flags, is_dir);
}

DIR* new_ext_dir(std::vector<struct dirent>&& entries) { return new ext_dir(std::move(entries)); }

}  // namespace extfs
}  // namespace fs
}  // namespace photon
