// HTTPServer: the keep-alive loop of a connection (head, dispatch, the
// response's completion, the rest of the body), error answers, graceful
// stop. The streams and timeouts of a connection are in server_conn.cpp.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <string>
#include <vector>

#include <photon/common/alog.h>
#include <photon/common/timeout.h>
#include <photon/common/utility.h>
#include <photon/net/http/server.h>
#include <photon/thread/thread.h>

#include "server_conn.h"
#include "server_h2.h"
#include "server_metrics.h"

namespace photon {
namespace net {
namespace http {

using namespace server_detail;

namespace {

// Closing with input unread: how long and how much of it we read and drop
// after half-closing, so the peer reads our answer before any RST.
constexpr uint64_t kLingerTime = 2'000'000;
constexpr size_t kLingerBytes = 1024 * 1024;

// The path of the target that handlers are matched against: origin-form as
// is, the path of an absolute-form target, else the target (CONNECT's
// authority, OPTIONS' "*"), which only the default handler gets.
std::string_view request_path(const Request& req) { return req.abs_path(); }

// "/a" matches "/a" and "/a/b", not "/ab"; "/a/" matches "/a/b"; "=/a"
// matches "/a" only. *remain: the path after the pattern.
bool pattern_matches(std::string_view pattern, std::string_view path, std::string_view* remain) {
    if (pattern[0] == '=') {
        *remain = {};
        return path == pattern.substr(1);
    }
    if (path.size() < pattern.size() || path.compare(0, pattern.size(), pattern) != 0) return false;
    *remain = path.substr(pattern.size());
    return path.size() == pattern.size() || pattern.back() == '/' || path[pattern.size()] == '/';
}

}  // namespace

class HTTPServerImpl : public HTTPServer {
public:
    explicit HTTPServerImpl(const ServerOptions& options) : opts_(options) {}
    ~HTTPServerImpl() override;

    int handle_connection(ISocketStream* stream) override;
    void add_handler(DelegateHTTPHandler handler, std::string_view pattern) override;
    void add_handler(HTTPHandler* handler, bool ownership, std::string_view pattern) override;
    int stop(uint64_t timeout) override;
    size_t connections() const override { return count_.load(std::memory_order_relaxed); }

private:
    struct route_entry {
        std::string pattern;
        HTTPHandler* obj = nullptr;
        DelegateHTTPHandler fn;
        // Handlers get their pattern, as in Photon.
        int call(Request& req, Response& resp) const {
            return obj ? obj->handle_request(req, resp, pattern) : fn(req, resp, pattern);
        }
        bool set() const { return obj || fn; }
    };

    // 0: the connection ended normally; -1 with errno: an I/O error.
    int serve(Connection& c);
    int head_failed(Connection& c);
    // How an exchange ends, once its response is sent or given up. The
    // stream sends what it holds first (a drain's first read sends it).
    enum class exchange_end {
        Flush,  // the connection ends as it is: cut short, or the handler's
        Close,  // then unread input is read and dropped (linger) before closing
        Drain,  // the body the handler left is read and dropped, then as Keep
        Keep,   // the next request is served
    };
    // One exchange: the response to the request whose head is read.
    exchange_end respond(Connection& c, uint32_t nth);
    // 1: serve the next request; 0 / -1: close, as serve().
    int end(Connection& c, exchange_end how);
    // The matching handler, timed and counted.
    int dispatch(Request& req, Response& resp);
    int route(Request& req, Response& resp);
    void send_error(Connection& c, int status);
    bool drain_body(Connection& c);
    void linger(Connection& c);
    void interrupt_waiting();
    void own(HTTPHandler* h);
    void add_route(route_entry r);

