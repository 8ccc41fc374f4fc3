// Private: pieces shared by the FUSE adaptor's low-level operations and its
// path-based ones (get_fuse_xmp_oper): the calls FUSE asks for that
// IFileSystem spells differently.
#pragma once

#include <sys/stat.h>
#include <time.h>

namespace photon {
namespace fs {

class IFile;
class IFileSystem;

// rename(2) with renameat2's flags: RENAME_NOREPLACE is checked with lstat
// first (racing only with changes made beside the mount), RENAME_EXCHANGE and
// the others fail with EINVAL. 0, or -1 with errno.
int fuse_rename_with_flags(IFileSystem* fs, const char* from, const char* to, unsigned flags);

// Applies a FUSE setattr: FUSE_SET_ATTR_* bits in to_set, values in attr.
// Mode, owner and size go through f when given, else through path (lchown:
// owners of symlinks are their own); times always through path (lutimes,
// microseconds). Without a path (an unlinked open file), "now" times are
// left to the file system and explicit ones fail with ENOENT. Stops at the
// first failure: -1 with errno; 0 when done.
int fuse_apply_setattr(IFileSystem* fs, IFile* f, const char* path, const struct stat* attr,
                       int to_set);

// The process umask, read without changing it (/proc/self/status). The
// kernel masks the modes of FUSE creations with the caller's umask already;
// the file system would mask them again with ours.
mode_t fuse_process_umask();

// After creating `path` (or f) with `mode`: sets the mode exactly if
// `umask` took bits away. 0, or -1 with errno (ENOSYS and EOPNOTSUPP, a
// file system without modes, count as success).
int fuse_fix_created_mode(IFileSystem* fs, IFile* f, const char* path, mode_t mode, mode_t umask);

// utimensat(2) semantics (UTIME_NOW, UTIME_OMIT) on path, not following a
// last symlink. 0, or -1 with errno.
int fuse_set_times(IFileSystem* fs, const char* path, const struct timespec ts[2]);

}  // namespace fs
}  // namespace photon
