// Request: receive and send a request head; 100-continue on first body read.
#include <cerrno>
#include <cstring>
#include <string>

#include <photon/net/http/message.h>

namespace photon {
namespace net {
namespace http {

int Request::receive_header() {
    verb_ = Verb::UNKNOWN;
    target_.clear();
    expect_continue_ = false;
    url_ = URL();
    return receive_head(true);
}

ParseError Request::parse_head(std::string_view head) {
    RequestHead h;
    ParseError e = parse_request_head(head, limits_, &h, &headers);
    verb_ = h.verb;
    target_.assign(h.target);
    minor_ = h.minor;
    if (e != ParseError::None) return e;
    // Absolute-form (checked by the parser): its host overrides Host.
    if (!target_.empty() && target_[0] != '/' && target_.find("://") != target_.npos)
        url_ = URL(target_);
    framing_ = h.framing;
    content_length_ = h.content_length;
    keep_alive_ = h.keep_alive;
    expect_continue_ = h.expect_continue;
    return e;
}

int Request::target(std::string_view t) {
    for (unsigned char c : t) {
        if (c <= 0x20 || c >= 0x7f) {
            errno = EINVAL;
            return -1;
        }
    }
    target_.assign(t);
    return 0;
}

std::string_view Request::query() const {
    size_t q = target_.find('?');
    return q == target_.npos ? std::string_view() : std::string_view(target_).substr(q + 1);
}

int Request::start_line(std::string* out) const {
    if (verb_ == Verb::UNKNOWN || target_.empty()) {
        errno = EINVAL;
        return -1;
    }
    out->append(verbstr[(int)verb_]).append(" ").append(target_);
    out->append(minor_ ? " HTTP/1.1\r\n" : " HTTP/1.0\r\n");
    return 0;
}

ssize_t Request::read(void* buf, size_t count) {
    if (expect_continue_ && !body_done()) {
        expect_continue_ = false;
        static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
        if (out_->write(cont, sizeof(cont) - 1) != (ssize_t)sizeof(cont) - 1) return -1;
    }
    return Message::read(buf, count);
}

namespace {

// RFC 3986 5.2.4, on a path that starts with '/'.
std::string remove_dot_segments(std::string_view in) {
    std::string out;
    while (!in.empty()) {
        if (in.substr(0, 3) == "/./" || in == "/.") {
            in = in.size() == 2 ? std::string_view("/") : in.substr(2);
        } else if (in.substr(0, 4) == "/../" || in == "/..") {
            in = in.size() == 3 ? std::string_view("/") : in.substr(3);
            size_t slash = out.rfind('/');
            out.resize(slash == out.npos ? 0 : slash);
        } else {
            size_t next = in.find('/', 1);
            out.append(in.substr(0, next));
            in = next == in.npos ? std::string_view() : in.substr(next);
        }
    }
    return out.empty() ? "/" : out;
}

// Whether ref starts with a scheme ("http:", "HTTPS:", ...).
bool has_scheme(std::string_view ref) {
    size_t colon = ref.find(':');
    if (colon == 0 || colon == ref.npos) return false;
    for (size_t i = 0; i < colon; i++) {
        char c = ref[i];
        bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
        if (!alpha && (i == 0 || !((c >= '0' && c <= '9') || strchr("+-.", c)))) return false;
    }
    return true;
}

// `ref` resolved against `base` (RFC 3986 5.2.2, without dot segments in a
// query); -1 EINVAL if it needs a base and there is none.
int resolve_reference(const URL& base, std::string_view ref, std::string* out) {
    if (has_scheme(ref)) {
        out->assign(ref);
        return 0;
    }
    if (!base.is_absolute()) {
        errno = EINVAL;
        return -1;
    }
    out->assign(base.scheme()).append(":");
    if (ref.substr(0, 2) == "//") {
        out->append(ref);
        return 0;
    }
    out->append("//").append(base.host_port());
    ref = ref.substr(0, ref.find('#'));
    size_t q = ref.find('?');
    std::string_view path = ref.substr(0, q), query = q == ref.npos ? "" : ref.substr(q);
    if (path.empty()) {  // the base's path, and its query unless ref has one
        out->append(base.path());
        if (q != ref.npos)
            out->append(query);
        else if (!base.query().empty())
            out->append("?").append(base.query());
        return 0;
    }
    std::string merged;
    if (path[0] == '/') {
        merged.assign(path);
    } else {
        std::string_view dir = base.path();
        merged.assign(dir.substr(0, dir.rfind('/') + 1)).append(path);
    }
    out->append(remove_dot_segments(merged)).append(query);
    return 0;
}

}  // namespace

int Request::redirect(Verb v, std::string_view location, bool enable_proxy) {
    std::string abs;
    URL u;
    if (!url_.is_absolute()) {
        // Nothing to resolve against: location is the URL, as Photon's
        // reset takes it (absolute, a bare host, or a path alone).
        if (!u.from_string(location)) return -1;
        if (!u.is_absolute()) {  // the target alone
            if (target(u.target()) < 0) return -1;
            verb_ = v;
            url_ = std::move(u);
            return 0;
        }
    } else if (resolve_reference(url_, location, &abs) < 0 || !u.from_string(abs)) {
        return -1;
    }
    std::string_view t = u.target();
    std::string proxied;
    if (enable_proxy && !u.secure()) {  // https goes through a CONNECT tunnel in origin-form
        proxied.append(u.scheme()).append("://").append(u.host_port()).append(u.target());
        t = proxied;
    }
    if (target(t) < 0 || headers.set("Host", u.host_port()) < 0) return -1;
    verb_ = v;
    url_ = std::move(u);
    return 0;
}

std::string_view Request::host_no_port() const {
    if (url_.is_absolute()) return url_.host();
    std::string_view h = headers["Host"];
    if (!h.empty() && h[0] == '[') {  // "[v6]:port"
        size_t close = h.find(']');
        return close == h.npos ? std::string_view() : h.substr(1, close - 1);
    }
    return h.substr(0, h.find(':'));
}

int Request::reset(Verb v, std::string_view url, bool enable_proxy) {
    Message::reset(in_, out_);
    url_ = URL();
    return redirect(v, url, enable_proxy);
}

}  // namespace http
}  // namespace net
}  // namespace photon
