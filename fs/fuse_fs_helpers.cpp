#include "fuse_fs_helpers.h"

#include <sys/time.h>

#include <cerrno>
#include <cstdio>

#include <photon/fs/fuse_adaptor.h>
#include <photon/fs/filesystem.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

namespace photon {
namespace fs {

mode_t fuse_process_umask() {
    FILE* f = fopen("/proc/self/status", "re");
    unsigned m = 0;
    bool found = false;
    for (char line[256]; f && !found && fgets(line, sizeof(line), f);)
        found = sscanf(line, "Umask: %o", &m) == 1;
    if (f) fclose(f);
    if (found) return (mode_t)m;
    mode_t old = umask(022);  // kernels before 4.7: read it by setting it
    umask(old);
    return old;
}

int fuse_fix_created_mode(IFileSystem* fs, IFile* f, const char* path, mode_t mode, mode_t umask) {
    mode &= 07777;
    if (!(mode & umask)) return 0;
    int r = f ? f->fchmod(mode) : fs->chmod(path, mode);
    return r < 0 && (errno == ENOSYS || errno == EOPNOTSUPP) ? 0 : r;
}

int fuse_rename_with_flags(IFileSystem* fs, const char* from, const char* to, unsigned flags) {
    if (flags & ~(unsigned)RENAME_NOREPLACE) return errno = EINVAL, -1;
    if (flags & RENAME_NOREPLACE) {
        struct stat st;
        if (fs->lstat(to, &st) == 0) return errno = EEXIST, -1;
        if (errno != ENOENT) return -1;
    }
    return fs->rename(from, to);
}

int fuse_set_times(IFileSystem* fs, const char* path, const struct timespec ts[2]) {
    struct timeval tv[2];
    struct stat st;
    bool omit = ts[0].tv_nsec == UTIME_OMIT || ts[1].tv_nsec == UTIME_OMIT;
    if (omit && fs->lstat(path, &st) < 0) return -1;
    struct timeval now;
    gettimeofday(&now, nullptr);
    const struct timespec* current[2] = {&st.st_atim, &st.st_mtim};
    for (int i = 0; i < 2; i++) {
        if (ts[i].tv_nsec == UTIME_NOW) {
            tv[i] = now;
        } else {
            const struct timespec& t = ts[i].tv_nsec == UTIME_OMIT ? *current[i] : ts[i];
            tv[i].tv_sec = t.tv_sec;
            tv[i].tv_usec = t.tv_nsec / 1000;
        }
    }
    return fs->lutimes(path, tv);
}

int fuse_apply_setattr(IFileSystem* fs, IFile* f, const char* path, const struct stat* attr,
                       int to_set) {
    if (!f && !path) return errno = ENOENT, -1;
    if (to_set & FUSE_SET_ATTR_MODE) {
        int r = f ? f->fchmod(attr->st_mode) : fs->chmod(path, attr->st_mode);
        if (r < 0) return -1;
    }
    if (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
        uid_t uid = (to_set & FUSE_SET_ATTR_UID) ? attr->st_uid : (uid_t)-1;
        gid_t gid = (to_set & FUSE_SET_ATTR_GID) ? attr->st_gid : (gid_t)-1;
        int r = f ? f->fchown(uid, gid) : fs->lchown(path, uid, gid);
        if (r < 0) return -1;
    }
    if (to_set & FUSE_SET_ATTR_SIZE) {
        int r = f ? f->ftruncate(attr->st_size) : fs->truncate(path, attr->st_size);
        if (r < 0) return -1;
    }
    const int times = FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_ATIME_NOW |
                      FUSE_SET_ATTR_MTIME_NOW;
    if (!(to_set & times)) return 0;
    if (!path) {  // unlinked: IFile has no futimens
        // "Now" comes with a truncate (ftruncate(2) sets it itself) or
        // is close enough to it; explicit times cannot be set.
        bool explicit_atime = (to_set & FUSE_SET_ATTR_ATIME) && !(to_set & FUSE_SET_ATTR_ATIME_NOW);
        bool explicit_mtime = (to_set & FUSE_SET_ATTR_MTIME) && !(to_set & FUSE_SET_ATTR_MTIME_NOW);
        if (explicit_atime || explicit_mtime) return errno = ENOENT, -1;
        return 0;
    }
    struct timespec ts[2];
    ts[0] = (to_set & FUSE_SET_ATTR_ATIME) ? attr->st_atim : timespec{0, UTIME_OMIT};
    ts[1] = (to_set & FUSE_SET_ATTR_MTIME) ? attr->st_mtim : timespec{0, UTIME_OMIT};
    if (to_set & FUSE_SET_ATTR_ATIME_NOW) ts[0].tv_nsec = UTIME_NOW;
    if (to_set & FUSE_SET_ATTR_MTIME_NOW) ts[1].tv_nsec = UTIME_NOW;
    return fuse_set_times(fs, path, ts);
}

}  // namespace fs
}  // namespace photon
