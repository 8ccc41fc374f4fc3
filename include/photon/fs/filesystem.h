// IFile and IFileSystem: photon's POSIX-like file interfaces. Every call
// returns like its POSIX namesake (-1 / nullptr with errno). Whether a call
// blocks the coroutine or the whole vCPU depends on the implementation (see
// localfs.h for the I/O engines). Call an object from one vCPU at a time.
// Ownership: the caller deletes every IFile / DIR an open() / opendir()
// returns; deleting an IFile closes it.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <utime.h>

#include <cerrno>
#include <cstdarg>
#include <cstdint>

#include <photon/common/object.h>
#include <photon/common/stream.h>

#define UNIMPLEMENTED(func) \
    virtual func {          \
        errno = ENOSYS;     \
        return -1;          \
    }

#define UNIMPLEMENTED_POINTER(func) \
    virtual func {                  \
        errno = ENOSYS;             \
        return nullptr;             \
    }

// Declared, not included: <dirent.h>'s ::DIR would make `DIR` ambiguous for
// code that says `using namespace photon::fs` (include it to read entries).
struct dirent;

#ifndef ECHECKSUM
#define ECHECKSUM EUCLEAN
#endif

namespace photon {
namespace fs {

const static size_t ALIGNMENT_4K = 4096;

struct fiemap;

class IFileSystem;

class IFile : public IStream {
public:
    // The file system that opened this file; nullptr for a bare adaptor.
    virtual IFileSystem* filesystem() = 0;

    virtual ssize_t pread(void* buf, size_t count, off_t offset) = 0;
    virtual ssize_t pwrite(const void* buf, size_t count, off_t offset) = 0;
    virtual ssize_t preadv(const struct iovec* iov, int iovcnt, off_t offset) = 0;
    virtual ssize_t pwritev(const struct iovec* iov, int iovcnt, off_t offset) = 0;
    // May modify iov.
    virtual ssize_t preadv_mutable(struct iovec* iov, int iovcnt, off_t offset) {
        return preadv(iov, iovcnt, offset);
    }
    virtual ssize_t pwritev_mutable(struct iovec* iov, int iovcnt, off_t offset) {
        return pwritev(iov, iovcnt, offset);
    }
    // RWF_* flags; this default ignores them.
    virtual ssize_t preadv2(const struct iovec* iov, int iovcnt, off_t offset, int /*flags*/) {
        return preadv(iov, iovcnt, offset);
    }
    virtual ssize_t pwritev2(const struct iovec* iov, int iovcnt, off_t offset, int /*flags*/) {
        return pwritev(iov, iovcnt, offset);
    }
    virtual ssize_t preadv2_mutable(struct iovec* iov, int iovcnt, off_t offset, int flags) {
        return preadv2(iov, iovcnt, offset, flags);
    }
    virtual ssize_t pwritev2_mutable(struct iovec* iov, int iovcnt, off_t offset, int flags) {
        return pwritev2(iov, iovcnt, offset, flags);
    }

    virtual off_t lseek(off_t offset, int whence) = 0;
    virtual int fsync() = 0;
    virtual int fdatasync() = 0;
    virtual int fchmod(mode_t mode) = 0;
    virtual int fchown(uid_t owner, gid_t group) = 0;
    virtual int fstat(struct stat* buf) = 0;
    virtual int ftruncate(off_t length) = 0;

    UNIMPLEMENTED(int fadvise(off_t /*offset*/, off_t /*len*/, int /*advice*/))
    UNIMPLEMENTED(int sync_file_range(off_t /*offset*/, off_t /*nbytes*/, unsigned int /*flags*/))
    UNIMPLEMENTED(int fallocate(int /*mode*/, off_t /*offset*/, off_t /*len*/))
    UNIMPLEMENTED(int fiemap(struct fiemap* /*map*/))
    // Appends at `*offset` (-1: wherever the end is), which must be the
    // current size; stores the new size in `*position`.
    UNIMPLEMENTED(ssize_t do_appendv(const struct iovec* /*iov*/, int /*iovcnt*/, off_t* /*offset*/,
                                     off_t* /*position*/))
    UNIMPLEMENTED(int vioctl(int /*request*/, va_list /*args*/))
    UNIMPLEMENTED_POINTER(Object* get_underlay_object(int /*i*/ = 0))

