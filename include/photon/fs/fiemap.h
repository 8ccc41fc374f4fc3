// fiemap: the extent map that IFile::fiemap() fills, as PhotonLibOS declares
// it. The layout is the kernel's (<linux/fiemap.h>, checked by the tests), so
// an implementation over a real file may hand the struct to
// ioctl(FS_IOC_FIEMAP) as it is. fiemap_t<N> carries room for N extents.
// Plain data: any thread, never yields.
//
//   photon::fs::fiemap_t<16> fm(0, FIEMAP_MAX_OFFSET);
//   if (file->fiemap(&fm) == 0)
//       for (uint32_t i = 0; i < fm.fm_mapped_extents; i++) use(fm.fm_extents[i]);
//
// The kernel header is not included here: its global `struct fiemap` would
// make the name ambiguous for code that says `using namespace photon::fs`.
#pragma once

#include <cinttypes>
#include <cstdint>

// First, so that IFile::fiemap() is declared before photon::fs::fiemap is.
#include <photon/fs/filesystem.h>

namespace photon {
namespace fs {

typedef uint32_t __u32;
typedef uint64_t __u64;

struct fiemap_extent {
    __u64 fe_logical;   // file offset of the extent, bytes
    __u64 fe_physical;  // disk offset of the extent, bytes
    __u64 fe_length;    // bytes
    __u64 fe_logical_end() const { return fe_logical + fe_length; }
    __u64 fe_reserved64[2];
    __u32 fe_flags;  // FIEMAP_EXTENT_*
    __u32 fe_reserved[3];
};

struct fiemap {
    __u64 fm_start;           // in: first file offset to map
    __u64 fm_length;          // in: bytes to map from fm_start
    __u32 fm_flags = 0;       // in/out: FIEMAP_FLAG_*
    __u32 fm_mapped_extents;  // out: entries of fm_extents filled
    __u32 fm_extent_count;    // in: room in fm_extents
    __u32 fm_reserved = 0;
    struct fiemap_extent fm_extents[0];  // out; the storage follows (fiemap_t)

    fiemap(__u64 fm_start, __u64 fm_length, __u32 fm_extent_count)
        : fm_start(fm_start),
          fm_length(fm_length),
          fm_mapped_extents(0),
          fm_extent_count(fm_extent_count) {}
};

// A fiemap with room for N extents right after the header, where the
// kernel (and fm_extents) expect them.
template <__u64 N>
struct fiemap_t : public fiemap {
    struct fiemap_extent fm_extents[N];
    fiemap_t(__u64 fm_start, __u64 fm_length) : fiemap(fm_start, fm_length, N) {}
};

}  // namespace fs
}  // namespace photon

// The kernel's values; the same spelling, so either header may come first.
#ifndef FIEMAP_MAX_OFFSET
#define FIEMAP_MAX_OFFSET (~0ULL)
#endif
#ifndef FIEMAP_FLAG_SYNC
#define FIEMAP_FLAG_SYNC 0x00000001   // sync file data before map
#define FIEMAP_FLAG_XATTR 0x00000002  // map extended attribute tree
#define FIEMAP_FLAG_CACHE 0x00000004  // request caching of the extents
#define FIEMAP_FLAGS_COMPAT (FIEMAP_FLAG_SYNC | FIEMAP_FLAG_XATTR)
#endif
#ifndef FIEMAP_EXTENT_LAST
#define FIEMAP_EXTENT_LAST 0x00000001            // last extent in file
#define FIEMAP_EXTENT_UNKNOWN 0x00000002         // data location unknown
#define FIEMAP_EXTENT_DELALLOC 0x00000004        // location still pending
#define FIEMAP_EXTENT_ENCODED 0x00000008         // data cannot be read while unmounted
#define FIEMAP_EXTENT_DATA_ENCRYPTED 0x00000080  // data is encrypted by the fs
#define FIEMAP_EXTENT_NOT_ALIGNED 0x00000100     // offsets may not be block aligned
#define FIEMAP_EXTENT_DATA_INLINE 0x00000200     // data mixed with metadata
#define FIEMAP_EXTENT_DATA_TAIL 0x00000400       // multiple files in block
#define FIEMAP_EXTENT_UNWRITTEN 0x00000800       // space allocated, no data (zeros)
#define FIEMAP_EXTENT_MERGED 0x00001000          // merged: no native extents
#define FIEMAP_EXTENT_SHARED 0x00002000          // space shared with other files
#endif
