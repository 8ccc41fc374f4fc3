// Headers: ordered, case-insensitive, bounded field storage.
#include <strings.h>

#include <cerrno>
#include <cstring>
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
    if (n_ >= max_count_ || bytes_ + add > max_bytes_) {
        errno = ENOBUFS;
        return -1;
    }
    fill_next(name, value);
    bytes_ += add;
    return 0;
}

// Fills the next slot, reusing a previous message's strings when there is one.
Headers::Field& Headers::fill_next(std::string_view name, std::string_view value) {
    if (n_ == fields_.size()) fields_.emplace_back();
    Field& f = fields_[n_++];
    f.first.assign(name.data(), name.size());
    f.second.assign(value.data(), value.size());
    return f;
}

int Headers::set(std::string_view name, std::string_view value) {
    if (!is_token(name) || !is_field_value(value)) {
        errno = EINVAL;
        return -1;
    }
    erase(name);
    return append_valid(name, value);
}

size_t Headers::erase(std::string_view name) {
    // Kept fields move forward in order; erased ones go past n_ with their
    // storage (swap, not move).
    size_t w = 0;
    for (size_t r = 0; r < n_; r++) {
        Field& f = fields_[r];
        if (iequals(f.first, name)) {
            bytes_ -= f.first.size() + f.second.size() + 4;
            continue;
        }
        if (w != r) std::swap(fields_[w], f);
        w++;
    }
    size_t erased = n_ - w;
    n_ = w;
    return erased;
}

Headers::const_iterator Headers::find(std::string_view name) const {
    for (auto it = begin(); it != end(); ++it)
        if (iequals(it->first, name)) return it;
    return end();
}

std::string_view Headers::get(std::string_view name) const {
    auto it = find(name);
    return it == end() ? std::string_view() : std::string_view(it->second);
}

size_t Headers::count(std::string_view name) const {
    size_t n = 0;
    for (auto& f : *this) n += iequals(f.first, name);
    return n;
}

std::vector<std::string_view> Headers::get_all(std::string_view name) const {
    std::vector<std::string_view> v;
    for (auto& f : *this)
        if (iequals(f.first, name)) v.emplace_back(f.second);
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

void Headers::serialize(std::string* out) const {
    for (auto& f : *this) out->append(f.first).append(": ").append(f.second).append("\r\n");
}

}  // namespace http
}  // namespace net
}  // namespace photon