    template <typename = void>
    ssize_t append(const void* buf, size_t count, off_t* position = nullptr) {
        struct iovec v = {const_cast<void*>(buf), count};
        return appendv(&v, 1, nullptr, position);
    }
    ssize_t appendv(const struct iovec* iov, int iovcnt, off_t* position = nullptr) {
        return appendv(iov, iovcnt, nullptr, position);
    }
    ssize_t appendv(const struct iovec* iov, int iovcnt, off_t* offset, off_t* position) {
        return do_appendv(iov, iovcnt, offset, position);
    }
    template <typename = void>
    ssize_t pappend(const void* buf, size_t count, off_t offset, off_t* position = nullptr) {
        struct iovec v = {const_cast<void*>(buf), count};
        return do_appendv(&v, 1, &offset, position);
    }
    ssize_t pappendv(const struct iovec* iov, int iovcnt, off_t offset, off_t* position = nullptr) {
        return do_appendv(iov, iovcnt, &offset, position);
    }

    int ioctl(int request, ...) {
        va_list args;
        va_start(args, request);
        int ret = vioctl(request, args);
        va_end(args);
        return ret;
    }
    // Deallocates / zeroes a range through fallocate (size unchanged).
    int trim(off_t offset, off_t len) {
        return fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, offset, len);
    }
    int zero_range(off_t offset, off_t len) {
        return fallocate(FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, offset, len);
    }

    // The data calls as member pointers, to tell reads from writes in generic
    // code; the write members' pointers are cast only to be compared.
    typedef ssize_t (IFile::*FuncPIO)(void* buf, size_t count, off_t offset);
    FuncPIO _and_pread() { return &IFile::pread; }
    FuncPIO _and_pwrite() { return (FuncPIO)&IFile::pwrite; }
    bool is_readf(FuncPIO f) { return f == _and_pread(); }
    bool is_writef(FuncPIO f) { return f == _and_pwrite(); }

    typedef ssize_t (IFile::*FuncPIOV_mutable)(struct iovec* iov, int iovcnt, off_t offset);
    FuncPIOV_mutable _and_preadv_mutable() { return &IFile::preadv_mutable; }
    FuncPIOV_mutable _and_pwritev_mutable() { return &IFile::pwritev_mutable; }
    bool is_readf(FuncPIOV_mutable f) { return f == _and_preadv_mutable(); }
    bool is_writef(FuncPIOV_mutable f) { return f == _and_pwritev_mutable(); }

    typedef ssize_t (IFile::*FuncPIOCV)(const struct iovec* iov, int iovcnt, off_t offset);
    FuncPIOCV _and_preadcv() { return &IFile::preadv; }
    FuncPIOCV _and_pwritecv() { return &IFile::pwritev; }
    bool is_readf(FuncPIOCV f) { return f == _and_preadcv(); }
    bool is_writef(FuncPIOCV f) { return f == _and_pwritecv(); }

    typedef ssize_t (IFile::*FuncPIOV2_mutable)(struct iovec* iov, int iovcnt, off_t offset,
                                                int flags);
    FuncPIOV2_mutable _and_preadv2_mutable() { return &IFile::preadv2_mutable; }
    FuncPIOV2_mutable _and_pwritev2_mutable() { return &IFile::pwritev2_mutable; }
    bool is_readf(FuncPIOV2_mutable f) { return f == _and_preadv2_mutable(); }
    bool is_writef(FuncPIOV2_mutable f) { return f == _and_pwritev2_mutable(); }

