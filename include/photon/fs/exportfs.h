// exportfs: hands photon-based files and file systems to code outside photon,
// as PhotonLibOS declares it. exportfs_init() makes the calling vCPU serve
// exported objects: every call on an exported object, from any OS thread or
// vCPU, is queued to that vCPU and runs there in a coroutine of its own.
//   export_as_async_*: the IAsyncFile / IAsyncFileSystem / AsyncDIR of
//                      async_filesystem.h; `done` is called on the serving
//                      vCPU when the call ends (the timeout is not used);
//   export_as_sync_*:  ordinary IFile / IFileSystem / DIR whose calls wait
//                      for the result: a plain OS thread blocks, a coroutine
//                      (also one on the serving vCPU) is parked.
// Each export owns what it wraps; the wrapped object is deleted on the
// serving vCPU after the last call queued on it has ended. Files and
// directories opened through an exported file system come exported too.
// Needs nothing of the rest of fs/ but async_filesystem.h: usable by any
// front end (a FUSE adaptor, a C API) as it is.
//
// Differences from PhotonLibOS: doc/compat.md#fsexportfsh
#pragma once

#include <cstdint>

namespace photon {
namespace fs {

class IFile;
class IFileSystem;
class DIR;
class IAsyncFile;
class IAsyncFileSystem;
class AsyncDIR;

extern "C" {
// Makes this vCPU serve exported objects; thread_pool_capacity > 0 runs the
// calls on a pool of that many kept coroutines. 0, or -1 with errno ENOSYS
// (not a vCPU) or EALREADY.
int exportfs_init(uint32_t thread_pool_capacity = 0);
// Stops serving: calls queued so far run to their end, later ones fail with
// ESHUTDOWN. Call on the vCPU that called exportfs_init(). 0, or -1 with
// errno ENOSYS (not serving) or EINVAL (another vCPU).
int exportfs_fini();

// Exports that own `file` / `fs` / `dir`; nullptr with EINVAL if it is null.
IAsyncFile* export_as_async_file(IFile* file);
IAsyncFileSystem* export_as_async_fs(IFileSystem* fs);
AsyncDIR* export_as_async_dir(DIR* dir);

IFile* export_as_sync_file(IFile* file);
IFileSystem* export_as_sync_fs(IFileSystem* fs);
DIR* export_as_sync_dir(DIR* dir);
}

}  // namespace fs
}  // namespace photon
