// The strict HTTP/1.1 head parser (RFC 9112): checks and splits a complete
// head's start line and fields and decides the body framing (the library
// finds where a head ends as its bytes arrive). Every rejection names its
// cause (ParseError) so a server can answer with the right status
// (http_status()). doc/http.md lists the rules. Pure functions over memory:
// any vCPU, never yield.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <photon/net/http/headers.h>
#include <photon/net/http/verb.h>

namespace photon {
namespace net {
namespace http {

enum class ParseError : uint8_t {
    None = 0,
    // 400 Bad Request
    BadRequestLine,         // not method SP target SP version, or a bad method token
    BadTarget,              // control / space / non-ASCII byte, bad %XX, wrong form for the method
    BadVersion,             // not "HTTP/" DIGIT "." DIGIT
    BadStatusLine,          // responses: not version SP 3DIGIT [SP reason]
    BareCR,                 // CR not followed by LF
    BareLF,                 // LF without CR: line ends must be CRLF
    BadFieldName,           // not a token, or whitespace before ':'
    BadFieldValue,          // NUL or another control byte in a value
    ObsFold,                // a line starting with SP/HTAB (obsolete line folding)
    MissingHost,            // HTTP/1.1 request without Host
    BadHost,                // several Host fields or a malformed one
    BadContentLength,       // not 1*DIGIT, or over 19 digits
    MultipleContentLength,  // more than one value, even identical ones
    ContentLengthWithTransferEncoding,
    TransferEncodingInHttp10,
    ChunkedNotLast,       // Transfer-Encoding whose last coding is not chunked, or chunked twice
    BadTransferEncoding,  // an empty or non-token coding
    BadChunk,             // bad chunk-size / extension / missing CRLF after data
    ChunkLineTooLong,     // chunk-size line (with extensions) over the limit
    Truncated,            // EOF inside a head or body
    // 413 Content Too Large
    BodyTooLarge,
    // 414 URI Too Long
    UriTooLong,
    // 431 Request Header Fields Too Large
    FieldLineTooLong,
    HeadTooLarge,
    TooManyFields,
    TrailersTooLarge,
    // 501 Not Implemented
    UnknownMethod,
    UnsupportedTransferEncoding,  // a coding other than chunked (gzip, ...)
    // 505 HTTP Version Not Supported
    VersionNotSupported,
};

// The status a server answers a request that failed with `e` (200 for None).
int http_status(ParseError e);
const char* parse_error_str(ParseError e);

// Extension: the largest Content-Length or chunk size (or chunked total)
// accepted whatever the Limits (body sizes are int64_t); above it, the
// message fails with BadContentLength / BadChunk (400).
constexpr uint64_t kMaxBodyLength = (uint64_t)INT64_MAX;

// Bounds on what a peer may make us buffer. max_head_size must be below the
// capacity of the InputBuffer the head arrives in.
struct Limits {
    uint32_t max_request_line = 8 * 1024;   // -> UriTooLong (status line: FieldLineTooLong)
    uint32_t max_field_line = 8 * 1024;     // -> FieldLineTooLong
    uint32_t max_head_size = 32 * 1024;     // -> HeadTooLarge, leading empty lines included
    uint16_t max_fields = 100;              // -> TooManyFields
    uint64_t max_body_size = UINT64_MAX;    // Content-Length or chunked total -> BodyTooLarge
    uint32_t max_chunk_line = 4 * 1024;     // -> ChunkLineTooLong
    uint32_t max_trailer_size = 16 * 1024;  // -> TrailersTooLarge
};

enum class Framing : uint8_t {
    None,           // no body
    ContentLength,  // exactly content_length bytes
    Chunked,
    UntilClose,  // responses only: the body ends when the connection does
};

// What a request head says beyond its fields. Views point into the head.
struct RequestHead {
    Verb verb = Verb::UNKNOWN;
    std::string_view target;
    int minor = 1;  // HTTP/1.<minor>
    Framing framing = Framing::None;
    uint64_t content_length = 0;
    bool keep_alive = false;
    bool expect_continue = false;
};

struct ResponseHead {
    int status = 0;
    std::string_view reason;
    int minor = 1;
    Framing framing = Framing::None;
    uint64_t content_length = 0;
    bool keep_alive = false;
};

// Parse a complete head (through its empty line), appending its fields to
// `fields` (cleared first). The first error met is returned; checks run
// syntax (400) before version (505) before method (501).
ParseError parse_request_head(std::string_view head, const Limits& limits, RequestHead* out,
                              Headers* fields);
// request_verb decides whether the response may have a body (HEAD, CONNECT).
ParseError parse_response_head(std::string_view head, Verb request_verb, const Limits& limits,
                               ResponseHead* out, Headers* fields);

// One "name: value" line without its CRLF, appended to `fields`.
ParseError parse_field_line(std::string_view line, Headers* fields);

}  // namespace http
}  // namespace net
}  // namespace photon
