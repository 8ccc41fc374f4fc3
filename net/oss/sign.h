// Request signing for the object storage client (private to net/oss): OSS V1,
// OSS V4 and AWS SigV4, and the encodings they share. Pure computation.
#pragma once

#include <ctime>
#include <string>

#include <photon/ecosystem/oss.h>

namespace photon {
namespace objstore {
namespace detail {

std::string hex(std::string_view bytes);
std::string base64(std::string_view bytes);
std::string sha256_hex(std::string_view data);
// RFC 3986 percent-encoding of all but the unreserved bytes; '/' kept if keep_slash.
std::string uri_encode(std::string_view s, bool keep_slash);
std::string amz_date(time_t t);   // 20130524T000000Z
std::string http_date(time_t t);  // Fri, 24 May 2013 00:00:00 GMT
// "Fri, 24 May 2013 00:00:00 GMT" or "2013-05-24T00:00:00.000Z"; -1 if neither.
time_t parse_time(std::string_view s);

// A SigV4 authenticator for any service (tests use AWS's "service" vectors);
// oss selects the OSS4-HMAC-SHA256 variant (service "oss").
Authenticator* new_v4_authenticator(CredentialParameters&& cred, bool oss, std::string service);

}  // namespace detail
}  // namespace objstore
}  // namespace photon
