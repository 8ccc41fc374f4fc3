// IPAddr / EndPoint: parsing and printing.
#include <arpa/inet.h>

#include <cstdio>
#include <string>

#include <photon/common/alog.h>
#include <photon/net/socket.h>

namespace photon {
namespace net {

IPAddr::IPAddr(const char* s) {
    reset();
    if (!s) return;
    in_addr v4;
    if (inet_pton(AF_INET, s, &v4) == 1) {
        from_nl(v4.s_addr);
        return;
    }
    in6_addr v6;
    if (inet_pton(AF_INET6, s, &v6) == 1) addr = v6;
}

EndPoint::EndPoint(const char* ep) {
    if (ep) *this = parse(ep, 0);
    if (port == 0) reset();  // "a.b.c.d" alone is no endpoint
}

EndPoint EndPoint::parse(std::string_view s, uint16_t default_port) {
    std::string host;
    std::string_view port_text;
    if (!s.empty() && s.front() == '[') {  // [v6]:port
        size_t close = s.find(']');
        if (close == std::string_view::npos) return {};
        host.assign(s.substr(1, close - 1));
        std::string_view rest = s.substr(close + 1);
        if (!rest.empty()) {
            if (rest.front() != ':') return {};
            port_text = rest.substr(1);
        }
    } else {
        size_t colon = s.rfind(':');
        if (colon != std::string_view::npos && s.find(':') == colon) {  // one colon: v4:port
            host.assign(s.substr(0, colon));
            port_text = s.substr(colon + 1);
        } else {
            host.assign(s);  // v4, or bare v6 without a port
        }
    }
    EndPoint ep;
    ep.addr = IPAddr(host.c_str());
    if (ep.addr.undefined() && host != "0.0.0.0") return {};
    ep.port = default_port;
    if (!port_text.empty()) {
        uint32_t p = 0;
        for (char c : port_text) {
            if (c < '0' || c > '9' || (p = p * 10 + (c - '0')) > 65535) return {};
        }
        ep.port = (uint16_t)p;
    }
    return ep;
}

size_t to_text(const IPAddr& ip, char* buf, size_t n) {
    char tmp[INET6_ADDRSTRLEN];
    if (ip.is_ipv4()) {
        in_addr v4 = {ip.to_nl()};
        inet_ntop(AF_INET, &v4, tmp, sizeof(tmp));
    } else {
        inet_ntop(AF_INET6, &ip.addr, tmp, sizeof(tmp));
    }
    return (size_t)snprintf(buf, n, "%s", tmp) >= n && n ? n - 1 : strlen(buf);
}

size_t to_text(const EndPoint& ep, char* buf, size_t n) {
    char ip[INET6_ADDRSTRLEN];
    to_text(ep.addr, ip, sizeof(ip));
    int r = ep.is_ipv4() ? snprintf(buf, n, "%s:%u", ip, ep.port)
                         : snprintf(buf, n, "[%s]:%u", ip, ep.port);
    return r < 0 ? 0 : (size_t)r >= n && n ? n - 1 : (size_t)r;
}

LogBuffer& operator<<(LogBuffer& log, const IPAddr& ip) {
    char buf[64];
    log.put(buf, to_text(ip, buf, sizeof(buf)));
    return log;
}

LogBuffer& operator<<(LogBuffer& log, const EndPoint& ep) {
    char buf[72];
    log.put(buf, to_text(ep, buf, sizeof(buf)));
    return log;
}

}  // namespace net
}  // namespace photon

// libc's structs print as IPAddr / EndPoint do (a v4-mapped in6_addr as IPv4).
LogBuffer& operator<<(LogBuffer& log, const in_addr& iaddr) {
    return log << photon::net::IPAddr(iaddr);
}
LogBuffer& operator<<(LogBuffer& log, const in6_addr& iaddr) {
    return log << photon::net::IPAddr(iaddr);
}
LogBuffer& operator<<(LogBuffer& log, const sockaddr_in& addr) {
    return log << photon::net::EndPoint(photon::net::IPAddr(addr.sin_addr), ntohs(addr.sin_port));
}
LogBuffer& operator<<(LogBuffer& log, const sockaddr_in6& addr) {
    return log << photon::net::EndPoint(photon::net::IPAddr(addr.sin6_addr), ntohs(addr.sin6_port));
}
