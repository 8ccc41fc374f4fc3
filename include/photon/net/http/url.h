// URL: an http/https URL split into its parts, and RFC 3986 percent-encoding,
// with PhotonLibOS's names. Pure value code: any vCPU, never yields.
//
// Differences from PhotonLibOS: doc/compat.md#nethttpurlh
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <photon/common/estring.h>
#include <photon/common/string_view.h>

namespace photon {
namespace net {
namespace http {

constexpr char http_url_scheme[] = "http://";
constexpr char https_url_scheme[] = "https://";

// As Photon: cond ? "http://" : "https://".
inline std::string_view http_or_s(bool cond) {
    return cond ? std::string_view(http_url_scheme) : std::string_view(https_url_scheme);
}

// 1 for an http:// URL, 2 for https:// (any case), else 0.
inline int what_protocol(estring_view url) {
    if (url.istarts_with(http_url_scheme)) return 1;
    if (url.istarts_with(https_url_scheme)) return 2;
    return 0;
}

// Accepted, as Photon: [scheme "://"] [userinfo "@"] host [":" port]
// [path] ["?" query] ["#" fragment] with scheme http or https (any case;
// none means http), and a relative reference starting with '/' or '?'
// (no host: host() is empty, is_absolute() false). Rejected (EINVAL): other
// schemes, an empty host, a port outside 1..65535, IPv6 literals inet_pton
// refuses (zone ids too), any byte outside visible ASCII, and a '%' not
// followed by two hex digits. An empty path is "/", so target() and path()
// always start with '/'.
class URL {
public:
    URL() = default;
    URL(std::string_view url) { (void)from_string(url); }

    // true, or false with errno EINVAL (the URL is then empty()).
    bool from_string(std::string_view url);
    bool empty() const { return url_.empty(); }
    // Extension: has a host (a scheme "://" or a bare host was given).
    bool is_absolute() const { return host_end_ > 0; }

    // The URL as normalised: lower-case scheme, "http://" added to a bare
    // host, "/" for an empty path.
    std::string to_string() const { return url_; }
    const char* c_str() const { return url_.c_str(); }
    std::string_view url() const { return url_; }
    // Kept for Photon: targets start with '/' already.
    void fix_target() {}

    std::string_view scheme() const { return part(0, scheme_end_); }  // "http", "https", ""
    bool secure() const { return secure_; }
    // The host without brackets or port ("::1" for "[::1]:80").
    std::string_view host() const { return part(host_begin_, host_end_); }
    std::string_view host_no_port() const { return host(); }
    // host [":" port], brackets kept, the port only if not the scheme's
    // default (as Photon): what a Host header carries.
    std::string_view host_port() const {
        return part(authority_begin_, default_port_ ? host_end_ + bracketed_ : path_begin_);
    }
    uint16_t port() const { return port_; }  // the default port of the scheme if none given
    std::string_view path() const { return part(path_begin_, query_begin_); }
    // Without the '?' / '#'; empty if absent.
    std::string_view query() const { return part(query_begin_ + has_query_, fragment_begin_); }
    std::string_view fragment() const { return part(fragment_begin_ + has_fragment_, url_.size()); }
    // path ["?" query]: the request-target in origin-form.
    std::string_view target() const { return part(path_begin_, fragment_begin_); }
    // Userinfo ("user:passwd" before '@'), still percent-encoded; "" if none.
    std::string_view user() const { return part(userinfo_begin_, user_end_); }
    std::string_view passwd() const {
        return user_end_ < userinfo_end_ ? part(user_end_ + 1, userinfo_end_) : std::string_view();
    }
    std::string_view user_passwd() const { return part(userinfo_begin_, userinfo_end_); }

protected:
    std::string_view part(size_t b, size_t e) const {
        return std::string_view(url_).substr(b, e - b);
    }
    bool parse_authority(std::string_view auth);
    bool parse_path(std::string_view rest);
    bool fail();

    std::string url_;
    size_t scheme_end_ = 0, userinfo_begin_ = 0, user_end_ = 0, userinfo_end_ = 0;
    size_t authority_begin_ = 0, host_begin_ = 0, host_end_ = 0;
    size_t path_begin_ = 0, query_begin_ = 0, fragment_begin_ = 0;
    bool has_query_ = false, has_fragment_ = false, secure_ = false;
    bool default_port_ = true, bracketed_ = false;
    uint16_t port_ = 0;
};

// Photon's owning URL; every URL owns its text, so this only adds clear().
class StoredURL : public URL {
public:
    StoredURL() = default;
    StoredURL(std::string_view url) : URL(url) {}
    void clear() { *this = StoredURL(); }
};

// Whether host_port() carries a port: it is not the scheme's default.
inline bool need_optional_port(const URL& u) {
    return u.secure() ? u.port() != 443 : u.port() != 80;
}

// Percent-encodes every byte but the unreserved ones (ALPHA DIGIT - . _ ~),
// and '/' too unless escape_slash is false. Upper-case hex.
std::string url_escape(std::string_view s, bool escape_slash = true);

// Decodes %XX (either case). '+' stays '+' ('+' for a space is form
// encoding, not URL encoding). 0, or -1 with errno EINVAL on a '%' without
// two hex digits (out is then unspecified).
int url_unescape(std::string_view s, std::string* out);
// As above; "" with errno EINVAL on a bad escape.
std::string url_unescape(std::string_view s);

}  // namespace http
}  // namespace net
}  // namespace photon
