#include "hpack.h"

#include <algorithm>
#include <cstring>

#include <photon/common/estring.h>

#include "huffman.h"
#include "request_check.h"

namespace photon {
namespace net {
namespace http2 {
namespace {

// Appendix A: indices 1 to 61.
struct static_entry {
    std::string_view name, value;
};
constexpr static_entry kStatic[] = {
    {":authority", ""},
    {":method", "GET"},
    {":method", "POST"},
    {":path", "/"},
    {":path", "/index.html"},
    {":scheme", "http"},
    {":scheme", "https"},
    {":status", "200"},
    {":status", "204"},
    {":status", "206"},
    {":status", "304"},
    {":status", "400"},
    {":status", "404"},
    {":status", "500"},
    {"accept-charset", ""},
    {"accept-encoding", "gzip, deflate"},
    {"accept-language", ""},
    {"accept-ranges", ""},
    {"accept", ""},
    {"access-control-allow-origin", ""},
    {"age", ""},
    {"allow", ""},
    {"authorization", ""},
    {"cache-control", ""},
    {"content-disposition", ""},
    {"content-encoding", ""},
    {"content-language", ""},
    {"content-length", ""},
    {"content-location", ""},
    {"content-range", ""},
    {"content-type", ""},
    {"cookie", ""},
    {"date", ""},
    {"etag", ""},
    {"expect", ""},
    {"expires", ""},
    {"from", ""},
    {"host", ""},
    {"if-match", ""},
    {"if-modified-since", ""},
    {"if-none-match", ""},
    {"if-range", ""},
    {"if-unmodified-since", ""},
    {"last-modified", ""},
    {"link", ""},
    {"location", ""},
    {"max-forwards", ""},
    {"proxy-authenticate", ""},
    {"proxy-authorization", ""},
    {"range", ""},
    {"referer", ""},
    {"refresh", ""},
    {"retry-after", ""},
    {"server", ""},
    {"set-cookie", ""},
    {"strict-transport-security", ""},
    {"transfer-encoding", ""},
    {"user-agent", ""},
    {"vary", ""},
    {"via", ""},
    {"www-authenticate", ""},
};
constexpr size_t kStaticCount = sizeof(kStatic) / sizeof(kStatic[0]);
static_assert(kStaticCount == 61, "RFC 7541 Appendix A has 61 entries");

// Hashes of a name and of a name and value, for the encoder's lookups (one
// hash of the bytes per field sent, no key built). Header strings are short:
// a word at a time costs a fraction of std::hash's per field.
uint64_t mix(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

uint64_t load(const char* p, size_t n) {
    uint64_t w = 0;
    memcpy(&w, p, n);
    return w;
}

// The tail is read as overlapping loads rather than byte by byte.
uint64_t name_hash(std::string_view name) {
    const char* p = name.data();
    size_t n = name.size();
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;
    if (n > 8) {
        for (; n > 8; p += 8, n -= 8) {
            h = (h ^ load(p, 8)) * 0xc4ceb9fe1a85ec53ull;
            h ^= h >> 29;
        }
        w = load(p + n - 8, 8);
    } else if (n >= 4) {
        w = load(p, 4) | load(p + n - 4, 4) << 32;
    } else {
        w = n ? (uint64_t)(uint8_t)p[0] | (uint64_t)(uint8_t)p[n / 2] << 8 |
                    (uint64_t)(uint8_t)p[n - 1] << 16
              : 0;
    }
    return mix(h ^ w);
}

uint64_t field_hash(uint64_t name_h, std::string_view value) {
    return mix(name_h * 31 + name_hash(value));
}

// Fields whose values differ from message to message: indexing them would
// only churn the table.
bool changes_per_message(std::string_view name) {
    static const std::string_view kNames[] = {
        ":path",
        "content-length",
        "content-range",
        "etag",
        "if-none-match",
        "if-modified-since",
        "if-unmodified-since",
        "last-modified",
        "age",
        "if-range",
        "range",
    };
    for (auto n : kNames)
        if (n == name) return true;
    return false;
}

// The static table's indices by name and value and by name (the first), by
// hash, in open-addressed tables; lookups compare the entry. Every name that
// is sensitive or changes per message is in the static table, so the name's
// lookup also says which it is.
class static_table_index {
public:
    enum : uint8_t { kPerMessage = 1, kCredential = 2, kCookie = 4 };
    struct static_name {
        size_t index = 0;  // 1-based; 0: not a static name
        uint8_t kind = 0;
    };

    static_table_index() {
        for (size_t i = 0; i < kStaticCount; i++) {
            auto& e = kStatic[i];
            uint64_t h = name_hash(e.name);
            put(by_field_, field_hash(h, e.value), i + 1);
            if (find(by_name_, h, e.name)) continue;
            put(by_name_, h, i + 1);
            kind_[i + 1] =
                (changes_per_message(e.name) ? kPerMessage : 0) |
                (e.name == "authorization" || e.name == "proxy-authorization" ? kCredential : 0) |
                (e.name == "cookie" ? kCookie : 0);
        }
    }
    size_t field(uint64_t h, std::string_view name, std::string_view value) const {
        size_t i = find(by_field_, h, name);
        return i && kStatic[i - 1].value == value ? i : 0;
    }
    static_name name(uint64_t h, std::string_view name) const {
        static_name n;
        n.index = find(by_name_, h, name);
        n.kind = kind_[n.index];
        return n;
    }

private:
    static constexpr size_t kSlots = 256;  // a power of 2, well over 2 x 61
    struct Slot {
        uint64_t h;
        uint8_t index;  // 0: empty
    };
    static void put(Slot* t, uint64_t h, size_t index) {
        size_t i = h & (kSlots - 1);
        while (t[i].index) i = (i + 1) & (kSlots - 1);
        t[i] = {h, (uint8_t)index};
    }
    // The first entry of that hash whose name matches; 0: none.
    static size_t find(const Slot* t, uint64_t h, std::string_view name) {
        for (size_t i = h & (kSlots - 1); t[i].index; i = (i + 1) & (kSlots - 1))
            if (t[i].h == h && kStatic[t[i].index - 1].name == name) return t[i].index;
        return 0;
    }

    Slot by_field_[kSlots] = {};
    Slot by_name_[kSlots] = {};
    uint8_t kind_[kStaticCount + 1] = {};
};

const static_table_index& static_index() {
    static const static_table_index s;
    return s;
}

// RFC 7541 5.1. Values past 2^32 are refused: no length or index is that big.
bool read_int(const uint8_t*& p, const uint8_t* end, int prefix, uint64_t* v) {
    if (p == end) return false;
    uint64_t max = (1u << prefix) - 1;
    uint64_t x = *p++ & max;
    if (x < max) return *v = x, true;
    for (int shift = 0; p < end && shift <= 28; shift += 7) {
        uint8_t b = *p++;
        x += uint64_t(b & 0x7f) << shift;
        if (!(b & 0x80)) return *v = x, x <= UINT32_MAX;
    }
    return false;  // truncated, or too long
}

void write_int(uint64_t v, int prefix, uint8_t first, std::string* out) {
    uint64_t max = (1u << prefix) - 1;
    if (v < max) return out->push_back((char)(first | v));
    out->push_back((char)(first | max));
    for (v -= max; v >= 0x80; v >>= 7) out->push_back((char)(0x80 | (v & 0x7f)));
    out->push_back((char)v);
}

// 5.2: a string literal into *s.
bool read_string(const uint8_t*& p, const uint8_t* end, std::string* s) {
    if (p == end) return false;
    bool huffman = *p & 0x80;
    uint64_t n;
    if (!read_int(p, end, 7, &n) || n > (uint64_t)(end - p)) return false;
    s->clear();
    if (huffman) {
        if (!huffman_decode(p, n, s)) return false;
    } else {
        s->assign((const char*)p, n);
    }
    p += n;
    return true;
}

}  // namespace

// ---- the dynamic table ------------------------------------------------------

void dynamic_table::evict_to(size_t n) {
    while (size_ > n && !entries_.empty()) {
        auto& e = entries_.back();
        size_ -= entry_size(e.name, e.value);
        entries_.pop_back();
    }
}

void dynamic_table::set_max_size(size_t n) {
    max_size_ = n;
    evict_to(n);
}

void dynamic_table::add(std::string_view name, std::string_view value) {
    size_t sz = entry_size(name, value);
    added_++;
    if (sz > max_size_) return evict_to(0);
    evict_to(max_size_ - sz);
    entries_.push_front(header_field{std::string(name), std::string(value)});
    size_ += sz;
}

// ---- decoding ---------------------------------------------------------------

void hpack_decoder::set_max_table_size(size_t n) {
    if (n < table_.max_size()) update_required_ = true;
    limit_ = n;
}

bool hpack_decoder::lookup(uint64_t index, std::string_view* name, std::string_view* value) const {
    if (index == 0) return false;
    if (index <= kStaticCount) {
        *name = kStatic[index - 1].name;
        *value = kStatic[index - 1].value;
        return true;
    }
    index -= kStaticCount + 1;
    if (index >= table_.count()) return false;
    *name = table_.at(index).name;
    *value = table_.at(index).value;
    return true;
}

int hpack_decoder::decode(const uint8_t* p, size_t n, field_sink sink, void* ctx) {
    const uint8_t* end = p + n;
    bool first = true;  // no field yet: table size updates may come
    size_t list = 0;
    bool too_large = false;
    auto deliver = [&](std::string_view name, std::string_view value, bool never) {
        list += dynamic_table::entry_size(name, value);
        if (list > max_list_) too_large = true;
        if (!too_large) sink(ctx, name, value, never);
    };
    while (p < end) {
        uint8_t b = *p;
        uint64_t v;
        if (b & 0x80) {  // 6.1 indexed field
            std::string_view name, value;
            if (!read_int(p, end, 7, &v)) return fail("bad index");
            if (!lookup(v, &name, &value)) return fail("index out of range");
            if (update_required_) return fail("table size update missing");
            deliver(name, value, false);
        } else if ((b & 0xe0) == 0x20) {  // 6.3 dynamic table size update
            if (!first) return fail("table size update after a field");
            if (!read_int(p, end, 5, &v)) return fail("bad table size");
            if (v > limit_) return fail("table size above the limit announced");
            table_.set_max_size(v);
            update_required_ = false;
            continue;
        } else {  // 6.2 literals: with indexing (01), without (0000), never (0001)
            bool indexing = (b & 0xc0) == 0x40;
            bool never = (b & 0xf0) == 0x10;
            if (!read_int(p, end, indexing ? 6 : 4, &v)) return fail("bad name index");
            if (update_required_) return fail("table size update missing");
            std::string_view name, unused;
            if (v) {
                if (!lookup(v, &name, &unused)) return fail("name index out of range");
                name_.assign(name);  // (adding to the table may evict the entry)
            } else if (!read_string(p, end, &name_)) {
                return fail("bad name string");
            }
            if (!read_string(p, end, &value_)) return fail("bad value string");
            deliver(name_, value_, never);
            if (indexing) table_.add(name_, value_);
        }
        first = false;
    }
    if (update_required_) return fail("table size update missing");
    if (too_large) {
        error_ = "header list too large";
        return kListTooLarge;
    }
    return kOk;
}

int hpack_decoder::decode(const uint8_t* p, size_t n, std::vector<header_field>* out) {
    if (out->capacity() == 0) out->reserve(16);  // a request's fields, without regrowth
    return decode(
        p, n,
        [](void* ctx, std::string_view name, std::string_view value, bool never) {
            ((std::vector<header_field>*)ctx)
                ->push_back(header_field{std::string(name), std::string(value), never});
        },
        out);
}

// ---- encoding ---------------------------------------------------------------

void hpack_encoder::set_peer_max_table_size(size_t n) {
    size_t size = std::min(n, cap_);
    if (size == table_.max_size() && !pending_) return;
    min_pending_ = pending_ ? std::min(min_pending_, size) : size;
    pending_ = true;
    table_.set_max_size(size);  // the peer applies it with the block's update
    epoch_++;
    prune();
}

void hpack_encoder::begin_block(std::string* out) {
    next_ = 0;
    if (!pending_) return;
    // 4.2: the smallest size reached since the last block, then the last.
    if (min_pending_ < table_.max_size()) write_int(min_pending_, 5, 0x20, out);
    write_int(table_.max_size(), 5, 0x20, out);
    pending_ = false;
}

void hpack_encoder::encode(const std::vector<header_field>& fields, std::string* out) {
    begin_block(out);
    for (auto& f : fields) add(f.name, f.value, out, f.never_index);
}

void hpack_encoder::write_string(std::string_view s, std::string* out) {
    // Huffman unless it is longer (as the RFC's examples do when it ties).
    size_t h = huffman_ && !s.empty() ? huffman_encoded_size(s) : SIZE_MAX;
    if (h <= s.size()) {
        write_int(h, 7, 0x80, out);
        huffman_encode(s, out);
    } else {
        write_int(s.size(), 7, 0, out);
        out->append(s);
    }
}

size_t hpack_encoder::find(std::string_view name, uint64_t h, std::string_view value) {
    auto d = by_field_.find(h);
    if (d == by_field_.end()) return 0;
    uint64_t newest = table_.added() - 1;
    if (newest - d->second < table_.count()) {
        auto& e = table_.at(newest - d->second);
        if (e.name == name && e.value == value) return kStaticCount + 1 + (newest - d->second);
        return 0;
    }
    by_field_.erase(d);  // evicted
    return 0;
}

size_t hpack_encoder::find_name(std::string_view name, uint64_t name_h) {
    auto d = by_name_.find(name_h);
    if (d == by_name_.end()) return 0;
    uint64_t newest = table_.added() - 1;
    if (newest - d->second < table_.count()) {
        if (table_.at(newest - d->second).name == name)
            return kStaticCount + 1 + (newest - d->second);
        return 0;
    }
    by_name_.erase(d);
    return 0;
}

void hpack_encoder::remember(std::string_view name, uint64_t name_h, std::string_view value) {
    table_.add(name, value);  // (kept: only entries within the table are added)
    epoch_++;
    uint64_t seq = table_.added() - 1;
    by_field_[field_hash(name_h, value)] = seq;
    by_name_[name_h] = seq;
    if (by_field_.size() > 2 * table_.count() + 64) prune();
}

// Drops the lookups of evicted entries.
void hpack_encoder::prune() {
    uint64_t oldest = table_.added() - table_.count();
    for (auto* m : {&by_field_, &by_name_})
        for (auto it = m->begin(); it != m->end();)
            it = it->second < oldest ? m->erase(it) : std::next(it);
}

void hpack_encoder::add(std::string_view name, std::string_view value, std::string* out,
                        bool never_index) {
    (void)code(name, value, out, never_index);
}

hpack_encoder::coding hpack_encoder::code(std::string_view name, std::string_view value,
                                          std::string* out, bool never_index) {
    uint64_t name_h = name_hash(name);
    auto st = static_index().name(name_h, name);
    bool secret = never_index || (st.kind & static_table_index::kCredential) ||
                  ((st.kind & static_table_index::kCookie) && value.size() < 20);
    bool per_message = st.kind & static_table_index::kPerMessage;  // never in our dynamic table
    if (!secret) {
        uint64_t field_h = field_hash(name_h, value);
        if (size_t i = st.index ? static_index().field(field_h, name, value) : 0) {
            write_int(i, 7, 0x80, out);
            return coding::kAlways;
        }
        if (size_t i = per_message ? 0 : find(name, field_h, value)) {
            write_int(i, 7, 0x80, out);
            return coding::kWhileTableStays;
        }
    }
    size_t name_index = st.index ? st.index : find_name(name, name_h);
    bool indexing = !secret && !per_message &&
                    dynamic_table::entry_size(name, value) <= table_.max_size() / 4 * 3;
    if (indexing) {
        write_int(name_index, 6, 0x40, out);
    } else {
        write_int(name_index, 4, secret ? 0x10 : 0x00, out);
    }
    if (!name_index) write_string(name, out);
    write_string(value, out);
    if (indexing) {
        remember(name, name_h, value);
        return coding::kOnce;  // indexed from now on
    }
    if (secret) return coding::kOnce;  // (not kept)
    return name_index > kStaticCount ? coding::kWhileTableStays : coding::kAlways;
}

namespace {

// a == b, inline for the short strings of header fields: a call to memcmp for each of a
// response's 16 names and values showed in the profile. Two overlapping loads cover 8 to
// 16 bytes (4 to 8 with 4-byte loads); longer strings go to memcmp.
inline bool same(std::string_view a, std::string_view b) {
    size_t n = a.size();
    if (n != b.size()) return false;
    const char *x = a.data(), *y = b.data();
    auto eq = [&](size_t at, size_t k) {
        uint64_t u = 0, v = 0;
        memcpy(&u, x + at, k);
        memcpy(&v, y + at, k);
        return u == v;
    };
    if (n >= 8 && n <= 16) return eq(0, 8) && eq(n - 8, 8);
    if (n >= 4 && n < 8) return eq(0, 4) && eq(n - 4, 4);
    if (n < 4) {
        for (size_t i = 0; i < n; i++)
            if (x[i] != y[i]) return false;
        return true;
    }
    return memcmp(x, y, n) == 0;
}

}  // namespace

void hpack_encoder::put(std::string_view name, std::string_view value, std::string* out,
                        bool never_index) {
    recent* m = next_ < kRecent ? &recent_[next_++] : nullptr;
    if (m && !never_index && (m->epoch == kForever || m->epoch == epoch_) && same(m->name, name) &&
        same(m->value, value))
        return (void)out->append(m->coded);
    char small[65];  // (tolower_fast writes a NUL after the name)
    std::string large;
    char* low = small;
    if (name.size() >= sizeof(small)) {
        large.resize(name.size() + 1);
        low = &large[0];
    }
    tolower_fast(low, name);
    std::string_view lowered(low, name.size());
    size_t at = out->size();
    coding how = connection_specific(lowered) ? coding::kAlways  // dropped, always
                                              : code(lowered, value, out, never_index);
    if (!m || how == coding::kOnce || never_index) return;
    m->epoch = how == coding::kAlways ? kForever : epoch_;
    m->name.assign(name.data(), name.size());
    m->value.assign(value.data(), value.size());
    m->coded.assign(out->data() + at, out->size() - at);
}

void hpack_encoder::forget_recent() {
    for (auto& m : recent_) m.epoch = 0;
}

}  // namespace http2
}  // namespace net
}  // namespace photon
