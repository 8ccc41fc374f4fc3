// Hex digits for chunk sizes and %XX escapes. Private header of net/http.
#pragma once

namespace photon {
namespace net {
namespace http {

// The value of hex digit c, or -1.
inline int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

}  // namespace http
}  // namespace net
}  // namespace photon
