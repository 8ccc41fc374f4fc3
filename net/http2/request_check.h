// What RFC 9113 8.2 and 8.3 require of a request's fields: a request that
// breaks it is malformed (its stream is reset with PROTOCOL_ERROR).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "hpack.h"

namespace photon {
namespace net {
namespace http2 {

// Fields of HTTP/1.1's connection management, which HTTP/2 forbids.
bool connection_specific(std::string_view name);
// Names in lower case and of token characters, values without NUL, CR, LF
// or surrounding whitespace; pseudo-fields known, once each, before the
// others; :method, and for all but CONNECT :scheme and a non-empty :path
// (CONNECT: :authority, no :scheme or :path); no connection-specific field;
// TE only "trailers"; Content-Length digits, one value. *content_length:
// its value, -1 if none.
bool valid_request(const std::vector<header_field>& fields, int64_t* content_length);
// Trailers: the same rules for names and values, and no pseudo-fields.
bool valid_trailers(const std::vector<header_field>& fields);

}  // namespace http2
}  // namespace net
}  // namespace photon
