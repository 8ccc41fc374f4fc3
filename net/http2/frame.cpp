#include "frame.h"

namespace photon {
namespace net {
namespace http2 {
namespace {

uint32_t be32(const uint8_t* p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

void put32(uint32_t v, std::string* out) {
    char b[4] = {(char)(v >> 24), (char)(v >> 16), (char)(v >> 8), (char)v};
    out->append(b, 4);  // one append, not four push_backs (each checks the capacity)
}

bool refuse(frame_error* err, ErrorCode code, bool connection, const char* why) {
    *err = frame_error{code, connection, why};
    return false;
}

// Strips the padding of a PADDED frame from *body (6.1): false if the pad
// length leaves no room.
bool unpad(const FrameHeader& h, std::string_view* body, frame_error* err) {
    if (!(h.flags & flags::PADDED)) return true;
    if (body->empty()) return refuse(err, ErrorCode::FRAME_SIZE_ERROR, true, "no pad length");
    size_t pad = (uint8_t)(*body)[0];
    body->remove_prefix(1);
    if (pad > body->size())
        return refuse(err, ErrorCode::PROTOCOL_ERROR, true, "padding longer than the payload");
    body->remove_suffix(pad);
    return true;
}

// The 5 bytes of a priority (5.3.2, 6.3) at the front of *body.
bool take_priority(const FrameHeader& h, std::string_view* body, Frame* f, frame_error* err) {
    if (body->size() < 5) return refuse(err, ErrorCode::FRAME_SIZE_ERROR, true, "short priority");
    auto p = (const uint8_t*)body->data();
    uint32_t dep = be32(p);
    f->exclusive = dep >> 31;
    f->dependency = dep & 0x7fffffff;
    f->weight = p[4];
    body->remove_prefix(5);
    if (f->dependency == h.stream)
        return refuse(err, ErrorCode::PROTOCOL_ERROR, false, "a stream depends on itself");
    return true;
}

bool on_stream(const FrameHeader& h, frame_error* err) {
    return h.stream != 0 ||
           refuse(err, ErrorCode::PROTOCOL_ERROR, true, "a stream frame on stream 0");
}

bool on_connection(const FrameHeader& h, frame_error* err) {
    return h.stream == 0 ||
           refuse(err, ErrorCode::PROTOCOL_ERROR, true, "a connection frame on a stream");
}

bool length_is(const FrameHeader& h, uint32_t n, bool connection, frame_error* err) {
    return h.length == n ||
           refuse(err, ErrorCode::FRAME_SIZE_ERROR, connection, "wrong payload size");
}

}  // namespace

FrameHeader read_frame_header(const uint8_t* p) {
    FrameHeader h;
    h.length = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
    h.type = p[3];
    h.flags = p[4];
    h.stream = be32(p + 5) & 0x7fffffff;
    return h;
}

void write_frame_header(const FrameHeader& h, std::string* out) {
    uint32_t id = h.stream & 0x7fffffff;
    char b[kFrameHeaderSize] = {(char)(h.length >> 16), (char)(h.length >> 8), (char)h.length,
                                (char)h.type,           (char)h.flags,         (char)(id >> 24),
                                (char)(id >> 16),       (char)(id >> 8),       (char)id};
    out->append(b, sizeof(b));
}

bool parse_frame(const FrameHeader& h, const uint8_t* p, Frame* f, frame_error* err) {
    *f = Frame();
    f->h = h;
    std::string_view body((const char*)p, h.length);
    switch ((frame_type)h.type) {
        case frame_type::DATA:
            if (!on_stream(h, err) || !unpad(h, &body, err)) return false;
            break;
        case frame_type::HEADERS:
            if (!on_stream(h, err) || !unpad(h, &body, err)) return false;
            if ((h.flags & flags::PRIORITY) && !take_priority(h, &body, f, err)) {
                f->data = body;  // the block must still be decoded (HPACK state)
                return false;
            }
            break;
        case frame_type::PRIORITY:
            if (!on_stream(h, err) || !length_is(h, 5, false, err)) return false;
            if (!take_priority(h, &body, f, err)) return false;
            break;
        case frame_type::RST_STREAM:
            if (!on_stream(h, err) || !length_is(h, 4, true, err)) return false;
            f->error = be32(p);
            break;
        case frame_type::SETTINGS:
            if (!on_connection(h, err)) return false;
            if ((h.flags & flags::ACK) && h.length != 0)
                return refuse(err, ErrorCode::FRAME_SIZE_ERROR, true,
                              "a SETTINGS ACK with a payload");
            if (h.length % 6)
                return refuse(err, ErrorCode::FRAME_SIZE_ERROR, true,
                              "SETTINGS not a multiple of 6");
            break;
        case frame_type::PUSH_PROMISE:
            if (!on_stream(h, err) || !unpad(h, &body, err)) return false;
            if (body.size() < 4)
                return refuse(err, ErrorCode::FRAME_SIZE_ERROR, true, "short PUSH_PROMISE");
            f->promised = be32((const uint8_t*)body.data()) & 0x7fffffff;
            body.remove_prefix(4);
            break;
        case frame_type::PING:
            if (!on_connection(h, err) || !length_is(h, 8, true, err)) return false;
            break;
        case frame_type::GOAWAY:
            if (!on_connection(h, err)) return false;
            if (h.length < 8) return refuse(err, ErrorCode::FRAME_SIZE_ERROR, true, "short GOAWAY");
            f->last_stream = be32(p) & 0x7fffffff;
            f->error = be32(p + 4);
            body.remove_prefix(8);
            break;
        case frame_type::WINDOW_UPDATE:
            if (!length_is(h, 4, true, err)) return false;
            f->increment = be32(p) & 0x7fffffff;
            if (f->increment == 0)  // 6.9: on a stream, that stream's error
                return refuse(err, ErrorCode::PROTOCOL_ERROR, h.stream == 0,
                              "a WINDOW_UPDATE of 0");
            break;
        case frame_type::CONTINUATION:
            if (!on_stream(h, err)) return false;
            break;
        default:  // 4.1: unknown types are ignored
            break;
    }
    f->data = body;
    return true;
}

bool check_setting(uint16_t id, uint32_t v, frame_error* err) {
    switch ((setting_id)id) {
        case setting_id::ENABLE_PUSH:
            if (v > 1) return refuse(err, ErrorCode::PROTOCOL_ERROR, true, "ENABLE_PUSH above 1");
            break;
        case setting_id::INITIAL_WINDOW_SIZE:
            if (v > kMaxWindow)
                return refuse(err, ErrorCode::FLOW_CONTROL_ERROR, true,
                              "INITIAL_WINDOW_SIZE above 2^31-1");
            break;
        case setting_id::MAX_FRAME_SIZE:
            if (v < kDefaultMaxFrameSize || v > kLargestMaxFrameSize)
                return refuse(err, ErrorCode::PROTOCOL_ERROR, true, "MAX_FRAME_SIZE out of range");
            break;
        default:
            break;
    }
    return true;
}

void write_settings(const std::pair<setting_id, uint32_t>* s, size_t n, std::string* out) {
    write_frame_header({(uint32_t)(6 * n), (uint8_t)frame_type::SETTINGS, 0, 0}, out);
    for (size_t i = 0; i < n; i++) {
        out->push_back((char)((uint16_t)s[i].first >> 8));
        out->push_back((char)s[i].first);
        put32(s[i].second, out);
    }
}

void write_settings_ack(std::string* out) {
    write_frame_header({0, (uint8_t)frame_type::SETTINGS, flags::ACK, 0}, out);
}

void write_ping(const uint8_t data[8], bool ack, std::string* out) {
    write_frame_header({8, (uint8_t)frame_type::PING, (uint8_t)(ack ? flags::ACK : 0), 0}, out);
    out->append((const char*)data, 8);
}

void write_goaway(uint32_t last_stream, ErrorCode code, std::string_view debug, std::string* out) {
    write_frame_header({(uint32_t)(8 + debug.size()), (uint8_t)frame_type::GOAWAY, 0, 0}, out);
    put32(last_stream & 0x7fffffff, out);
    put32((uint32_t)code, out);
    out->append(debug);
}

void write_rst_stream(uint32_t stream, ErrorCode code, std::string* out) {
    write_frame_header({4, (uint8_t)frame_type::RST_STREAM, 0, stream}, out);
    put32((uint32_t)code, out);
}

void write_window_update(uint32_t stream, uint32_t increment, std::string* out) {
    write_frame_header({4, (uint8_t)frame_type::WINDOW_UPDATE, 0, stream}, out);
    put32(increment & 0x7fffffff, out);
}

void write_data_header(uint32_t stream, size_t n, bool end_stream, std::string* out) {
    uint8_t f = end_stream ? flags::END_STREAM : 0;
    write_frame_header({(uint32_t)n, (uint8_t)frame_type::DATA, f, stream}, out);
}

void write_headers(uint32_t stream, std::string_view block, bool end_stream, uint32_t max_frame,
                   std::string* out) {
    auto type = frame_type::HEADERS;
    uint8_t f = end_stream ? flags::END_STREAM : 0;
    do {
        size_t n = block.size() < max_frame ? block.size() : max_frame;
        if (n == block.size()) f |= flags::END_HEADERS;
        write_frame_header({(uint32_t)n, (uint8_t)type, f, stream}, out);
        out->append(block.substr(0, n));
        block.remove_prefix(n);
        type = frame_type::CONTINUATION;
        f = 0;
    } while (!block.empty());
}

}  // namespace http2
}  // namespace net
}  // namespace photon
