// Headers: an HTTP field section. Names compare case-insensitively, order
// and duplicates are kept, and size is bounded (count and bytes) so a peer
// cannot grow it without limit. Plain value type: any vCPU, never yields.
//
// Differences from PhotonLibOS: doc/compat.md#nethttpheadersh
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <photon/common/callback.h>
#include <photon/common/estring.h>
#include <photon/common/stream.h>
#include <photon/net/http/verb.h>

namespace photon {
namespace net {
namespace http {

// RFC 9110 5.6.2 tchar; field names and methods are 1*tchar.
bool is_token(std::string_view s);
// RFC 9110 5.5: VCHAR / obs-text / SP / HTAB inside, no leading or
// trailing whitespace. Rejects CR, LF, NUL and other controls.
bool is_field_value(std::string_view s);

class Headers {
    // A field's place in buf_: name, then value, back to back.
    struct Slot {
        uint32_t off;
        uint32_t name_len;
        uint32_t value_len;
    };

public:
    // A field as iteration yields it (as Photon's): views into the set's
    // storage, valid until the set next changes.
    using Field = std::pair<std::string_view, std::string_view>;

    // Random access with a proxy reference (a Field by value), like
    // std::vector<bool>'s: write `for (auto f : h)`, not `auto&`.
    class const_iterator {
    public:
        using iterator_category = std::random_access_iterator_tag;
        using value_type = Field;
        using difference_type = std::ptrdiff_t;
        using pointer = void;
        using reference = Field;
        struct arrow {  // for it->first
            Field f;
            const Field* operator->() const { return &f; }
        };

        const_iterator() = default;
        Field operator*() const { return {first(), second()}; }
        arrow operator->() const { return {**this}; }
        std::string_view first() const { return h_->name_at(i_); }
        std::string_view second() const { return h_->value_at(i_); }
        // An iterator from equal_range() steps over fields of other names.
        const_iterator& operator++() {
            ++i_;
            if (key_.data()) i_ = h_->next_named(i_, key_);
            return *this;
        }
        const_iterator operator++(int) {
            auto old = *this;
            ++*this;
            return old;
        }
        const_iterator& operator--() { return --i_, *this; }
        const_iterator operator--(int) { return {h_, i_--}; }
        const_iterator& operator+=(difference_type d) { return i_ += d, *this; }
        const_iterator& operator-=(difference_type d) { return i_ -= d, *this; }
        const_iterator operator+(difference_type d) const { return {h_, i_ + d}; }
        const_iterator operator-(difference_type d) const { return {h_, i_ - d}; }
        Field operator[](difference_type d) const { return *(*this + d); }
        difference_type operator-(const const_iterator& r) const {
            return (difference_type)i_ - (difference_type)r.i_;
        }
        bool operator==(const const_iterator& r) const { return h_ == r.h_ && i_ == r.i_; }
        bool operator!=(const const_iterator& r) const { return !(*this == r); }
        bool operator<(const const_iterator& r) const { return i_ < r.i_; }
        bool operator>(const const_iterator& r) const { return r < *this; }
        bool operator<=(const const_iterator& r) const { return !(r < *this); }
        bool operator>=(const const_iterator& r) const { return !(*this < r); }

    private:
        friend class Headers;
        const_iterator(const Headers* h, size_t i, std::string_view key = {})
            : h_(h), i_(i), key_(key) {}
        const Headers* h_ = nullptr;
        size_t i_ = 0;
        std::string_view key_;  // equal_range's name; data() null otherwise
    };
    using iterator = const_iterator;  // Photon's name

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
    // Empties the set. Its storage stays for the next message on the
    // connection: steady state allocates nothing.
    void clear() {
        slots_.clear();
        buf_.clear();
        bytes_ = 0;
    }

