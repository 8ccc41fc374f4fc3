// gzip for gRPC messages, on zlib.
#include <zlib.h>

#include <algorithm>
#include <cerrno>

#include "wire.h"

namespace photon {
namespace net {
namespace grpc {

bool gzip_supported() { return true; }

int gzip_compress(std::string_view in, std::string* out) {
    z_stream z = {};
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return errno = ENOMEM, -1;
    out->resize(deflateBound(&z, in.size()) + 32);
    z.next_in = (Bytef*)in.data();
    z.avail_in = (uInt)in.size();
    z.next_out = (Bytef*)&(*out)[0];
    z.avail_out = (uInt)out->size();
    int r = deflate(&z, Z_FINISH);
    out->resize(z.total_out);
    deflateEnd(&z);
    return r == Z_STREAM_END ? 0 : (errno = EINVAL, -1);
}

int gzip_decompress(std::string_view in, size_t max, std::string* out) {
    z_stream z = {};
    if (inflateInit2(&z, 15 + 16) != Z_OK) return errno = ENOMEM, -1;
    out->clear();
    z.next_in = (Bytef*)in.data();
    z.avail_in = (uInt)in.size();
    int r = Z_OK;
    while (r == Z_OK) {
        size_t have = out->size();
        size_t grow = std::max<size_t>(in.size() * 2, 4096);
        if (have + grow > max + 1) grow = max + 1 - have;  // one past max tells "too large"
        if (grow == 0) break;
        out->resize(have + grow);
        z.next_out = (Bytef*)&(*out)[have];
        z.avail_out = (uInt)grow;
        r = inflate(&z, Z_NO_FLUSH);
        out->resize(have + grow - z.avail_out);
        if (r == Z_BUF_ERROR && z.avail_in == 0) break;  // truncated input
        if (r == Z_BUF_ERROR) r = Z_OK;
    }
    inflateEnd(&z);
    if (out->size() > max) return errno = EMSGSIZE, -1;
    if (r != Z_STREAM_END || z.avail_in != 0) return errno = EINVAL, -1;
    return 0;
}

}  // namespace grpc
}  // namespace net
}  // namespace photon
