// HPACK (RFC 7541): the header compression of HTTP/2. A connection has an
// encoder for the blocks it sends and a decoder for the blocks it receives,
// each with its dynamic table; both sides' tables stay in step only if every
// block is decoded, in order, whole.
//
// The decoder refuses what the RFC makes a COMPRESSION_ERROR (an index out of
// range, a bad integer or string, a table size update above the announced
// limit or after the first field, a missing update after the limit was
// lowered, a Huffman decoding error). A block whose fields pass the header
// list limit is decoded to its end, keeping the table in step, and reported.
//
// The encoder indexes fields into its table, except sensitive ones
// (authorization, proxy-authorization, short cookies, and those marked),
// which are sent "never indexed", and those that change per message
// (:path, content-length, etag, dates of validators, ...); it codes strings
// with Huffman when that is shorter.
#pragma once

#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace photon {
namespace net {
namespace http2 {

struct header_field {
    std::string name, value;
    bool never_index = false;  // "never indexed" on the wire (RFC 7541 7.1.3)
};

// A header list in its owner's form, handed to a header block field by
// field: spares copying it into header_fields first. Names may come in any
// case; the block writer lowers them (HTTP/2 sends them in lower case).
class field_list {
public:
    using Put = void (*)(void* ctx, std::string_view name, std::string_view value,
                         bool never_index);
    virtual void each(Put put, void* ctx) const = 0;

protected:
    ~field_list() = default;
};

// A vector of header_fields as a field_list.
class vector_fields final : public field_list {
public:
    explicit vector_fields(const std::vector<header_field>& v) : v_(v) {}
    void each(Put put, void* ctx) const override {
        for (auto& f : v_) put(ctx, f.name, f.value, f.never_index);
    }

private:
    const std::vector<header_field>& v_;
};

// Entries newest first; an entry's size is name + value + 32 bytes.
class dynamic_table {
public:
    explicit dynamic_table(size_t max_size = 4096) : max_size_(max_size) {}

    size_t size() const { return size_; }
    size_t max_size() const { return max_size_; }
    size_t count() const { return entries_.size(); }
    // Evicts the oldest entries until the table fits.
    void set_max_size(size_t n);
    // Adds at the front, evicting as needed; an entry larger than the table
    // empties it and is not kept.
    void add(std::string_view name, std::string_view value);
    const header_field& at(size_t i) const { return entries_[i]; }  // 0: the newest
    // Entries ever added: the newest has number added() - 1; index i has
    // number added() - 1 - i, if i < count().
    uint64_t added() const { return added_; }

    static size_t entry_size(std::string_view name, std::string_view value) {
        return name.size() + value.size() + 32;
    }

private:
    void evict_to(size_t n);

    std::deque<header_field> entries_;
    size_t size_ = 0;
    size_t max_size_;
    uint64_t added_ = 0;
};

class hpack_decoder {
public:
    enum Result { kOk = 0, kCompressionError = -1, kListTooLarge = -2 };
    using field_sink = void (*)(void* ctx, std::string_view name, std::string_view value,
                                bool never_index);

    explicit hpack_decoder(size_t max_table_size = 4096)
        : limit_(max_table_size), table_(max_table_size) {}

    // The SETTINGS_HEADER_TABLE_SIZE this side announced (once the peer
    // acknowledged it): the encoder's table may not be larger. Lowering it
    // below the table's size makes the next block start with an update.
    void set_max_table_size(size_t n);
    // The decoded list's size limit (names + values + 32 per field); past it
    // decode() goes on to the block's end without delivering fields, and
    // returns kListTooLarge. Unlimited by default.
    void set_max_header_list_size(size_t n) { max_list_ = n; }

    // Decodes one whole header block, calling sink for each field in order.
    int decode(const uint8_t* p, size_t n, field_sink sink, void* ctx);
    int decode(const uint8_t* p, size_t n, std::vector<header_field>* out);
    // Why the last decode() failed.
    const char* error() const { return error_; }
    const dynamic_table& table() const { return table_; }

private:
    int fail(const char* why) {
        error_ = why;
        return kCompressionError;
    }
    // The field at an index (1-based, static then dynamic); false if none.
    bool lookup(uint64_t index, std::string_view* name, std::string_view* value) const;

    size_t limit_;
    size_t max_list_ = SIZE_MAX;
    bool update_required_ = false;
    dynamic_table table_;
    const char* error_ = "";
    std::string name_, value_;  // scratch, kept for their capacity
};

class hpack_encoder {
public:
    // max_table_size: the most this side will use of the peer's allowance.
    explicit hpack_encoder(size_t max_table_size = 4096) : cap_(max_table_size), table_(4096) {
        set_peer_max_table_size(4096);  // a smaller table is announced in the first block
    }

    // The peer's SETTINGS_HEADER_TABLE_SIZE (4096 until it says otherwise):
    // the table is resized to min(n, max_table_size) and the next block
    // starts with the update that says so.
    void set_peer_max_table_size(size_t n);
    // Huffman-code strings where that is shorter (the default).
    void set_huffman(bool on) {
        huffman_ = on;
        forget_recent();
    }

    // Appends a block of the fields to out.
    void encode(const std::vector<header_field>& fields, std::string* out);
    // Or field by field: begin_block() first (table size updates), then add().
    void begin_block(std::string* out);
    void add(std::string_view name, std::string_view value, std::string* out,
             bool never_index = false);
    // The same for a field whose name may be in any case (lowered here),
    // dropping connection-specific fields (RFC 9113 8.2.2). A field equal to
    // the one at its place in the last block is copied from that block's
    // coding when the coding cannot have changed.
    void put(std::string_view name, std::string_view value, std::string* out,
             bool never_index = false);

    const dynamic_table& table() const { return table_; }

private:
    void write_string(std::string_view s, std::string* out);
    // The 1-based index of an equal field / of a field of that name in the
    // dynamic table; 0: none. field_h, name_h: their hashes.
    size_t find(std::string_view name, uint64_t field_h, std::string_view value);
    size_t find_name(std::string_view name, uint64_t name_h);
    // How code() coded a field: the same field codes the same way always,
    // while the dynamic table stays as it is, or not again (it was added to
    // the table, or is secret and is not kept).
    enum class coding { kAlways, kWhileTableStays, kOnce };
    coding code(std::string_view name, std::string_view value, std::string* out, bool never_index);
    void forget_recent();
    void remember(std::string_view name, uint64_t name_h, std::string_view value);
    void prune();

    size_t cap_;
    dynamic_table table_;
    bool huffman_ = true;
    bool pending_ = false;
    size_t min_pending_ = 0;  // the smallest size since the last block, if pending_
    // Number of the newest entry with this name and value / this name, by a
    // hash of them (a lookup checks the entry: a collision costs only the
    // older entry's reuse).
    std::unordered_map<uint64_t, uint64_t> by_field_, by_name_;
    // The coded forms of the last block's fields, by their place in it (a
    // response head is mostly the last one's again, in the same order).
    struct recent {
        uint64_t epoch = 0;  // the table's epoch it holds in; 0: none
        std::string name, value, coded;
    };
    static constexpr uint64_t kForever = UINT64_MAX;
    static constexpr size_t kRecent = 16;
    recent recent_[kRecent];
    size_t next_ = 0;     // the place of the next field put() in the block
    uint64_t epoch_ = 1;  // moves whenever the dynamic table changes
};

}  // namespace http2
}  // namespace net
}  // namespace photon
