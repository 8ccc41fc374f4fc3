// The source size a media file was sized to, kept in an xattr of the media
// file so that recovery can tell a complete media file from a truncated one.
#pragma once

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <photon/fs/filesystem.h>

namespace photon {
namespace fs {
namespace cache_size_xattr {

constexpr const char* kName = "user.photon.cache.size";

// 0, or -1 with errno; media without xattrs (ENOTSUP, ENOSYS) count as done.
inline int set(IFile* f, off_t size) {
    auto x = dynamic_cast<IFileXAttr*>(f);
    if (!x) return 0;
    char buf[32];
    int n = snprintf(buf, sizeof(buf), "%lld", (long long)size);
    if (x->fsetxattr(kName, buf, n, 0) == 0) return 0;
    return (errno == ENOTSUP || errno == ENOSYS) ? 0 : -1;
}

// 1 with *size, 0 if the media has no xattrs, -1 if the xattr is missing or
// malformed.
inline int get(IFile* f, off_t* size) {
    auto x = dynamic_cast<IFileXAttr*>(f);
    if (!x) return 0;
    char buf[32];
    auto n = x->fgetxattr(kName, buf, sizeof(buf) - 1);
    if (n < 0) return (errno == ENOTSUP || errno == ENOSYS) ? 0 : -1;
    buf[n] = '\0';
    char* end = nullptr;
    long long v = strtoll(buf, &end, 10);
    if (n == 0 || *end != '\0' || v < 0) return -1;
    *size = v;
    return 1;
}

}  // namespace cache_size_xattr
}  // namespace fs
}  // namespace photon
