// The object storage client's request engine (client.cpp has the calls on top of it): a
// request's URL (virtual-hosted or path-style), the dialect's headers, signing, sending with
// retries and backoff, mapping error answers to errno, and checking what an upload sent against
// the service's answer. Bodies stream through checked_stream (checked_stream.h) and, for S3
// flexible checksums, aws_chunked_stream (aws_chunked.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <photon/ecosystem/oss.h>
#include <photon/net/http/client.h>

#include "checked_stream.h"

namespace photon {
namespace objstore {
namespace detail {

using key_values = std::vector<std::pair<std::string, std::string>>;
using http_op = photon::net::http::Client::Operation;

constexpr size_t kXmlLimit = 16 << 20;  // biggest XML answer read
constexpr char kCrc32cHeader[] = "x-amz-checksum-crc32c";
// "x-amz-checksum-crc32c:" and the 8 characters of a CRC32C in base64.
constexpr size_t kCrc32cTrailerLen = sizeof(kCrc32cHeader) - 1 + 1 + 8;

// S3's form of a CRC32C: base64 of its 4 bytes, most significant first.
std::string crc32c_base64(uint32_t crc);
bool is_md5_etag(std::string_view e);
std::string unquote(std::string_view e);
std::string xml_escape(std::string_view s);

// One request as perform() sends it.
struct Call {
    photon::net::http::Verb verb = photon::net::http::Verb::GET;
    std::string_view object;
    bool with_object = true;  // false: the bucket itself (list, delete, ...)
    key_values query;
    key_values headers;
    std::string_view body;         // a small body (XML), or
    BodyWriter* writer = nullptr;  // a streamed one of body_size bytes
    size_t body_size = 0;
    bool retry_body_errors = true;  // false: not sent again once the body went (append)
    // Handles a 2xx: >= 0 is the result; -1 with errno fails, and *retry
    // asks for another attempt (a truncated body, say).
    std::function<ssize_t(http_op*, checked_stream* sent, bool* retry)> on_ok;
    // Handles other statuses before the generic mapping; return 1 if not handled.
    std::function<int(http_op*, ssize_t* result)> on_status;
};

struct body_source;  // request.cpp

// What every call of the client shares: the options, the signer, the HTTP client and the
// endpoint, and the request machinery over them.
class requester {
public:
    ClientOptions opt_;
    std::unique_ptr<Authenticator> auth_;
    photon::net::http::Client* http_ = nullptr;
    bool s3_ = false, https_ = true;
    std::string host_;  // host[:port] of the endpoint
    std::string hp_;    // "x-oss-" or "x-amz-"

    requester(const ClientOptions& opt, Authenticator* auth);
    ~requester() { delete http_; }
    bool valid() const { return http_ && !host_.empty() && auth_; }

    std::string url_of(const Call& c) const;
    // errno for an error answer.
    static int map_error(int status, const std::string& code);
    static bool throttled(int status, const std::string& code);
    std::string read_small_body(http_op* op, size_t limit = kXmlLimit);
    // Sends c, again after a backoff while its answers say to retry: what c.on_ok or
    // c.on_status returned, or -1 with errno.
    ssize_t perform(Call& c);
    // One attempt's outcome.
    struct Attempt {
        ssize_t result = -1;
        int err = 0;
        bool done = false;       // result is the call's
        bool retry = false;      // worth another attempt
        bool slow = false;       // throttled: retried until the deadline
        bool net_error = false;  // no answer at all
        uint64_t retry_after_us = 0;
    };
    // Headers, body and signature of one attempt; -1 if signing failed.
    int prepare(Call& c, http_op* op, body_source* body);
    // The outcome of an attempt whose op->call() returned r; last: no retry follows.
    Attempt answer(Call& c, http_op* op, int r, checked_stream* sent, const std::string& url,
                   bool last);
    // Waits before the next attempt; false (errno set) when none should follow.
    bool back_off(const Attempt& a, int attempt, uint64_t deadline);
    // A 2xx whose XML body is read whole into *out.
    std::function<ssize_t(http_op*, checked_stream*, bool*)> read_xml(std::string* out);
    void meta_from(http_op* op, ObjectHeaderMeta* m);
    // The whole object's CRC32C the service stored, if asked for and sent: not a composite of
    // its parts' ("<base64>-<parts>", COMPOSITE), which no read of the body can be checked against.
    std::string full_object_crc32c(http_op* op) const;
    // Checks what a PUT / part / append sent against the service's answer and
    // the caller's expectation; fills opts.etag.
    int check_upload(http_op* op, checked_stream* sent, ObjectUploadOptions& opts, bool whole_put);
    std::string copy_source(std::string_view object) const;
};

}  // namespace detail
}  // namespace objstore
}  // namespace photon
