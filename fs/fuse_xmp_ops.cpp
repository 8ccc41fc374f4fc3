// get_fuse_xmp_oper(): libfuse's path-based operations over the file system
// of set_fuse_fs(). Open files and directories live in fi->fh. Each returns
// 0 or a count, or -errno, as libfuse wants; the file system may yield.
#include <dirent.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <photon/common/alog.h>
#include <photon/fs/filesystem.h>
#include <photon/fs/fuse_adaptor.h>

#include "fuse_fs_helpers.h"

namespace photon {
namespace fs {
namespace {

IFileSystem* g_fs = nullptr;
mode_t g_umask = 022;  // the process umask at the last init: creations undo it

int neg_errno() { return errno > 0 ? -errno : -EIO; }
int result(int r) { return r < 0 ? neg_errno() : 0; }
IFile* file_of(struct fuse_file_info* fi) { return fi ? (IFile*)(uintptr_t)fi->fh : nullptr; }

// A DIR, and whether a listing has started (a new one starts at offset 0).
struct xmp_dir {
    DIR* dir;
    bool started;
};

#define CHECK_FS() \
    if (!g_fs) return -EFAULT

void* xmp_init(struct fuse_conn_info* conn, struct fuse_config* cfg) {
    conn->max_background = 128;
    conn->congestion_threshold = 96;
    conn->want &= ~FUSE_CAP_AUTO_INVAL_DATA;  // as Photon: no getattr before each read
    cfg->nullpath_ok = 1;  // fh-based calls need no path, so libfuse locks none for them
    g_umask = fuse_process_umask();
    return fuse_get_context()->private_data;  // keep run_fuse's user_data
}

int xmp_getattr(const char* path, struct stat* st, struct fuse_file_info* fi) {
    CHECK_FS();
    IFile* f = file_of(fi);
    int r = f ? f->fstat(st) : path ? g_fs->lstat(path, st) : (errno = ENOENT, -1);
    if (r < 0) return neg_errno();
    // As Photon: owner 0 reads as ours (for file systems without owners).
    if (st->st_uid == 0) st->st_uid = geteuid();
    if (st->st_gid == 0) st->st_gid = getegid();
    if (st->st_nlink == 0) st->st_nlink = 1;
    if (st->st_blksize == 0) st->st_blksize = 4096;
    if (st->st_blocks == 0 && st->st_size > 0 && !S_ISLNK(st->st_mode))
        st->st_blocks = (st->st_size + 511) / 512;  // du needs some
    return 0;
}

int xmp_access(const char* path, int mask) {
    CHECK_FS();
    return result(g_fs->access(path, mask));
}

int xmp_readlink(const char* path, char* buf, size_t size) {
    CHECK_FS();
    if (size == 0) return -EINVAL;
    ssize_t n = g_fs->readlink(path, buf, size - 1);
    if (n < 0) return neg_errno();
    buf[n] = '\0';
    return 0;
}

int xmp_mknod(const char* path, mode_t mode, dev_t dev) {
    CHECK_FS();
    if (g_fs->mknod(path, mode, dev) < 0) return neg_errno();
    return result(fuse_fix_created_mode(g_fs, nullptr, path, mode, g_umask));
}
int xmp_mkdir(const char* path, mode_t mode) {
    CHECK_FS();
    if (g_fs->mkdir(path, mode) < 0) return neg_errno();
    return result(fuse_fix_created_mode(g_fs, nullptr, path, mode, g_umask));
}
int xmp_unlink(const char* path) {
    CHECK_FS();
    return result(g_fs->unlink(path));
}
int xmp_rmdir(const char* path) {
    CHECK_FS();
    return result(g_fs->rmdir(path));
}
int xmp_symlink(const char* from, const char* to) {
    CHECK_FS();
    return result(g_fs->symlink(from, to));
}
int xmp_rename(const char* from, const char* to, unsigned int flags) {
    CHECK_FS();
    return result(fuse_rename_with_flags(g_fs, from, to, flags));
}
int xmp_link(const char* from, const char* to) {
    CHECK_FS();
    return result(g_fs->link(from, to));
}
int xmp_chmod(const char* path, mode_t mode, struct fuse_file_info* fi) {
    CHECK_FS();
    IFile* f = file_of(fi);
    return result(f ? f->fchmod(mode) : g_fs->chmod(path, mode));
}
int xmp_chown(const char* path, uid_t uid, gid_t gid, struct fuse_file_info* fi) {
    CHECK_FS();
    IFile* f = file_of(fi);
    return result(f ? f->fchown(uid, gid) : g_fs->lchown(path, uid, gid));
}
int xmp_truncate(const char* path, off_t size, struct fuse_file_info* fi) {
    CHECK_FS();
    IFile* f = file_of(fi);
    return result(f ? f->ftruncate(size) : g_fs->truncate(path, size));
}
int xmp_utimens(const char* path, const struct timespec ts[2], struct fuse_file_info*) {
    CHECK_FS();
    if (!path) return -ENOENT;
    return result(fuse_set_times(g_fs, path, ts));
}

int xmp_create(const char* path, mode_t mode, struct fuse_file_info* fi) {
    CHECK_FS();
    IFile* f = g_fs->open(path, fi->flags | O_CREAT, mode);
    if (!f) return neg_errno();
    if (fuse_fix_created_mode(g_fs, f, nullptr, mode, g_umask) < 0) {
        int e = neg_errno();
        delete f;
        return e;
    }
    fi->fh = (uintptr_t)f;
    return 0;
}
int xmp_open(const char* path, struct fuse_file_info* fi) {
    CHECK_FS();
    IFile* f = g_fs->open(path, fi->flags);
    if (!f) return neg_errno();
    fi->fh = (uintptr_t)f;
    return 0;
}
int xmp_read(const char*, char* buf, size_t size, off_t off, struct fuse_file_info* fi) {
    CHECK_FS();
    ssize_t n = file_of(fi)->pread(buf, size, off);
    return n < 0 ? neg_errno() : (int)n;
}
int xmp_write(const char*, const char* buf, size_t size, off_t off, struct fuse_file_info* fi) {
    CHECK_FS();
    ssize_t n = file_of(fi)->pwrite(buf, size, off);
    return n < 0 ? neg_errno() : (int)n;
}
int xmp_statfs(const char* path, struct statvfs* st) {
    CHECK_FS();
    return result(g_fs->statvfs(path ? path : "/", st));
}
// close(2) of one descriptor: IFile writes are not buffered, nothing to
// flush (Photon fsync'ed on every close).
int xmp_flush(const char*, struct fuse_file_info*) { return 0; }
int xmp_release(const char*, struct fuse_file_info* fi) {
    CHECK_FS();
    IFile* f = file_of(fi);
    int r = f->close();
    int e = errno;
    delete f;
    errno = e;
    return result(r);
}
int xmp_fsync(const char*, int datasync, struct fuse_file_info* fi) {
    CHECK_FS();
    IFile* f = file_of(fi);
    return result(datasync ? f->fdatasync() : f->fsync());
}
int xmp_fallocate(const char*, int mode, off_t off, off_t len, struct fuse_file_info* fi) {
    CHECK_FS();
    return result(file_of(fi)->fallocate(mode, off, len));
}
off_t xmp_lseek(const char*, off_t off, int whence, struct fuse_file_info* fi) {
    CHECK_FS();
    off_t r = file_of(fi)->lseek(off, whence);
    return r < 0 ? neg_errno() : r;
}

int xmp_opendir(const char* path, struct fuse_file_info* fi) {
    CHECK_FS();
    DIR* d = g_fs->opendir(path);
    if (!d) return neg_errno();
    fi->fh = (uintptr_t) new xmp_dir{d, false};
    return 0;
}
// Offset-0 mode: libfuse keeps the whole listing and asks again only to
// start over. Names only: libfuse looks each up when the kernel wants
// attributes (Photon passed ino and type as full attributes: sizes of 0).
int xmp_readdir(const char*, void* buf, fuse_fill_dir_t filler, off_t, struct fuse_file_info* fi,
                enum fuse_readdir_flags) {
    CHECK_FS();
    auto xd = (xmp_dir*)(uintptr_t)fi->fh;
    if (xd->started) xd->dir->rewinddir();
    xd->started = true;
    for (auto& e : FileList(xd->dir)) {
        struct stat st;
        memset(&st, 0, sizeof(st));
        st.st_ino = e.d_ino;
        st.st_mode = (mode_t)e.d_type << 12;
        if (filler(buf, e.d_name, &st, 0, (enum fuse_fill_dir_flags)0)) break;
    }
    return 0;
}
int xmp_releasedir(const char*, struct fuse_file_info* fi) {
    auto xd = (xmp_dir*)(uintptr_t)fi->fh;
    xd->dir->closedir();
    delete xd->dir;
    delete xd;
    return 0;
}
int xmp_fsyncdir(const char*, int, struct fuse_file_info*) { return 0; }

// Extended attributes through IFileSystemXAttr when the file system has it;
// else ENOSYS, which the kernel remembers (Photon claimed every attribute
// existed, empty).
IFileSystemXAttr* xattr_fs() { return dynamic_cast<IFileSystemXAttr*>(g_fs); }
int xmp_setxattr(const char* path, const char* name, const char* value, size_t size, int flags) {
    auto x = xattr_fs();
    return x ? result(x->lsetxattr(path, name, value, size, flags)) : -ENOSYS;
}
int xmp_getxattr(const char* path, const char* name, char* value, size_t size) {
    auto x = xattr_fs();
    if (!x) return -ENOSYS;
    ssize_t n = x->lgetxattr(path, name, value, size);
    return n < 0 ? neg_errno() : (int)n;
}
int xmp_listxattr(const char* path, char* list, size_t size) {
    auto x = xattr_fs();
    if (!x) return -ENOSYS;
    ssize_t n = x->llistxattr(path, list, size);
    return n < 0 ? neg_errno() : (int)n;
}
int xmp_removexattr(const char* path, const char* name) {
    auto x = xattr_fs();
    return x ? result(x->lremovexattr(path, name)) : -ENOSYS;
}

struct fuse_operations make_ops() {
    struct fuse_operations o;
    memset(&o, 0, sizeof(o));
    o.getattr = xmp_getattr;
    o.readlink = xmp_readlink;
    o.mknod = xmp_mknod;
    o.mkdir = xmp_mkdir;
    o.unlink = xmp_unlink;
    o.rmdir = xmp_rmdir;
    o.symlink = xmp_symlink;
    o.rename = xmp_rename;
    o.link = xmp_link;
    o.chmod = xmp_chmod;
    o.chown = xmp_chown;
    o.truncate = xmp_truncate;
    o.open = xmp_open;
    o.read = xmp_read;
    o.write = xmp_write;
    o.statfs = xmp_statfs;
    o.flush = xmp_flush;
    o.release = xmp_release;
    o.fsync = xmp_fsync;
    o.setxattr = xmp_setxattr;
    o.getxattr = xmp_getxattr;
    o.listxattr = xmp_listxattr;
    o.removexattr = xmp_removexattr;
    o.opendir = xmp_opendir;
    o.readdir = xmp_readdir;
    o.releasedir = xmp_releasedir;
    o.fsyncdir = xmp_fsyncdir;
    o.init = xmp_init;
    o.access = xmp_access;
    o.create = xmp_create;
    o.utimens = xmp_utimens;
    o.fallocate = xmp_fallocate;
    o.lseek = xmp_lseek;
    return o;
}

struct fuse_operations g_xmp_oper = make_ops();

}  // namespace

fuse_operations* get_fuse_xmp_oper() { return &g_xmp_oper; }

void set_fuse_fs(IFileSystem* fs) { g_fs = fs; }

}  // namespace fs
}  // namespace photon
