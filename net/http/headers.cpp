// Headers: ordered, case-insensitive, bounded field storage.
#include <strings.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <string>
#include <utility>

#include <photon/net/http/headers.h>

namespace photon {
namespace net {
namespace http {

namespace {
// RFC 9110 5.6.2 tchar, as a table: names are checked byte by byte on every
// received field.
struct tchar_table {
    bool t[256] = {};
    constexpr tchar_table() {
        for (int c = 'a'; c <= 'z'; c++) t[c] = true;
        for (int c = 'A'; c <= 'Z'; c++) t[c] = true;
        for (int c = '0'; c <= '9'; c++) t[c] = true;
        for (char c : "!#$%&'*+-.^_`|~") t[(unsigned char)c] = c != 0;
    }
};
constexpr tchar_table kTchar;
bool is_tchar(unsigned char c) { return kTchar.t[c]; }
bool is_ows(char c) { return c == ' ' || c == '\t'; }
}  // namespace

bool is_token(std::string_view s) {
    if (s.empty()) return false;
    for (unsigned char c : s)
        if (!is_tchar(c)) return false;
    return true;
}

bool is_field_value(std::string_view s) {
    if (!s.empty() && (is_ows(s.front()) || is_ows(s.back()))) return false;
    for (unsigned char c : s)
        if ((c < 0x20 && c != '\t') || c == 0x7f) return false;
    return true;
}

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

bool list_has_token(std::string_view list, std::string_view token) {
    while (!list.empty()) {
        size_t comma = list.find(',');
        std::string_view item = list.substr(0, comma);
        while (!item.empty() && is_ows(item.front())) item.remove_prefix(1);
        while (!item.empty() && is_ows(item.back())) item.remove_suffix(1);
        if (iequals(item, token)) return true;
        if (comma == list.npos) break;
        list.remove_prefix(comma + 1);
    }
    return false;
}

int Headers::insert(std::string_view name, std::string_view value, int allow_dup) {
    if (!is_token(name) || !is_field_value(value)) {
        errno = EINVAL;
        return -1;
    }
    if (!allow_dup && has(name)) {
        errno = EEXIST;
        return -1;
    }
    return append_valid(name, value);
}

int Headers::append_valid(std::string_view name, std::string_view value) {
    size_t add = name.size() + value.size() + 4;
    if (slots_.size() >= max_count_ || bytes_ + add > max_bytes_ ||
        buf_.size() + add > UINT32_MAX) {
        errno = ENOBUFS;
        return -1;
    }
    // The source may be one of our own fields (h.insert("B", h["A"])):
    // growing buf_ would free it before it is copied.
    if (aliases(name) || aliases(value)) {
        std::string n(name), v(value);
        return append_valid(n, v);
    }
    // Filled in place: a Slot built on the stack and copied stalls on
    // store forwarding (three 4-byte stores read back as 8-byte loads).
    Slot& s = slots_.emplace_back();
    s.off = (uint32_t)buf_.size();
    s.name_len = (uint32_t)name.size();
    s.value_len = (uint32_t)value.size();
    buf_.append(name).append(value);
    bytes_ += add;
    return 0;
}

int Headers::set(std::string_view name, std::string_view value) {
    if (!is_token(name) || !is_field_value(value)) {
        errno = EINVAL;
        return -1;
    }
    if (aliases(value)) {  // erase may reclaim the bytes it points at
        std::string keep(value);
        return set(name, keep);
    }
    erase(name);
    return append_valid(name, value);
}

bool Headers::name_is(size_t i, std::string_view name) const {
    const Slot& s = slots_[i];
    return s.name_len == name.size() &&
           strncasecmp(buf_.data() + s.off, name.data(), name.size()) == 0;
}

size_t Headers::erase(std::string_view name) {
    size_t w = 0, n = slots_.size();
    for (size_t r = 0; r < n; r++) {
        if (name_is(r, name)) {
            bytes_ -= slots_[r].name_len + slots_[r].value_len + 4;
            continue;
        }
        slots_[w++] = slots_[r];
    }
    slots_.resize(w);
    if (w != n) compact();
    return n - w;
}

// Reclaims erased fields' bytes once they outweigh the live ones, so a set
// that is changed again and again stays bounded. Moves every field.
void Headers::compact() {
    size_t live = bytes_ - 4 * slots_.size();  // bytes_ counts ": " and CRLF too
    if (buf_.size() - live <= std::max<size_t>(live, 256)) return;
    std::string fresh;
    fresh.reserve(buf_.capacity());
    for (auto& s : slots_) {
        uint32_t off = (uint32_t)fresh.size();
        fresh.append(buf_, s.off, s.name_len + s.value_len);
        s.off = off;
    }
    buf_.swap(fresh);
}

Headers::const_iterator Headers::find(std::string_view name) const {
    for (size_t i = 0, n = slots_.size(); i < n; i++)
        if (name_is(i, name)) return {this, i};
    return end();
}

std::string_view Headers::get(std::string_view name) const {
    auto it = find(name);
    return it == end() ? std::string_view() : it.second();
}

size_t Headers::count(std::string_view name) const {
    size_t n = 0;
    for (size_t i = 0; i < slots_.size(); i++) n += name_is(i, name);
    return n;
}

std::vector<std::string_view> Headers::get_all(std::string_view name) const {
    std::vector<std::string_view> v;
    for (size_t i = 0; i < slots_.size(); i++)
        if (name_is(i, name)) v.emplace_back(value_at(i));
    return v;
}

uint64_t Headers::content_length() const {
    std::string_view v = get("Content-Length");
    if (v.empty() || v.size() > 19) return 0;  // 19 digits cannot overflow
    uint64_t n = 0;
    for (char c : v) {
        if (c < '0' || c > '9') return 0;
        n = n * 10 + (c - '0');
    }
    return n;
}

int Headers::content_length(uint64_t len) {
    char digits[24];
    char* e = digits + sizeof(digits);
    char* b = e;
    do *--b = (char)('0' + len % 10);
    while (len /= 10);
    erase("Content-Length");
    return append_valid("Content-Length", {b, (size_t)(e - b)});
}

int Headers::reset(void* buf, uint16_t buf_capacity, uint16_t buf_size) {
    clear();
    max_bytes_ = buf_capacity;
    std::string_view text((const char*)buf, buf ? buf_size : 0);
    while (!text.empty() && text.substr(0, 2) != "\r\n") {
        size_t eol = text.find("\r\n");
        std::string_view line = text.substr(0, eol);
        size_t colon = line.find(':');
        if (colon == line.npos) goto bad;
        {
            std::string_view value = line.substr(colon + 1);
            while (!value.empty() && is_ows(value.front())) value.remove_prefix(1);
            while (!value.empty() && is_ows(value.back())) value.remove_suffix(1);
            if (insert(line.substr(0, colon), value, 1) < 0) goto fail;
        }
        text.remove_prefix(eol == text.npos ? text.size() : eol + 2);
    }
    return 0;
bad:
    errno = EINVAL;
fail:
    int e = errno;
    clear();
    errno = e;
    return -1;
}

bool Headers::value_append(std::string_view value) {
    if (slots_.empty()) {
        errno = ENOENT;
        return false;
    }
    size_t i = slots_.size() - 1;
    std::string merged(value_at(i));
    merged.append(value);
    if (!is_field_value(merged)) {
        errno = EINVAL;
        return false;
    }
    if (bytes_ + value.size() > max_bytes_ || buf_.size() + merged.size() > UINT32_MAX) {
        errno = ENOBUFS;
        return false;
    }
    Slot& s = slots_[i];
    if (s.off + s.name_len + s.value_len != buf_.size()) {  // not at the end: move it there
        std::string name(name_at(i));
        s.off = (uint32_t)buf_.size();
        buf_.append(name);
    } else {
        buf_.resize(buf_.size() - s.value_len);
    }
    buf_.append(merged);
    s.value_len = (uint32_t)merged.size();
    bytes_ += value.size();
    compact();
    return true;
}

namespace {
// All digits, at most 18 of them (no overflow); -1 otherwise.
ssize_t parse_offset(std::string_view s) {
    if (s.empty() || s.size() > 18) return -1;
    ssize_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return -1;
        v = v * 10 + (c - '0');
    }
    return v;
}
}  // namespace

std::pair<ssize_t, ssize_t> Headers::range() const {
    const std::pair<ssize_t, ssize_t> none{0, -1};
    std::string_view r = get("Range");
    if (r.substr(0, 6) != "bytes=") return none;
    r.remove_prefix(6);
    size_t dash = r.find('-');
    if (dash == r.npos) return none;
    std::string_view a = r.substr(0, dash), b = r.substr(dash + 1);
    ssize_t from = a.empty() ? -1 : parse_offset(a);
    ssize_t to = b.empty() ? -1 : parse_offset(b);
    if ((!a.empty() && from < 0) || (!b.empty() && to < 0) || (a.empty() && b.empty())) return none;
    if (from >= 0 && to >= 0 && to < from) return none;
    return {from, to};
}

int Headers::range(uint64_t from, uint64_t to) {
    char v[64];
    snprintf(v, sizeof(v), "bytes=%llu-%llu", (unsigned long long)from, (unsigned long long)to);
    return set("Range", v);
}

int Headers::content_range(size_t start, size_t end, ssize_t size) {
    char v[80];
    if (size < 0)
        snprintf(v, sizeof(v), "bytes %zu-%zu/*", start, end);
    else
        snprintf(v, sizeof(v), "bytes %zu-%zu/%zd", start, end, size);
    return set("Content-Range", v);
}

bool Headers::chunked() const {
    // The last coding of the last field decides (RFC 9112 6.3).
    std::string_view te;
    for (size_t i = 0; i < slots_.size(); i++)
        if (name_is(i, "Transfer-Encoding")) te = value_at(i);
    size_t comma = te.rfind(',');
    std::string_view last = comma == te.npos ? te : te.substr(comma + 1);
    while (!last.empty() && is_ows(last.front())) last.remove_prefix(1);
    return iequals(last, "chunked");
}

void Headers::serialize(std::string* out) const {
    size_t at = out->size();
    out->resize(at + bytes_);
    char* p = &(*out)[at];
    for (auto& s : slots_) {
        const char* f = buf_.data() + s.off;
        p = std::copy(f, f + s.name_len, p);
        *p++ = ':';
        *p++ = ' ';
        p = std::copy(f + s.name_len, f + s.name_len + s.value_len, p);
        *p++ = '\r';
        *p++ = '\n';
    }
}

}  // namespace http
}  // namespace net
}  // namespace photon
