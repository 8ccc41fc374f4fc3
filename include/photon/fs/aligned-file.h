// Aligned-I/O adaptors: unaligned pread/pwrite (and vector forms) on a file
// that accepts only aligned I/O, such as an O_DIRECT file. Unaligned requests
// go through a bounce buffer aligned to `alignment` (a power of two);
// unaligned writes read-modify-write the edge blocks, serialized against the
// other writes of the same adaptor. Blocking as the underlying file.
#pragma once

#include <cstdint>

#include <photon/fs/filesystem.h>

struct IOAlloc;  // photon/common/io-alloc.h

namespace photon {
namespace fs {

// align_memory: also bounce requests whose buffer is not aligned.
// allocator: unused (bounce buffers come from posix_memalign).
// nullptr with EINVAL if alignment is not a power of two.
IFile* new_aligned_file_adaptor(IFile* file, uint32_t alignment, bool align_memory,
                                bool ownership = false, IOAlloc* allocator = nullptr);
// Every file `fs` opens, wrapped as above.
IFileSystem* new_aligned_fs_adaptor(IFileSystem* fs, uint32_t alignment, bool align_memory,
                                    bool ownership, IOAlloc* allocator = nullptr);

}  // namespace fs
}  // namespace photon