    typedef ssize_t (IFile::*FuncPIOCV2)(const struct iovec* iov, int iovcnt, off_t offset,
                                         int flags);
    FuncPIOCV2 _and_preadcv2() { return &IFile::preadv2; }
    FuncPIOCV2 _and_pwritecv2() { return &IFile::pwritev2; }
    bool is_readf(FuncPIOCV2 f) { return f == _and_preadcv2(); }
    bool is_writef(FuncPIOCV2 f) { return f == _and_pwritecv2(); }
};

class IFileXAttr {
public:
    virtual ~IFileXAttr() = default;
    virtual ssize_t fgetxattr(const char* name, void* value, size_t size) = 0;
    virtual ssize_t flistxattr(char* list, size_t size) = 0;
    virtual int fsetxattr(const char* name, const void* value, size_t size, int flags) = 0;
    virtual int fremovexattr(const char* name) = 0;
};

// A directory stream positioned on its first entry when opened.
class DIR : public Object {
public:
    virtual int closedir() = 0;
    // The current entry; nullptr at the end.
    virtual struct dirent* get() = 0;
    // Advances: 1 if an entry follows, 0 at the end, -1 with errno.
    virtual int next() = 0;
    virtual void rewinddir() = 0;
    virtual void seekdir(long long loc) = 0;
    virtual long long telldir() = 0;
    // get(), then next().
    virtual struct dirent* readdir() {
        auto e = get();
        if (e) next();
        return e;
    }
    UNIMPLEMENTED_POINTER(Object* get_underlay_object(int /*i*/ = 0))
};

class IFileSystem : public Object {
public:
    virtual IFile* open(const char* pathname, int flags) = 0;
    virtual IFile* open(const char* pathname, int flags, mode_t mode) = 0;
    virtual IFile* creat(const char* pathname, mode_t mode) = 0;
    virtual int mkdir(const char* pathname, mode_t mode) = 0;
    virtual int rmdir(const char* pathname) = 0;
    virtual int symlink(const char* oldname, const char* newname) = 0;
    virtual ssize_t readlink(const char* path, char* buf, size_t bufsiz) = 0;
    virtual int link(const char* oldname, const char* newname) = 0;
    virtual int rename(const char* oldname, const char* newname) = 0;
    virtual int unlink(const char* filename) = 0;
    virtual int chmod(const char* pathname, mode_t mode) = 0;
    virtual int chown(const char* pathname, uid_t owner, gid_t group) = 0;
    virtual int lchown(const char* pathname, uid_t owner, gid_t group) = 0;
    virtual int statfs(const char* path, struct statfs* buf) = 0;
    virtual int statvfs(const char* path, struct statvfs* buf) = 0;
    virtual int stat(const char* path, struct stat* buf) = 0;
    virtual int lstat(const char* path, struct stat* buf) = 0;
    virtual int access(const char* pathname, int mode) = 0;
    virtual int truncate(const char* path, off_t length) = 0;
    virtual int utime(const char* path, const struct utimbuf* file_times) = 0;
    virtual int utimes(const char* path, const struct timeval times[2]) = 0;
    virtual int lutimes(const char* path, const struct timeval times[2]) = 0;
    virtual int mknod(const char* path, mode_t mode, dev_t dev) = 0;
    virtual int syncfs() = 0;
    virtual DIR* opendir(const char* name) = 0;
    UNIMPLEMENTED_POINTER(Object* get_underlay_object(int /*i*/ = 0))

    int sync() { return syncfs(); }
    // Closes and deletes dirp, then nulls it.
    int closedir(DIR*& dirp);
    struct dirent* readdir(DIR* dirp) {
        return dirp->readdir();
    }
    // 0 with *entry set, or -1 at the end.
    int readdir(DIR* dirp, struct dirent** entry) {
        *entry = dirp->readdir();
        return *entry ? 0 : -1;
    }
    void rewinddir(DIR* dirp) { dirp->rewinddir(); }
    void seekdir(DIR* dirp, long long loc) { dirp->seekdir(loc); }
    long long telldir(DIR* dirp) { return dirp->telldir(); }
};

class IFileSystemXAttr {
public:
    virtual ~IFileSystemXAttr() = default;
    virtual ssize_t getxattr(const char* path, const char* name, void* value, size_t size) = 0;
    virtual ssize_t lgetxattr(const char* path, const char* name, void* value, size_t size) = 0;
    virtual ssize_t listxattr(const char* path, char* list, size_t size) = 0;
    virtual ssize_t llistxattr(const char* path, char* list, size_t size) = 0;
    virtual int setxattr(const char* path, const char* name, const void* value, size_t size,
                         int flags) = 0;
    virtual int lsetxattr(const char* path, const char* name, const void* value, size_t size,
                          int flags) = 0;
    virtual int removexattr(const char* path, const char* name) = 0;
    virtual int lremovexattr(const char* path, const char* name) = 0;
};

// Range-for over a DIR's entries: `for (auto& ent : FileList(dir))`.
struct FileList {
    DIR* dirp;
    bool autoDelete;
    explicit FileList(DIR* d, bool autoDelete = false) : dirp(d), autoDelete(autoDelete) {}
    ~FileList() {
        if (autoDelete) delete dirp;
    }
    FileList(const FileList&) = delete;
    FileList& operator=(const FileList&) = delete;

    struct iterator {
        DIR* dirp;
        struct dirent& operator*() const {
            return *dirp->get();
        }
        struct dirent* operator->() const {
            return dirp->get();
        }
        iterator& operator++() {
            if (dirp->next() <= 0) dirp = nullptr;
            return *this;
        }
        bool operator==(const iterator& rhs) const { return dirp == rhs.dirp; }
        bool operator!=(const iterator& rhs) const { return dirp != rhs.dirp; }
    };
    iterator begin() { return {dirp && dirp->get() ? dirp : nullptr}; }
    iterator end() { return {nullptr}; }
};

}  // namespace fs
}  // namespace photon
