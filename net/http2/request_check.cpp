#include "request_check.h"

namespace photon {
namespace net {
namespace http2 {
namespace {

// The characters of a field name: lower-case tchar (RFC 9110 5.6.2), by byte.
struct token_table {
    bool ok[256] = {};
    token_table() {
        for (int c = 'a'; c <= 'z'; c++) ok[c] = true;
        for (int c = '0'; c <= '9'; c++) ok[c] = true;
        for (char c : std::string_view("!#$%&'*+-.^_`|~")) ok[(uint8_t)c] = true;
    }
};
const token_table kToken;

bool token_char(char c) { return kToken.ok[(uint8_t)c]; }

bool valid_name(std::string_view n) {
    if (n.empty()) return false;
    for (char c : n)
        if (!token_char(c)) return false;  // upper case included
    return true;
}

bool valid_value(std::string_view v) {
    for (char c : v)
        if (c == '\0' || c == '\r' || c == '\n') return false;
    auto ws = [](char c) { return c == ' ' || c == '\t'; };
    return v.empty() || (!ws(v.front()) && !ws(v.back()));
}

bool parse_length(std::string_view v, int64_t* out) {
    if (v.empty() || v.size() > 18) return false;
    int64_t n = 0;
    for (char c : v) {
        if (c < '0' || c > '9') return false;
        n = n * 10 + (c - '0');
    }
    *out = n;
    return true;
}

}  // namespace

bool connection_specific(std::string_view name) {
    switch (name.size()) {  // (one compare per field, not five)
        case 7:
            return name == "upgrade";
        case 10:
            return name == "connection" || name == "keep-alive";
        case 16:
            return name == "proxy-connection";
        case 17:
            return name == "transfer-encoding";
        default:
            return false;
    }
}

bool valid_request(const std::vector<header_field>& fields, int64_t* content_length) {
    enum { kMethod = 1, kScheme = 2, kAuthority = 4, kPath = 8 };
    int seen = 0;
    bool regular = false, connect = false;
    *content_length = -1;
    for (auto& f : fields) {
        if (!valid_value(f.value)) return false;
        std::string_view name = f.name;
        if (!name.empty() && name[0] == ':') {
            int bit = name == ":method"      ? kMethod
                      : name == ":scheme"    ? kScheme
                      : name == ":authority" ? kAuthority
                      : name == ":path"      ? kPath
                                             : 0;
            if (!bit || (seen & bit) || regular) return false;  // unknown, twice, or late
            seen |= bit;
            if (bit == kMethod) connect = f.value == "CONNECT";
            if (bit == kPath && f.value.empty()) return false;
            continue;
        }
        regular = true;
        if (!valid_name(name) || connection_specific(name)) return false;
        if (name == "te" && f.value != "trailers") return false;
        if (name == "content-length") {
            int64_t n;
            if (!parse_length(f.value, &n)) return false;
            if (*content_length >= 0 && *content_length != n) return false;
            *content_length = n;
        }
    }
    if (!(seen & kMethod)) return false;
    if (connect) return (seen & kAuthority) && !(seen & (kScheme | kPath));
    return (seen & kScheme) && (seen & kPath);
}

bool valid_trailers(const std::vector<header_field>& fields) {
    for (auto& f : fields)
        if (!valid_name(f.name) || connection_specific(f.name) || !valid_value(f.value))
            return false;  // (':' is not a token character: no pseudo-fields)
    return true;
}

}  // namespace http2
}  // namespace net
}  // namespace photon
