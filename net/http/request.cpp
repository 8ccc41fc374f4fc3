// Request: receive and send a request head; 100-continue on first body read.
#include <cerrno>

#include <photon/net/http/message.h>

namespace photon {
namespace net {
namespace http {

int Request::receive_header() {
    verb_ = Verb::UNKNOWN;
    target_.clear();
    expect_continue_ = false;
    return receive_head(true);
}

ParseError Request::parse_head(std::string_view head) {
    RequestHead h;
    ParseError e = parse_request_head(head, limits_, &h, &headers);
    verb_ = h.verb;
    target_.assign(h.target);
    minor_ = h.minor;
    if (e != ParseError::None) return e;
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

}  // namespace http
}  // namespace net
}  // namespace photon
