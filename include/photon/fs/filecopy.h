// filecopy: copies a file's bytes into another, as PhotonLibOS declares it.
// Blocks the calling coroutine as the files' calls do.
//
// Differs from PhotonLibOS where it was a trap:
// - it copies to the end of the input (a read that returns 0), so a short
//   read in the middle no longer ends the copy early with a truncated file;
// - it writes the bytes it read, not a whole buffer of which the tail is
//   stale: only an output that rejects the short last write (an O_DIRECT file,
//   EINVAL) gets it padded to 4 KiB and is then truncated to the true size;
// - an O_DIRECT input (libaio) whose size is not a multiple of its block
//   ends the copy at its end too: the read after the short last one, which
//   it refuses (EINVAL at an unaligned offset), is taken as the end when the
//   input's fstat size says so;
// - a failure keeps the I/O call's errno (Photon replaced it with EIO) and
//   the output is truncated only after the copy succeeded.
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
