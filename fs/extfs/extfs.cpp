// new_extfs: mounting, opening files, and the calls that change the
// namespace (mkdir, rmdir, unlink, rename, link, symlink, mknod).
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <memory>

#include <photon/common/alog.h>
#include <photon/fs/extfs/extfs.h>

#include "block_cache.h"
#include "ext_fs.h"

namespace photon {
namespace fs {
namespace extfs {
namespace {

bool is_dot(const std::string& name) { return name == "." || name == ".."; }

constexpr __u16 kLinkMax = 65000;  // the kernel's EXT4_LINK_MAX

}  // namespace

ext_filesystem* ext_filesystem::mount(IFile* file, uint32_t buffer_size, uint32_t block_size) {
    if (!file) return errno = EINVAL, nullptr;
    std::unique_ptr<ext_filesystem> efs(new ext_filesystem);
    efs->file_ = file;
    if (buffer_size) {
        efs->cache_ = new block_cache(file, buffer_size, block_size);
        if (!efs->cache_->ok()) {
            LOG_ERROR_RETURN(EINVAL, nullptr, "extfs: bad cache geometry ` / `", buffer_size,
                             block_size);
        }
    }
    channel_target target{file, efs->cache_};
    std::string name = channel_name(&target);
    errcode_t err = ext2fs_open2(name.c_str(), nullptr, EXT2_FLAG_RW | EXT2_FLAG_64BITS, 0, 0,
                                 ifile_io_manager(), &efs->fs_);
    if (err) {
        efs->fs_ = nullptr;
        errno = to_errno(err);
        LOG_ERRNO_RETURN(0, nullptr, "extfs: no ext file system could be opened (libext2fs `)",
                         err);
    }
    if (ext2fs_has_feature_journal_needs_recovery(efs->fs_->super)) {
        // libext2fs does not replay journals: writing now would lose or mix updates.
        LOG_ERROR_RETURN(EUCLEAN, nullptr, "extfs: the journal needs recovery: e2fsck first");
    }
    err = ext2fs_check_desc(efs->fs_);  // tables where no table can be: corrupt
    if (!err) err = ext2fs_read_bitmaps(efs->fs_);
    if (err) {
        errno = to_errno(err);
        LOG_ERRNO_RETURN(0, nullptr, "extfs: bad group descriptors or bitmaps (libext2fs `)", err);
    }
    return efs.release();
}

ext_filesystem::~ext_filesystem() {
    SCOPED_LOCK(mutex_);
    if (fs_) {
        for (auto ino : orphans_) free_inode(fs_, ino);  // files left open: their last close
        errcode_t err = ext2fs_close_free(&fs_);
        if (err) LOG_ERROR("extfs: writing back at unmount failed (libext2fs `)", err);
    }
    delete cache_;
}

int ext_filesystem::resolve(const char* path, bool follow, ext2_ino_t* ino) {
    errcode_t err = lookup(fs_, path, follow, ino);
    return err ? fail(err) : 0;
}

int ext_filesystem::touch(ext2_ino_t ino, int which, const struct timespec* ts) {
    ext2_inode_large inode;
    errcode_t err = read_inode(fs_, ino, &inode);
    if (err) return fail(err);
    set_times(&inode, which, ts);
    err = write_inode(fs_, ino, &inode);
    return err ? fail(err) : 0;
}

int ext_filesystem::adjust_links(ext2_ino_t ino, int delta) {
    ext2_inode_large inode;
    errcode_t err = read_inode(fs_, ino, &inode);
    if (err) return fail(err);
    // With dir_nlink, a directory of more than kLinkMax subdirectories counts 1.
    bool many = LINUX_S_ISDIR(inode.i_mode) && inode.i_links_count == 1;
    if (delta > 0 && !many) {
        if (inode.i_links_count >= kLinkMax - 1 && LINUX_S_ISDIR(inode.i_mode) &&
            ext2fs_has_feature_dir_nlink(fs_->super)) {
            inode.i_links_count = 1;
        } else {
            inode.i_links_count++;
        }
    } else if (delta < 0 && !many && inode.i_links_count > 0) {
        inode.i_links_count--;
    }
    set_times(&inode, kCtime | (LINUX_S_ISDIR(inode.i_mode) ? kMtime : 0));
    err = write_inode(fs_, ino, &inode);
    return err ? fail(err) : 0;
}

int ext_filesystem::drop_link(ext2_ino_t ino, bool is_dir) {
    ext2_inode_large inode;
    errcode_t err = read_inode(fs_, ino, &inode);
    if (err) return fail(err);
    if (!is_dir && inode.i_links_count > 1) {
        inode.i_links_count--;
        set_times(&inode, kCtime);
        err = write_inode(fs_, ino, &inode);
        return err ? fail(err) : 0;
    }
    auto it = open_files_.find(ino);
    if (it != open_files_.end()) {  // the last close frees it
        inode.i_links_count = 0;
        set_times(&inode, kCtime);
        orphans_.insert(ino);
        err = write_inode(fs_, ino, &inode);
    } else {
        err = free_inode(fs_, ino);
    }
    return err ? fail(err) : 0;
}

void ext_filesystem::file_closed(ext2_ino_t ino) {
    SCOPED_LOCK(mutex_);
    auto it = open_files_.find(ino);
    if (it == open_files_.end() || --it->second > 0) return;
    open_files_.erase(it);
    if (orphans_.erase(ino)) {
        errcode_t err = free_inode(fs_, ino);
        if (err) LOG_ERROR("extfs: freeing unlinked inode ` failed (libext2fs `)", ino, err);
    }
}

IFile* ext_filesystem::open(const char* path, int flags, mode_t mode) {
    SCOPED_LOCK(mutex_);
    int acc = flags & O_ACCMODE;
    bool writes = acc == O_WRONLY || acc == O_RDWR;
    ext2_ino_t ino = 0;
    errcode_t err;
    if (flags & O_CREAT) {
        ext2_ino_t dir;
        std::string name;
        bool slash = false;
        err = lookup_parent(fs_, path, &dir, &name, &slash);
        if (err == EXT2_ET_INVALID_ARGUMENT) return errno = EISDIR, nullptr;  // "/"
        if (err) return fail(err), nullptr;
        err = lookup_in(fs_, dir, name, &ino);
        if (!err) {
            if (flags & O_EXCL) return errno = EEXIST, nullptr;
            struct stat st;
            if (stat_locked(ino, &st) < 0) return nullptr;
            if (S_ISLNK(st.st_mode)) {
                if (flags & O_NOFOLLOW) return errno = ELOOP, nullptr;
                if (resolve(path, true, &ino) < 0) return nullptr;  // a dangling link: ENOENT
            }
        } else if (err == EXT2_ET_FILE_NOT_FOUND) {
            if (slash) return errno = EISDIR, nullptr;
            if (!writable()) return errno = EROFS, nullptr;
            err = create_inode(fs_, dir, name, S_IFREG | (mode & 07777), 0, &ino);
            if (err) return fail(err), nullptr;
            if (touch(dir, kMtime | kCtime) < 0) return nullptr;
        } else {
            return fail(err), nullptr;
        }
    } else if (resolve(path, !(flags & O_NOFOLLOW), &ino) < 0) {
        return nullptr;
    }
    struct stat st;
    if (stat_locked(ino, &st) < 0) return nullptr;
    bool is_dir = S_ISDIR(st.st_mode);
    if (S_ISLNK(st.st_mode)) return errno = ELOOP, nullptr;  // O_NOFOLLOW on a symlink
    if (is_dir && (writes || (flags & O_CREAT))) return errno = EISDIR, nullptr;
    if (!is_dir && (flags & O_DIRECTORY)) return errno = ENOTDIR, nullptr;
    if ((flags & O_TRUNC) && writes && S_ISREG(st.st_mode) && st.st_size > 0 &&
        truncate_locked(ino, 0) < 0) {
        return nullptr;
    }
    open_files_[ino]++;
    return new_ext_file(this, ino, flags, is_dir);
}

int ext_filesystem::mkdir(const char* path, mode_t mode) {
    SCOPED_LOCK(mutex_);
    ext2_ino_t dir, ino;
    std::string name;
    errcode_t err = lookup_parent(fs_, path, &dir, &name);
    if (err == EXT2_ET_INVALID_ARGUMENT) return errno = EEXIST, -1;  // "/"
    if (err) return fail(err);
    if (lookup_in(fs_, dir, name, &ino) == 0) return errno = EEXIST, -1;
    if (!writable()) return errno = EROFS, -1;
    err = ext2fs_mkdir(fs_, dir, 0, name.c_str());
    if (err == EXT2_ET_DIR_NO_SPACE) {
        err = ext2fs_expand_dir(fs_, dir);
        if (!err) err = ext2fs_mkdir(fs_, dir, 0, name.c_str());
    }
    if (!err) err = lookup_in(fs_, dir, name, &ino);
    if (err) return fail(err);
    ext2_inode_large inode;
    err = read_inode(fs_, ino, &inode);
    if (err) return fail(err);
    inode.i_mode = LINUX_S_IFDIR | (mode & 07777);
    set_owner(&inode, geteuid(), getegid());
    set_times(&inode, kAtime | kMtime | kCtime);
    err = write_inode(fs_, ino, &inode);
    if (err) return fail(err);
    return touch(dir, kMtime | kCtime);
}

int ext_filesystem::rmdir(const char* path) {
    SCOPED_LOCK(mutex_);
    ext2_ino_t dir, ino;
    std::string name;
    errcode_t err = lookup_parent(fs_, path, &dir, &name);
    if (err == EXT2_ET_INVALID_ARGUMENT) return errno = EBUSY, -1;  // "/"
    if (err) return fail(err);
    if (name == ".") return errno = EINVAL, -1;
    if (name == "..") return errno = ENOTEMPTY, -1;
    err = lookup_in(fs_, dir, name, &ino);
    if (err) return fail(err);
    if (ext2fs_check_directory(fs_, ino)) return errno = ENOTDIR, -1;
    bool empty = false;
    err = dir_is_empty(fs_, ino, &empty);
    if (err) return fail(err);
    if (!empty) return errno = ENOTEMPTY, -1;
    err = ext2fs_unlink(fs_, dir, name.c_str(), ino, 0);
    if (err) return fail(err);
    if (adjust_links(dir, -1) < 0) return -1;  // its ".." is gone
    return drop_link(ino, true);
}

int ext_filesystem::unlink(const char* path) {
    SCOPED_LOCK(mutex_);
    ext2_ino_t dir, ino;
    std::string name;
    bool slash = false;
    errcode_t err = lookup_parent(fs_, path, &dir, &name, &slash);
    if (err == EXT2_ET_INVALID_ARGUMENT) return errno = EISDIR, -1;  // "/"
    if (err) return fail(err);
    err = lookup_in(fs_, dir, name, &ino);
    if (err) return fail(err);
    struct stat st;
    if (stat_locked(ino, &st) < 0) return -1;
    if (S_ISDIR(st.st_mode)) return errno = EISDIR, -1;
    if (slash) return errno = ENOTDIR, -1;
    err = ext2fs_unlink(fs_, dir, name.c_str(), ino, 0);
    if (err) return fail(err);
    if (touch(dir, kMtime | kCtime) < 0) return -1;
    return drop_link(ino, false);
}

int ext_filesystem::rename(const char* oldpath, const char* newpath) {
    SCOPED_LOCK(mutex_);
    ext2_ino_t odir, ndir, ino, dst = 0;
    std::string oname, nname;
    bool oslash = false, nslash = false;
    errcode_t err = lookup_parent(fs_, oldpath, &odir, &oname, &oslash);
    if (!err) err = lookup_parent(fs_, newpath, &ndir, &nname, &nslash);
    if (err == EXT2_ET_INVALID_ARGUMENT) return errno = EBUSY, -1;  // "/"
    if (err) return fail(err);
    if (is_dot(oname) || is_dot(nname)) return errno = EINVAL, -1;
    err = lookup_in(fs_, odir, oname, &ino);
    if (err) return fail(err);
    struct stat src, dst_st;
    if (stat_locked(ino, &src) < 0) return -1;
    bool src_dir = S_ISDIR(src.st_mode);
    if ((oslash || nslash) && !src_dir) return errno = ENOTDIR, -1;
    err = lookup_in(fs_, ndir, nname, &dst);
    bool exists = err == 0;
    if (err && err != EXT2_ET_FILE_NOT_FOUND) return fail(err);
    if (exists) {
        if (dst == ino) return 0;
        if (stat_locked(dst, &dst_st) < 0) return -1;
        bool dst_dir = S_ISDIR(dst_st.st_mode);
        if (src_dir && !dst_dir) return errno = ENOTDIR, -1;
        if (!src_dir && dst_dir) return errno = EISDIR, -1;
        if (dst_dir) {
            bool empty = false;
            err = dir_is_empty(fs_, dst, &empty);
            if (err) return fail(err);
            if (!empty) return errno = ENOTEMPTY, -1;
        }
    }
    if (src_dir) {  // not into itself: walk up from the new parent to the root
        for (ext2_ino_t p = ndir; p != EXT2_ROOT_INO;) {
            if (p == ino) return errno = EINVAL, -1;
            err = lookup_in(fs_, p, "..", &p);
            if (err) return fail(err);
        }
    }
    if (exists) {
        err = ext2fs_unlink(fs_, ndir, nname.c_str(), dst, 0);
        if (err) return fail(err);
        if (S_ISDIR(dst_st.st_mode) && adjust_links(ndir, -1) < 0) return -1;
        if (drop_link(dst, S_ISDIR(dst_st.st_mode)) < 0) return -1;
    }
    err = link_expanding(fs_, ndir, nname, ino, file_type_of(src.st_mode));
    if (!err) err = ext2fs_unlink(fs_, odir, oname.c_str(), ino, 0);
    if (err) return fail(err);
    if (src_dir && odir != ndir) {
        err = set_dotdot(fs_, ino, ndir);
        if (err) return fail(err);
        if (adjust_links(ndir, +1) < 0 || adjust_links(odir, -1) < 0) return -1;
    }
    if (touch(odir, kMtime | kCtime) < 0 || touch(ndir, kMtime | kCtime) < 0) return -1;
    return touch(ino, kCtime);
}

int ext_filesystem::link(const char* oldpath, const char* newpath) {
    SCOPED_LOCK(mutex_);
    ext2_ino_t ino, dir, existing;
    std::string name;
    if (resolve(oldpath, false, &ino) < 0) return -1;
    errcode_t err = lookup_parent(fs_, newpath, &dir, &name);
    if (err == EXT2_ET_INVALID_ARGUMENT) return errno = EEXIST, -1;
    if (err) return fail(err);
    if (lookup_in(fs_, dir, name, &existing) == 0) return errno = EEXIST, -1;
    ext2_inode_large inode;
    err = read_inode(fs_, ino, &inode);
    if (err) return fail(err);
    if (LINUX_S_ISDIR(inode.i_mode)) return errno = EPERM, -1;
    if (inode.i_links_count >= kLinkMax) return errno = EMLINK, -1;
    err = link_expanding(fs_, dir, name, ino, file_type_of(inode.i_mode));
    if (err) return fail(err);
    inode.i_links_count++;
    set_times(&inode, kCtime);
    err = write_inode(fs_, ino, &inode);
    if (err) return fail(err);
    return touch(dir, kMtime | kCtime);
}

int ext_filesystem::symlink(const char* target, const char* path) {
    SCOPED_LOCK(mutex_);
    ext2_ino_t dir, ino;
    std::string name;
    errcode_t err = lookup_parent(fs_, path, &dir, &name);
    if (err == EXT2_ET_INVALID_ARGUMENT) return errno = EEXIST, -1;
    if (err) return fail(err);
    if (!target || !*target) return errno = ENOENT, -1;
    if (strlen(target) >= fs_->blocksize) return errno = ENAMETOOLONG, -1;
    if (lookup_in(fs_, dir, name, &ino) == 0) return errno = EEXIST, -1;
    // ext2fs_symlink's target is not const in its prototype, and not written.
    err = ext2fs_symlink(fs_, dir, 0, name.c_str(), const_cast<char*>(target));
    if (err == EXT2_ET_DIR_NO_SPACE) {
        err = ext2fs_expand_dir(fs_, dir);
        if (!err) err = ext2fs_symlink(fs_, dir, 0, name.c_str(), const_cast<char*>(target));
    }
    if (!err) err = lookup_in(fs_, dir, name, &ino);
    if (err) return fail(err);
    ext2_inode_large inode;
    err = read_inode(fs_, ino, &inode);
    if (err) return fail(err);
    set_owner(&inode, geteuid(), getegid());
    set_times(&inode, kAtime | kMtime | kCtime);
    err = write_inode(fs_, ino, &inode);
    if (err) return fail(err);
    return touch(dir, kMtime | kCtime);
}

int ext_filesystem::mknod(const char* path, mode_t mode, dev_t dev) {
    SCOPED_LOCK(mutex_);
    if ((mode & S_IFMT) == 0) mode |= S_IFREG;
    switch (mode & S_IFMT) {
        case S_IFREG:
        case S_IFCHR:
        case S_IFBLK:
        case S_IFIFO:
        case S_IFSOCK:
            break;
        case S_IFDIR:
            return errno = EPERM, -1;
        default:
            return errno = EINVAL, -1;
    }
    ext2_ino_t dir, ino;
    std::string name;
    errcode_t err = lookup_parent(fs_, path, &dir, &name);
    if (err == EXT2_ET_INVALID_ARGUMENT) return errno = EEXIST, -1;
    if (err) return fail(err);
    if (lookup_in(fs_, dir, name, &ino) == 0) return errno = EEXIST, -1;
    if (!writable()) return errno = EROFS, -1;
    err = create_inode(fs_, dir, name, mode & (S_IFMT | 07777), dev, &ino);
    if (err) return fail(err);
    return touch(dir, kMtime | kCtime);
}

int ext_filesystem::syncfs() {
    SCOPED_LOCK(mutex_);
    return sync_locked();
}

int ext_filesystem::sync_locked() {
    errcode_t err = ext2fs_flush(fs_);  // the metadata, then the io channel's flush
    return err ? fail(err) : 0;
}

}  // namespace extfs

IFileSystem* new_extfs(IFile* file, bool buffer) {
    return new_extfs_with_buffer(file, buffer ? 8 << 20 : 0, 128 << 10);
}

IFileSystem* new_extfs_with_buffer(IFile* file, uint32_t buffer_size, uint32_t block_size) {
    return extfs::ext_filesystem::mount(file, buffer_size, block_size);
}

}  // namespace fs
}  // namespace photon
