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

// userinfo: unreserved / pct-encoded / sub-delims / ":".
bool valid_userinfo(std::string_view u) {
    for (unsigned char c : u)
        if (!is_unreserved(c) && !strchr("!$&'()*+,;=%:", c)) return false;
    return true;
}

}  // namespace

bool URL::fail() {
    *this = URL();
    errno = EINVAL;
    return false;
}

// auth: [userinfo "@"] host [":" port], at url_[authority_begin_]. Sets the
// userinfo, host and port offsets.
bool URL::parse_authority(std::string_view auth) {
    size_t at = auth.find('@');
    if (at != auth.npos) {
        std::string_view ui = auth.substr(0, at);
        if (!valid_userinfo(ui)) return false;
        userinfo_begin_ = authority_begin_;
        userinfo_end_ = authority_begin_ + at;
        size_t colon = ui.find(':');
        user_end_ = colon == ui.npos ? userinfo_end_ : userinfo_begin_ + colon;
        authority_begin_ += at + 1;
        auth.remove_prefix(at + 1);
    }
    if (auth.empty()) return false;
    size_t port_colon;
    if (auth[0] == '[') {
        size_t close = auth.find(']');
        if (close == auth.npos || close < 2 || close > 2 + 45) return false;
        char buf[64];
        memcpy(buf, auth.data() + 1, close - 1);
        buf[close - 1] = 0;
        in6_addr a;
        if (inet_pton(AF_INET6, buf, &a) != 1) return false;
        host_begin_ = authority_begin_ + 1;
        host_end_ = authority_begin_ + close;
        bracketed_ = true;
        if (close + 1 < auth.size() && auth[close + 1] != ':') return false;
        port_colon = close + 1 < auth.size() ? close + 1 : auth.npos;
    } else {
        port_colon = auth.find(':');
        std::string_view h = auth.substr(0, port_colon);
        if (h.empty() || !valid_reg_name(h)) return false;
        host_begin_ = authority_begin_;
        host_end_ = authority_begin_ + h.size();
    }
    uint16_t dflt = secure_ ? 443 : 80;
    port_ = dflt;
    if (port_colon == auth.npos) return true;
    if (parse_port(auth.substr(port_colon + 1), &port_) < 0) return false;
    default_port_ = port_ == dflt;
    return true;
}

// Appends rest (path, query, fragment) to url_ at path_begin_, "/" for an
// empty path, and finds query and fragment.
bool URL::parse_path(std::string_view rest) {
    if (rest.empty() || rest[0] != '/') url_ += '/';
    url_.append(rest);
    fragment_begin_ = url_.find('#', path_begin_);
    has_fragment_ = fragment_begin_ != url_.npos;
    if (!has_fragment_) fragment_begin_ = url_.size();
    query_begin_ = url_.find('?', path_begin_);
    has_query_ = query_begin_ < fragment_begin_;
    if (!has_query_) query_begin_ = fragment_begin_;
    return true;
}

bool URL::from_string(std::string_view s) {
    *this = URL();
    if (s.empty() || !valid_chars(s)) return fail();
    port_ = 80;
    if (s[0] == '/' || s[0] == '?') {  // a relative reference: no scheme, no host
        url_.reserve(s.size() + 1);
        return parse_path(s);
    }
    size_t sep = s.find("://");
    if (sep != s.npos && sep < s.find_first_of("/?#")) {
        std::string_view scheme = s.substr(0, sep);
        if (scheme.size() == 4 && strncasecmp(scheme.data(), "http", 4) == 0) {
            url_ = "http://";
        } else if (scheme.size() == 5 && strncasecmp(scheme.data(), "https", 5) == 0) {
            url_ = "https://";
            secure_ = true;
        } else {
            return fail();
        }
        s.remove_prefix(sep + 3);
    } else {
        url_ = "http://";  // a bare host, as Photon: http
    }
    scheme_end_ = url_.size() - 3;
    authority_begin_ = url_.size();
    size_t auth_end = s.find_first_of("/?#");
    std::string_view auth = s.substr(0, auth_end);
    url_.append(auth);
    path_begin_ = url_.size();
    if (!parse_authority(auth)) return fail();
    s.remove_prefix(auth.size());
    return parse_path(s);
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
