// closed_streams: an HTTP/2 connection's memory of the streams it closed, which
// tells a late frame on one of them (ignored, or answered with STREAM_CLOSED)
// from a frame on a stream that never was (a connection error).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace photon {
namespace net {
namespace http2 {

// The ids of the streams closed most recently (up to a limit, the oldest
// forgotten first), each with whether it was reset rather than ended. An
// open-addressed table (linear probing, kept at most half full) beside a ring
// of the ids in the order they came: no allocation per stream, one or two
// cache lines per lookup.
class closed_streams {
public:
    explicit closed_streams(size_t limit) : limit_(limit) {}
    // The entry of id (not 0), added (not reset) if it was not remembered.
    bool& operator[](uint32_t id);
    // Whether id is remembered; *reset says how it closed.
    bool find(uint32_t id, bool* reset) const;
    size_t count(uint32_t id) const { return slot_of(id) != kNone; }
    size_t size() const { return order_.size(); }

private:
    static constexpr size_t kNone = (size_t)-1;
    struct Slot {
        uint32_t id = 0;  // 0: empty (stream 0 is the connection, never a stream)
        bool reset = false;
    };
    size_t limit_;
    std::vector<Slot> table_;      // a power of 2 in size
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
