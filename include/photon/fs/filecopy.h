// filecopy: copies a file's bytes into another, as PhotonLibOS declares it.
// Blocks the calling coroutine as the files' calls do.
//
// Differences from PhotonLibOS: doc/compat.md#fsfilecopyh
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdio>

namespace photon {
namespace fs {

class IFile;

// Copies infile from offset 0 to its end into outfile at offset 0, then
// truncates outfile to the bytes copied. bs: bytes per read (a buffer
// aligned to 4 KiB); a failed read or write is retried up to retry_limit
// times in a row. The bytes copied, or -1 with errno (EINVAL for a null
// file or bs 0; ENOMEM; else the last failure's).
ssize_t filecopy(IFile* infile, IFile* outfile, size_t bs = 65536, int retry_limit = 5);

}  // namespace fs
}  // namespace photon
