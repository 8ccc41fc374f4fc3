// head_scanner: where an HTTP/1.1 head ends in a buffer that grows as bytes
// arrive (the message layer's reader, message.cpp). Private header of
// net/http. Pure functions over memory: any vCPU, never yield.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <photon/net/http/parser.h>

namespace photon {
namespace net {
namespace http {

// Finds the end of a head in a buffer that grows between calls, looking at
// each byte once. Line ends must be CRLF; leading empty lines are skipped
// (RFC 9112 2.2).
class head_scanner {
public:
    head_scanner(const Limits& limits, bool request) : limits_(limits), request_(request) {}
    // `data` holds the bytes from the head's start; it may only have grown
    // since the last call. Returns an error, or None with *done telling
    // whether the head is complete: it is data[*begin, *end) (through the
    // empty line), and data[0, *end) is consumed by it.
    ParseError scan(std::string_view data, bool* done, size_t* begin, size_t* end);
    // Bytes of leading empty lines seen so far.
    size_t skipped() const { return begin_; }

private:
    const Limits& limits_;
    bool request_;
    size_t pos_ = 0, line_start_ = 0, begin_ = 0;
    uint32_t lines_ = 0;
};

}  // namespace http
}  // namespace net
}  // namespace photon
