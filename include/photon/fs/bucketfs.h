// bucketfs: an object store bucket (<photon/ecosystem/oss.h>) as an
// IFileSystem, so that fs/ decorators, the FUSE adaptor and httpfs users can
// mount it. Keys are paths without the leading '/'; a directory is a key
// prefix ending in '/' (listed with the '/' delimiter), made by mkdir as an
// empty "dir/" marker object.
//
// Files open read-only (ranged GETs, any offset, any number of coroutines) or
// write-only as new objects (O_CREAT|O_TRUNC or creat): writes must come in
// order; they are sent as a multipart upload in part_size parts (a small
// file as one PUT) and the object appears whole on close() or fsync(),
// never half written (through FUSE, close() is the release, which the kernel
// sends after close(2) has returned; fsync(2) makes the object at once). O_RDWR, O_APPEND and
// writes to an existing object without O_TRUNC fail with ENOTSUP: objects cannot change in place.
// truncate() to 0 makes an empty object; rename() of a file is a
// server-side copy and delete; of a directory, ENOTSUP. Modes, owners and
// times are not stored (chmod/chown/utimes succeed and change nothing).
//
// Calls block the calling coroutine only; one vCPU, as the client's.
#pragma once

#include <cstddef>

#include <photon/fs/filesystem.h>

namespace photon {
namespace objstore {
class Client;
}
namespace fs {

// nullptr with EINVAL if client is null. ownership: the file system deletes
// the client. part_size: the multipart part size for writes (>= 5 MiB, S3's
// minimum; smaller values are raised to it).
IFileSystem* new_bucket_fs(objstore::Client* client, bool ownership = false,
                           size_t part_size = 16UL << 20);

}  // namespace fs
}  // namespace photon
