// Headers: ordered, case-insensitive, bounded field storage.
#include <strings.h>

#include <cerrno>
#include <cstring>

#include <photon/net/http/headers.h>

namespace photon {
namespace net {
namespace http {

namespace {
bool is_tchar(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}
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
    size_t add = name.size() + value.size() + 4;
    if (fields_.size() >= max_count_ || bytes_ + add > max_bytes_) {
        errno = ENOBUFS;
        return -1;
    }
    fields_.emplace_back(std::string(name), std::string(value));
    bytes_ += add;
    return 0;
}

int Headers::set(std::string_view name, std::string_view value) {
    if (!is_token(name) || !is_field_value(value)) {
        errno = EINVAL;
        return -1;
    }
    erase(name);
    return insert(name, value);
}

size_t Headers::erase(std::string_view name) {
    size_t n = 0;
    for (auto it = fields_.begin(); it != fields_.end();) {
        if (iequals(it->first, name)) {
            bytes_ -= it->first.size() + it->second.size() + 4;
            it = fields_.erase(it);
            n++;
        } else {
            ++it;
        }
    }
    return n;
}

Headers::const_iterator Headers::find(std::string_view name) const {
    for (auto it = fields_.begin(); it != fields_.end(); ++it)
        if (iequals(it->first, name)) return it;
    return fields_.end();
}

std::string_view Headers::get(std::string_view name) const {
    auto it = find(name);
    return it == end() ? std::string_view() : std::string_view(it->second);
}

size_t Headers::count(std::string_view name) const {
    size_t n = 0;
    for (auto& f : fields_) n += iequals(f.first, name);
    return n;
}

std::vector<std::string_view> Headers::get_all(std::string_view name) const {
    std::vector<std::string_view> v;
    for (auto& f : fields_)
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

int Headers::content_length(uint64_t len) { return set("Content-Length", std::to_string(len)); }

void Headers::serialize(std::string* out) const {
    for (auto& f : fields_) {
        out->append(f.first).append(": ").append(f.second).append("\r\n");
    }
}

}  // namespace http
}  // namespace net
}  // namespace photon