    const ServerOptions opts_;
    std::vector<route_entry> routes_;
    route_entry default_;
    std::vector<HTTPHandler*> owned_;
    std::atomic<bool> stopping_{false};
    std::atomic<size_t> count_{0};
    photon::spinlock lock_;  // conns_, from any vCPU
    intrusive_list<Connection> conns_;
    server_metrics metrics_{opts_.metrics_name, &count_};
};

HTTPServerImpl::~HTTPServerImpl() {
    stopping_.store(true);
    // Stop serving at once: idle reads are interrupted, the others fail on
    // the shut-down sockets; handlers busy elsewhere are waited for.
    for (uint64_t nap = 100; count_.load() > 0; nap = std::min<uint64_t>(nap * 2, 10'000)) {
        {
            SCOPED_LOCK(lock_);
            for (Connection* c = conns_.front(); c;
                 c = c->next() == conns_.front() ? nullptr : c->next())
                c->sock->shutdown(ShutdownHow::ReadWrite);
        }
        interrupt_waiting();
        if (photon::thread_usleep(nap) < 0 && errno == ENOSYS) break;  // not a photon thread
    }
    for (auto h : owned_) delete h;
}

void HTTPServerImpl::own(HTTPHandler* h) {
    if (std::find(owned_.begin(), owned_.end(), h) == owned_.end()) owned_.push_back(h);
}

void HTTPServerImpl::add_route(route_entry r) {
    if (r.pattern.empty())
        default_ = std::move(r);
    else
        routes_.push_back(std::move(r));
}

void HTTPServerImpl::add_handler(DelegateHTTPHandler handler, std::string_view pattern) {
    route_entry r;
    r.pattern.assign(pattern);
    r.fn = handler;
    add_route(std::move(r));
}

void HTTPServerImpl::add_handler(HTTPHandler* handler, bool ownership, std::string_view pattern) {
    if (!handler) return;
    if (ownership) own(handler);
    route_entry r;
    r.pattern.assign(pattern);
    r.obj = handler;
    add_route(std::move(r));
}

int HTTPServerImpl::route(Request& req, Response& resp) {
    std::string_view path = request_path(req);
    std::string_view remain;
    for (auto& r : routes_)
        if (pattern_matches(r.pattern, path, &remain)) return r.call(req, resp);
    if (default_.set()) return default_.call(req, resp);
    simple_response(resp, 404, req.verb() != Verb::HEAD);
    return 0;
}

int HTTPServerImpl::dispatch(Request& req, Response& resp) {
    static thread_local uint32_t t_seq = 0;
    metrics::sampled_timer timer(t_seq);
    int r = route(req, resp);
    if (timer.sampled()) metrics_.handler_time(timer.elapsed_us());
    metrics_.request(r < 0 ? 500 : resp.status_code());
    if (r < 0) metrics_.error(server_metrics::HANDLER_FAILED);
    return r;
}

void HTTPServerImpl::interrupt_waiting() {
    SCOPED_LOCK(lock_);
    Connection* first = conns_.front();
    for (Connection* c = first; c; c = c->next() == first ? nullptr : c->next())
        if (c->wait.load(std::memory_order_relaxed) != wait_state::None)
            photon::thread_interrupt(c->th, ECANCELED);
}

int HTTPServerImpl::stop(uint64_t timeout) {
    stopping_.store(true);
    Timeout t(timeout);
    // Interrupt again each round: a read may have started waiting since
    // (on another vCPU), or taken the interrupt while it was ready.
    for (uint64_t nap = 100;; nap = std::min<uint64_t>(nap * 2, 10'000)) {
        interrupt_waiting();
        if (count_.load() == 0) return 0;
        uint64_t left = t.timeout();
        if (left == 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        if (photon::thread_usleep(std::min(nap, left)) < 0 && errno == ENOSYS) return -1;
    }
}

int HTTPServerImpl::handle_connection(ISocketStream* stream) {
    count_.fetch_add(1);
    if (stopping_.load()) {
        count_.fetch_sub(1);
        return 0;
    }
    metrics_.connection();
    int ret, err;
    {
        Connection c(stream, opts_, &stopping_, &metrics_);
        {
            SCOPED_LOCK(lock_);
            conns_.push_back(&c);
        }
        c.req.reset(&c.in, &c.stream);
        ret = serve(c);
        err = errno;
        stream->timeout(c.orig_timeout);
        SCOPED_LOCK(lock_);
        conns_.erase(&c);
    }
    count_.fetch_sub(1);  // last: a destructor waiting for 0 may free us now
    errno = err;
    return ret;
}

int HTTPServerImpl::serve(Connection& c) {
    for (uint32_t n = 0;;) {
        if (stopping_.load(std::memory_order_relaxed)) return 0;
        // A new connection gets header_timeout for its first byte, a kept-alive
        // one keepalive_timeout; bytes already here (pipelined) start a head.
        if (c.in.size()) {
            c.reader.head();
            if (c.hold_request() < 0) return head_failed(c);
        } else {
            c.reader.idle(n ? opts_.keepalive_timeout : opts_.header_timeout);
        }
        if (n == 0) {  // the first bytes tell whether it speaks HTTP/2
            int h2 = speaks_http2(c);
            if (h2 < 0) return head_failed(c);
            if (h2) return serve_http2(c, {this, &HTTPServerImpl::dispatch});
            if (c.in.size()) {
                c.reader.head();
                if (c.hold_request() < 0) return head_failed(c);
            }
        }
        if (c.req.receive_header() < 0) return head_failed(c);
        if (c.req.headers.has("Upgrade")) {
            int r = upgrade_to_http2(c, {this, &HTTPServerImpl::dispatch});
            if (r <= 0) return r;
        }
        c.reader.start_body();
        int r = end(c, respond(c, ++n));
        c.request_hold.reset();  // the response is out
        if (r <= 0) return r;
    }
}

int HTTPServerImpl::head_failed(Connection& c) {
    int e = errno;
    if (c.no_room) {  // the budget had no room for the request
        LOG_EVERY_T(10, LOG_WARN("http server: no room in the memory budget: 503"));
        metrics_.error(server_metrics::NO_MEMORY);
        send_error(c, 503);
        linger(c);
        return 0;
    }
    switch (e) {
        case ENODATA:    // the peer closed between requests
        case ECANCELED:  // stop()
            return 0;
        case EPROTO:
            // The stream's own (a TLS handshake that failed): nothing to answer.
            if (c.req.parse_error() == ParseError::None) return 0;
            metrics_.error(server_metrics::BAD_REQUEST);
            send_error(c, http_status(c.req.parse_error()));
            linger(c);
            return 0;
        case ETIMEDOUT:
            // Silence for an idle connection; 408 for a head that is late.
            if (c.reader.head_started()) {
                metrics_.error(server_metrics::HEAD_TIMEOUT);
                send_error(c, 408);
            }
            LOG_DEBUG("http server: closing a connection after a timeout");
            return 0;
        default:
            errno = e;
            return -1;
    }
}

void HTTPServerImpl::send_error(Connection& c, int status) {
    c.resp.reset(&c.in, &c.stream);
    c.resp.for_request(c.req.verb() == Verb::HEAD ? Verb::HEAD : Verb::GET, 1);
    c.resp.error(status);
    (void)c.resp.send();
    (void)end(c, exchange_end::Flush);
}

HTTPServerImpl::exchange_end HTTPServerImpl::respond(Connection& c, uint32_t nth) {
    server_request& req = c.req;
    server_response& resp = c.resp;
    uint32_t max = opts_.max_requests_per_connection;
    bool keep =
        req.keep_alive() && !stopping_.load(std::memory_order_relaxed) && (max == 0 || nth < max);
    resp.start(keep);
    c.in_handler = true;
    int ret = dispatch(req, resp);
    c.in_handler = false;
    if (c.stream.taken_over()) return exchange_end::Flush;  // the handler spoke for itself

    bool close = !keep || ret < 0 || closing_after(c);
    bool drain = !close && !req.body_done();
    if (!resp.head_sent() && resp.frame_unsent(ret < 0, close)) close = true;
    if (ret < 0 && resp.head_sent() && resp.headers.has("Transfer-Encoding")) {
        // A failed handler's chunked body is left unended: the client must
        // see it cut short, not complete (a proxy would cache it).
        return exchange_end::Flush;
    }
    if (resp.send() < 0) {
        metrics_.error(server_metrics::SEND_FAILED);
        if (errno == EPROTO)
            LOG_EVERY_T(10, LOG_WARN("http server: a handler wrote less than its Content-Length"));
        return exchange_end::Flush;
    }
    if (close || resp.closes()) return exchange_end::Close;
    return drain ? exchange_end::Drain : exchange_end::Keep;
}

// Inlined: its Keep case is a flush on every request.
__FORCE_INLINE__ int HTTPServerImpl::end(Connection& c, exchange_end how) {
    switch (how) {
        case exchange_end::Flush:
            (void)c.stream.flush();
            return 0;
        case exchange_end::Close:
            if (c.stream.flush() < 0) return -1;
            if (!c.req.body_done()) linger(c);
            return 0;
        case exchange_end::Drain:
            // Its first read sends what is held.
            if (!drain_body(c)) {
                // stop() interrupted it: the answer is out, the connection ends.
                if (stopping_.load(std::memory_order_relaxed)) linger(c);
                return 0;
            }
            break;
        case exchange_end::Keep:
            break;
    }
    return c.stream.flush() < 0 ? -1 : 1;
}

bool HTTPServerImpl::drain_body(Connection& c) {
    c.reader.drain();  // stop() interrupts it
    char buf[8192];
    uint64_t total = 0;
    while (total <= kDrainLimit) {
        ssize_t n = c.req.read(buf, sizeof(buf));
        if (n < 0) return false;
        if (n == 0) return true;
        total += (uint64_t)n;
    }
    return false;
}

void HTTPServerImpl::linger(Connection& c) {
    if (c.stream.flush() < 0 || c.sock->shutdown(ShutdownHow::Write) < 0) return;
    Timeout t(kLingerTime);
    char buf[4096];
    for (size_t total = 0; total < kLingerBytes;) {
        uint64_t left = t.timeout();
        if (left == 0 || stopping_.load(std::memory_order_relaxed)) break;
        c.sock->timeout(left);
        c.wait.store(wait_state::Idle, std::memory_order_relaxed);
        ssize_t n = c.sock->recv(buf, sizeof(buf));
        c.wait.store(wait_state::None, std::memory_order_relaxed);
        if (n <= 0) break;
        total += (size_t)n;
    }
}

HTTPServer* new_http_server() { return new HTTPServerImpl(ServerOptions()); }

HTTPServer* new_http_server(const ServerOptions& options) { return new HTTPServerImpl(options); }

std::string_view pattern_remain(const Request& req, std::string_view pattern) {
    std::string_view path = request_path(req), remain;
    if (pattern.empty()) return path;
    if (pattern[0] == '=') return {};
    return pattern_matches(pattern, path, &remain) ? remain : path;
}

ISocketStream* connection_stream(Request& req) {
    auto r = dynamic_cast<server_request*>(&req);
    if (!r) {
        errno = EINVAL;
        return nullptr;
    }
    (void)r->conn->stream.take_over();
    return &r->conn->stream;
}

}  // namespace http
}  // namespace net
}  // namespace photon
