// RFC 9110 pieces of the static-file handler (fs_handler.cpp), apart so that
// they are unit-tested and fuzzed on their own (test/net/http_rfc9110_test.cpp,
// test/fuzz/http_rfc9110_fuzz.cpp). Pure functions: no allocation, no I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <string_view>

namespace photon {
namespace net {
namespace http {

// s without leading and trailing spaces and tabs (RFC 9110 5.6.3 OWS).
std::string_view trim_ows(std::string_view s);

// The request path (after the handler's pattern, up to '?') decoded
// strictly into "/seg/seg" under the fs root, NUL-terminated in out[cap]:
// empty and "." segments are dropped, ".." takes one back, "%2F" separates
// like '/'. Returns 0, or the status to answer: 400 for a bad escape, a NUL
// or ".." above the root; 404 for a path over cap. *dir: the path ends like
// a directory ('/', ".", ".."). cap >= 2.
int decode_path(std::string_view remain, char* out, size_t cap, size_t* len, bool* dir);

// Whether an If-None-Match list holds "*" or a tag weakly equal to etag
// (RFC 9110 8.8.3.2: W/ ignored). Tags are read as quoted strings, since
// one may hold a comma; a malformed list matches nothing.
bool etag_list_matches(std::string_view list, std::string_view etag);

// 1*DIGIT into *v, saturating at UINT64_MAX; false for anything else.
bool parse_u64(std::string_view s, uint64_t* v);

enum class range_result { ignore, partial, unsatisfiable };

// A Range value (RFC 9110 14.1.2) against a representation of `size`
// bytes: one satisfiable range gives [*first, *last] (first <= last < size).
// Malformed values, other units and several ranges are ignored (the whole
// representation is served, which 14.2 allows).
range_result parse_range(std::string_view v, uint64_t size, uint64_t* first, uint64_t* last);

// If-Range (RFC 9110 13.1.5): true for a strong ETag equal to etag, or
// exactly the Last-Modified date mtime. Weak tags and anything else fail.
bool if_range_holds(std::string_view v, std::string_view etag, time_t mtime);

}  // namespace http
}  // namespace net
}  // namespace photon
