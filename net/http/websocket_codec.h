// Private to net/http/websocket*.cpp: the pure parts of RFC 6455 (frame
// headers, masking, UTF-8 checking) and of its handshake (SHA-1, base64,
// keys). No I/O, never yields, any thread.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace photon {
namespace net {
namespace http {
namespace ws_detail {

constexpr size_t kMaxFrameHeader = 14;  // 2 + 8 (64-bit length) + 4 (mask)
constexpr size_t kMaxControlPayload = 125;

constexpr uint8_t kOpContinuation = 0x0, kOpText = 0x1, kOpBinary = 0x2;
constexpr uint8_t kOpClose = 0x8, kOpPing = 0x9, kOpPong = 0xA;

inline bool is_control(uint8_t op) { return (op & 0x8) != 0; }
inline bool is_known_opcode(uint8_t op) {
    return op <= kOpBinary || (op >= kOpClose && op <= kOpPong);
}

struct FrameHeader {
    bool fin = true;
    uint8_t rsv = 0;  // RSV1..3, in bits 2..0: nonzero only with an extension
    uint8_t opcode = 0;
    bool masked = false;
    uint8_t mask[4] = {};
    uint64_t length = 0;
};

// The size of the header whose first two bytes are b0 b1.
size_t header_size(uint8_t b0, uint8_t b1);
// Parses a whole header (header_size() bytes at p). -1 if its 64-bit length
// has the top bit set (RFC 6455 5.2 forbids it), else 0.
int parse_header(const uint8_t* p, FrameHeader* h);
// Writes the header of a frame into out (kMaxFrameHeader bytes): its size.
// mask: the masking key, nullptr for an unmasked frame.
size_t build_header(uint8_t* out, uint8_t opcode, bool fin, uint64_t length, const uint8_t* mask);
// XORs n payload bytes, the first at payload offset `offset`, with the key.
void apply_mask(char* data, size_t n, const uint8_t mask[4], uint64_t offset);

// UTF-8 (RFC 3629: no overlong forms, surrogates or code points above
// U+10FFFF) checked as it comes, so a character may straddle two feeds.
class utf8_checker {
public:
    // Whether the bytes so far can begin valid UTF-8; false stays false.
    bool feed(const char* data, size_t n);
    // Whether the bytes so far end on a character boundary.
    bool complete() const { return need_ == 0 && ok_; }
    void reset() { *this = utf8_checker(); }

private:
    uint8_t need_ = 0;               // continuation bytes still due
    uint8_t lo_ = 0x80, hi_ = 0xBF;  // the range of the next one
    bool ok_ = true;
};
bool is_utf8(std::string_view s);

// Close codes a peer may send (RFC 6455 7.4, IANA registry), which are
// also the ones close() sends.
bool valid_close_code(uint16_t code);

// n unpredictable bytes (getrandom: masking keys must be, RFC 6455 5.3).
void random_bytes(void* out, size_t n);

void sha1(const void* data, size_t n, uint8_t out[20]);
std::string base64(const void* data, size_t n);
// Sec-WebSocket-Accept for a Sec-WebSocket-Key.
std::string accept_key(std::string_view key);
// A fresh Sec-WebSocket-Key: base64 of 16 random bytes.
std::string new_client_key();
// Whether key is base64 of exactly 16 bytes (RFC 6455 4.2.1 item 5).
bool valid_client_key(std::string_view key);

}  // namespace ws_detail
}  // namespace http
}  // namespace net
}  // namespace photon
