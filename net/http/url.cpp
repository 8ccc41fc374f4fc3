// URL parsing and percent-encoding (RFC 3986 subset for http/https).
#include <arpa/inet.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <photon/net/http/url.h>

#include "hex.h"

namespace photon {
namespace net {
namespace http {

namespace {

bool is_unreserved(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~';
}

// Visible ASCII with every '%' starting a valid escape.
bool valid_chars(std::string_view s) {
    for (size_t i = 0; i < s.size(); i++) {
        unsigned char c = s[i];
        if (c <= 0x20 || c >= 0x7f) return false;
        if (c == '%' && (i + 2 >= s.size() || hexval(s[i + 1]) < 0 || hexval(s[i + 2]) < 0))
            return false;
    }
    return true;
}

// reg-name: unreserved / pct-encoded / sub-delims.
bool valid_reg_name(std::string_view h) {
    for (unsigned char c : h)
        if (!is_unreserved(c) && !strchr("!$&'()*+,;=%", c)) return false;
    return valid_chars(h);
}

int parse_port(std::string_view p, uint16_t* port) {
    if (p.empty() || p.size() > 5) return -1;
    uint32_t v = 0;
    for (char c : p) {
        if (c < '0' || c > '9') return -1;
        v = v * 10 + (c - '0');
    }
    if (v == 0 || v > 65535) return -1;
    *port = (uint16_t)v;
    return 0;
}

}  // namespace

int URL::parse_authority(std::string_view auth) {
    if (auth.empty() || auth.find('@') != auth.npos) return -1;  // no host / userinfo
    size_t port_colon;
    if (auth[0] == '[') {
        size_t close = auth.find(']');
        if (close == auth.npos || close < 2 || close > 2 + 45) return -1;
        char buf[64];
        memcpy(buf, auth.data() + 1, close - 1);
        buf[close - 1] = 0;
        in6_addr a;
        if (inet_pton(AF_INET6, buf, &a) != 1) return -1;
        host_begin_ = authority_begin_ + 1;
        host_end_ = authority_begin_ + close;
        if (close + 1 < auth.size() && auth[close + 1] != ':') return -1;
        port_colon = close + 1 < auth.size() ? close + 1 : auth.npos;
    } else {
        port_colon = auth.find(':');
        std::string_view h = auth.substr(0, port_colon);
        if (h.empty() || !valid_reg_name(h)) return -1;
        host_begin_ = authority_begin_;
        host_end_ = authority_begin_ + h.size();
    }
    port_ = secure() ? 443 : 80;
    if (port_colon == auth.npos) return 0;
    return parse_port(auth.substr(port_colon + 1), &port_);
}

int URL::from_string(std::string_view s) {
    url_.clear();
    size_t sep = s.find("://");
    std::string_view scheme = s.substr(0, sep);
    if (sep == s.npos || !valid_chars(s)) goto bad;
    if (scheme.size() == 4 && strncasecmp(scheme.data(), "http", 4) == 0) {
        url_ = "http://";
    } else if (scheme.size() == 5 && strncasecmp(scheme.data(), "https", 5) == 0) {
        url_ = "https://";
    } else {
        goto bad;
    }
    scheme_end_ = url_.size() - 3;
    authority_begin_ = url_.size();
    s.remove_prefix(sep + 3);
    {
        size_t auth_end = s.find_first_of("/?#");
        std::string_view auth = s.substr(0, auth_end);
        url_.append(auth);
        path_begin_ = url_.size();
        if (parse_authority(auth) < 0) goto bad;
        s.remove_prefix(auth.size());
    }
    if (s.empty() || s[0] != '/') url_ += '/';  // empty path is "/"
    url_.append(s);
    fragment_begin_ = url_.find('#', path_begin_);
    has_fragment_ = fragment_begin_ != url_.npos;
    if (!has_fragment_) fragment_begin_ = url_.size();
    query_begin_ = url_.find('?', path_begin_);
    has_query_ = query_begin_ < fragment_begin_;
    if (!has_query_) query_begin_ = fragment_begin_;
    return 0;
bad:
    url_.clear();
    scheme_end_ = authority_begin_ = host_begin_ = host_end_ = 0;
    path_begin_ = query_begin_ = fragment_begin_ = 0;
    has_query_ = has_fragment_ = false;
    port_ = 0;
    errno = EINVAL;
    return -1;
}

std::string url_escape(std::string_view s, bool escape_slash) {
    static const char hex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(s.size());
    for (unsigned char c : s) {
        if (is_unreserved(c) || (c == '/' && !escape_slash)) {
            out += (char)c;
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

int url_unescape(std::string_view s, std::string* out) {
    out->clear();
    out->reserve(s.size());
    for (size_t i = 0; i < s.size(); i++) {
        if (s[i] != '%') {
            *out += s[i];
            continue;
        }
        int h = i + 2 < s.size() ? hexval(s[i + 1]) : -1;
        int l = h >= 0 ? hexval(s[i + 2]) : -1;
        if (l < 0) {
            errno = EINVAL;
            return -1;
        }
        *out += (char)(h * 16 + l);
        i += 2;
    }
    return 0;
}

std::string url_unescape(std::string_view s) {
    std::string out;
    if (url_unescape(s, &out) < 0) out.clear();
    return out;
}

}  // namespace http
}  // namespace net
}  // namespace photon
