// The local file system through an I/O engine. Data calls (pread/pwrite and
// the vector forms, fsync, fdatasync) go through the engine; metadata calls
// (open, stat, rename, ...) are plain syscalls.
//   ioengine_psync:    plain syscalls after a thread_yield(): BLOCKS THE vCPU
//                      for the duration of each syscall.
//   ioengine_libaio:   Linux AIO (aio-wrapper.h). Files are opened with
//                      O_DIRECT; buffers, offsets and sizes must be aligned
//                      (512 B at least, the device's block size in general),
//                      else -1 EINVAL. Needs a master event engine.
//   ioengine_posixaio: the syscall runs on a helper OS thread
//                      (aio-wrapper.h); parks only the calling coroutine.
//   ioengine_iouring:  io_uring (iouring-wrapper.h); parks only the caller.
// Unknown engines fall back to psync. Call from a vCPU.
#pragma once

#include <photon/fs/filesystem.h>

namespace photon {
namespace fs {

const int ioengine_psync = 0;
const int ioengine_libaio = 1;
const int ioengine_posixaio = 2;
const int ioengine_iouring = 3;
const int ioengine_iocp = 4;

extern "C" {
// A file system over the host's. A non-empty root_path confines every path
// to that directory (an owning new_subfs()). nullptr with errno.
IFileSystem* new_localfs_adaptor(const char* root_path = nullptr, int io_engine_type = 0);
// Takes ownership of fd (deleting the file closes it); its filesystem() is
// nullptr. libaio switches the fd to O_DIRECT. nullptr with EINVAL if fd < 0.
IFile* new_localfile_adaptor(int fd, int io_engine_type = 0);
IFile* open_localfile_adaptor(const char* filename, int flags, mode_t mode = 0644,
                              int io_engine_type = 0);
}

inline IFile* new_libaio_file_adaptor(int fd) { return new_localfile_adaptor(fd, ioengine_libaio); }
inline IFile* new_posixaio_file_adaptor(int fd) {
    return new_localfile_adaptor(fd, ioengine_posixaio);
}

}  // namespace fs
}  // namespace photon
