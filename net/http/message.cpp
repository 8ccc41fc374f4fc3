// Message: head receive/send and body plumbing shared by Request and Response.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <memory>

#include <photon/common/alog.h>
#include <photon/net/http/message.h>
#include <photon/net/socket.h>

#include "head_scanner.h"

namespace photon {
namespace net {
namespace http {

Message::Message(const Limits& limits)
    : headers(limits.max_fields, limits.max_head_size),
      trailers(limits.max_fields, limits.max_trailer_size),
      limits_(limits) {}

namespace {
Limits head_limited(uint16_t cap) {
    Limits l;
    l.max_head_size = cap;
    return l;
}
}  // namespace

Message::Message(void* buf, uint16_t buf_capacity, bool buf_ownership)
    : Message(head_limited(buf_capacity)) {
    if (buf_ownership) own_buf_ = buf;
}

Message::~Message() {
    release_stream();
    free(own_buf_);
}

void Message::release_stream() {
    if (stream_ownership_) delete stream_;
    stream_ = nullptr;
    stream_ownership_ = false;
}

void Message::reset(ISocketStream* s, bool stream_ownership) {
    if (s != stream_) release_stream();
    stream_ = s;
    stream_ownership_ = s && stream_ownership;
    if (s && !own_in_)  // room for a whole head, and 64 KiB reads of a body
        own_in_.reset(new InputBuffer(s, std::max<size_t>(64 * 1024, limits_.max_head_size)));
    if (own_in_) own_in_->reset(s);
    reset(s ? own_in_.get() : nullptr, s);
}

void Message::reset(void* buf, uint16_t buf_capacity, bool buf_ownership, ISocketStream* s,
                    bool stream_ownership) {
    if (buf != own_buf_) free(own_buf_);
    own_buf_ = buf_ownership ? buf : nullptr;
    limits_.max_head_size = buf_capacity;
    headers = Headers(limits_.max_fields, buf_capacity);
    own_in_.reset();  // sized by the new capacity when next needed
    reset(s, stream_ownership);
}

void Message::reset() { reset((ISocketStream*)nullptr); }

ISocketStream* Message::socket_stream() const {
    return stream_ ? stream_ : dynamic_cast<ISocketStream*>(out_);
}

ISocketStream* Message::steal_socket_stream() {
    ISocketStream* s = socket_stream();
    stream_ = nullptr;
    stream_ownership_ = false;
    reset(nullptr, nullptr);
    return s;
}

int Message::keep_alive(bool ka) {
    keep_alive_ = ka;
    if (head_sent_) return 0;
    if (!ka) return headers.set("Connection", "close");
    if (list_has_token(headers["Connection"], "close")) headers.erase("Connection");
    return 0;
}

Verb Message::verb() const {
    if (auto r = dynamic_cast<const Request*>(this)) return r->verb();
    if (auto r = dynamic_cast<const Response*>(this)) return r->verb();
    return Verb::UNKNOWN;
}

int64_t Message::resource_size() const {
    // "bytes a-b/total" (RFC 9110 14.4); "*" for an unknown total.
    std::string_view cr = headers["Content-Range"];
    size_t slash = cr.rfind('/');
    if (slash != cr.npos) {
        std::string_view total = cr.substr(slash + 1);
        int64_t v = 0;
        bool ok = !total.empty() && total.size() <= 18;
        for (char c : total) {
            if (c < '0' || c > '9') ok = false;
            v = v * 10 + (c - '0');
        }
        return ok ? v : -1;
    }
    return headers.has("Content-Length") ? (int64_t)headers.content_length() : -1;
}

void Message::clear_state() {
    message_status = INIT;
    headers.clear();
    trailers.clear();
    error_ = ParseError::None;
    framing_ = Framing::None;
    content_length_ = 0;
    keep_alive_ = true;
    head_sent_ = false;
    read_err_ = 0;
    reader_.reset(in_, Framing::None, 0, &limits_, &trailers);
    writer_.reset(out_, Framing::None, 0);
}

void Message::reset(InputBuffer* in, IStream* out, HeadSender* hs) {
    in_ = in;
    out_ = out;
    head_sender_ = hs;
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
    if (!in_) {
        errno = ENOTCONN;  // bound to no connection (or its stream was stolen)
        return -1;
    }
    if (!reader_.done() && skip_body() < 0) return -1;
    clear_state();
    head_scanner scanner(limits_, request);
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
    message_status = HEADER_PARSED;
    return 0;
}

ssize_t Message::read(void* buf, size_t count) {
    if (read_err_) {  // the failure that cut the previous read short
        errno = read_err_;
        read_err_ = 0;
        return -1;
    }
    size_t got = 0;
    while (got < count) {
        ssize_t n = reader_.read_some((char*)buf + got, count - got);
        if (n < 0) {
            if (errno == EPROTO) fail(reader_.error());
            if (got == 0) return -1;
            read_err_ = errno;  // bytes already in the caller's buffer are never lost
            break;
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
        if (n < 0) {
            if (total == 0) return -1;
            read_err_ = errno;  // as read(): the bytes first, the error next
            break;
        }
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
    if (!out_) {
        errno = ENOTCONN;  // never bound to a stream
        return -1;
    }
    Framing f;
    uint64_t len = 0;
    std::string_view te = headers["Transfer-Encoding"];
    if (head_sender_) {
        bool cl = headers.has("Content-Length");
        len = cl ? headers.content_length() : 0;
        f = cl ? Framing::ContentLength : Framing::UntilClose;
    } else if (headers.has("Transfer-Encoding")) {
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
    // 204, 304: length is metadata only; HEAD: framed as GET, bytes dropped.
    bool discard = body_discarded();
    if (!body_allowed() && !discard) f = Framing::None;
    if (write_head() < 0) return -1;
    head_sent_ = true;
    message_status = HEADER_SENT;
    writer_.reset(out_, f, len, discard);
    return 0;
}

int Message::write_head() {
    if (head_sender_) return head_sender_->send_head(*this);
    std::string head;
    if (start_line(&head) < 0) return -1;
    headers.serialize(&head);
    head += "\r\n";
    return out_->write(head.data(), head.size()) == (ssize_t)head.size() ? 0 : -1;
}

void Message::head_received(Framing framing, uint64_t content_length) {
    framing_ = framing;
    content_length_ = framing == Framing::ContentLength ? content_length : 0;
    reader_.reset(in_, framing, content_length_, &limits_, &trailers);
    message_status = HEADER_PARSED;
}

ssize_t Message::write(const void* buf, size_t count) {
    if (send_header() < 0) return -1;
    message_status = BODY_SENT;
    return writer_.write(buf, count);
}

ssize_t Message::writev(const struct iovec* iov, int iovcnt) {
    if (send_header() < 0) return -1;
    message_status = BODY_SENT;
    return writer_.writev(iov, iovcnt);
}

int Message::send() {
    if (send_header() < 0) return -1;
    return writer_.finish();
}

int Message::send(const Headers& trailers) {
    if (send_header() < 0) return -1;
    if (writer_.finished()) return errno = EINVAL, -1;
    if (head_sender_) {
        if (writer_.finish() < 0) return -1;  // (the length check: it writes nothing here)
        return head_sender_->send_trailers(*this, trailers);
    }
    if (writer_.framing() != Framing::Chunked) return errno = EINVAL, -1;
    return writer_.finish(&trailers);
}

}  // namespace http
}  // namespace net
}  // namespace photon