    // -- PhotonLibOS's HeadersBase / Headers API ----------------------------
    void reset() { clear(); }
    // The set keeps its own storage, so buf is only read: buf_capacity
    // becomes the byte limit and, if buf_size is not 0, buf holds
    // "Name: value\r\n" lines (an empty line may end them) that become the
    // fields. 0, or -1 with errno (EINVAL: a malformed line, ENOBUFS), the
    // set then empty.
    int reset(void* buf, uint16_t buf_capacity, uint16_t buf_size = 0);
    std::string_view get_value(std::string_view name) const { return get(name); }
    // The value of the i-th field (in order of insertion); "" past the end.
    std::string_view operator[](size_t i) const {
        return i < slots_.size() ? value_at(i) : std::string_view();
    }
    // The fields named `name`: [first, end()), stepping over other names
    // with ++.
    std::pair<const_iterator, const_iterator> equal_range(std::string_view name) const {
        size_t i = next_named(0, name);
        return {i < slots_.size() ? const_iterator(this, i, name) : end(), end()};
    }
    // Inserts every field of h (as insert); -1 at the first failure.
    int merge(const Headers& h, int allow_dup = 0) {
        for (auto f : h)
            if (insert(f.first, f.second, allow_dup) < 0) return -1;
        return 0;
    }
    // Appends text to the value of the field inserted last; false with errno
    // (ENOENT: none, EINVAL: the result is no field value, ENOBUFS).
    bool value_append(std::string_view value);
    // insert(name, printf(fmt, xs...)); -1 ENOBUFS if the text needs more
    // than BufCap - 1 bytes.
    template <size_t BufCap = 64, typename... Ts>
    int insert_format(std::string_view name, const char* fmt, Ts... xs) {
        char buf[BufCap];
        int n = snprintf(buf, sizeof(buf), fmt, xs...);
        if (n < 0 || (size_t)n >= sizeof(buf)) {
            errno = ENOBUFS;
            return -1;
        }
        return insert(name, {buf, (size_t)n});
    }
    // Bytes of "name: value\r\n" text (Photon's size(): its buffer's use).
    size_t size() const { return bytes_; }
    // Photon's kv_size(): the bytes its field index took, 8 per field.
    size_t kv_size() const { return slots_.size() * 8; }
    size_t space_remain() const { return max_bytes_ > bytes_ ? max_bytes_ - bytes_ : 0; }
    // Sets Host; delta is ignored (there is no buffer to move).
    int reset_host(int /*delta*/, std::string_view host) { return set("Host", host); }
    // "Range: bytes=a-b" as {a, b}: {a, -1} for "a-", {-1, n} for the
    // suffix "-n", {0, -1} if absent or not one such range.
    std::pair<ssize_t, ssize_t> range() const;
    // Sets "Range: bytes=from-to"; 0 or -1 as insert.
    int range(uint64_t from, uint64_t to);
    // Sets "Content-Range: bytes start-end/size" ("/*" for size -1).
    int content_range(size_t start, size_t end, ssize_t size = -1);
    // The message body is chunked (Transfer-Encoding ends with chunked).
    bool chunked() const;

    // The first value of `name`, "" if absent. Views stay valid until the
    // set next changes.
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

    const_iterator begin() const { return {this, 0}; }
    const_iterator end() const { return {this, slots_.size()}; }
    size_t field_count() const { return slots_.size(); }
    bool empty() const { return slots_.empty(); }
    size_t bytes() const { return bytes_; }  // of "name: value\r\n" text, as size()

    // Appends "name: value\r\n" for each field.
    void serialize(std::string* out) const;

private:
    std::string_view name_at(size_t i) const {
        const Slot& s = slots_[i];
        return {buf_.data() + s.off, s.name_len};
    }
    std::string_view value_at(size_t i) const {
        const Slot& s = slots_[i];
        return {buf_.data() + s.off + s.name_len, s.value_len};
    }
    bool name_is(size_t i, std::string_view name) const;
    // The first field at or after i named `name`; size() if none.
    size_t next_named(size_t i, std::string_view name) const {
        while (i < slots_.size() && !name_is(i, name)) i++;
        return i;
    }
    bool aliases(std::string_view s) const {  // points into buf_
        const char* b = buf_.data();
        return std::less_equal<>()(b, s.data()) && std::less<>()(s.data(), b + buf_.size());
    }
    void compact();

    // Names and values of the fields in one buffer (a lookup walks one
    // allocation, not two per field); erased fields' bytes stay until
    // compact() reclaims them.
    std::string buf_;
    std::vector<Slot> slots_;
    uint16_t max_count_;
    size_t max_bytes_;
    size_t bytes_ = 0;
};

// Photon's base class: the same class.
using HeadersBase = Headers;

// Photon's headers with a fixed budget: BUF_CAPACITY bytes of fields.
template <uint16_t BUF_CAPACITY = 64 * 1024 - 1>
class CommonHeaders : public Headers {
public:
    CommonHeaders() : Headers(UINT16_MAX, BUF_CAPACITY) {}
};

// Photon's helpers writing into a raw buffer the caller sized: the decimal
// digits of x / the bytes of sv at ptr, which moves past them.
inline void buf_append(char*& ptr, uint64_t x) {
    char digits[20];
    int n = 0;
    do digits[n++] = (char)('0' + x % 10);
    while (x /= 10);
    while (n) *ptr++ = digits[--n];
}
inline void buf_append(char*& ptr, std::string_view sv) {
    if (!sv.empty()) memcpy(ptr, sv.data(), sv.size());
    ptr += sv.size();
}

bool iequals(std::string_view a, std::string_view b);
// Whether the comma-separated list `list` holds `token` (case-insensitive,
// OWS trimmed), e.g. Connection: "keep-alive, Upgrade" holds "upgrade".
bool list_has_token(std::string_view list, std::string_view token);

}  // namespace http
}  // namespace net
}  // namespace photon
