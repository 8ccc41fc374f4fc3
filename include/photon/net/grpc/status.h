// gRPC's outcome of a call and its metadata: a Status (one of the 17 codes
// of grpc/doc/statuscodes.md and a message) and Metadata, the custom header
// and trailer entries of a call. Plain values: any vCPU or OS thread may use
// them; nothing here yields.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace photon {
namespace net {
namespace grpc {

enum class StatusCode : int {
    OK = 0,
    CANCELLED = 1,
    UNKNOWN = 2,
    INVALID_ARGUMENT = 3,
    DEADLINE_EXCEEDED = 4,
    NOT_FOUND = 5,
    ALREADY_EXISTS = 6,
    PERMISSION_DENIED = 7,
    RESOURCE_EXHAUSTED = 8,
    FAILED_PRECONDITION = 9,
    ABORTED = 10,
    OUT_OF_RANGE = 11,
    UNIMPLEMENTED = 12,
    INTERNAL = 13,
    UNAVAILABLE = 14,
    DATA_LOSS = 15,
    UNAUTHENTICATED = 16,
};

// The name gRPC gives a code ("DEADLINE_EXCEEDED"); "UNKNOWN" for others.
const char* status_code_name(StatusCode code);

struct Status {
    StatusCode code = StatusCode::OK;
    std::string message;  // UTF-8; percent-encoded on the wire (grpc-message)

    Status() = default;
    Status(StatusCode c, std::string m = {}) : code(c), message(std::move(m)) {}  // NOLINT
    bool ok() const { return code == StatusCode::OK; }
};

// Custom metadata, in order, keys in lower case ([0-9a-z_.-]). A key ending in
// "-bin" carries bytes (base64 on the wire, decoded here); other values are
// printable ASCII. Keys starting with "grpc-" and the HTTP/2 fields gRPC
// itself uses (content-type, te, ...) are reserved and never appear here.
using Metadata = std::vector<std::pair<std::string, std::string>>;

// The value of the first entry named key, nullptr if none.
inline const std::string* find_metadata(const Metadata& md, const std::string& key) {
    for (auto& kv : md)
        if (kv.first == key) return &kv.second;
    return nullptr;
}

// Whether key and value may be sent as custom metadata (see Metadata).
bool valid_metadata(const std::string& key, const std::string& value);

// Message compression. gzip needs zlib (PHOTON_HAVE_ZLIB at photon's build);
// without it, asking for gzip fails as UNIMPLEMENTED.
enum class Compression { none = 0, gzip = 1 };

// Whether photon was built with zlib (gzip available).
bool gzip_supported();

}  // namespace grpc
}  // namespace net
}  // namespace photon
