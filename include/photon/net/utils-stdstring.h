// std::string forms of addresses: "1.2.3.4", "::1", "1.2.3.4:80", "[::1]:80".
// Pure functions; any thread.
#pragma once

#include <string>

#include <photon/net/socket.h>

namespace photon {
namespace net {

inline std::string to_string(const IPAddr& ip) {
    char buf[64];
    return std::string(buf, to_text(ip, buf, sizeof(buf)));
}

inline std::string to_string(const EndPoint& ep) {
    char buf[72];
    return std::string(buf, to_text(ep, buf, sizeof(buf)));
}

}  // namespace net
}  // namespace photon
