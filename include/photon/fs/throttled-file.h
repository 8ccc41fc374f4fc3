// Throttled files, as PhotonLibOS declares them: a decorator that holds the
// data calls of a file (or of every file a file system opens) to limits on
// concurrent operations, operations per second and bytes per second, for
// reads (R), writes (W) and both together (RW), and cuts requests into
// pieces of at most block_size bytes. A request waits (the calling coroutine
// sleeps) for its share before it starts; it counts as one operation of its
// full size however it is cut. Limits hold over `time_window` seconds: a
// window's worth may pass at once. 0 means no limit. Metadata calls pass
// through. Call from the vCPU the file is used on; one vCPU per throttle.
//
// Differences from PhotonLibOS: doc/compat.md#fsthrottled-fileh
#pragma once

#include <cinttypes>
#include <cstdint>

namespace photon {
namespace fs {

struct ThrottleLimits {
    uint32_t struct_size = sizeof(ThrottleLimits);

    // The time window (seconds) the rates are measured over; 0 is taken as 1.
    uint32_t time_window = 1;

    struct UpperLimits {
        // Operations in flight; operations and bytes per second; the largest
        // piece a request is cut into (R and W only).
        uint32_t concurent_ops = 0, IOPS = 0, throughput = 0, block_size = 0;
    };

    // For reads, for writes, and for either.
    UpperLimits R, W, RW;
};

class IFileSystem;
class IFile;

// nullptr with EINVAL if file is null; deletes file with itself if ownership.
extern "C" IFile* new_throttled_file(IFile* file, const ThrottleLimits& limits,
                                     bool ownership = false);

// Every file fs opens, throttled by one shared set of limits. nullptr with
// EINVAL if fs is null; deletes fs with itself if ownership.
extern "C" IFileSystem* new_throttled_fs(IFileSystem* fs, const ThrottleLimits& limits,
                                         bool ownership = false);

}  // namespace fs
}  // namespace photon
