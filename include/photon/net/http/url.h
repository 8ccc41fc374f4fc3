// URL: an absolute http/https URL split into its parts, and RFC 3986
// percent-encoding. Pure value code: any vCPU, never yields.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace photon {
namespace net {
namespace http {

// scheme "://" host [":" port] [path] ["?" query] ["#" fragment], scheme
// http or https (any case). Rejected (EINVAL): other schemes, userinfo
// ("user@host" hides the real host from a reader), an empty host, a port
// outside 1..65535, IPv6 literals inet_pton refuses (zone ids too), any
// byte outside visible ASCII, and a '%' not followed by two hex digits.
// An empty path is stored as "/".
class URL {
public:
    URL() = default;
    explicit URL(std::string_view url) { (void)from_string(url); }

    // 0, or -1 with errno EINVAL (the URL is then empty).
    int from_string(std::string_view url);
    bool empty() const { return url_.empty(); }

    std::string_view url() const { return url_; }  // normalised: lower-case scheme, path >= "/"
    std::string_view scheme() const { return part(0, scheme_end_); }
    bool secure() const { return scheme_end_ == 5; }
    // The host without brackets or port ("::1" for "[::1]:80").
    std::string_view host() const { return part(host_begin_, host_end_); }
    // host [":" port] as written, brackets kept: what a Host header carries.
    std::string_view host_port() const { return part(authority_begin_, path_begin_); }
    uint16_t port() const { return port_; }  // the default port of the scheme if none given
    std::string_view path() const { return part(path_begin_, query_begin_); }
    // Without the '?' / '#'; empty if absent.
    std::string_view query() const { return part(query_begin_ + has_query_, fragment_begin_); }
    std::string_view fragment() const { return part(fragment_begin_ + has_fragment_, url_.size()); }
    // path ["?" query]: the request-target in origin-form.
    std::string_view target() const { return part(path_begin_, fragment_begin_); }

private:
    std::string_view part(size_t b, size_t e) const {
        return std::string_view(url_).substr(b, e - b);
    }
    int parse_authority(std::string_view auth);

    std::string url_;
    size_t scheme_end_ = 0, authority_begin_ = 0, host_begin_ = 0, host_end_ = 0;
    size_t path_begin_ = 0, query_begin_ = 0, fragment_begin_ = 0;
    bool has_query_ = false, has_fragment_ = false;
    uint16_t port_ = 0;
};

// Percent-encodes every byte but the unreserved ones (ALPHA DIGIT - . _ ~),
// and '/' too unless escape_slash is false. Upper-case hex.
std::string url_escape(std::string_view s, bool escape_slash = true);

// Decodes %XX (either case). '+' stays '+' (that is form encoding, not
// URL encoding). 0, or -1 with errno EINVAL on a '%' without two hex digits
// (out is then unspecified).
int url_unescape(std::string_view s, std::string* out);
// As above; "" with errno EINVAL on a bad escape.
std::string url_unescape(std::string_view s);

}  // namespace http
}  // namespace net
}  // namespace photon
