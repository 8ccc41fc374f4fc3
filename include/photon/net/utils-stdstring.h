// String forms of addresses: "1.2.3.4", "::1" (std::string) and "1.2.3.4:80",
// "[::1]:80" (estring, as PhotonLibOS returns). Pure functions; any thread.
#pragma once

#include <arpa/inet.h>

#include <string>

#include <photon/common/estring.h>
#include <photon/net/socket.h>

namespace photon {
namespace net {

// Writes addr's text and a NUL into text, which must hold INET6_ADDRSTRLEN
// bytes (PhotonLibOS's helper).
inline void __to_string(const IPAddr& addr, char* text) { to_text(addr, text, INET6_ADDRSTRLEN); }

inline std::string to_string(const IPAddr& ip) {
    char buf[64];
    return std::string(buf, to_text(ip, buf, sizeof(buf)));
}

inline estring to_string(const EndPoint& ep) {
    char buf[72];
    return estring(std::string(buf, to_text(ep, buf, sizeof(buf))));
}

}  // namespace net
}  // namespace photon
