// The streams of a server connection: timeouts by phase, the held head,
// taking over, the Content-Length-aware "closing" decision, the cached Date.
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <ctime>
#include <vector>

#include <photon/common/alog.h>
#include <photon/net/http/parser.h>

#include "http_date.h"
#include "server_conn.h"

namespace photon {
namespace net {
namespace http {
namespace server_detail {

namespace {
size_t head_capacity(const Limits& l) {
    // The InputBuffer must exceed max_head_size (parser.h); 64 KiB lets a
    // body arrive in large reads.
    return std::max<size_t>(64 * 1024, (size_t)l.max_head_size + 1024);
}
}  // namespace

Connection::Connection(ISocketStream* s, const ServerOptions& o, const std::atomic<bool>* stop,
                       server_metrics* m)
    : sock(s),
      opts(o),
      account(o.memory_budget ? o.memory_budget : MemoryBudget::process()),
      request_hold(&account),
      stopping(stop),
      metrics(m),
      th(photon::CURRENT),
      reader(this),
      stream(this),
      in(&reader, head_capacity(o.limits)),
      req(o.limits, this),
      resp(o.limits, this),
      orig_timeout(s->timeout()) {}

Connection* connection_of(Request& req) {
    auto r = dynamic_cast<server_request*>(&req);
    return r ? r->conn : nullptr;
}

size_t request_bytes(const Connection& c) { return c.in.capacity() + conn_stream::kMaxHold; }

int Connection::hold_request() {
    if (request_hold.held()) return 0;
    if (request_hold.acquire(request_bytes(*this), opts.header_timeout) == 0) return 0;
    no_room = true;
    errno = ENOMEM;
    return -1;
}

// ---- rate_guard ----------------------------------------------------------

uint64_t rate_guard::timeout(uint64_t tm, uint64_t grace, uint64_t rate) const {
    if (rate == 0 || grace == UINT64_MAX) return tm;
    // In double: bytes * 1e6 would overflow 64 bits past 18 TB.
    double left = (double)grace + (double)bytes_ * 1e6 / (double)rate - (double)waited_;
    if (left < 1) return 0;
    return left < (double)tm ? (uint64_t)left : tm;
}

// ---- read_side -----------------------------------------------------------

// The head's deadline is armed by its first read that finds the head
// incomplete: a head that came whole (nearly all) reads no clock. It then
// counts from there, not from the first byte: the parser's time apart.
void read_side::head() {
    phase_ = phase::Head;
    timed_out_ = false;
    head_deadline_ = lazy_timeout(c_->opts.header_timeout);
}

ssize_t read_side::read(void* buf, size_t count) {
    if (c_->stream.flush_for_read() < 0) return -1;
    uint64_t tm;
    wait_state w = wait_state::None;
    switch (phase_) {
        case phase::Idle:
            if (c_->stopping->load(std::memory_order_relaxed)) {
                errno = ECANCELED;
                return -1;
            }
            tm = idle_timeout_;
            w = wait_state::Idle;
            break;
        case phase::Head:
            tm = head_deadline_.get().timeout();
            if (tm == 0) {
                timed_out_ = true;
                errno = ETIMEDOUT;
                return -1;
            }
            w = wait_state::Head;
            break;
        case phase::Drain:
            if (c_->stopping->load(std::memory_order_relaxed)) {
                errno = ECANCELED;
                return -1;
            }
            tm = c_->opts.body_timeout;
            w = wait_state::Drain;
            break;
        default:
            tm = c_->stream.taken_over() ? c_->stream.timeout() : c_->opts.body_timeout;
            break;
    }
    // A body the server reads (the handler's, or its drain) must keep to
    // body_min_rate over the time its reads wait.
    bool guarded =
        (phase_ == phase::Drain || (phase_ == phase::Body && !c_->stream.taken_over())) &&
        c_->opts.body_min_rate;
    uint64_t t0 = 0;
    if (guarded) {
        tm = rate_.timeout(tm, c_->opts.body_timeout, c_->opts.body_min_rate);
        if (tm == 0) {
            timed_out_ = true;
            errno = ETIMEDOUT;
            return -1;
        }
        t0 = __update_now();
    }
    c_->sock->timeout(tm);
    // A taken-over connection's reader (a WebSocket) says itself what it waits for.
    if (w != wait_state::None) c_->wait.store(w, std::memory_order_relaxed);
    ssize_t n = c_->sock->recv(buf, count);
    if (w != wait_state::None) c_->wait.store(wait_state::None, std::memory_order_relaxed);
    if (guarded) rate_.account(__update_now() - t0, n);
    if (n < 0) {
        timed_out_ = errno == ETIMEDOUT;
        // A stop() interrupt of a waiting read: the connection just ends.
        if (w != wait_state::None && c_->stopping->load(std::memory_order_relaxed))
            errno = ECANCELED;
        return -1;
    }
    c_->metrics->received((uint64_t)n);
    if (n > 0 && phase_ == phase::Idle) {
        head();
        // The head's bytes are held from its first: a connection that gets
        // no room is answered 503, the bytes read dropped with it.
        if (c_->hold_request() < 0) return -1;
    }
    return n;
}

ssize_t read_side::readv(const struct iovec* iov, int iovcnt) {
    for (int i = 0; i < iovcnt; i++)
        if (iov[i].iov_len) return read(iov[i].iov_base, iov[i].iov_len);
    return 0;
}

// ---- conn_stream -----------------------------------------------------------

conn_stream::conn_stream(Connection* c) : ForwardSocketStream(c->sock, false), c_(c) {}

template <typename F>
ssize_t conn_stream::timed(F f) {
    bool guarded = !taken_over_ && c_->opts.send_min_rate;
    uint64_t tm = write_timeout();
    if (guarded && tm == 0) {
        errno = ETIMEDOUT;  // the response's rate budget is spent
        return -1;
    }
    underlay_->timeout(tm);
    uint64_t t0 = guarded ? __update_now() : 0;
    ssize_t r = f();
    if (guarded) rate_.account(__update_now() - t0, r);
    if (r > 0) c_->metrics->sent((uint64_t)r);
    return r;
}

ssize_t conn_stream::write_through(const struct iovec* iov, int iovcnt, size_t sum) {
    struct iovec small[16];
    std::vector<struct iovec> big;
    struct iovec* v = small;
    int n = 0;
    if (!held_.empty()) {
        if (iovcnt + 1 > 16) {
            big.resize(iovcnt + 1);
            v = big.data();
        }
        v[n++] = {&held_[0], held_.size()};
    } else if (iovcnt > 16) {
        big.resize(iovcnt);
        v = big.data();
    }
    for (int i = 0; i < iovcnt; i++)
        if (iov[i].iov_len) v[n++] = iov[i];
    size_t total = sum + held_.size();
    if (total == 0) return 0;
    writing_ = true;
    // v is our copy: the stream may advance it in place. A short count means
    // the stream met an error it reports on the next call: make that call,
    // for the rest, so the caller hears that error (a timeout, a reset).
    size_t done = 0;
    int at = 0;  // the first vector not yet sent whole
    ssize_t r = 0;
    while (done < total) {
        r = timed([&] {
            return n - at == 1 ? underlay_->write(v[at].iov_base, v[at].iov_len)
                               : underlay_->writev(v + at, n - at);
        });
        if (r <= 0) break;
        done += r;
        for (size_t k = (size_t)r; k > 0;) {  // past the bytes that went
            size_t step = std::min(k, v[at].iov_len);
            v[at].iov_base = (char*)v[at].iov_base + step;
            v[at].iov_len -= step;
            k -= step;
            if (v[at].iov_len == 0) at++;
        }
    }
    writing_ = false;
    held_.clear();  // sent, or the connection is dead: never sent twice
    if (done != total) {
        if (r == 0) errno = EIO;  // stopped without saying why
        return -1;
    }
    return (ssize_t)sum;
}

int conn_stream::flush(int flags) {
    if (held_.empty()) return 0;
    writing_ = true;
    size_t done = 0;
    while (done < held_.size()) {
        ssize_t r = timed([&] {
            return flags ? underlay_->send(&held_[done], held_.size() - done, flags)
                         : underlay_->write(&held_[done], held_.size() - done);
        });
        if (r <= 0) {
            if (r == 0) errno = EPIPE;
            break;
        }
        done += (size_t)r;
    }
    writing_ = false;
    bool ok = done == held_.size();
    held_.clear();
    return ok ? 0 : -1;
}

int conn_stream::flush_for_read() {
    if (held_.empty() || writing_) return 0;
    int r = flush();
    if (r == 0 && !taken_over_ && !c_->resp.head_sent()) hold_ = true;
    return r;
}

ssize_t conn_stream::write(const void* buf, size_t count) {
    struct iovec iov = {const_cast<void*>(buf), count};
    return writev(&iov, 1);
}

ssize_t conn_stream::writev(const struct iovec* iov, int iovcnt) {
    size_t sum = 0;
    for (int i = 0; i < iovcnt; i++) sum += iov[i].iov_len;
    if (hold_ && held_.size() + sum <= kMaxHold) {
        hold_ = false;
        for (int i = 0; i < iovcnt; i++) held_.append((const char*)iov[i].iov_base, iov[i].iov_len);
        return (ssize_t)sum;
    }
    hold_ = false;
    return write_through(iov, iovcnt, sum);
}

ssize_t conn_stream::send(const void* buf, size_t count, int flags) {
    if (flush_for_read() < 0) return -1;
    return timed([&] { return underlay_->send(buf, count, flags); });
}

ssize_t conn_stream::send(const struct iovec* iov, int iovcnt, int flags) {
    if (flush_for_read() < 0) return -1;
    return timed([&] { return underlay_->send(iov, iovcnt, flags); });
}

ssize_t conn_stream::sendfile(int in_fd, off_t offset, size_t count) {
    // MSG_MORE: the held head and the file's first bytes share a segment.
    if (!writing_ && flush(MSG_MORE) < 0) return -1;
    return timed([&] { return underlay_->sendfile(in_fd, offset, count); });
}

int conn_stream::take_over() {
    if (!taken_over_) {
        taken_over_ = true;
        if (!user_set_) user_timeout_ = c_->orig_timeout;
        // No more requests are read here: what the handler reads (a
        // WebSocket's messages) it accounts itself.
        c_->request_hold.reset();
    }
    hold_ = false;
    return flush();
}

uint64_t conn_stream::write_timeout() const {
    if (taken_over_) return user_timeout_;
    const ServerOptions& o = c_->opts;
    return rate_.timeout(o.send_timeout, o.send_timeout, o.send_min_rate);
}

ssize_t conn_stream::recv(void* buf, size_t count, int flags) {
    if (!taken_over_) (void)take_over();
    if (flush_for_read() < 0) return -1;
    c_->reader.body();
    return c_->in.read_some(buf, count);
}

ssize_t conn_stream::recv(const struct iovec* iov, int iovcnt, int flags) {
    for (int i = 0; i < iovcnt; i++)
        if (iov[i].iov_len) return recv(iov[i].iov_base, iov[i].iov_len, flags);
    return 0;
}

ssize_t conn_stream::read(void* buf, size_t count) {
    size_t got = 0;
    while (got < count) {
        ssize_t n = recv((char*)buf + got, count - got);
        if (n < 0) return got ? (ssize_t)got : -1;
        if (n == 0) break;
        got += (size_t)n;
    }
    return (ssize_t)got;
}

ssize_t conn_stream::readv(const struct iovec* iov, int iovcnt) {
    ssize_t total = 0;
    for (int i = 0; i < iovcnt; i++) {
        ssize_t n = read(iov[i].iov_base, iov[i].iov_len);
        if (n < 0) return total ? total : -1;
        total += n;
        if ((size_t)n < iov[i].iov_len) break;
    }
    return total;
}

int conn_stream::shutdown(ShutdownHow how) {
    if (how != ShutdownHow::Read) (void)flush_for_read();
    return underlay_->shutdown(how);
}

uint64_t conn_stream::timeout() const { return user_set_ ? user_timeout_ : c_->orig_timeout; }
void conn_stream::timeout(uint64_t tm) {
    user_timeout_ = tm;
    user_set_ = true;
}

// ---- server_response -------------------------------------------------------

bool closing_after(const Connection& c) {
    if (c.stopping->load(std::memory_order_relaxed)) return true;
    const server_request& req = c.req;
    if (req.body_done()) return false;
    // A client waiting for 100 Continue may never send the body; a body
    // that failed, timed out or is large is not worth reading.
    return req.expect_continue() || req.parse_error() != ParseError::None || c.reader.timed_out() ||
           req.body_left() > (int64_t)kDrainLimit;
}

template <typename F>
ssize_t server_response::body_write(F write) {
    body_write_ = !head_sent_;
    ssize_t r = write();
    body_write_ = false;
    return r;
}

ssize_t server_response::write(const void* buf, size_t count) {
    return body_write([&] { return Response::write(buf, count); });
}

ssize_t server_response::writev(const struct iovec* iov, int iovcnt) {
    return body_write([&] { return Response::writev(iov, iovcnt); });
}

void server_response::error(int status) {
    headers.clear();
    standard_headers(*this);
    (void)headers.insert("Connection", "close");
    if (status == 503) (void)headers.insert("Retry-After", "1");
    simple_response(*this, status, may_have_body());
}

bool server_response::frame_unsent(bool failed, bool close) {
    bool unwritten =
        may_have_body() && !headers.has("Transfer-Encoding") && headers.content_length() > 0;
    if (failed || unwritten) {
        const server_request& req = conn->req;
        if (!failed)
            LOG_EVERY_T(10, LOG_WARN("http server: a handler declared a body it did not write"));
        error(req.parse_error() != ParseError::None ? http_status(req.parse_error())
              : conn->reader.timed_out()            ? 408
                                                    : 500);
        return true;
    }
    bool framed = headers.has("Content-Length") || headers.has("Transfer-Encoding");
    if (close) (void)headers.set("Connection", "close");
    if (!framed && (may_have_body() || discards_body())) (void)headers.content_length(0);
    return false;
}

int server_response::start_line(std::string* out) const {
    if (closing_after(*conn) && !list_has_token(headers["Connection"], "close")) {
        // The object is not const: send_header() serializes the fields next.
        (void)const_cast<Headers&>(headers).set("Connection", "close");
    }
    // A head the server sends (after the handler, or an error) is held for
    // its body, if any, or until the exchange ends. A handler's head with a
    // Content-Length is held for its (soon written) body; one whose body has
    // no known length may wait for its first bytes (an event stream), so a
    // head a running handler sends by itself leaves now.
    if (!conn->in_handler)
        conn->stream.hold_next();
    else if (!body_write_ && (!headers.has("Content-Length") || headers.has("Transfer-Encoding")))
        conn->stream.hold_none();
    return Response::start_line(out);
}

void standard_headers(Response& resp) {
    (void)resp.headers.append_valid("Server", "photon");  // into a cleared set: no duplicate
    (void)resp.headers.append_valid("Date", http_date());
}

void simple_response(Response& resp, int status, bool body) {
    (void)resp.set_result(status);
    char text[64];
    std::string_view reason = status_reason(status);
    int len = snprintf(text, sizeof(text), "%d %.*s\n", status, (int)reason.size(), reason.data());
    (void)resp.headers.set("Content-Type", "text/plain");
    (void)resp.headers.content_length((uint64_t)len);
    if (body) (void)resp.write(text, (size_t)len);
}

// ---- Date -------------------------------------------------------------

std::string_view http_date() {
    thread_local time_t cached = -1;
    thread_local char buf[kHttpDateLength];
    time_t t = time(nullptr);
    if (t != cached) {
        format_http_date(t, buf);
        cached = t;
    }
    return std::string_view(buf, kHttpDateLength);
}

}  // namespace server_detail
}  // namespace http
}  // namespace net
}  // namespace photon
