// QuotaFilePool: PhotonLibOS's full-file cache pool with per-directory
// quotas. Files are grouped by the first quotaDirLevel directories of their
// path ("/a/b/file" is in group "a" at level 1, "a/b" at level 2; a file in
// no directory of that depth cannot be opened: EINVAL). set_quota("/a/", n)
// gives group "a" a quota of n bytes (16 TiB until then); stat("/a/") gives
// its quota and usage. The eviction rules are FileCachePool's
// (cache_pool.h). new_full_file_cached_fs() makes one when its quotaDirLevel
// is above 0.
#pragma once
#include <photon/fs/cache/full_file_cache/cache_pool.h>

namespace photon {
namespace fs {

class QuotaFilePool : public FileCachePool {
public:
    QuotaFilePool(IFileSystem* mediaFs, uint64_t capacityInGB, uint64_t periodInUs,
                  uint64_t diskAvailInBytes, uint64_t refillUnit, int quotaDirLevel)
        : FileCachePool(mediaFs, capacityInGB, periodInUs, diskAvailInBytes, refillUnit) {
        quota_level_ = quotaDirLevel > 0 ? quotaDirLevel : 0;
    }
};

}  // namespace fs
}  // namespace photon
