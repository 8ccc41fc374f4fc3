// Forwarding bases, as PhotonLibOS declares them: ForwardFile / ForwardFS pass
// every call to the wrapped m_file / m_fs, so a decorator overrides only what
// it changes. The _Ownership forms delete the wrapped object with themselves
// (and ForwardFile_Ownership::close() closes it only when owned). Same
// threading and blocking as the wrapped object.
//
//   struct counting_file : photon::fs::ForwardFile_Ownership {
//       counting_file(IFile* f) : ForwardFile_Ownership(f, true) {}
//       ssize_t pread(void* b, size_t n, off_t o) override {
//           reads++;
//           return m_file->pread(b, n, o);
//       }
//       int reads = 0;
//   };
//
// Differences from PhotonLibOS: doc/compat.md#fsforwardfsh
#pragma once

#include <cstdarg>

#include <photon/fs/filesystem.h>

namespace photon {
namespace fs {

namespace detail {
// The parameter type of IFile::fiemap, whichever `struct fiemap` it names.
template <typename F>
struct fiemap_param;
template <typename R, typename C, typename A>
struct fiemap_param<R (C::*)(A)> {
    using type = A;
};
using fiemap_ptr = typename fiemap_param<decltype(&IFile::fiemap)>::type;
}  // namespace detail

template <class IFileBase>
class ForwardFileBase : public IFileBase {
protected:
    IFileBase* m_file;
    explicit ForwardFileBase(IFileBase* file) : m_file(file) {}

    int close() override { return m_file->close(); }
    ssize_t read(void* buf, size_t count) override { return m_file->read(buf, count); }
    ssize_t readv(const struct iovec* iov, int iovcnt) override {
        return m_file->readv(iov, iovcnt);
    }
    ssize_t readv_mutable(struct iovec* iov, int iovcnt) override {
        return m_file->readv_mutable(iov, iovcnt);
    }
    ssize_t write(const void* buf, size_t count) override { return m_file->write(buf, count); }
    ssize_t writev(const struct iovec* iov, int iovcnt) override {
        return m_file->writev(iov, iovcnt);
    }
    ssize_t writev_mutable(struct iovec* iov, int iovcnt) override {
        return m_file->writev_mutable(iov, iovcnt);
    }
    ssize_t pread(void* buf, size_t count, off_t offset) override {
        return m_file->pread(buf, count, offset);
    }
    ssize_t pwrite(const void* buf, size_t count, off_t offset) override {
        return m_file->pwrite(buf, count, offset);
    }
    ssize_t preadv(const struct iovec* iov, int iovcnt, off_t offset) override {
        return m_file->preadv(iov, iovcnt, offset);
    }
    ssize_t preadv_mutable(struct iovec* iov, int iovcnt, off_t offset) override {
        return m_file->preadv_mutable(iov, iovcnt, offset);
    }
    ssize_t preadv2(const struct iovec* iov, int iovcnt, off_t offset, int flags) override {
        return m_file->preadv2(iov, iovcnt, offset, flags);
    }
    ssize_t preadv2_mutable(struct iovec* iov, int iovcnt, off_t offset, int flags) override {
        return m_file->preadv2_mutable(iov, iovcnt, offset, flags);
    }
    ssize_t pwritev(const struct iovec* iov, int iovcnt, off_t offset) override {
        return m_file->pwritev(iov, iovcnt, offset);
    }
    ssize_t pwritev_mutable(struct iovec* iov, int iovcnt, off_t offset) override {
        return m_file->pwritev_mutable(iov, iovcnt, offset);
    }
    ssize_t pwritev2(const struct iovec* iov, int iovcnt, off_t offset, int flags) override {
        return m_file->pwritev2(iov, iovcnt, offset, flags);
    }
    ssize_t pwritev2_mutable(struct iovec* iov, int iovcnt, off_t offset, int flags) override {
        return m_file->pwritev2_mutable(iov, iovcnt, offset, flags);
    }
    IFileSystem* filesystem() override { return m_file->filesystem(); }
    off_t lseek(off_t offset, int whence) override { return m_file->lseek(offset, whence); }
    int fsync() override { return m_file->fsync(); }
    int fdatasync() override { return m_file->fdatasync(); }
    int fchmod(mode_t mode) override { return m_file->fchmod(mode); }
    int fchown(uid_t owner, gid_t group) override { return m_file->fchown(owner, group); }
    int fstat(struct stat* buf) override { return m_file->fstat(buf); }
    int ftruncate(off_t length) override { return m_file->ftruncate(length); }
    int sync_file_range(off_t offset, off_t nbytes, unsigned int flags) override {
        return m_file->sync_file_range(offset, nbytes, flags);
    }
    ssize_t do_appendv(const struct iovec* iov, int iovcnt, off_t* offset = nullptr,
                       off_t* position = nullptr) override {
        return m_file->do_appendv(iov, iovcnt, offset, position);
    }
    int fallocate(int mode, off_t offset, off_t len) override {
        return m_file->fallocate(mode, offset, len);
    }
    int fadvise(off_t offset, off_t len, int advice) override {
        return m_file->fadvise(offset, len, advice);
    }
    int fiemap(detail::fiemap_ptr map) override { return m_file->fiemap(map); }
    int vioctl(int request, va_list args) override { return m_file->vioctl(request, args); }
    Object* get_underlay_object(int /*i*/ = 0) override { return m_file; }
};

template <class IFileBase>
class ForwardFileBase_Ownership : public ForwardFileBase<IFileBase> {
protected:
    bool m_ownership;
    ForwardFileBase_Ownership(IFileBase* file, bool ownership)
        : ForwardFileBase<IFileBase>(file), m_ownership(ownership) {}
    ~ForwardFileBase_Ownership() override {
        if (m_ownership) delete this->m_file;
    }
    // A file we do not own stays open for its owner.
    int close() override { return m_ownership ? this->m_file->close() : 0; }
};

using ForwardFile = ForwardFileBase<IFile>;
using ForwardFile_Ownership = ForwardFileBase_Ownership<IFile>;

template <class IFileSystemBase>
class ForwardFSBase : public IFileSystemBase {
protected:
    IFileSystemBase* m_fs;
    explicit ForwardFSBase(IFileSystemBase* fs) : m_fs(fs) {}

