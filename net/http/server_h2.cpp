// HTTP/2 for the HTTP server: telling an HTTP/2 connection from an HTTP/1.1
// one, the Upgrade to h2c, and each stream's Request and Response (the head
// as a header block, the body through the stream's flow control).
#include "server_h2.h"

#include <cctype>
#include <memory>
#include <string>
#include <vector>

#include <photon/common/alog.h>
#include <photon/net/security-context/tls-stream.h>

#include "../http2/request_check.h"
#include "../http2/server_connection.h"
#include "h2_body.h"

namespace photon {
namespace net {
namespace http {
namespace server_detail {

namespace {

using http2::header_field;

// The body of a stream's request, for the request's InputBuffer: a read
// waits at most body_timeout.
class body_in final : public IStream {
public:
    explicit body_in(uint64_t timeout) : timeout_(timeout) {}
    // At the body's end, its trailers go to *trailers (h2_body.h).
    void bind(http2::Stream* s, Headers* trailers) {
        s_ = s;
        trailers_ = trailers;
        timed_out_ = false;
        end_.reset();
    }
    void expect(int64_t length) { end_.reset(length); }  // the body's Content-Length
    bool timed_out() const { return timed_out_; }

    ssize_t read(void* buf, size_t count) override {
        ssize_t n = end_.read(s_, buf, count, timeout_, trailers_);
        if (n < 0 && errno == ETIMEDOUT) timed_out_ = true;
        return n;
    }
    ssize_t readv(const struct iovec* iov, int iovcnt) override {
        return iovcnt > 0 ? read(iov[0].iov_base, iov[0].iov_len) : 0;
    }
    ssize_t write(const void*, size_t) override { return errno = ENOSYS, -1; }
    ssize_t writev(const struct iovec*, int) override { return errno = ENOSYS, -1; }
    int close() override { return 0; }

private:
    http2::Stream* s_ = nullptr;
    Headers* trailers_ = nullptr;
    h2_body_end end_;
    uint64_t timeout_;
    bool timed_out_ = false;
};

// The response body, as DATA frames: a write waits for the send windows at
// most send_timeout.
class body_out final : public IStream {
public:
    explicit body_out(uint64_t timeout) : timeout_(timeout) {}
    void bind(http2::Stream* s) { s_ = s; }

    ssize_t write(const void* buf, size_t count) override {
        return count ? s_->write(buf, count, timeout_) : 0;
    }
    ssize_t writev(const struct iovec* iov, int iovcnt) override {
        ssize_t total = 0;
        for (int i = 0; i < iovcnt; i++) {
            if (write(iov[i].iov_base, iov[i].iov_len) < 0) return -1;
            total += (ssize_t)iov[i].iov_len;
        }
        return total;
    }
    ssize_t read(void*, size_t) override { return errno = ENOSYS, -1; }
    ssize_t readv(const struct iovec*, int) override { return errno = ENOSYS, -1; }
    int close() override { return 0; }

private:
    http2::Stream* s_ = nullptr;
    uint64_t timeout_;
};

class stream_response final : public Response {
public:
    using Response::Response;
    bool may_have_body() const { return body_allowed(); }
    bool discards_body() const { return body_discarded(); }
    bool head_sent() const { return head_sent_; }
};

// *out = s in lower case (reusing out's storage).
void lower(std::string_view s, std::string* out) {
    out->assign(s.data(), s.size());
    for (auto& ch : *out)
        if (ch >= 'A' && ch <= 'Z') ch = (char)(ch | 0x20);
}

// The messages of a request stream, bound to one stream at a time. A
// connection keeps the ones its streams are done with for the next streams,
// so that steady state allocates little.
class exchange final : public Message::HeadSender {
public:
    explicit exchange(const ServerOptions& o)
        : body_in_(o.body_timeout),
          body_out_(o.send_timeout),
          in_(&body_in_, 1024),  // bodies are read into the caller's buffer: no copy
          req_(o.limits),
          resp_(o.limits) {}

    // Serves the request of stream s through dispatch.
    void serve(http2::Stream& s, Dispatch dispatch);
    int send_head(Message& m) override;
    int send_trailers(Message& m, const Headers& trailers) override;

private:
    // The request from the stream's fields: 0, or the status to answer.
    int load_request();
    // An answer of the server's own, in place of the handler's.
    void answer(int status);

