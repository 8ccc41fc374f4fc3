// Message: head receive/send and body plumbing shared by Request and Response.
#include <cerrno>
#include <memory>

#include <photon/common/alog.h>
#include <photon/net/http/message.h>

namespace photon {
namespace net {
namespace http {

Message::Message(const Limits& limits)
    : headers(limits.max_fields, limits.max_head_size),
      trailers(limits.max_fields, limits.max_trailer_size),
      limits_(limits) {}

void Message::clear_state() {
    headers.clear();
    trailers.clear();
    error_ = ParseError::None;
    framing_ = Framing::None;
    content_length_ = 0;
    keep_alive_ = true;
    head_sent_ = false;
    reader_.reset(in_, Framing::None, 0, &limits_, &trailers);
    writer_.reset(out_, Framing::None, 0);
}

void Message::reset(InputBuffer* in, IStream* out) {
    in_ = in;
    out_ = out;
    clear_state();
}

int64_t Message::body_size() const {
    if (framing_ == Framing::None) return 0;
    return framing_ == Framing::ContentLength ? (int64_t)content_length_ : -1;
}

int Message::fail(ParseError e) {
    error_ = e;
    keep_alive_ = false;
    // Peers send garbage routinely: log rarely, at WARN.
    LOG_EVERY_T(10, LOG_WARN("http: rejected a message: `", parse_error_str(e)));
    errno = EPROTO;
    return -1;
}

int Message::receive_head(bool request) {
    if (!in_ || (!reader_.done() && skip_body() < 0)) return -1;
    clear_state();
    HeadScanner scanner(limits_, request);
    bool done = false;
    size_t begin = 0, end = 0;
    while (true) {
        std::string_view d = in_->data();
        ParseError e = scanner.scan(d, &done, &begin, &end);
        if (e != ParseError::None) return fail(e);
        if (done) break;
        ssize_t n = in_->fill();
        if (n < 0 && errno == ENOBUFS) return fail(ParseError::HeadTooLarge);
        if (n < 0) return -1;
        if (n == 0 && scanner.skipped() == d.size()) {
            in_->consume(d.size());
            errno = ENODATA;  // closed between messages
            return -1;
        }
        if (n == 0) return fail(ParseError::Truncated);
    }
    ParseError e = parse_head(in_->data().substr(begin, end - begin));
    in_->consume(end);
    if (e != ParseError::None) return fail(e);
    reader_.reset(in_, framing_, content_length_, &limits_, &trailers);
    return 0;
}

ssize_t Message::read(void* buf, size_t count) {
    size_t got = 0;
    while (got < count) {
        ssize_t n = reader_.read_some((char*)buf + got, count - got);
        if (n < 0) {
            if (errno == EPROTO) fail(reader_.error());
            return -1;
        }
        if (n == 0) break;
        got += n;
    }
    return (ssize_t)got;
}

ssize_t Message::readv(const struct iovec* iov, int iovcnt) {
    ssize_t total = 0;
    for (int i = 0; i < iovcnt; i++) {
        ssize_t n = read(iov[i].iov_base, iov[i].iov_len);
        if (n < 0) return -1;
        total += n;
        if ((size_t)n < iov[i].iov_len) break;
    }
    return total;
}

int Message::skip_body() {
    char buf[4096];
    while (true) {
        ssize_t n = reader_.read_some(buf, sizeof(buf));
        if (n == 0) return 0;
        if (n < 0) return errno == EPROTO ? fail(reader_.error()) : -1;
    }
}

ssize_t Message::write_stream(IStream* input, size_t size) {
    constexpr size_t kChunk = 64 * 1024;
    std::unique_ptr<char[]> buf(new char[kChunk]);  // off the coroutine's stack
    size_t total = 0;
    while (total < size) {
        size_t want = size - total < kChunk ? size - total : kChunk;
        ssize_t n = input->read(buf.get(), want);
        if (n < 0) return -1;
        if (n == 0) break;
        if (write(buf.get(), n) != n) return -1;
        total += n;
    }
    return (ssize_t)total;
}

int Message::send_header() {
    if (head_sent_) return 0;
    Framing f;
    uint64_t len = 0;
    std::string_view te = headers["Transfer-Encoding"];
    if (headers.has("Transfer-Encoding")) {
        if (!iequals(te, "chunked") || headers.count("Transfer-Encoding") > 1 ||
            headers.has("Content-Length")) {
            errno = EINVAL;
            return -1;
        }
        f = Framing::Chunked;
    } else if (headers.has("Content-Length")) {
        f = Framing::ContentLength;
        len = headers.content_length();
    } else {
        f = default_framing();  // may add Transfer-Encoding / Connection
    }
    if (!body_allowed()) f = Framing::None;  // HEAD, 204, 304: length is metadata only
    std::string head;
    if (start_line(&head) < 0) return -1;
    headers.serialize(&head);
    head += "\r\n";
    if (out_->write(head.data(), head.size()) != (ssize_t)head.size()) return -1;
    head_sent_ = true;
    writer_.reset(out_, f, len);
    return 0;
}

ssize_t Message::write(const void* buf, size_t count) {
    if (send_header() < 0) return -1;
    return writer_.write(buf, count);
}

ssize_t Message::writev(const struct iovec* iov, int iovcnt) {
    if (send_header() < 0) return -1;
    return writer_.writev(iov, iovcnt);
}

int Message::send() {
    if (send_header() < 0) return -1;
    return writer_.finish();
}

}  // namespace http
}  // namespace net
}  // namespace photon