    IFile* open(const char* pathname, int flags) override { return m_fs->open(pathname, flags); }
    IFile* open(const char* pathname, int flags, mode_t mode) override {
        return m_fs->open(pathname, flags, mode);
    }
    IFile* creat(const char* pathname, mode_t mode) override { return m_fs->creat(pathname, mode); }
    int mkdir(const char* pathname, mode_t mode) override { return m_fs->mkdir(pathname, mode); }
    int rmdir(const char* pathname) override { return m_fs->rmdir(pathname); }
    int symlink(const char* oldname, const char* newname) override {
        return m_fs->symlink(oldname, newname);
    }
    ssize_t readlink(const char* pathname, char* buf, size_t bufsiz) override {
        return m_fs->readlink(pathname, buf, bufsiz);
    }
    int link(const char* oldname, const char* newname) override {
        return m_fs->link(oldname, newname);
    }
    int rename(const char* oldname, const char* newname) override {
        return m_fs->rename(oldname, newname);
    }
    int unlink(const char* pathname) override { return m_fs->unlink(pathname); }
    int chmod(const char* pathname, mode_t mode) override { return m_fs->chmod(pathname, mode); }
    int chown(const char* pathname, uid_t owner, gid_t group) override {
        return m_fs->chown(pathname, owner, group);
    }
    int lchown(const char* pathname, uid_t owner, gid_t group) override {
        return m_fs->lchown(pathname, owner, group);
    }
    DIR* opendir(const char* pathname) override { return m_fs->opendir(pathname); }
    int stat(const char* path, struct stat* buf) override { return m_fs->stat(path, buf); }
    int lstat(const char* path, struct stat* buf) override { return m_fs->lstat(path, buf); }
    int access(const char* path, int mode) override { return m_fs->access(path, mode); }
    int truncate(const char* path, off_t length) override { return m_fs->truncate(path, length); }
    int syncfs() override { return m_fs->syncfs(); }
    int statfs(const char* path, struct statfs* buf) override { return m_fs->statfs(path, buf); }
    int statvfs(const char* path, struct statvfs* buf) override { return m_fs->statvfs(path, buf); }
    int utime(const char* path, const struct utimbuf* file_times) override {
        return m_fs->utime(path, file_times);
    }
    int utimes(const char* path, const struct timeval times[2]) override {
        return m_fs->utimes(path, times);
    }
    int lutimes(const char* path, const struct timeval times[2]) override {
        return m_fs->lutimes(path, times);
    }
    int mknod(const char* path, mode_t mode, dev_t dev) override {
        return m_fs->mknod(path, mode, dev);
    }
    Object* get_underlay_object(int /*i*/ = 0) override { return m_fs; }
};

template <class IFileSystemBase>
class ForwardFSBase_Ownership : public ForwardFSBase<IFileSystemBase> {
protected:
    bool m_ownership;
    ForwardFSBase_Ownership(IFileSystemBase* fs, bool ownership)
        : ForwardFSBase<IFileSystemBase>(fs), m_ownership(ownership) {}
    ~ForwardFSBase_Ownership() override {
        if (m_ownership) delete this->m_fs;
    }
};

using ForwardFS = ForwardFSBase<IFileSystem>;
using ForwardFS_Ownership = ForwardFSBase_Ownership<IFileSystem>;

}  // namespace fs
}  // namespace photon
