// Attributes: stat, chmod, chown, times, access, statfs, readlink, truncate
// by path, directory listings and extended attributes.
#include <dirent.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <utime.h>

#include <vector>

#include "ext_fs.h"

namespace photon {
namespace fs {
namespace extfs {

int ext_filesystem::stat_locked(ext2_ino_t ino, struct stat* st) {
    ext2_inode_large inode;
    errcode_t err = read_inode(fs_, ino, &inode);
    if (err) return fail(err);
    fill_stat(fs_, ino, inode, st);
    return 0;
}

int ext_filesystem::stat(const char* path, struct stat* buf) {
    SCOPED_LOCK(mutex_);
    ext2_ino_t ino;
    return resolve(path, true, &ino) < 0 ? -1 : stat_locked(ino, buf);
}

int ext_filesystem::lstat(const char* path, struct stat* buf) {
    SCOPED_LOCK(mutex_);
    ext2_ino_t ino;
    return resolve(path, false, &ino) < 0 ? -1 : stat_locked(ino, buf);
}

int ext_filesystem::chmod_locked(ext2_ino_t ino, mode_t mode) {
    if (!writable()) return errno = EROFS, -1;
    ext2_inode_large inode;
    errcode_t err = read_inode(fs_, ino, &inode);
    if (err) return fail(err);
    inode.i_mode = (inode.i_mode & LINUX_S_IFMT) | (mode & 07777);
    set_times(&inode, kCtime);
    err = write_inode(fs_, ino, &inode);
    return err ? fail(err) : 0;
}

int ext_filesystem::chown_locked(ext2_ino_t ino, uid_t uid, gid_t gid) {
    if (!writable()) return errno = EROFS, -1;
    ext2_inode_large inode;
    errcode_t err = read_inode(fs_, ino, &inode);
    if (err) return fail(err);
    set_owner(&inode, uid, gid);
    set_times(&inode, kCtime);
    err = write_inode(fs_, ino, &inode);
    return err ? fail(err) : 0;
}

int ext_filesystem::chmod(const char* path, mode_t mode) {
    SCOPED_LOCK(mutex_);
    ext2_ino_t ino;
    return resolve(path, true, &ino) < 0 ? -1 : chmod_locked(ino, mode);
}

int ext_filesystem::chown(const char* path, uid_t uid, gid_t gid) {
    SCOPED_LOCK(mutex_);
    ext2_ino_t ino;
    return resolve(path, true, &ino) < 0 ? -1 : chown_locked(ino, uid, gid);
}

int ext_filesystem::lchown(const char* path, uid_t uid, gid_t gid) {
    SCOPED_LOCK(mutex_);
    ext2_ino_t ino;
    return resolve(path, false, &ino) < 0 ? -1 : chown_locked(ino, uid, gid);
}

int ext_filesystem::set_times_locked(ext2_ino_t ino, const struct timespec* atime,
                                     const struct timespec* mtime) {
    if (!writable()) return errno = EROFS, -1;
    ext2_inode_large inode;
    errcode_t err = read_inode(fs_, ino, &inode);
    if (err) return fail(err);
    set_times(&inode, kAtime, atime);
    set_times(&inode, kMtime, mtime);
    set_times(&inode, kCtime);
    err = write_inode(fs_, ino, &inode);
    return err ? fail(err) : 0;
}

namespace {

// utimes' pair, or now for both when null; EINVAL for a bad microsecond count.
int to_timespecs(const struct timeval tv[2], struct timespec ts[2]) {
    if (!tv) {
        clock_gettime(CLOCK_REALTIME, &ts[0]);
        ts[1] = ts[0];
        return 0;
    }
    for (int i = 0; i < 2; i++) {
        if (tv[i].tv_usec < 0 || tv[i].tv_usec >= 1000000) return errno = EINVAL, -1;
        ts[i].tv_sec = tv[i].tv_sec;
        ts[i].tv_nsec = tv[i].tv_usec * 1000;
    }
    return 0;
}

}  // namespace

int ext_filesystem::utime(const char* path, const struct utimbuf* times) {
    if (!times) return utimes(path, nullptr);
    struct timeval tv[2] = {{times->actime, 0}, {times->modtime, 0}};
    return utimes(path, tv);
}

int ext_filesystem::utimes(const char* path, const struct timeval times[2]) {
    SCOPED_LOCK(mutex_);
    ext2_ino_t ino;
    struct timespec ts[2];
    if (to_timespecs(times, ts) < 0 || resolve(path, true, &ino) < 0) return -1;
    return set_times_locked(ino, &ts[0], &ts[1]);
}

int ext_filesystem::lutimes(const char* path, const struct timeval times[2]) {
    SCOPED_LOCK(mutex_);
    ext2_ino_t ino;
    struct timespec ts[2];
    if (to_timespecs(times, ts) < 0 || resolve(path, false, &ino) < 0) return -1;
    return set_times_locked(ino, &ts[0], &ts[1]);
}

int ext_filesystem::access(const char* path, int mode) {
    SCOPED_LOCK(mutex_);
    ext2_ino_t ino;
    struct stat st;
    if (resolve(path, true, &ino) < 0 || stat_locked(ino, &st) < 0) return -1;
    if (mode == F_OK) return 0;
    if ((mode & W_OK) && !writable()) return errno = EROFS, -1;
    uid_t uid = geteuid();
    if (uid == 0) {  // root: all but executing what nobody may execute
        bool x = S_ISDIR(st.st_mode) || (st.st_mode & 0111);
        return (mode & X_OK) && !x ? (errno = EACCES, -1) : 0;
    }
    int shift = st.st_uid == uid ? 6 : st.st_gid == getegid() ? 3 : 0;
    int granted = (st.st_mode >> shift) & 7;
    return (mode & ~granted & 7) ? (errno = EACCES, -1) : 0;
}

int ext_filesystem::truncate(const char* path, off_t length) {
    SCOPED_LOCK(mutex_);
    ext2_ino_t ino;
    struct stat st;
    if (resolve(path, true, &ino) < 0 || stat_locked(ino, &st) < 0) return -1;
    if (S_ISDIR(st.st_mode)) return errno = EISDIR, -1;
    if (!S_ISREG(st.st_mode)) return errno = EINVAL, -1;
    return truncate_locked(ino, length);
}

int ext_filesystem::statfs(const char* path, struct statfs* buf) {
    struct statvfs v;
    if (statvfs(path, &v) < 0) return -1;
    memset(buf, 0, sizeof(*buf));
    buf->f_type = EXT2_SUPER_MAGIC;
    buf->f_bsize = v.f_bsize;
    buf->f_frsize = v.f_frsize;
    buf->f_blocks = v.f_blocks;
    buf->f_bfree = v.f_bfree;
    buf->f_bavail = v.f_bavail;
    buf->f_files = v.f_files;
    buf->f_ffree = v.f_ffree;
    buf->f_namelen = v.f_namemax;
    buf->f_flags = v.f_flag;
    memcpy(&buf->f_fsid, &v.f_fsid, std::min(sizeof(buf->f_fsid), sizeof(v.f_fsid)));
    return 0;
}

int ext_filesystem::statvfs(const char* path, struct statvfs* buf) {
    SCOPED_LOCK(mutex_);
    ext2_ino_t ino;
    if (path && resolve(path, true, &ino) < 0) return -1;  // nullptr: Photon's callers pass it
    ext2_super_block* sb = fs_->super;
    memset(buf, 0, sizeof(*buf));
    buf->f_bsize = buf->f_frsize = fs_->blocksize;
    buf->f_blocks = ext2fs_blocks_count(sb);
    buf->f_bfree = ext2fs_free_blocks_count(sb);
    blk64_t reserved = ext2fs_r_blocks_count(sb);
    buf->f_bavail = buf->f_bfree > reserved ? buf->f_bfree - reserved : 0;
    buf->f_files = sb->s_inodes_count;
    buf->f_ffree = buf->f_favail = sb->s_free_inodes_count;
    uint64_t fsid;
    memcpy(&fsid, sb->s_uuid, sizeof(fsid));
    buf->f_fsid = (unsigned long)(fsid ^ (fsid >> 32));
    buf->f_namemax = EXT2_NAME_LEN;
    buf->f_flag = writable() ? 0 : ST_RDONLY;
    return 0;
}

ssize_t ext_filesystem::readlink(const char* path, char* buf, size_t size) {
    SCOPED_LOCK(mutex_);
    ext2_ino_t ino;
    if (resolve(path, false, &ino) < 0) return -1;
    ext2_inode_large inode;
    errcode_t err = read_inode(fs_, ino, &inode);
    if (err) return fail(err);
    if (!LINUX_S_ISLNK(inode.i_mode)) return errno = EINVAL, -1;
    auto* small = reinterpret_cast<ext2_inode*>(&inode);
    size_t len = EXT2_I_SIZE(&inode);
    std::vector<char> target(len + 1, 0);
    if (ext2fs_is_fast_symlink(small)) {
        memcpy(target.data(), (const char*)inode.i_block, std::min(len, sizeof(inode.i_block)));
    } else if (inode.i_flags & EXT4_INLINE_DATA_FL) {
        size_t got = len;
        std::vector<char> data(fs_->blocksize + 256, 0);
        err = ext2fs_inline_data_get(fs_, ino, small, data.data(), &got);
        if (err) return fail(err);
        memcpy(target.data(), data.data(), std::min(len, got));
    } else if (read_locked(ino, target.data(), len, 0) != (ssize_t)len) {
        return errno = errno ? errno : EIO, -1;
    }
    size_t n = std::min(len, size);
    memcpy(buf, target.data(), n);
    return n;
}

namespace {

struct listing {
    std::vector<struct dirent> entries;
};

int collect(ext2_ino_t, int, struct ext2_dir_entry* d, int offset, int, char*, void* priv) {
    auto* l = static_cast<listing*>(priv);
    struct dirent e;
    memset(&e, 0, sizeof(e));
    int len = ext2fs_dirent_name_len(d);
    e.d_ino = d->inode;
    e.d_off = (off_t)l->entries.size() + 1;
    e.d_reclen = sizeof(e);
    switch (ext2fs_dirent_file_type(d)) {
        case EXT2_FT_REG_FILE:
            e.d_type = DT_REG;
            break;
        case EXT2_FT_DIR:
            e.d_type = DT_DIR;
            break;
        case EXT2_FT_SYMLINK:
            e.d_type = DT_LNK;
            break;
        case EXT2_FT_CHRDEV:
            e.d_type = DT_CHR;
            break;
        case EXT2_FT_BLKDEV:
            e.d_type = DT_BLK;
            break;
        case EXT2_FT_FIFO:
            e.d_type = DT_FIFO;
            break;
        case EXT2_FT_SOCK:
            e.d_type = DT_SOCK;
            break;
        default:
            e.d_type = DT_UNKNOWN;
    }
    memcpy(e.d_name, d->name, std::min<size_t>(len, sizeof(e.d_name) - 1));
    (void)offset;
    l->entries.push_back(e);
    return 0;
}

}  // namespace

DIR* ext_filesystem::opendir(const char* path) {
    SCOPED_LOCK(mutex_);
    ext2_ino_t ino;
    if (resolve(path, true, &ino) < 0) return nullptr;
    if (ext2fs_check_directory(fs_, ino)) return errno = ENOTDIR, nullptr;
    listing l;
    errcode_t err = ext2fs_dir_iterate2(fs_, ino, 0, nullptr, collect, &l);
    if (err) return fail(err), nullptr;
    return new_ext_dir(std::move(l.entries));
}

// Extended attributes, through libext2fs's handle (which translates POSIX ACLs).
namespace {

struct xattr_handle {
    ext2_xattr_handle* h = nullptr;
    errcode_t open(ext2_filsys fs, ext2_ino_t ino) {
        errcode_t err = ext2fs_xattrs_open(fs, ino, &h);
        return err ? err : ext2fs_xattrs_read(h);
    }
    ~xattr_handle() {
        if (h) ext2fs_xattrs_close(&h);
    }
};

struct name_list {
    std::string names;
};

int add_name(char* name, char*, size_t, void* priv) {
    auto* l = static_cast<name_list*>(priv);
    l->names.append(name);
    l->names.push_back('\0');
    return 0;
}

}  // namespace

ssize_t ext_filesystem::getxattr_locked(ext2_ino_t ino, const char* name, void* value,
                                        size_t size) {
    xattr_handle x;
    errcode_t err = x.open(fs_, ino);
    void* v = nullptr;
    size_t len = 0;
    if (!err) err = ext2fs_xattr_get(x.h, name, &v, &len);
    if (err) return fail(err);
    ssize_t ret = len;
    if (size && len > size) {
        ret = (errno = ERANGE, -1);
    } else if (size) {
        memcpy(value, v, len);
    }
    ext2fs_free_mem(&v);
    return ret;
}

ssize_t ext_filesystem::listxattr_locked(ext2_ino_t ino, char* list, size_t size) {
    xattr_handle x;
    name_list l;
    errcode_t err = x.open(fs_, ino);
    if (!err) err = ext2fs_xattrs_iterate(x.h, add_name, &l);
    if (err) return fail(err);
    if (size == 0) return l.names.size();
    if (l.names.size() > size) return errno = ERANGE, -1;
    memcpy(list, l.names.data(), l.names.size());
    return l.names.size();
}

int ext_filesystem::setxattr_locked(ext2_ino_t ino, const char* name, const void* value,
                                    size_t size, int flags) {
    if (!writable()) return errno = EROFS, -1;
    if (!name || !*name) return errno = EINVAL, -1;
    xattr_handle x;
    errcode_t err = x.open(fs_, ino);
    if (err) return fail(err);
    if (flags & (XATTR_CREATE | XATTR_REPLACE)) {
        void* v = nullptr;
        size_t len = 0;
        err = ext2fs_xattr_get(x.h, name, &v, &len);
        if (!err) ext2fs_free_mem(&v);
        if (err && err != EXT2_ET_EA_KEY_NOT_FOUND) return fail(err);
        if ((flags & XATTR_CREATE) && !err) return errno = EEXIST, -1;
        if ((flags & XATTR_REPLACE) && err) return errno = ENODATA, -1;
    }
    err = ext2fs_xattr_set(x.h, name, value, size);  // writes them back
    if (err) return fail(err);
    return touch(ino, kCtime);
}

int ext_filesystem::removexattr_locked(ext2_ino_t ino, const char* name) {
    if (!writable()) return errno = EROFS, -1;
    xattr_handle x;
    errcode_t err = x.open(fs_, ino);
    void* v = nullptr;
    size_t len = 0;
    if (!err) err = ext2fs_xattr_get(x.h, name, &v, &len);  // remove says 0 for a missing key
    if (err) return fail(err);
    ext2fs_free_mem(&v);
    err = ext2fs_xattr_remove(x.h, name);
    if (err) return fail(err);
    return touch(ino, kCtime);
}

#define PHOTON_EXTFS_BY_PATH(follow, call)          \
    SCOPED_LOCK(mutex_);                            \
    ext2_ino_t ino;                                 \
    if (resolve(path, follow, &ino) < 0) return -1; \
    return call

ssize_t ext_filesystem::getxattr(const char* path, const char* name, void* value, size_t size) {
    PHOTON_EXTFS_BY_PATH(true, getxattr_locked(ino, name, value, size));
}
ssize_t ext_filesystem::lgetxattr(const char* path, const char* name, void* value, size_t size) {
    PHOTON_EXTFS_BY_PATH(false, getxattr_locked(ino, name, value, size));
}
ssize_t ext_filesystem::listxattr(const char* path, char* list, size_t size) {
    PHOTON_EXTFS_BY_PATH(true, listxattr_locked(ino, list, size));
}
ssize_t ext_filesystem::llistxattr(const char* path, char* list, size_t size) {
    PHOTON_EXTFS_BY_PATH(false, listxattr_locked(ino, list, size));
}
int ext_filesystem::setxattr(const char* path, const char* name, const void* value, size_t size,
                             int flags) {
    PHOTON_EXTFS_BY_PATH(true, setxattr_locked(ino, name, value, size, flags));
}
int ext_filesystem::lsetxattr(const char* path, const char* name, const void* value, size_t size,
                              int flags) {
    PHOTON_EXTFS_BY_PATH(false, setxattr_locked(ino, name, value, size, flags));
}
int ext_filesystem::removexattr(const char* path, const char* name) {
    PHOTON_EXTFS_BY_PATH(true, removexattr_locked(ino, name));
}
int ext_filesystem::lremovexattr(const char* path, const char* name) {
    PHOTON_EXTFS_BY_PATH(false, removexattr_locked(ino, name));
}

#undef PHOTON_EXTFS_BY_PATH

}  // namespace extfs
}  // namespace fs
}  // namespace photon
