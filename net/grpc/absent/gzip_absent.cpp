// gzip without zlib: reported as unsupported (the calls that ask for it end UNIMPLEMENTED).
#include <cerrno>

#include "../wire.h"

namespace photon {
namespace net {
namespace grpc {

bool gzip_supported() { return false; }
int gzip_compress(std::string_view, std::string*) { return errno = ENOSYS, -1; }
int gzip_decompress(std::string_view, size_t, std::string*) { return errno = ENOSYS, -1; }

}  // namespace grpc
}  // namespace net
}  // namespace photon
