// Response: status, framing of what a server sends, and reason phrases.
#include <cerrno>

#include <photon/net/http/message.h>

namespace photon {
namespace net {
namespace http {

int Response::receive_header(Verb request_verb) {
    request_verb_ = request_verb;
    status_ = 0;
    reason_.clear();
    return receive_head(false);
}

ParseError Response::parse_head(std::string_view head) {
    ResponseHead h;
    ParseError e = parse_response_head(head, request_verb_, limits_, &h, &headers);
    if (e != ParseError::None) return e;
    status_ = h.status;
    reason_.assign(h.reason);
    minor_ = h.minor;
    framing_ = h.framing;
    content_length_ = h.content_length;
    keep_alive_ = h.keep_alive;
    return e;
}

int Response::set_result(int code, std::string_view reason) {
    if (code < 100 || code > 599 || !is_field_value(reason)) {
        errno = EINVAL;
        return -1;
    }
    status_ = code;
    reason_.assign(reason.empty() ? status_reason(code) : reason);
    return 0;
}

int Response::start_line(std::string* out) const {
    // We speak HTTP/1.1 to 1.0 peers too (RFC 9110 6.2); framing adapts.
    out->append("HTTP/1.1 ").append(std::to_string(status_)).append(" ").append(reason_);
    out->append("\r\n");
    return 0;
}

bool Response::body_allowed() const {
    // A 2xx to CONNECT starts a tunnel: no body, no framing fields (RFC 9110 9.3.6).
    return status_ >= 200 && status_ != 204 && status_ != 304 && request_verb_ != Verb::HEAD &&
           !(request_verb_ == Verb::CONNECT && status_ / 100 == 2);
}

bool Response::body_discarded() const {
    return request_verb_ == Verb::HEAD && status_ >= 200 && status_ != 204 && status_ != 304;
}

Framing Response::default_framing() {
    if (!body_allowed() && !body_discarded()) return Framing::None;
    if (peer_minor_ == 1 && headers.insert("Transfer-Encoding", "chunked") == 0)
        return Framing::Chunked;
    // HTTP/1.0 peers know no chunked: the body ends with the connection.
    keep_alive_ = false;
    (void)headers.set("Connection", "close");
    return Framing::UntilClose;
}

std::string_view status_reason(int code) {
    switch (code) {
        case 100:
            return "Continue";
        case 101:
            return "Switching Protocols";
        case 200:
            return "OK";
        case 201:
            return "Created";
        case 202:
            return "Accepted";
        case 204:
            return "No Content";
        case 206:
            return "Partial Content";
        case 301:
            return "Moved Permanently";
        case 302:
            return "Found";
        case 303:
            return "See Other";
        case 304:
            return "Not Modified";
        case 307:
            return "Temporary Redirect";
        case 308:
            return "Permanent Redirect";
        case 400:
            return "Bad Request";
        case 401:
            return "Unauthorized";
        case 403:
            return "Forbidden";
        case 404:
            return "Not Found";
        case 405:
            return "Method Not Allowed";
        case 408:
            return "Request Timeout";
        case 411:
            return "Length Required";
        case 412:
            return "Precondition Failed";
        case 413:
            return "Content Too Large";
        case 414:
            return "URI Too Long";
        case 416:
            return "Range Not Satisfiable";
        case 417:
            return "Expectation Failed";
        case 431:
            return "Request Header Fields Too Large";
        case 500:
            return "Internal Server Error";
        case 501:
            return "Not Implemented";
        case 502:
            return "Bad Gateway";
        case 503:
            return "Service Unavailable";
        case 504:
            return "Gateway Timeout";
        case 505:
            return "HTTP Version Not Supported";
        default:
            return "";
    }
}

}  // namespace http
}  // namespace net
}  // namespace photon
