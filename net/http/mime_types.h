// Content-Type of a file by its extension. Pure: any vCPU, never yields.
#pragma once

#include <string_view>

namespace photon {
namespace net {
namespace http {

// The media type for the extension of path's last segment (after its last
// '.', case-insensitive); "application/octet-stream" if unknown or none.
// Text types carry "; charset=utf-8".
std::string_view mime_type(std::string_view path);

}  // namespace http
}  // namespace net
}  // namespace photon
