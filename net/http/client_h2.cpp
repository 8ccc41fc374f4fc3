// The HTTP client's HTTP/2 side (client_h2.h): the per-origin connections and
// an operation's exchange on one stream.
#include "client_h2.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <photon/common/alog-stdstring.h>
#include <photon/common/alog.h>
#include <photon/net/http/verb.h>
#include <photon/net/security-context/tls-stream.h>

namespace photon {
namespace net {
namespace http {

namespace {

// An origin whose ALPN or h2c preface said HTTP/1.1 is asked again after this
// long (a server may be reconfigured); meanwhile its requests go as HTTP/1.1.
constexpr uint64_t kH1Memory = 600ULL * 1000 * 1000;
// Pooled connections without a stream for this long are closed (servers close
// theirs after 10 s to 3 min with a GOAWAY, which also retires one).
constexpr uint64_t kIdleExpiration = 60ULL * 1000 * 1000;
constexpr uint64_t kSweepInterval = 1000ULL * 1000;

// Fields that describe the HTTP/1.1 connection, not the message (RFC 9113
// 8.2.2): never sent on a stream. Host becomes :authority.
bool connection_specific(std::string_view name) {
    static const char* const kDropped[] = {"connection",        "keep-alive", "proxy-connection",
                                           "transfer-encoding", "upgrade",    "host"};
    for (auto d : kDropped)
        if (name == d) return true;
    return false;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out)
        if (c >= 'A' && c <= 'Z') c = c - 'A' + 'a';
    return out;
}

}  // namespace

// ---- h2_conn -------------------------------------------------------------------

h2_conn::~h2_conn() {
    conn.reset();  // sends GOAWAY and joins its reader while the socket is there
    sock.reset();
}

h2_conn* h2_conn::open(ISocketStream* s, bool secure, const Timeout& deadline,
                       const socket_dialer* dialer) {
    std::unique_ptr<h2_conn> c(new h2_conn);
    c->sock.reset(s);
    c->secure = secure;
    http2::connection_options o;
    // A response may take long to begin (the call's timeout bounds it): no
    // GOAWAY for a quiet connection, the pool closes idle ones itself.
    o.idle_timeout = UINT64_MAX / 4;
    o.received_bytes = dialer->received_bytes;
    o.sent_bytes = dialer->sent_bytes;
    c->conn.reset(new http2::client_connection(s, o));
    if (c->conn->start() < 0) return nullptr;
    // h2c by prior knowledge: an HTTP/1.1 server answers the preface with a
    // 400 or closes; we learn it here, before a request was sent.
    if (!secure && c->conn->wait_settings(deadline.timeout()) < 0) return nullptr;
    return c.release();
}

// ---- h2_connection_pool -------------------------------------------------------------------

h2_connection_pool::~h2_connection_pool() {
    for (auto& kv : origins_) delete kv.second.conn;
    for (auto c : retired_) delete c;
}

void h2_connection_pool::close_all() {
    closed_ = true;
    for (auto& kv : origins_)
        if (kv.second.conn) retire(kv.second.conn), kv.second.conn = nullptr;
    for (auto c : retired_) c->sock->shutdown(ShutdownHow::ReadWrite);  // their users fail at once
}

void h2_connection_pool::retire(h2_conn* c) {
    c->pooled = false;
    if (c->users == 0)
        delete c;
    else
        retired_.push_back(c);
}

// Closes pooled connections idle too long or no longer usable (the server's
// GOAWAY, a failure), and forgets origins with nothing to remember.
void h2_connection_pool::sweep() {
    uint64_t now = photon::now;
    if (now - last_sweep_ < kSweepInterval) return;
    last_sweep_ = now;
    for (auto it = origins_.begin(); it != origins_.end();) {
        origin& o = it->second;
        h2_conn* c = o.conn;
        if (c && c->users == 0 && (!c->conn->usable() || now - c->idle_since >= kIdleExpiration)) {
            retire(c);
            o.conn = c = nullptr;
        }
        if (!c && !o.dialing && o.h1_until <= now)
            it = origins_.erase(it);
        else
            ++it;
    }
}

h2_connection_pool::verdict h2_connection_pool::acquire(const dial_target& t,
                                                        const std::vector<IPAddr>& bind_ips,
                                                        const Timeout& deadline, bool pooled,
                                                        h2_conn** out, ISocketStream** h1) {
    *out = nullptr;
    *h1 = nullptr;
    pooled = pooled && !closed_;
    std::string key = pool_key(t);
    if (pooled) {
        sweep();
        for (;;) {
            origin& o = origins_[key];
            if (o.h1_until > photon::now) return verdict::H1;
            if (o.conn && o.conn->conn->usable()) {
                o.conn->users++;
                *out = o.conn;
                return verdict::H2;
            }
            if (o.conn) retire(o.conn), o.conn = nullptr;
            if (!o.dialing) {
                o.dialing = true;
                break;
            }
            if (dialed_.wait_no_lock(deadline) < 0 && errno == ETIMEDOUT) return verdict::Fail;
        }
    }
    dial_target d = t;
    d.alpn = alpn_offer::H2;
    ISocketStream* s = dialer_->dial(d, bind_ips, deadline);
    h2_conn* c = nullptr;
    bool h2 = s && (!t.secure || tls_stream_get_alpn_selected(s) == "h2");
    int err = 0;
    if (h2) {
        c = h2_conn::open(s, t.secure, deadline, dialer_);  // s is the connection's now
        if (!c) err = errno;
    } else if (!s) {
        err = deadline.expired() ? ETIMEDOUT : errno;
    }
    verdict v = c                                      ? verdict::H2
                : (s && !h2) || err == EPROTONOSUPPORT ? verdict::H1
                                                       : verdict::Fail;
    if (v == verdict::H1) {
        LOG_DEBUG("http client: ` speaks HTTP/1.1 only", key);
        if (s && !h2) *h1 = s;
    }
    if (c) {
        c->key = key;
        c->users = 1;
        c->own = !pooled;
        *out = c;
    }
    if (pooled) {
        origin& o = origins_[key];
        o.dialing = false;
        if (v == verdict::H1) o.h1_until = photon::now + kH1Memory;
        if (c && !closed_) {
            c->pooled = true;
            o.conn = c;
        }
        dialed_.notify_all();
    }
    if (v == verdict::Fail) errno = err;
    return v;
}

void h2_connection_pool::put(h2_conn* c) {
    if (c->own) {
        delete c;
        return;
    }
    if (--c->users > 0) return;
    c->idle_since = photon::now;
    if (c->pooled && c->conn->usable() && !closed_) return;
    if (c->pooled) {  // unusable: the origin's next request makes another one
        auto it = origins_.find(c->key);
        if (it != origins_.end() && it->second.conn == c) it->second.conn = nullptr;
    } else {
        retired_.erase(std::remove(retired_.begin(), retired_.end(), c), retired_.end());
    }
    delete c;
}

// ---- h2_exchange ---------------------------------------------------------------

h2_exchange::~h2_exchange() { release(); }

void h2_exchange::bind(h2_connection_pool* pool, h2_conn* c, Request* req, Response* resp,
                       bool has_body, const Timeout& deadline) {
    release();
    pool_ = pool;
    conn_ = c;
    req_ = req;
    resp_ = resp;
    has_body_ = has_body;
    finished_ = !has_body;
    responded_ = false;
    body_end_.reset();
    deadline_ = deadline;
    in_.reset(this);
    Headers keep(std::move(req->headers));  // binding clears them
    req->reset(nullptr, this, this);
    req->headers = std::move(keep);
    resp->reset(&in_, this, nullptr);
}

void h2_exchange::release() {
    if (stream_) conn_->conn->release(stream_);
    stream_ = nullptr;
    if (conn_) {
        if (pool_)
            pool_->put(conn_);
        else
            delete conn_;  // unreachable: every exchange has its pool
    }
    conn_ = nullptr;
    if (req_) req_->reset(nullptr, nullptr, nullptr);
    req_ = nullptr;
    if (resp_) resp_->reset(nullptr, nullptr, nullptr);
    resp_ = nullptr;
}

int h2_exchange::send_head(Message& m) {
    if (stream_ || &m != req_) return errno = EINVAL, -1;
    Request& req = *req_;
    const URL& u = req.url();
    std::vector<http2::header_field> f;
    f.reserve(req.headers.size() + 4);
    f.push_back({":method", std::string(verbstr[req.verb()])});
    f.push_back({":scheme", std::string(u.scheme())});
    std::string_view host = req.headers["Host"];
    f.push_back({":authority", std::string(host.empty() ? u.host_port() : host)});
    f.push_back({":path", std::string(req.target())});
    std::string_view conn_tokens = req.headers["Connection"];
    for (auto h : req.headers) {
        std::string name = lower(h.first);
        if (connection_specific(name) || list_has_token(conn_tokens, name)) continue;
        if (name == "te" && !iequals(h.second, "trailers")) continue;
        f.push_back({std::move(name), std::string(h.second)});
    }
    stream_ = conn_->conn->request(f, !has_body_, deadline_.timeout());
    if (!stream_ && deadline_.expired()) errno = ETIMEDOUT;
    return stream_ ? 0 : -1;
}

int h2_exchange::send_trailers(Message& m, const Headers& trailers) {
    if (&m != req_ || !has_body_ || finished_) return errno = EINVAL, -1;
    if (!stream_) return errno = ENOTCONN, -1;
    std::vector<http2::header_field> f;
    append_h2_fields(trailers, &f);
    finished_ = true;
    return stream_->finish(&f);
}

int h2_exchange::finish_request() {
    if (finished_) return 0;
    if (!stream_) return errno = ENOTCONN, -1;
    finished_ = true;
    return stream_->finish();
}

int h2_exchange::receive_response(Verb request_verb) {
    if (!stream_) return errno = ENOTCONN, -1;
    int status = stream_->response(deadline_.timeout());
    if (status < 0) return -1;
    responded_ = true;
    Response& resp = *resp_;
    resp.reset(&in_, this, nullptr);
    resp.minor_version(1);
    if (resp.set_result(status) < 0) return errno = EPROTO, -1;
    for (auto& h : stream_->response_fields()) {
        if (!h.name.empty() && h.name[0] == ':') continue;
        if (resp.headers.insert(h.name, h.value) < 0) return errno = EPROTO, -1;
    }
    bool none = request_verb == Verb::HEAD || status == 204 || status == 304;
    bool cl = resp.headers.has("Content-Length");
    body_end_.reset(none ? 0 : cl ? (int64_t)resp.headers.content_length() : -1);
    Framing framing = none ? Framing::None : cl ? Framing::ContentLength : Framing::UntilClose;
    resp.head_received(framing, cl ? resp.headers.content_length() : 0);
    return 0;
}

// A body read through the stream; trailers go to resp.trailers (h2_body.h).
ssize_t h2_exchange::read(void* buf, size_t count) {
    if (!stream_) return errno = ENOTCONN, -1;
    ssize_t n = body_end_.read(stream_, buf, count, deadline_.timeout(),
                               resp_ ? &resp_->trailers : nullptr);
    if (n < 0 && deadline_.expired()) errno = ETIMEDOUT;
    return n;
}

ssize_t h2_exchange::readv(const struct iovec* iov, int iovcnt) {
    ssize_t total = 0;
    for (int i = 0; i < iovcnt; i++) {
        if (iov[i].iov_len == 0) continue;
        ssize_t n = read(iov[i].iov_base, iov[i].iov_len);
        if (n < 0) return total ? total : -1;
        total += n;
        if ((size_t)n < iov[i].iov_len) break;
    }
    return total;
}

ssize_t h2_exchange::write(const void* buf, size_t count) {
    if (!stream_) return errno = ENOTCONN, -1;
    if (count == 0) return 0;
    ssize_t n = stream_->write(buf, count, deadline_.timeout());
    if (n < 0 && deadline_.expired()) errno = ETIMEDOUT;
    return n;
}

ssize_t h2_exchange::writev(const struct iovec* iov, int iovcnt) {
    ssize_t total = 0;
    for (int i = 0; i < iovcnt; i++) {
        if (iov[i].iov_len == 0) continue;
        ssize_t n = write(iov[i].iov_base, iov[i].iov_len);
        if (n < 0) return -1;
        total += n;
    }
    return total;
}

}  // namespace http
}  // namespace net
}  // namespace photon
