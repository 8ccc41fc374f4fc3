// subfs: a file system rooted at a directory of another (like chroot).
// Paths are resolved inside the root: ".." stops at it, and symlinks are
// followed by subfs itself, an absolute target meaning "from the root", so
// neither can reach outside. (Another process that swaps a directory for a
// symlink between the check and the use can still race it.) Same threading
// and blocking as the underlay.
#pragma once

#include <photon/fs/filesystem.h>

namespace photon {
namespace fs {

// nullptr with errno; deletes underlayfs when deleted if ownership.
IFileSystem* new_subfs(IFileSystem* underlayfs, const char* base_path, bool ownership);

// A window [offset, offset+length) of a file; deletes file if ownership.
IFile* new_subfile(IFile* file, off_t offset, size_t length, bool ownership);

}  // namespace fs
}  // namespace photon
