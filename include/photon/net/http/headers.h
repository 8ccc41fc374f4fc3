// Headers: an HTTP field section. Names compare case-insensitively, order
// and duplicates are kept, and size is bounded (count and bytes) so a peer
// cannot grow it without limit. Plain value type: any vCPU, never yields.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace photon {
namespace net {
namespace http {

// RFC 9110 5.6.2 tchar; field names and methods are 1*tchar.
bool is_token(std::string_view s);
// RFC 9110 5.5: VCHAR / obs-text / SP / HTAB inside, no leading or
// trailing whitespace. Rejects CR, LF, NUL and other controls.
bool is_field_value(std::string_view s);

class Headers {
public:
    using Field = std::pair<std::string, std::string>;
    using const_iterator = std::vector<Field>::const_iterator;

    // A set holds at most max_count fields and max_bytes of
    // "name: value\r\n" text.
    explicit Headers(uint16_t max_count = 100, size_t max_bytes = 64 * 1024)
        : max_count_(max_count), max_bytes_(max_bytes) {}

    // Appends a field. -1 with errno: EINVAL (name not a token, or value not
    // a field value: no CR/LF smuggled into a head), EEXIST (present and
    // allow_dup == 0), ENOBUFS (over the count or byte limit).
    int insert(std::string_view name, std::string_view value, int allow_dup = 0);
    // Appends a field whose name and value the caller has already validated
    // (the parser) or made itself (the library's own headers): no checks
    // but the limits (-1 ENOBUFS). Duplicates are kept.
    int append_valid(std::string_view name, std::string_view value);
    // Replaces every field of this name by one (insert if absent); as insert.
    int set(std::string_view name, std::string_view value);
    // Removes every field of this name; how many were removed.
    size_t erase(std::string_view name);
    // Empties the set. The fields' strings keep their storage for the next
    // message on the connection: steady state allocates nothing.
    void clear() {
        n_ = 0;
        bytes_ = 0;
    }

    // The first value of `name`, "" if absent.
    std::string_view operator[](std::string_view name) const { return get(name); }
    std::string_view get(std::string_view name) const;
    bool has(std::string_view name) const { return find(name) != end(); }
    size_t count(std::string_view name) const;
    const_iterator find(std::string_view name) const;
    // Every value of `name`, in order.
    std::vector<std::string_view> get_all(std::string_view name) const;

    // Content-Length as a number: 0 if absent or not all digits.
    uint64_t content_length() const;
    // Sets Content-Length; 0 or -1 as insert.
    int content_length(uint64_t len);

    const_iterator begin() const { return fields_.begin(); }
    const_iterator end() const { return fields_.begin() + n_; }
    size_t size() const { return n_; }
    bool empty() const { return n_ == 0; }
    size_t bytes() const { return bytes_; }  // of "name: value\r\n" text

    // Appends "name: value\r\n" for each field.
    void serialize(std::string* out) const;

private:
    Field& fill_next(std::string_view name, std::string_view value);

    std::vector<Field> fields_;  // [0, n_) are the fields; the rest keep storage
    size_t n_ = 0;
    uint16_t max_count_;
    size_t max_bytes_;
    size_t bytes_ = 0;
};

bool iequals(std::string_view a, std::string_view b);
// Whether the comma-separated list `list` holds `token` (case-insensitive,
// OWS trimmed), e.g. Connection: "keep-alive, Upgrade" holds "upgrade".
bool list_has_token(std::string_view list, std::string_view token);

}  // namespace http
}  // namespace net
}  // namespace photon
