// The HTTP client (client.h): one call is a series of rounds (connect, send,
// receive a head), repeated for a redirect or for a retry after a pooled
// connection turned out dead. A round goes over HTTP/2 (client_h2.h) when the
// origin speaks it, else over HTTP/1.1.
#include <photon/net/http/client.h>

#include <algorithm>
#include <cerrno>
#include <string>

#include <photon/common/alog-stdstring.h>
#include <photon/common/alog.h>
#include <photon/net/http/body.h>
#include <photon/net/security-context/tls-stream.h>
#include <photon/thread/thread.h>

#include "client_h2.h"
#include "client_internal.h"
#include "client_metrics.h"

namespace photon {
namespace net {
namespace http {

// One per operation, made at its first call: the input buffer and the
// current connection.
struct Client::Operation::Connection {
    explicit Connection(size_t buf_size) : in(&bounded, buf_size) {}
    bounded_stream bounded;  // .stream: the pooled (or own) connection, owned
    InputBuffer in;
    bool reused = false;
    bool own = false;  // not from the pool: an upgrade, which take_connection() may take
    client_metrics::call_stage stage =
        client_metrics::BEFORE;       // how far the round got, for metrics
    std::unique_ptr<h2_exchange> h2;  // the round's stream, when it went over HTTP/2
};

namespace {

constexpr char kDefaultUserAgent[] = "PhotonLibOS_HTTP";
constexpr int kMaxInformational = 16;  // 1xx heads skipped before a final one

enum class request_body { None, Buffer, Stream, Writer };
enum class step { Done, Fail, Retry, Redirect };

bool idempotent(Verb v) {
    return v == Verb::GET || v == Verb::HEAD || v == Verb::PUT || v == Verb::DELETE ||
           v == Verb::OPTIONS || v == Verb::TRACE;
}

// A failure that a connection closed by the server while idle would cause.
bool dead_connection(int e) {
    return e == ENODATA || e == ECONNRESET || e == EPIPE || e == ENOTCONN || e == ECONNABORTED;
}

bool is_redirect(int status) {
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

}  // namespace

class ClientImpl : public Client {
public:
    ClientImpl(ICookieJar* jar, TLSContext* ctx)
        : jar_(jar),
          own_tls_(ctx ? nullptr : new_tls_context()),
          dialer_(ctx ? ctx : own_tls_.get()),
          stray_h2_(&dialer_) {
        dialer_.received_bytes = metrics_.received_counter();
        dialer_.sent_bytes = metrics_.sent_counter();
    }

    int call(Operation* op) override;
    // call() without its metrics.
    int exchange(Operation* op);
    Headers* common_headers() override { return &common_; }
    ISocketStream* native_connect(std::string_view host, uint16_t port, bool secure,
                                  uint64_t timeout) override {
        dial_target t;
        t.host = host;
        t.port = port;
        t.secure = secure;
        t.alpn = alpn_offer::Context;  // the caller's protocol, the caller's context
        return dialer_.dial(t, m_bind_ips, Timeout(timeout));
    }

protected:
    void release(Operation* op) override {
        end_connection(op, true);
        delete op->conn_;
        op->conn_ = nullptr;
    }

private:
    const URL* proxy_for(Operation* op) const {
        if (!op->enable_proxy || !op->uds_path.empty()) return nullptr;
        if (!op->proxy_.empty()) return &op->proxy_;
        return m_proxy && !m_proxy_url.empty() ? &m_proxy_url : nullptr;
    }
    step round(Operation* op, request_body body, const Timeout& deadline);
    bool connect_h1(Operation* op, const dial_target& t, ISocketStream* fresh,
                    const Timeout& deadline, bool* added_auth);
    step exchange_h1(Operation* op, request_body body, bool added_auth);
    bool h2_candidate(Operation* op, const dial_target& t) const;
    step round_h2(Operation* op, request_body body, const Timeout& deadline,
                  h2_connection_pool* pool, h2_conn* hc);
    step answered(Operation* op);
    step failed(Operation* op, bool retryable);
    static int receive_final(Operation* op);
    static int send_body(Operation* op, request_body body);
    int follow_redirect(Operation* op, request_body* body, std::string* user_cookie);
    void end_connection(Operation* op, bool reusable);
    int set_target(Operation* op);

