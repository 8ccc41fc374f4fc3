// extfs: an ext2/3/4 file system image inside any IFile (local, aligned,
// cached, HTTP...), read and written through e2fsprogs' libext2fs, as an
// IFileSystem. Built only with libext2fs (PHOTON_HAVE_EXTFS, cmake option
// PHOTON_ENABLE_EXTFS).
//
// Call from photon threads. Every call may yield: libext2fs's block I/O goes
// to the IFile underneath. One file system's calls are serialized by a photon
// mutex, so any number of coroutines (on one vCPU) may share it. The caller
// keeps the IFile alive while the file system exists and deletes the file
// system (after its files and dirs) before the IFile; deleting it writes
// everything back. doc/fs.md lists the calls supported.
#pragma once

#include <stdint.h>

#include <photon/fs/filesystem.h>

namespace photon {
namespace fs {

// Mounts the ext2/3/4 image in `file`. With `buffer`, block I/O goes through
// a write-back cache of 8 MiB in 128 KiB blocks (new_extfs_with_buffer's
// defaults). nullptr and errno on failure (EINVAL: no ext file system there;
// EUCLEAN: corrupt; EIO: the file's errors). The caller deletes the result.
IFileSystem* new_extfs(IFile* file, bool buffer = true);

// As new_extfs, with a cache of `buffer_size` bytes in blocks of `block_size`
// (a power of 2, at least 4 KiB, dividing buffer_size; EINVAL otherwise);
// buffer_size 0: no cache.
IFileSystem* new_extfs_with_buffer(IFile* file, uint32_t buffer_size = 8 << 20,
                                   uint32_t block_size = 128 << 10);

// Makes an ext4 file system filling `file`, which the caller has sized
// (ftruncate) and zeroed (a fresh sparse file is) beforehand. `uuid` is the
// textual UUID of the new file system, nullptr for a fixed default. 0, or -1
// and errno (EINVAL: bad uuid or a file too small).
int make_extfs(IFile* file, char* uuid = nullptr);

// Grows the unmounted file system in `file` to `new_size` bytes (rounded
// down to whole blocks), enlarging the file first if it is shorter. 0 when
// done (also when the size is unchanged), or -1 and errno: EOPNOTSUPP for
// shrinking, ENOSPC when the reserved group descriptor blocks cannot describe
// that many groups. `flags` is accepted for PhotonLibOS's signature and unused.
// Differences from PhotonLibOS: doc/compat.md#fsextfsextfsh
int resize_extfs(IFile* file, uint64_t new_size, int flags = 0);

}  // namespace fs
}  // namespace photon
