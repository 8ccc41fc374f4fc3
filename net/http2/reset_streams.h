// reset_streams: an HTTP/2 connection's memory of the streams that were reset,
// whose late frames it ignores (answering with RST_STREAM) where a frame on any
// other closed stream is a STREAM_CLOSED connection error (RFC 9113 5.1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace photon {
namespace net {
namespace http2 {

// The ids of the streams reset most recently (up to a limit, the oldest
// forgotten first). An open-addressed table (linear probing, kept at most half
// full) beside a ring of the ids in the order they came: no allocation per
// stream, one or two cache lines per lookup.
class reset_streams {
public:
    explicit reset_streams(size_t limit) : limit_(limit) {}
    // Remembers id (not 0); one already remembered keeps its place in the order.
    void insert(uint32_t id);
    size_t count(uint32_t id) const { return slot_of(id) != kNone; }
    size_t size() const { return order_.size(); }

private:
    static constexpr size_t kNone = (size_t)-1;
    size_t limit_;
    std::vector<uint32_t> table_;  // a power of 2 in size; 0 is empty (stream 0 is no stream)
    std::vector<uint32_t> order_;  // a ring: the oldest at next_ once full
    size_t next_ = 0;

    size_t home(uint32_t id) const { return (id * 2654435761u) & (table_.size() - 1); }
    size_t slot_of(uint32_t id) const;
    void erase(uint32_t id);
    void grow();
};

}  // namespace http2
}  // namespace net
}  // namespace photon
