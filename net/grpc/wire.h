// gRPC over HTTP/2's wire details (grpc/doc/PROTOCOL-HTTP2.md) shared by the
// server and the channel: grpc-timeout, grpc-message's percent-encoding,
// base64 of "-bin" metadata, the 5-byte length prefix of messages, gzip.
#pragma once

#include <photon/net/grpc/status.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "../http2/hpack.h"

namespace photon {
namespace net {
namespace grpc {

using http2::header_field;

// "10S", "250m" ... (at most 8 digits and a unit H M S m u n): microseconds
// (rounded up). false when malformed.
bool parse_timeout(std::string_view v, uint64_t* us);
// The shortest exact-enough form with at most 8 digits.
std::string format_timeout(uint64_t us);

// grpc-message: bytes outside 0x20-0x7E and '%' as %XX.
std::string percent_encode(std::string_view s);
// Lenient: a '%' not followed by two hex digits stays as it is.
std::string percent_decode(std::string_view s);

std::string base64_encode(std::string_view s);
// Padded or not; false on other bytes.
bool base64_decode(std::string_view s, std::string* out);

// Custom metadata of header fields: reserved names skipped, "-bin" decoded.
// false when a "-bin" value is not base64.
bool metadata_from_fields(const std::vector<header_field>& fields, Metadata* md);
// Appends md as header fields ("-bin" values encoded).
void metadata_to_fields(const Metadata& md, std::vector<header_field>* fields);
bool valid_metadata_list(const Metadata& md);
// The value of a field, nullptr if absent.
const std::string* find_field(const std::vector<header_field>& fields, std::string_view name);

// The 5-byte prefix: compressed flag and big-endian length.
void write_prefix(bool compressed, uint32_t n, char out[5]);

// Messages out of a body that comes in pieces.
class message_reader {
public:
    enum Result { kMessage = 1, kNeedMore = 0, kBadFlag = -1, kTooLarge = -2 };
    explicit message_reader(size_t max) : max_(max) {}
    void feed(const char* p, size_t n) { buf_.append(p, n); }
    // kMessage with *compressed and *msg set; kNeedMore; or an error.
    Result next(bool* compressed, std::string* msg);
    // Bytes of a message begun and not completed.
    bool partial() const { return pos_ < buf_.size(); }
    // How much to read next: the rest of the message begun (at most 1 MiB
    // a time), or a little when its length is not known yet; reserve()
    // zero-fills, so asking for 64 KiB per small message would cost.
    size_t want() const;
    // Read directly into the buffer's tail: room for n bytes, then commit.
    char* reserve(size_t n);
    void commit(size_t n) { buf_.resize(buf_.size() - reserve_ + n), reserve_ = 0; }

private:
    std::string buf_;
    size_t pos_ = 0, reserve_ = 0, max_;
};

// gzip (RFC 1952) through zlib. -1 with errno ENOSYS without zlib, EINVAL for
// bad data, EMSGSIZE past max bytes decompressed.
int gzip_compress(std::string_view in, std::string* out);
int gzip_decompress(std::string_view in, size_t max, std::string* out);

// The gRPC code for an HTTP status without grpc-status (PROTOCOL-HTTP2.md's table).
StatusCode code_from_http(int http_status);

}  // namespace grpc
}  // namespace net
}  // namespace photon
