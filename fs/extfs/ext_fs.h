// The file system object behind new_extfs and its files. Every call takes
// mutex_ for its whole length: libext2fs keeps its state (bitmaps, caches,
// the group descriptors) in the ext2_filsys and is not reentrant, while the
// IFile under it yields the coroutine in the middle of a call.
#pragma once

#include <photon/thread/locker.h>
#include <photon/thread/mutex.h>

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <dirent.h>

#include "extfs_impl.h"

namespace photon {
namespace fs {
namespace extfs {

class block_cache;

class ext_filesystem : public IFileSystem, public IFileSystemXAttr {
public:
    // nullptr and errno on failure.
    static ext_filesystem* mount(IFile* file, uint32_t buffer_size, uint32_t block_size);
    ~ext_filesystem() override;

    IFile* open(const char* path, int flags) override { return open(path, flags, 0666); }
    IFile* open(const char* path, int flags, mode_t mode) override;
    IFile* creat(const char* path, mode_t mode) override {
        return open(path, O_CREAT | O_WRONLY | O_TRUNC, mode);
    }
    int mkdir(const char* path, mode_t mode) override;
    int rmdir(const char* path) override;
    int symlink(const char* target, const char* path) override;
    ssize_t readlink(const char* path, char* buf, size_t size) override;
    int link(const char* oldpath, const char* newpath) override;
    int rename(const char* oldpath, const char* newpath) override;
    int unlink(const char* path) override;
    int chmod(const char* path, mode_t mode) override;
    int chown(const char* path, uid_t uid, gid_t gid) override;
    int lchown(const char* path, uid_t uid, gid_t gid) override;
    int statfs(const char* path, struct statfs* buf) override;
    int statvfs(const char* path, struct statvfs* buf) override;
    int stat(const char* path, struct stat* buf) override;
    int lstat(const char* path, struct stat* buf) override;
    int access(const char* path, int mode) override;
    int truncate(const char* path, off_t length) override;
    int utime(const char* path, const struct utimbuf* times) override;
    int utimes(const char* path, const struct timeval times[2]) override;
    int lutimes(const char* path, const struct timeval times[2]) override;
    int mknod(const char* path, mode_t mode, dev_t dev) override;
    int syncfs() override;
    DIR* opendir(const char* path) override;
    Object* get_underlay_object(int) override { return file_; }

    ssize_t getxattr(const char* path, const char* name, void* value, size_t size) override;
    ssize_t lgetxattr(const char* path, const char* name, void* value, size_t size) override;
    ssize_t listxattr(const char* path, char* list, size_t size) override;
    ssize_t llistxattr(const char* path, char* list, size_t size) override;
    int setxattr(const char* path, const char* name, const void* value, size_t size,
                 int flags) override;
    int lsetxattr(const char* path, const char* name, const void* value, size_t size,
                  int flags) override;
    int removexattr(const char* path, const char* name) override;
    int lremovexattr(const char* path, const char* name) override;

    // For ext_file: the calls on an inode, with mutex() held.
    photon::mutex& mutex() { return mutex_; }
    ssize_t read_locked(ext2_ino_t ino, void* buf, size_t count, off_t offset);
    // At `offset`, or at the end with `append`.
    ssize_t write_locked(ext2_ino_t ino, const void* buf, size_t count, off_t offset, bool append);
    int truncate_locked(ext2_ino_t ino, off_t length);
    int stat_locked(ext2_ino_t ino, struct stat* st);
    int chmod_locked(ext2_ino_t ino, mode_t mode);
    int chown_locked(ext2_ino_t ino, uid_t uid, gid_t gid);
    int sync_locked();
    int fallocate_locked(ext2_ino_t ino, int mode, off_t offset, off_t len);
    ssize_t getxattr_locked(ext2_ino_t ino, const char* name, void* value, size_t size);
    ssize_t listxattr_locked(ext2_ino_t ino, char* list, size_t size);
    int setxattr_locked(ext2_ino_t ino, const char* name, const void* value, size_t size,
                        int flags);
    int removexattr_locked(ext2_ino_t ino, const char* name);
    // A file of `ino` closes: frees the inode if it was unlinked while open.
    void file_closed(ext2_ino_t ino);

private:
    ext_filesystem() = default;
    // Resolves `path` (following the last symlink or not) to *ino; -1/errno.
    int resolve(const char* path, bool follow, ext2_ino_t* ino);
    int touch(ext2_ino_t ino, int which, const struct timespec* ts = nullptr);
    int adjust_links(ext2_ino_t ino, int delta);
    // Drops one link of `ino`; the last one frees it (or orphans it while open).
    int drop_link(ext2_ino_t ino, bool is_dir);
    int set_times_locked(ext2_ino_t ino, const struct timespec* atime,
                         const struct timespec* mtime);
    bool writable() const { return fs_->flags & EXT2_FLAG_RW; }

    ext2_filsys fs_ = nullptr;
    IFile* file_ = nullptr;
    block_cache* cache_ = nullptr;
    photon::mutex mutex_;
    std::unordered_map<ext2_ino_t, int> open_files_;  // inode -> files open on it
    std::unordered_set<ext2_ino_t> orphans_;          // unlinked while open
};

IFile* new_ext_file(ext_filesystem* fs, ext2_ino_t ino, int flags, bool is_dir);
DIR* new_ext_dir(std::vector<struct dirent>&& entries);

}  // namespace extfs
}  // namespace fs
}  // namespace photon
