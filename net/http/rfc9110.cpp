#include "rfc9110.h"

#include <algorithm>

#include <photon/net/http/headers.h>

#include "hex.h"
#include "http_date.h"

namespace photon {
namespace net {
namespace http {

std::string_view trim_ows(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

int decode_path(std::string_view remain, char* out, size_t cap, size_t* len, bool* dir) {
    remain = remain.substr(0, remain.find('?'));
    // out holds "/" and complete segments each followed by '/'; seg is
    // where the segment being decoded starts.
    size_t n = 1, seg = 1;
    out[0] = '/';
    *dir = true;
    for (size_t i = 0; i <= remain.size(); i++) {
        char c = i < remain.size() ? remain[i] : '/';  // a final '/' ends the last segment
        if (c == '%') {
            int hi = i + 2 < remain.size() ? hexval(remain[i + 1]) : -1;
            int lo = hi >= 0 ? hexval(remain[i + 2]) : -1;
            if (lo < 0) return 400;
            c = (char)(hi * 16 + lo);
            i += 2;
        }
        if (c == '\0') return 400;
        if (n + 1 >= cap) return 404;
        if (c != '/') {
            out[n++] = c;
            *dir = false;
            continue;
        }
        std::string_view s(out + seg, n - seg);
        if (s.empty() || s == ".") {
            n = seg;
            *dir = true;
        } else if (s == "..") {
            if (seg == 1) return 400;  // above the root
            n = seg - 1;               // the '/' ending the previous segment
            while (out[n - 1] != '/') n--;
            seg = n;
            *dir = true;
        } else {
            out[n++] = '/';
            seg = n;
        }
    }
    if (n > 1) n--;  // "/a/b/" -> "/a/b"
    out[n] = '\0';
    *len = n;
    return 0;
}

bool etag_list_matches(std::string_view list, std::string_view etag) {
    size_t i = 0;
    while (i < list.size()) {
        char c = list[i];
        if (c == ' ' || c == '\t' || c == ',') {
            i++;
            continue;
        }
        if (c == '*') return true;
        if (list.compare(i, 2, "W/") == 0) i += 2;
        if (i >= list.size() || list[i] != '"') return false;  // malformed: no match
        size_t end = list.find('"', i + 1);
        if (end == list.npos) return false;
        if (list.substr(i, end + 1 - i) == etag) return true;
        i = end + 1;
    }
    return false;
}

bool parse_u64(std::string_view s, uint64_t* v) {
    if (s.empty()) return false;
    uint64_t r = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return false;
        r = r > (UINT64_MAX - 9) / 10 ? UINT64_MAX : r * 10 + (uint64_t)(c - '0');
    }
    *v = r;
    return true;
}

range_result parse_range(std::string_view v, uint64_t size, uint64_t* first, uint64_t* last) {
    v = trim_ows(v);
    if (v.size() < 6 || !iequals(v.substr(0, 6), "bytes=")) return range_result::ignore;
    v = v.substr(6);
    std::string_view spec;
    while (!v.empty()) {  // the list: exactly one non-empty element
        size_t comma = v.find(',');
        std::string_view e = trim_ows(v.substr(0, comma));
        v = comma == v.npos ? std::string_view() : v.substr(comma + 1);
        if (e.empty()) continue;
        if (!spec.empty()) return range_result::ignore;
        spec = e;
    }
    size_t dash = spec.find('-');
    if (dash == spec.npos) return range_result::ignore;
    uint64_t a, b;
    if (dash == 0) {  // suffix: the last b bytes
        if (!parse_u64(spec.substr(1), &b)) return range_result::ignore;
        if (b == 0 || size == 0) return range_result::unsatisfiable;
        *first = size - std::min(b, size);
        *last = size - 1;
        return range_result::partial;
    }
    if (!parse_u64(spec.substr(0, dash), &a)) return range_result::ignore;
    if (dash + 1 == spec.size()) {
        b = UINT64_MAX;
    } else if (!parse_u64(spec.substr(dash + 1), &b) || b < a) {
        return range_result::ignore;
    }
    if (a >= size) return range_result::unsatisfiable;
    *first = a;
    *last = std::min(b, size - 1);
    return range_result::partial;
}

bool if_range_holds(std::string_view v, std::string_view etag, time_t mtime) {
    v = trim_ows(v);
    if (!v.empty() && v[0] == '"') return v == etag;
    if (v.size() >= 2 && v[0] == 'W' && v[1] == '/') return false;
    time_t t;
    return parse_http_date(v, &t) && t == mtime;
}

}  // namespace http
}  // namespace net
}  // namespace photon
