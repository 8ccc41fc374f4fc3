// HTTP/1.1 server: serves keep-alive (and pipelined) requests on connections
// handed to it by an ISocketServer, dispatching each to a handler by the
// prefix of its path. PhotonLibOS's API, plus ServerOptions (limits and
// timeouts that stop slowloris and oversized messages) and a graceful stop().
//
//   auto http = new_http_server();
//   http->add_handler(new_fs_handler(fs), true, "/static/");
//   http->add_handler({&obj, &Obj::handle}, "/api");  // int Obj::handle(Request&,
//                                                    //   Response&, std::string_view)
//   tcp->set_handler(http->get_connection_handler());
//   tcp->bind_v4localhost(8080); tcp->listen(); tcp->start_loop(true);
#pragma once

#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <photon/common/callback.h>
#include <photon/common/memory_budget.h>
#include <photon/common/object.h>
#include <photon/common/string_view.h>
#include <photon/net/http/message.h>
#include <photon/net/socket.h>

namespace photon {
namespace fs {
class IFileSystem;
}

namespace net {
namespace http {

enum class Protocol { HTTP = 0, HTTPS };

// A handler answers one request: it reads the request body (or not), fills
// resp (status, headers, body) and returns 0. The server then completes the
// response (resp.send(); an empty body gets Content-Length: 0) and, if both
// sides allow keep-alive, reads the next request; an unread body of up to
// 1 MiB is read and dropped first, a larger one closes the connection. A
// negative return closes the connection after the response: if the handler
// sent nothing, a 500 (or the status of the request body's error: 400, 413,
// 408) is sent first; a chunked body it started is not ended, so the client
// sees it cut short. The third argument is the pattern the handler was added
// with ("" for the default handler), as in Photon; pattern_remain() gives the
// path after it. The server adds Server and Date fields before the handler
// runs, and resp.keep_alive() tells whether the connection stays open (a
// handler may set it false).
//
// Writes: the response head is held back and leaves with the first body
// write (one writev), or when the response is complete; a handler that sends
// a head with a Content-Length and then waits for something else delays it
// until then. A head without one (chunked or until close, e.g. an event
// stream) that the handler sends by itself (send_header()) leaves at once. Handlers
// that write the head and body themselves (take_head() and output()) send
// them in one write to output() and may use sendfile on it.
using DelegateHTTPHandler = Delegate<int, Request&, Response&, std::string_view>;

class HTTPHandler : public Object {
public:
    virtual int handle_request(Request& req, Response& resp, std::string_view pattern) = 0;
};

// Extension: limits and timeouts (microseconds; -1 = none). A violation is
// answered with its status and Connection: close, and the connection is
// closed. A new connection waits header_timeout for its first byte, then
// closes silently.
struct ServerOptions {
    Limits limits;                            // head/body sizes: 414, 431, 413
    uint64_t header_timeout = 30'000'000;     // a whole request head, from its first byte: 408
    uint64_t keepalive_timeout = 60'000'000;  // idle between requests: closed without a response
    uint64_t body_timeout = 30'000'000;       // each body read: -1 ETIMEDOUT; 408 if unanswered
    uint64_t send_timeout = 60'000'000;       // each response write: then closed
    // Bytes per second that a request body (read by the handler or drained)
    // and a response must average over the time their reads / writes wait for
    // the peer, once body_timeout / send_timeout of such waiting has passed:
    // a peer moving a byte per timeout is not served forever. Failing it is
    // ETIMEDOUT, as a timeout. 0: no minimum.
    uint64_t body_min_rate = 1024;
    uint64_t send_min_rate = 1024;
    uint32_t max_requests_per_connection = 0;  // 0: unlimited; then Connection: close
    // The bytes held for each connection's request in flight (its head and
    // read-ahead buffer and the response head the server holds back, from
    // its head's first byte until its response is out or a handler takes the
    // connection over: connection_stream()) and for the message a
    // WebSocket on it is receiving are taken from this budget, through an
    // account per connection (memory_budget.h). A request that finds no room
    // within header_timeout is answered 503 with Retry-After and the
    // connection closed; a connection waiting for room is not read.
    // nullptr: MemoryBudget::process().
    MemoryBudget* memory_budget = nullptr;
    // HTTP/2 on the same listener: h2c with prior knowledge (the client
    // preface first) or by "Upgrade: h2c" (a request without a body), and h2
    // when the TLS handshake chose it by ALPN (offer "h2" in the TLSContext:
    // set_alpn_protos({"h2", "http/1.1"})). Each stream runs the handlers on
    // its own Request and Response; limits.max_head_size bounds a header
    // list (431), keepalive_timeout an idle connection, body_timeout and
    // send_timeout each body read and write, and the connection window is
    // taken from memory_budget. doc/http2.md has the rest.
    // Only: every connection is HTTP/2 (h2c with prior knowledge, h2), as an
    // nginx "listen ... http2" port; bytes that are not the client preface
    // get GOAWAY, where On would answer them as HTTP/1.1 (400).
    enum class Http2 : uint8_t { Off, On, Only };
    Http2 http2 = Http2::On;
    // HTTP/2's own limits (doc/http2.md), each against a peer that floods:
    uint32_t http2_max_concurrent_streams = 128;  // more at once are refused (REFUSED_STREAM)
    uint32_t http2_stream_window = 1 << 20;       // a stream's receive window (bytes)
    uint32_t http2_connection_window = 16 << 20;  // the connection's, from memory_budget
    uint32_t http2_header_table_size = 4096;      // the HPACK decoder's dynamic table
    // Streams the peer resets while their handlers run, per second (the rapid
    // reset attack, CVE-2023-44487), and PING / SETTINGS / PRIORITY / empty
    // frames per second: past either, GOAWAY(ENHANCE_YOUR_CALM).
    uint32_t http2_max_resets_per_second = 200;
    uint32_t http2_max_control_per_second = 1000;
    // The server's label (server="...") in the metrics registry
    // (photon/common/metric-meter/prometheus.h: photon_http_server_*); "" is "http-N", N
    // counting the servers made in this process.
    std::string metrics_name;
};

class HTTPServer : public Object {
public:
    // Serves one connection until it closes, fails or the server stops; the
    // stream stays the caller's. 0, or -1 with errno after an I/O error.
    virtual int handle_connection(ISocketStream* stream) = 0;
    ISocketServer::Handler get_connection_handler() {
        return {this, &HTTPServer::handle_connection};
    }

