#include "hpack.h"

#include <algorithm>
#include <functional>

#include "huffman.h"

namespace photon {
namespace net {
namespace http2 {
namespace {

// Appendix A: indices 1 to 61.
struct StaticEntry {
    std::string_view name, value;
};
constexpr StaticEntry kStatic[] = {
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
// hash of the bytes per field sent, no key built).
uint64_t name_hash(std::string_view name) { return std::hash<std::string_view>()(name); }

uint64_t field_hash(uint64_t name_h, std::string_view value) {
    uint64_t v = std::hash<std::string_view>()(value);
    return name_h ^ (v + 0x9e3779b97f4a7c15ull + (name_h << 6) + (name_h >> 2));
}

// The static table's indices by name and value and by name (the first), by
// hash; lookups compare the entry.
struct StaticIndex {
    std::unordered_map<uint64_t, size_t> by_field, by_name;
    StaticIndex() {
        for (size_t i = 0; i < kStaticCount; i++) {
            uint64_t h = name_hash(kStatic[i].name);
            by_field.emplace(field_hash(h, kStatic[i].value), i + 1);
            by_name.emplace(h, i + 1);
        }
    }
};

const StaticIndex& static_index() {
    static const StaticIndex s;
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

// RFC 7541 7.1.3: credentials, and cookies short enough to be guessed.
bool sensitive(std::string_view name, std::string_view value) {
    return name == "authorization" || name == "proxy-authorization" ||
           (name == "cookie" && value.size() < 20);
}

}  // namespace

// ---- the dynamic table ------------------------------------------------------

void DynamicTable::evict_to(size_t n) {
    while (size_ > n && !entries_.empty()) {
        auto& e = entries_.back();
        size_ -= entry_size(e.name, e.value);
        entries_.pop_back();
    }
}

void DynamicTable::set_max_size(size_t n) {
    max_size_ = n;
    evict_to(n);
}

void DynamicTable::add(std::string_view name, std::string_view value) {
    size_t sz = entry_size(name, value);
    added_++;
    if (sz > max_size_) return evict_to(0);
    evict_to(max_size_ - sz);
    entries_.push_front(HeaderField{std::string(name), std::string(value)});
    size_ += sz;
}

// ---- decoding ---------------------------------------------------------------

void HpackDecoder::set_max_table_size(size_t n) {
    if (n < table_.max_size()) update_required_ = true;
    limit_ = n;
}

bool HpackDecoder::lookup(uint64_t index, std::string_view* name, std::string_view* value) const {
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

int HpackDecoder::decode(const uint8_t* p, size_t n, Sink sink, void* ctx) {
    const uint8_t* end = p + n;
    bool first = true;  // no field yet: table size updates may come
    size_t list = 0;
    bool too_large = false;
    auto deliver = [&](std::string_view name, std::string_view value, bool never) {
        list += DynamicTable::entry_size(name, value);
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

int HpackDecoder::decode(const uint8_t* p, size_t n, std::vector<HeaderField>* out) {
    return decode(
        p, n,
        [](void* ctx, std::string_view name, std::string_view value, bool never) {
            ((std::vector<HeaderField>*)ctx)
                ->push_back(HeaderField{std::string(name), std::string(value), never});
        },
        out);
}

// ---- encoding ---------------------------------------------------------------

void HpackEncoder::set_peer_max_table_size(size_t n) {
    size_t size = std::min(n, cap_);
    if (size == table_.max_size() && !pending_) return;
    min_pending_ = pending_ ? std::min(min_pending_, size) : size;
    pending_ = true;
    table_.set_max_size(size);  // the peer applies it with the block's update
    prune();
}

void HpackEncoder::begin_block(std::string* out) {
    if (!pending_) return;
    // 4.2: the smallest size reached since the last block, then the last.
    if (min_pending_ < table_.max_size()) write_int(min_pending_, 5, 0x20, out);
    write_int(table_.max_size(), 5, 0x20, out);
    pending_ = false;
}

void HpackEncoder::encode(const std::vector<HeaderField>& fields, std::string* out) {
    begin_block(out);
    for (auto& f : fields) add(f.name, f.value, out, f.never_index);
}

void HpackEncoder::write_string(std::string_view s, std::string* out) {
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

size_t HpackEncoder::find(std::string_view name, uint64_t name_h, std::string_view value,
                          bool dynamic) {
    uint64_t h = field_hash(name_h, value);
    auto& st = static_index().by_field;
    auto s = st.find(h);
    if (s != st.end() && kStatic[s->second - 1].name == name &&
        kStatic[s->second - 1].value == value)
        return s->second;
    if (!dynamic) return 0;
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

size_t HpackEncoder::find_name(std::string_view name, uint64_t name_h) {
    auto& st = static_index().by_name;
    auto s = st.find(name_h);
    if (s != st.end() && kStatic[s->second - 1].name == name) return s->second;
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

void HpackEncoder::remember(std::string_view name, uint64_t name_h, std::string_view value) {
    table_.add(name, value);  // (kept: only entries within the table are added)
    uint64_t seq = table_.added() - 1;
    by_field_[field_hash(name_h, value)] = seq;
    by_name_[name_h] = seq;
    if (by_field_.size() > 2 * table_.count() + 64) prune();
}

// Drops the lookups of evicted entries.
void HpackEncoder::prune() {
    uint64_t oldest = table_.added() - table_.count();
    for (auto* m : {&by_field_, &by_name_})
        for (auto it = m->begin(); it != m->end();)
            it = it->second < oldest ? m->erase(it) : std::next(it);
}

void HpackEncoder::add(std::string_view name, std::string_view value, std::string* out,
                       bool never_index) {
    bool secret = never_index || sensitive(name, value);
    bool per_message = changes_per_message(name);  // never in our dynamic table
    uint64_t name_h = name_hash(name);
    if (!secret) {
        if (size_t i = find(name, name_h, value, !per_message)) return write_int(i, 7, 0x80, out);
    }
    size_t name_index = find_name(name, name_h);
    bool indexing = !secret && !per_message &&
                    DynamicTable::entry_size(name, value) <= table_.max_size() / 4 * 3;
    if (indexing) {
        write_int(name_index, 6, 0x40, out);
    } else {
        write_int(name_index, 4, secret ? 0x10 : 0x00, out);
    }
    if (!name_index) write_string(name, out);
    write_string(value, out);
    if (indexing) remember(name, name_h, value);
}

}  // namespace http2
}  // namespace net
}  // namespace photon