    http2::Stream* s_ = nullptr;
    body_in body_in_;
    body_out body_out_;
    InputBuffer in_;
    Request req_;
    stream_response resp_;
    std::vector<header_field> fields_;  // the trailers', reused
    std::string cookie_;
    bool ended_ = false;  // the head ended the stream (no body)
};

int exchange::load_request() {
    std::string_view method, path, authority;
    for (auto& f : s_->request()) {
        std::string_view name = f.name;
        if (name[0] != ':') break;  // pseudo-fields come first (checked)
        if (name == ":method") method = f.value;
        if (name == ":path") path = f.value;
        if (name == ":authority") authority = f.value;
    }
    req_.verb(string_to_verb(method));
    if (req_.verb() == Verb::UNKNOWN) return 501;
    // CONNECT's target is its authority (RFC 9113 8.5).
    if (req_.target(req_.verb() == Verb::CONNECT ? authority : path) < 0) return 400;
    auto& h = req_.headers;
    // :authority stands for Host (8.3.1); cookie crumbs join again (8.2.3).
    if (!authority.empty() && h.append_valid("Host", authority) < 0) return 431;
    cookie_.clear();
    for (auto& f : s_->request()) {
        std::string_view name = f.name;
        if (name[0] == ':') continue;
        if (name == "host" && !authority.empty()) continue;
        if (name == "cookie") {
            cookie_.append(cookie_.empty() ? "" : "; ").append(f.value);
            continue;
        }
        // Checked as RFC 9113 8.2 requires (request_check.h): no CR, LF, NUL.
        if (h.append_valid(f.name, f.value) < 0) return 431;
    }
    if (!cookie_.empty() && h.append_valid("cookie", cookie_) < 0) return 431;
    if (!s_->has_body()) {
        req_.head_received(Framing::None, 0);
    } else if (h.has("Content-Length")) {
        uint64_t len = h.content_length();
        if (len > req_.limits().max_body_size) return 413;
        req_.head_received(Framing::ContentLength, len);
        body_in_.expect(len);
    } else {
        req_.head_received(Framing::UntilClose, 0);
    }
    resp_.for_request(req_.verb(), 1);
    return 0;
}

// A response head as the encoder takes it: :status, then the handler's
// fields as they are (pseudo-fields dropped), with nothing copied first.
class head_fields final : public http2::field_list {
public:
    explicit head_fields(const Response& r) : r_(r) {}
    void each(Put put, void* ctx) const override {
        char digits[8], *p = digits + sizeof(digits);
        unsigned v = r_.status_code();
        do *--p = (char)('0' + v % 10);
        while (v /= 10);
        put(ctx, ":status", std::string_view(p, (size_t)(digits + sizeof(digits) - p)), false);
        for (auto f : r_.headers)
            if (!f.first.empty() && f.first[0] != ':') put(ctx, f.first, f.second, false);
    }

private:
    const Response& r_;
};

int exchange::send_head(Message& m) {
    auto& r = static_cast<Response&>(m);
    bool no_body = !resp_.may_have_body() ||
                   (r.headers.has("Content-Length") && r.headers.content_length() == 0);
    ended_ = no_body;
    return s_->respond(head_fields(r), no_body);
}

int exchange::send_trailers(Message&, const Headers& trailers) {
    if (ended_) return errno = EINVAL, -1;
    fields_.clear();
    append_h2_fields(trailers, &fields_);
    return s_->finish(&fields_);
}

void exchange::answer(int status) {
    resp_.reset(&in_, &body_out_, this);
    resp_.for_request(req_.verb() == Verb::HEAD ? Verb::HEAD : Verb::GET, 1);
    standard_headers(resp_);
    simple_response(resp_, status, resp_.may_have_body());
    if (resp_.send() == 0) s_->finish();
}

void exchange::serve(http2::Stream& s, Dispatch dispatch) {
    s_ = &s;
    ended_ = false;
    body_in_.bind(&s, &req_.trailers);
    body_out_.bind(&s);
    in_.reset(&body_in_);
    req_.reset(&in_, &body_out_, this);
    resp_.reset(&in_, &body_out_, this);
    req_.verb(Verb::UNKNOWN);
    int status = load_request();
    if (status) return answer(status);
    (void)resp_.set_result(200);
    standard_headers(resp_);
    int ret = dispatch(req_, resp_);
    if (!resp_.head_sent()) {
        // A declared body that nothing was written of would hang the peer.
        bool unwritten = resp_.may_have_body() && resp_.headers.content_length() > 0;
        if (ret < 0 || unwritten) {
            if (unwritten && ret >= 0)
                LOG_EVERY_T(10,
                            LOG_WARN("http server: a handler declared a body it did not write"));
            int e = req_.parse_error() != ParseError::None ? http_status(req_.parse_error())
                    : body_in_.timed_out()                 ? 408
                                                           : 500;
            resp_.headers.clear();
            return answer(e);
        }
        if (!resp_.headers.has("Content-Length") &&
            (resp_.may_have_body() || resp_.discards_body()))
            (void)resp_.headers.content_length(0);
    }
    // A failed handler's body, or one shorter than its Content-Length, must
    // reach the client cut short, never complete: the stream is reset.
    if (ret < 0 || resp_.send() < 0) {
        if (ret >= 0 && errno == EPROTO)
            LOG_EVERY_T(10, LOG_WARN("http server: a handler wrote less than its Content-Length"));
        return s_->reset(http2::ErrorCode::INTERNAL_ERROR);
    }
    s_->finish();
}

http2::connection_options h2_options(Connection& c) {
    const ServerOptions& o = c.opts;
    http2::connection_options h;
    h.max_concurrent_streams = o.http2_max_concurrent_streams;
    h.initial_window_size = o.http2_stream_window;
    h.connection_window = o.http2_connection_window;
    h.header_table_size = o.http2_header_table_size;
    h.max_resets_per_second = o.http2_max_resets_per_second;
    h.max_control_per_second = o.http2_max_control_per_second;
    h.max_header_list_size = o.limits.max_head_size;
    h.idle_timeout = o.keepalive_timeout;
    h.budget = o.memory_budget;
    h.received_bytes = c.metrics->received_counter();
    h.sent_bytes = c.metrics->sent_counter();
    return h;
}

// base64url, as HTTP2-Settings carries it (RFC 7540 3.2.1; no padding).
bool base64url_decode(std::string_view in, std::string* out) {
    uint32_t acc = 0;
    int bits = 0;
    for (char ch : in) {
        int v = ch >= 'A' && ch <= 'Z'   ? ch - 'A'
                : ch >= 'a' && ch <= 'z' ? ch - 'a' + 26
                : ch >= '0' && ch <= '9' ? ch - '0' + 52
                : ch == '-'              ? 62
                : ch == '_'              ? 63
                : ch == '='              ? -2
                                         : -1;
        if (v == -2) break;
        if (v < 0) return false;
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out->push_back((char)(acc >> bits & 0xff));
        }
    }
    return true;
}

// The exchanges a connection keeps for its next streams, at most.
constexpr size_t kSpareExchanges = 32;

// Serves the connection with `run` (serve() or serve_upgraded()).
template <typename Run>
int serve_with(Connection& c, Dispatch dispatch, Run run) {
    c.request_hold.reset();  // the connection window is the stream's budget now
    std::vector<std::unique_ptr<exchange>> spare;  // of streams done, for the next ones
    http2::server_connection h2(c.sock, h2_options(c), [&](http2::Stream& s) {
        std::unique_ptr<exchange> x;
        if (spare.empty()) {
            x.reset(new exchange(c.opts));
        } else {
            x = std::move(spare.back());
            spare.pop_back();
        }
        x->serve(s, dispatch);
        if (spare.size() < kSpareExchanges) spare.push_back(std::move(x));
    });
    // stop() interrupts the reader until it has sent its GOAWAY.
    h2.stop_on(c.stopping, [&c] { c.wait.store(wait_state::None, std::memory_order_relaxed); });
    c.wait.store(wait_state::Http2, std::memory_order_relaxed);
    std::string pre(c.in.data());
    c.in.consume(pre.size());
    int r = run(h2, pre);
    int e = errno;
    c.wait.store(wait_state::None, std::memory_order_relaxed);
    errno = e;
    return r;
}

}  // namespace

int speaks_http2(Connection& c) {
    if (c.opts.http2 == ServerOptions::Http2::Off) return 0;
    if (c.opts.http2 == ServerOptions::Http2::Only) return 1;
    if (!c.in.size()) {
        ssize_t r = c.in.fill();  // the TLS handshake (and ALPN) comes first
        if (r <= 0) return (int)r;
    }
    if (tls_stream_get_alpn_selected(c.sock) == "h2") return 1;
    // The first line of the preface, unless the bytes part from it first.
    while (true) {
        std::string_view d = c.in.data();
        size_t n = std::min(d.size(), kH2PrefaceStart.size());
        if (d.substr(0, n) != kH2PrefaceStart.substr(0, n)) return 0;
        if (n == kH2PrefaceStart.size()) return 1;
        ssize_t r = c.in.fill();
        if (r <= 0) return (int)r;  // at EOF, HTTP/1.1's parser reports the rest
    }
}

int serve_http2(Connection& c, Dispatch dispatch) {
    return serve_with(c, dispatch, [](http2::server_connection& h2, std::string_view pre) {
        return h2.serve(pre);
    });
}

int upgrade_to_http2(Connection& c, Dispatch dispatch) {
    Request& req = c.req;
    if (c.opts.http2 == ServerOptions::Http2::Off ||
        !list_has_token(req.headers["Upgrade"], "h2c") ||
        req.headers.count("HTTP2-Settings") != 1 ||
        !list_has_token(req.headers["Connection"], "HTTP2-Settings") || req.body_size() != 0 ||
        !tls_stream_get_alpn_selected(c.sock).empty())
        return 1;
    std::string settings;
    if (!base64url_decode(req.headers["HTTP2-Settings"], &settings) || settings.size() % 6)
        return 1;  // not taken: answered as HTTP/1.1
    std::vector<header_field> fields;
    fields.push_back({":method", std::string(verbstr[req.verb()])});
    fields.push_back({":scheme", "http"});
    fields.push_back({":authority", std::string(req.host())});
    fields.push_back({":path", std::string(req.target())});
    for (auto f : req.headers) {
        std::string name;
        lower(f.first, &name);
        if (name == "host" || name == "http2-settings" || http2::connection_specific(name))
            continue;
        fields.push_back({std::move(name), std::string(f.second)});
    }
    static const char k101[] =
        "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n";
    if (c.stream.write(k101, sizeof(k101) - 1) < 0 || c.stream.flush() < 0) return -1;
    return serve_with(c, dispatch, [&](http2::server_connection& h2, std::string_view pre) {
        return h2.serve_upgraded(std::move(fields), settings, pre);
    });
}

}  // namespace server_detail
}  // namespace http
}  // namespace net
}  // namespace photon