    // Handlers are matched in the order added; a pattern matches a path it
    // prefixes ("/a/" matches "/a/b"; "/a" matches "/a" and "/a/b", not
    // "/ab"); extension: "=/a" matches exactly "/a" (remain ""). The path is the target's, without
    // the query and undecoded (of an absolute-form target, its path). The empty pattern sets the
    // default, used when none matches (it also gets CONNECT's authority and
    // OPTIONS' "*"); without one the answer is 404. Add handlers before
    // serving; owned ones are deleted with the server.
    virtual void add_handler(DelegateHTTPHandler handler, std::string_view pattern = "") = 0;
    virtual void add_handler(HTTPHandler* handler, bool ownership = false,
                             std::string_view pattern = "") = 0;

    // Extension: graceful stop. New requests on kept-alive connections are
    // refused: a connection waiting for a request (or in the middle of its
    // head, or reading and dropping a body its handler left unread, or an
    // HTTPS one still in its TLS handshake) is closed at once, one whose
    // handler runs is closed after its
    // response, which says Connection: close unless its head was already
    // sent. Returns when no connection is being served or `timeout` (us)
    // passed: 0, or -1 ETIMEDOUT (the handlers go on). Connections that come
    // later are closed at once: terminate the ISocketServer first. Call it
    // from a photon coroutine (any vCPU). Deleting the server is abrupt: it
    // shuts the open connections down and waits for their handlers.
    // (Not pure, so that an HTTPServer written for Photon compiles: the
    // default fails with ENOSYS.)
    virtual int stop(uint64_t /*timeout*/ = -1ULL) { return errno = ENOSYS, -1; }
    // Extension: the number of connections being served now (default 0).
    virtual size_t connections() const { return 0; }
};

class Client;

// Proxy hooks: the director fills the outgoing request from the incoming one
// (its target must be an absolute URL); the modifier fills the response to
// the client from the upstream one. Nonzero fails the request (502). Bodies
// are streamed by the handler and must not be touched here.
using Director = Delegate<int, Request&, Request&>;
using Modifier = Delegate<int, Response&, Response&>;

// Static files of `fs`, the request path (after the handler's pattern) taken
// relative to its root: GET and HEAD, Range for both (single range; 206/416;
// 200 for the whole file, as Photon's), If-Modified-Since / If-None-Match (304), Last-Modified /
// ETag, Content-Type by extension; bodies go by sendfile when the file and the connection allow.
// The caller keeps fs alive and owns it.
HTTPHandler* new_fs_handler(fs::IFileSystem* fs);

// Reverse proxy over `client` (a new one if nullptr).
HTTPHandler* new_proxy_handler(Director cb_Director, Modifier cb_Modifier, Client* client = nullptr,
                               bool client_ownership = false);

// Forward proxy: absolute-form targets are fetched, CONNECT is tunnelled.
HTTPHandler* new_default_forward_proxy_handler(uint64_t timeout = -1);

// Extension: the coroutine dump of photon/thread/dump.h (every coroutine of every vCPU, with
// backtraces): GET as text, ?format=json (or Accept: application/json) as JSON, ?frames=N to
// cap the backtraces. 503 while another dump runs. Mount it where only operators reach it.
HTTPHandler* new_thread_dump_handler();

// Extension: the metrics registry (photon/common/metric-meter/prometheus.h: every vCPU's
// counters and histograms, and what the program registers) in Prometheus's text format 0.0.4,
// for GET and HEAD. Mount it where the scraper reaches it, e.g. at /metrics.
HTTPHandler* new_metrics_handler();

HTTPServer* new_http_server();
// Extension: with limits and timeouts.
HTTPServer* new_http_server(const ServerOptions& options);

// Extension: the part of req's path after `pattern`, a handler's third
// argument: "/a.txt" for "/static/a.txt" and "/static", "a.txt" for
// "/static/"; "" for an exact ("=...") pattern; the path (without query;
// of an absolute-form target, its path) for "" or a pattern it does not
// start with. Views req.
std::string_view pattern_remain(const Request& req, std::string_view pattern);

// Extension: the connection a request being served by an HTTPServer came
// on, for a handler that takes it over (a CONNECT tunnel): what the response
// holds back is sent first; reads return the bytes that arrived after the
// request first; its timeout() (the stream's when the connection came,
// unless set) bounds its reads and writes instead of ServerOptions. The
// server sends nothing more and closes the connection when the handler
// returns. (resp.output() is
// the same stream; a read through it takes the connection over too.)
// nullptr with EINVAL for a request that no HTTPServer is serving.
ISocketStream* connection_stream(Request& req);

}  // namespace http
}  // namespace net
}  // namespace photon
