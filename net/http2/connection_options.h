// The limits and windows of an HTTP/2 connection, either side (RFC 9113 6.5.2
// for the settings it announces).
#pragma once

#include <atomic>
#include <cstdint>

#include "frame.h"

namespace photon {
class MemoryBudget;
namespace net {
namespace http2 {

struct connection_options {
    uint32_t max_concurrent_streams = 128;           // more at once are refused (REFUSED_STREAM)
    uint32_t initial_window_size = 1 << 20;          // each stream's receive window
    uint32_t connection_window = 16 << 20;           // the connection's receive window
    uint32_t max_frame_size = kDefaultMaxFrameSize;  // the largest frame accepted
    uint32_t max_header_list_size = 64 << 10;        // larger requests: 431 (RST if unanswerable)
    uint32_t header_table_size = 4096;               // the decoder's dynamic table
    uint64_t idle_timeout = 60'000'000;              // no frame and no stream for this long: GOAWAY
    uint64_t settings_timeout = 10'000'000;          // for the peer's ACK of our SETTINGS
    uint32_t max_resets_per_second = 200;    // streams the peer resets: then ENHANCE_YOUR_CALM
    uint32_t max_control_per_second = 1000;  // PING, SETTINGS, PRIORITY, empty frames: likewise
    // The connection window is taken from it (nullptr: MemoryBudget::process());
    // without room, the connection keeps the protocol's 65,535 bytes.
    MemoryBudget* budget = nullptr;
    // Bytes read from / written to the socket are added here when set (an HTTP server's metrics).
    std::atomic<uint64_t>* received_bytes = nullptr;
    std::atomic<uint64_t>* sent_bytes = nullptr;
};

}  // namespace http2
}  // namespace net
}  // namespace photon