    client_metrics metrics_;  // first: the dialer counts HTTP/2's bytes into it
    Headers common_;
    ICookieJar* jar_;
    std::unique_ptr<TLSContext> own_tls_;
    socket_dialer dialer_;  // after own_tls_: its pooled TLS streams use the context
    // Dials the HTTP/2 connections of other vCPUs than the home's, each an
    // operation's own (only its dialer and no state of its own are used).
    h2_connection_pool stray_h2_;
};

// Back to the pool only after a complete exchange that both sides keep alive
// with nothing unread: a stray byte would be taken for the next response.
void ClientImpl::end_connection(Operation* op, bool reusable) {
    auto c = op->conn_;
    if (c && c->h2) c->h2->release();  // the stream (reset if unread); the connection stays
    if (!c) return;
    metrics_.bytes(c->bounded.sent, c->bounded.received);  // HTTP/1.1's; HTTP/2 counts its own
    c->bounded.sent = c->bounded.received = 0;
    if (!c->bounded.stream) return;
    Response& resp = op->resp;
    bool keep = reusable && op->body_errno == 0 && resp.status_code() >= 200 && resp.body_done() &&
                resp.keep_alive() && !list_has_token(op->req.headers["Connection"], "close") &&
                c->in.size() == 0;
    if (!keep) c->bounded.stream->close();  // a pooled stream is then deleted, not returned
    delete c->bounded.stream;
    c->bounded.stream = nullptr;
}

// Drops the connection after a failed round; errno is kept.
step ClientImpl::failed(Operation* op, bool retryable) {
    int e = errno;
    end_connection(op, false);
    errno = e;
    return retryable ? step::Retry : step::Fail;
}

// The request body after the head: 0, or -1 with errno.
int ClientImpl::send_body(Operation* op, request_body body) {
    Request& req = op->req;
    switch (body) {
        case request_body::Buffer: {
            auto n = (ssize_t)op->body_buffer_size_;
            return req.write(op->body_buffer_, n) == n ? 0 : -1;
        }
        case request_body::Stream:
            return req.write_stream(op->body_stream) < 0 ? -1 : 0;
        case request_body::Writer:
            return op->body_writer(&req) < 0 ? -1 : 0;
        default:
            return 0;
    }
}

// Origin-form on the wire, or absolute-form for http through a proxy; a
// target of the caller's in the form we want (e.g. "*") is kept.
int ClientImpl::set_target(Operation* op) {
    Request& req = op->req;
    const URL& u = req.url();
    bool absolute = proxy_for(op) && !u.secure();
    std::string_view t = req.target();
    bool is_abs = !t.empty() && t[0] != '/' && t != "*";
    if (!t.empty() && absolute == is_abs) return 0;
    if (!absolute) return req.target(u.target());
    std::string full;
    full.append(u.scheme()).append("://").append(u.host_port()).append(u.target());
    return req.target(full);
}

step ClientImpl::round(Operation* op, request_body body, const Timeout& deadline) {
    Request& req = op->req;
    const URL& u = req.url();
    if (!op->conn_) op->conn_ = new Operation::Connection(op->buf_size_);
    auto c = op->conn_;
    op->body_errno = 0;
    c->stage = client_metrics::BEFORE;
    if (set_target(op) < 0) return step::Fail;
    if (!req.headers.has("Host") && req.headers.insert("Host", u.host_port()) < 0)
        return step::Fail;

    dial_target t;
    t.host = u.host();
    t.port = u.port();
    t.secure = u.secure();
    t.uds_path = op->uds_path;
    t.proxy = proxy_for(op);
    // An upgrade may be taken over (take_connection()): a pooled stream
    // would go back to the pool when its new owner deletes it.
    c->own = list_has_token(req.headers["Connection"], "upgrade");
    c->reused = false;
    ISocketStream* fresh = nullptr;  // a TLS probe for h2 that settled on HTTP/1.1
    c->stage = client_metrics::CONNECTING;
    if (h2_candidate(op, t)) {
        h2_connection_pool* pool = dialer_.h2_pool();
        bool pooled = pool != nullptr;
        h2_conn* hc = nullptr;
        if (!pool) pool = &stray_h2_;
        switch (pool->acquire(t, m_bind_ips, deadline, pooled, &hc, &fresh)) {
            case h2_connection_pool::verdict::H2:
                return round_h2(op, body, deadline, pool, hc);
            case h2_connection_pool::verdict::Fail:
                if (deadline.expired()) errno = ETIMEDOUT;
                return step::Fail;
            case h2_connection_pool::verdict::H1:
                break;
        }
    }
    op->http_version_ = HttpVersion::Http1;
    bool added_auth = false;
    if (!connect_h1(op, t, fresh, deadline, &added_auth)) return step::Fail;
    return exchange_h1(op, body, added_auth);
}

// The HTTP/1.1 connection of a round: a new one for an upgrade, the TLS probe
// that settled on HTTP/1.1, or a pooled one; false (errno kept) without one.
// The proxy's credentials go with a forwarded request (a tunnel's CONNECT
// carries its own), for this round only: a redirect may lead into a tunnel or
// away from the proxy. *added_auth: they were added, to be taken out again.
bool ClientImpl::connect_h1(Operation* op, const dial_target& t, ISocketStream* fresh,
                            const Timeout& deadline, bool* added_auth) {
    Request& req = op->req;
    auto c = op->conn_;
    *added_auth = false;
    if (t.proxy && !t.secure && !req.headers.has("Proxy-Authorization")) {
        std::string auth = proxy_authorization(*t.proxy);
        if (!auth.empty() && req.headers.insert("Proxy-Authorization", auth) < 0) return false;
        *added_auth = !auth.empty();
    }
    ISocketStream* s = c->own  ? dialer_.dial(t, m_bind_ips, deadline)
                       : fresh ? dialer_.adopt(t, fresh)
                               : dialer_.get(t, m_bind_ips, deadline, &c->reused);
    if (!s) {
        if (*added_auth) req.headers.erase("Proxy-Authorization");
        if (deadline.expired()) errno = ETIMEDOUT;
        return false;
    }
    c->bounded.stream = s;
    c->bounded.deadline = deadline;
    c->bounded.sent = c->bounded.received = 0;
    c->in.reset(&c->bounded);
    metrics_.connection(c->reused);
    c->stage = client_metrics::SENDING;
    return true;
}

// The request and its final response on the HTTP/1.1 connection of a round.
step ClientImpl::exchange_h1(Operation* op, request_body body, bool added_auth) {
    Request& req = op->req;
    auto c = op->conn_;
    // A retry after nothing went out may re-send any body we can produce
    // again; after that only idempotent requests (RFC 9110 9.2.2), since the
    // server may have acted on it.
    bool resendable = body != request_body::Stream;
    bool replayable = resendable && idempotent(req.verb());
    Headers keep(std::move(req.headers));  // binding to the connection clears them
    req.reset(nullptr, &c->bounded);
    req.headers = std::move(keep);
    int head = req.send_header();
    if (added_auth) req.headers.erase("Proxy-Authorization");
    Response& resp = op->resp;
    resp.reset(&c->in, &c->bounded);
    if (head < 0 || send_body(op, body) < 0 || req.send() < 0) {
        int e = errno;
        // RFC 9112 9.5: a server may answer before it has the whole body (a
        // 413, a handler that does not read it) and close, so that our
        // writes fail; the answer, if it came, is the call's result.
        if (head < 0 || (e != EPIPE && e != ECONNRESET) || receive_final(op) < 0) {
            errno = e;
            bool nothing_sent = c->bounded.sent == 0;
            return failed(
                op, c->reused && dead_connection(e) && (nothing_sent ? resendable : replayable));
        }
        op->body_errno = e;
        return answered(op);
    }
    c->stage = client_metrics::RECEIVING;
    if (receive_final(op) < 0) {
        bool retry = c->reused && c->bounded.received == 0 && dead_connection(errno) && replayable;
        if (errno == ENODATA) errno = ECONNRESET;  // closed without a response
        return failed(op, retry);
    }
    return answered(op);
}

// The tail of a round that got a final response.
step ClientImpl::answered(Operation* op) {
    Response& resp = op->resp;
    op->status_code = resp.status_code();
    if (jar_) jar_->get_cookies_from_headers(op->req.url().host(), &resp);
    if (op->follow && is_redirect(op->status_code) && resp.headers.has("Location"))
        return step::Redirect;
    return step::Done;
}

// HTTP/2 for this round: not through proxies or unix sockets, not for
// upgrades (RFC 9113 8.6) or CONNECT; h2 over TLS by ALPN, h2c when asked.
bool ClientImpl::h2_candidate(Operation* op, const dial_target& t) const {
    if (http_version_ == HttpVersion::Http1 || t.proxy || !t.uds_path.empty() || op->conn_->own ||
        op->req.verb() == Verb::CONNECT)
        return false;
    return t.secure || http_version_ == HttpVersion::Http2;
}

// A round on a stream of hc (one of whose users is ours): the same steps as
// over HTTP/1.1, with HTTP/2's retry rule added: a request the server did
// not process (a refused stream, one past its GOAWAY: EAGAIN) is sent again
// whatever its method, on another connection.
step ClientImpl::round_h2(Operation* op, request_body body, const Timeout& deadline,
                          h2_connection_pool* pool, h2_conn* hc) {
    Request& req = op->req;
    auto c = op->conn_;
    if (!c->h2) c->h2.reset(new h2_exchange(op->buf_size_));
    h2_exchange& x = *c->h2;
    c->reused = hc->used;
    hc->used = true;
    metrics_.connection(c->reused);
    c->stage = client_metrics::SENDING;
    op->http_version_ = HttpVersion::Http2;
    x.bind(pool, hc, &req, &op->resp, body != request_body::None, deadline);
    bool resendable = body != request_body::Stream;
    bool replayable = resendable && idempotent(req.verb());
    if (req.send_header() < 0) {  // no stream: nothing went out, the body is untouched
        return failed(op, errno == EAGAIN || (c->reused && dead_connection(errno)));
    }
    if (send_body(op, body) < 0 || req.send() < 0 || x.finish_request() < 0) {
        int e = errno;
        // As over HTTP/1.1 (RFC 9113 8.1): the server may answer before it
        // has the whole body and reset the rest of it; that answer is ours.
        if ((e != EPIPE && e != ECONNRESET) || x.receive_response(req.verb()) < 0) {
            bool refused = errno == EAGAIN;
            errno = refused ? EAGAIN : e;
            return failed(
                op, refused ? resendable
                            : c->reused && dead_connection(e) && replayable && !x.responded());
        }
        op->body_errno = e;
        return answered(op);
    }
    c->stage = client_metrics::RECEIVING;
    if (x.receive_response(req.verb()) < 0) {
        bool retry =
            errno == EAGAIN ? resendable : c->reused && dead_connection(errno) && replayable;
        return failed(op, retry);
    }
    return answered(op);
}

// Reads response heads up to a final one (1xx skipped, 101 returned): 0, or
// -1 with errno (ENODATA: closed before a response).
int ClientImpl::receive_final(Operation* op) {
    for (int i = 0;; i++) {
        if (op->resp.receive_header(op->req.verb()) < 0) return -1;
        int sc = op->resp.status_code();
        if (sc >= 200 || sc == 101) return 0;
        if (i == kMaxInformational) {
            errno = EPROTO;
            return -1;
        }
    }
}

// Re-targets op at the Location of its 3xx response: 0, 1 when it cannot be
// followed (the body is gone), or -1 with errno.
int ClientImpl::follow_redirect(Operation* op, request_body* body, std::string* user_cookie) {
    Request& req = op->req;
    Response& resp = op->resp;
    int sc = resp.status_code();
    Verb v = req.verb();
    // 303 asks for a GET; POST after 301/302 becomes GET too, as browsers,
    // curl and Go do (RFC 9110 15.4.2); 307/308 keep method and body.
    bool to_get = (sc == 303 && v != Verb::HEAD) || ((sc == 301 || sc == 302) && v == Verb::POST);
    if (!to_get && *body == request_body::Stream) return 1;
    std::string location(resp.headers["Location"]);
    std::string old_host(req.url().host_port());
    // A short body is read off so that the connection can serve again.
    if (resp.body_size() >= 0 && resp.body_size() <= 64 * 1024) (void)resp.skip_body();
    end_connection(op, true);
    if (to_get) {
        v = Verb::GET;
        *body = request_body::None;
        req.headers.erase("Content-Length");
        req.headers.erase("Transfer-Encoding");
    }
    if (req.redirect(v, location, false) < 0) return -1;
    if (req.url().host_port() != old_host) {  // credentials were for the old host only
        req.headers.erase("Authorization");
        req.headers.erase("Cookie");
        user_cookie->clear();
    }
    return 0;
}

// Counted: one request; then its response, or its error by the step that failed.
int ClientImpl::call(Operation* op) {
    if (!metrics::kCounting) return exchange(op);
    metrics_.request();
    uint64_t t0 = __update_now();
    int r = exchange(op);
    if (r == 0) {
        metrics_.response(op->status_code, __update_now() - t0);
    } else {
        int e = errno;
        metrics_.error(op->conn_ ? op->conn_->stage : client_metrics::BEFORE, e);
        errno = e;
    }
    return r;
}

int ClientImpl::exchange(Operation* op) {
    end_connection(op, true);  // the previous call's
    if (op->conn_) op->conn_->stage = client_metrics::BEFORE;
    op->status_code = -1;
    Request& req = op->req;
    // A target in absolute form (a proxy's director sets one) names the URL.
    if (!req.url().is_absolute() && (req.target().empty() || req.target()[0] == '/' ||
                                     req.redirect(req.verb(), req.target(), false) < 0)) {
        errno = EINVAL;
        return -1;
    }
    if (req.headers.has("Content-Length") && req.headers.has("Transfer-Encoding")) {
        errno = EINVAL;
        return -1;
    }
    request_body body = op->body_buffer_  ? request_body::Buffer
                        : op->body_stream ? request_body::Stream
                        : op->body_writer ? request_body::Writer
                                          : request_body::None;
    // Photon programs set Content-Length on a GET or HEAD without a body
    // (Photon sent it and nothing after it): it goes, or the server waits
    // for that body and finish() fails the call with EPROTO.
    if (body == request_body::None && (req.verb() == Verb::GET || req.verb() == Verb::HEAD))
        req.headers.erase("Content-Length");
    if ((body == request_body::Stream || body == request_body::Writer) &&
        !req.headers.has("Content-Length") && !req.headers.has("Transfer-Encoding") &&
        req.headers.insert("Transfer-Encoding", "chunked") < 0)
        return -1;
    if (!req.headers.has("User-Agent") &&
        req.headers.insert("User-Agent", m_user_agent.empty() ? kDefaultUserAgent : m_user_agent) <
            0)
        return -1;
    for (auto f : common_)
        if (!req.headers.has(f.first) && req.headers.insert(f.first, f.second) < 0) return -1;

    std::string user_cookie(req.headers["Cookie"]);
    Timeout deadline(std::min(op->timeout.timeout(), m_timeout));
    for (uint32_t followed = 0, retried = 0;;) {
        if (jar_) {
            req.headers.erase("Cookie");
            if (!user_cookie.empty()) req.headers.insert("Cookie", user_cookie);
            if (jar_->set_cookies_to_headers(&req) < 0) return -1;
        }
        switch (round(op, body, deadline)) {
            case step::Done:
                return 0;
            case step::Fail:
                return -1;
            case step::Retry:
                if (retried++ >= op->retry || deadline.expired()) return -1;
                metrics_.retry();
                LOG_DEBUG("http client: retrying ` on a new connection", req.url().url());
                break;
            case step::Redirect: {
                if (followed++ >= op->follow) {
                    LOG_EVERY_T(10, LOG_WARN("http client: more than ` redirects from `",
                                             op->follow, req.url().url()));
                    errno = ELOOP;
                    return -1;
                }
                op->conn_->stage = client_metrics::BEFORE;  // a bad Location is the request's
                int r = follow_redirect(op, &body, &user_cookie);
                if (r != 0) return r > 0 ? 0 : -1;
                retried = 0;
                break;
            }
        }
    }
}

// ---- Operation ---------------------------------------------------------------

Client::Operation::Operation(Client* c, uint16_t buf_size)
    : enable_proxy(c && c->has_proxy()), client_(c), buf_size_(buf_size) {}

Client::Operation::Operation(Client* c, Verb v, std::string_view url, uint16_t buf_size)
    : Operation(c, buf_size) {
    if (req.reset(v, url, enable_proxy) < 0) req.verb(v);  // the call fails with EINVAL
}

Client::Operation::~Operation() {
    if (client_) {
        client_->release(this);
    } else if (conn_) {
        conn_->h2.reset();
        if (conn_->bounded.stream) conn_->bounded.stream->close();
        delete conn_->bounded.stream;
        delete conn_;
    }
}

ISocketStream* Client::Operation::take_connection(std::string* leftover) {
    if (!conn_ || !conn_->own || !conn_->bounded.stream || !leftover || status_code < 0) {
        errno = EINVAL;
        return nullptr;
    }
    InputBuffer& in = conn_->in;
    leftover->append(in.data());
    in.consume(in.size());
    ISocketStream* s = conn_->bounded.stream;
    conn_->bounded.stream = nullptr;
    return s;
}

int Client::Operation::set_url(std::string_view url) {
    URL u;
    if (!u.from_string(url)) return -1;
    return req.redirect(req.verb(), url, enable_proxy);
}

// As Photon's: an operation that had no proxy gets its request line in
// absolute form at once (callers read req.target() before call()).
int Client::Operation::set_proxy(std::string_view proxy) {
    if (!proxy_.from_string(proxy)) return -1;
    if (!enable_proxy) {
        enable_proxy = true;
        std::string u(url());
        if (!u.empty() && req.redirect(req.verb(), u, true) < 0) return -1;
    }
    return 0;
}

Client* new_http_client(ICookieJar* cookie_jar, TLSContext* tls_ctx) {
    return new ClientImpl(cookie_jar, tls_ctx);
}

}  // namespace http
}  // namespace net
}  // namespace photon
