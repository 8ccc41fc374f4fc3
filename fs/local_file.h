// Private: the local file adaptor behind new_localfile_adaptor and the local
// file system's open().
#pragma once

#include <photon/fs/filesystem.h>

namespace photon {
namespace fs {

// Owns fd; filesystem() returns fs. libaio switches fd to O_DIRECT.
// nullptr with errno (EINVAL for a bad fd).
IFile* new_local_file(int fd, int io_engine, IFileSystem* fs);

// O_DIRECT added for engines that need it.
int local_open_flags(int flags, int io_engine);

}  // namespace fs
}  // namespace photon
