// HTTP-date (RFC 9110 5.6.7): IMF-fixdate out; IMF-fixdate, RFC 850 and
// asctime in. Pure functions: no locale, no time zone, no locks (glibc's
// gmtime_r takes the tz lock), any vCPU.
#pragma once

#include <cstddef>
#include <ctime>
#include <string_view>

namespace photon {
namespace net {
namespace http {

constexpr size_t kHttpDateLength = 29;  // "Sun, 06 Nov 1994 08:49:37 GMT"

// Writes the 29 bytes of t's IMF-fixdate (no NUL); t >= 0.
void format_http_date(time_t t, char* out);
// Any of the three forms, exactly (no surrounding whitespace); false if s is
// none or names an impossible time. Two-digit RFC 850 years < 70 are 20xx.
bool parse_http_date(std::string_view s, time_t* t);

}  // namespace http
}  // namespace net
}  // namespace photon
