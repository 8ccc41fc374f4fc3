// HTTP/2 frames (RFC 9113 4 and 6): the 9-byte header, each type's payload
// checked and taken apart, and the writers of the frames an endpoint sends.
// No state: which frame is allowed when (stream states, CONTINUATION runs,
// flow control) is the connection's business.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace photon {
namespace net {
namespace http2 {

enum class frame_type : uint8_t {
    DATA = 0,
    HEADERS = 1,
    PRIORITY = 2,
    RST_STREAM = 3,
    SETTINGS = 4,
    PUSH_PROMISE = 5,
    PING = 6,
    GOAWAY = 7,
    WINDOW_UPDATE = 8,
    CONTINUATION = 9,
};

enum class ErrorCode : uint32_t {
    NO_ERROR = 0,
    PROTOCOL_ERROR = 1,
    INTERNAL_ERROR = 2,
    FLOW_CONTROL_ERROR = 3,
    SETTINGS_TIMEOUT = 4,
    STREAM_CLOSED = 5,
    FRAME_SIZE_ERROR = 6,
    REFUSED_STREAM = 7,
    CANCEL = 8,
    COMPRESSION_ERROR = 9,
    CONNECT_ERROR = 10,
    ENHANCE_YOUR_CALM = 11,
    INADEQUATE_SECURITY = 12,
    HTTP_1_1_REQUIRED = 13,
};

enum class setting_id : uint16_t {
    HEADER_TABLE_SIZE = 1,
    ENABLE_PUSH = 2,
    MAX_CONCURRENT_STREAMS = 3,
    INITIAL_WINDOW_SIZE = 4,
    MAX_FRAME_SIZE = 5,
    MAX_HEADER_LIST_SIZE = 6,
};

namespace flags {
constexpr uint8_t END_STREAM = 0x1;  // DATA, HEADERS
constexpr uint8_t ACK = 0x1;         // SETTINGS, PING
constexpr uint8_t END_HEADERS = 0x4;
constexpr uint8_t PADDED = 0x8;
constexpr uint8_t PRIORITY = 0x20;
}  // namespace flags

constexpr size_t kFrameHeaderSize = 9;
constexpr uint32_t kDefaultMaxFrameSize = 16384;
constexpr uint32_t kLargestMaxFrameSize = (1u << 24) - 1;
constexpr uint32_t kDefaultWindow = 65535;
constexpr uint32_t kMaxWindow = 0x7fffffff;
// What a client sends first (3.4), before its SETTINGS.
constexpr std::string_view kClientPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

struct FrameHeader {
    uint32_t length = 0;  // payload bytes
    uint8_t type = 0;     // a frame_type, or an unknown type (ignored by receivers)
    uint8_t flags = 0;
    uint32_t stream = 0;  // the reserved bit cleared
};

FrameHeader read_frame_header(const uint8_t* p);  // 9 bytes
void write_frame_header(const FrameHeader& h, std::string* out);

// A received frame's payload, taken apart by its type.
struct Frame {
    FrameHeader h;
    // DATA, HEADERS, PUSH_PROMISE, CONTINUATION: the data or header block
    // fragment, without padding; PING: the 8 bytes; GOAWAY: the debug data;
    // SETTINGS: the 6-byte entries (parse_settings()).
    std::string_view data;
    // HEADERS with PRIORITY, and PRIORITY (parsed, then ignored as 5.3.2 allows).
    uint32_t dependency = 0;
    uint8_t weight = 16;
    bool exclusive = false;
    uint32_t error = 0;        // RST_STREAM, GOAWAY
    uint32_t last_stream = 0;  // GOAWAY
    uint32_t increment = 0;    // WINDOW_UPDATE
    uint32_t promised = 0;     // PUSH_PROMISE

    frame_type type() const { return (frame_type)h.type; }
};

// Why a frame is refused: the error code, and whether the connection (or
// only the stream) must end.
struct frame_error {
    ErrorCode code = ErrorCode::NO_ERROR;
    bool connection = true;
    const char* why = "";
};

// Checks a frame whose payload (h.length bytes at p) has been read whole
// and fills *f: true, or false with *err. Unknown types pass (to be ignored).
// The frame size limit is the reader's to check before reading the payload.
bool parse_frame(const FrameHeader& h, const uint8_t* p, Frame* f, frame_error* err);

// The entries of a SETTINGS frame, in order, checked (6.5.2): false with
// *err for a value out of range. Unknown settings are passed on too.
template <typename F>
bool parse_settings(std::string_view data, F&& each, frame_error* err);

// Writers: each appends one frame to out.
void write_settings(const std::pair<setting_id, uint32_t>* s, size_t n, std::string* out);
void write_settings_ack(std::string* out);
void write_ping(const uint8_t data[8], bool ack, std::string* out);
void write_goaway(uint32_t last_stream, ErrorCode code, std::string_view debug, std::string* out);
void write_rst_stream(uint32_t stream, ErrorCode code, std::string* out);
void write_window_update(uint32_t stream, uint32_t increment, std::string* out);
// The header of a DATA frame of n bytes (the caller sends the bytes after it).
void write_data_header(uint32_t stream, size_t n, bool end_stream, std::string* out);
// A header block as HEADERS and as many CONTINUATION frames as max_frame
// requires.
void write_headers(uint32_t stream, std::string_view block, bool end_stream, uint32_t max_frame,
                   std::string* out);

// ---- implementation of the template ----------------------------------------

bool check_setting(uint16_t id, uint32_t value, frame_error* err);

template <typename F>
bool parse_settings(std::string_view data, F&& each, frame_error* err) {
    auto p = (const uint8_t*)data.data();
    for (size_t i = 0; i + 6 <= data.size(); i += 6) {
        uint16_t id = (uint16_t)(p[i] << 8 | p[i + 1]);
        uint32_t v = (uint32_t)p[i + 2] << 24 | (uint32_t)p[i + 3] << 16 | (uint32_t)p[i + 4] << 8 |
                     p[i + 5];
        if (!check_setting(id, v, err)) return false;
        each(id, v);
    }
    return true;
}

}  // namespace http2
}  // namespace net
}  // namespace photon
