// Private to net/http/client*.cpp: the HTTP client's HTTP/2 side. h2_connection_pool keeps
// one HTTP/2 connection per origin for the client's home vCPU (h2 when ALPN
// picks it, h2c by prior knowledge when asked) and remembers the origins that
// do not speak it; h2_exchange puts an Operation's req and resp on one stream
// of such a connection (through Message's HeadSender hook), so that the
// HTTP/1.1 code above reads and writes bodies as it always does.
//
// Everything here belongs to one vCPU (the pool's, or an operation's own
// connection) and yields only the calling coroutine.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <photon/common/timeout.h>
#include <photon/net/http/body.h>
#include <photon/net/http/message.h>
#include <photon/net/socket.h>
#include <photon/thread/thread.h>

#include "../http2/client_connection.h"
#include "client_internal.h"
#include "h2_body.h"

namespace photon {
namespace net {
namespace http {

// One HTTP/2 connection and the operations on it. Deleted when it is neither
// the pool's (pooled) nor used by an operation (users).
struct h2_conn {
    std::unique_ptr<ISocketStream> sock;
    std::unique_ptr<http2::client_connection> conn;
    std::string key;
    uint32_t users = 0;       // operations holding (or about to hold) a stream of it
    bool pooled = false;      // the pool's connection for key
    uint64_t idle_since = 0;  // photon::now when users fell to 0
    bool secure = false;      // h2 (TLS), else h2c
    bool own = false;         // an operation's own (off the home vCPU): closed after it
    bool used = false;        // a stream was opened on it before

    ~h2_conn();  // the connection first (it joins its reader), then the socket
    // A new connection over s (owned from now on), preface and SETTINGS
    // sent; for h2c, waits until the server's SETTINGS show that it speaks
    // HTTP/2. nullptr with errno: EPROTONOSUPPORT (not an HTTP/2 server),
    // ETIMEDOUT, the socket's.
    // Its bytes are counted into the dialer's counters.
    static h2_conn* open(ISocketStream* s, bool secure, const Timeout& deadline,
                         const socket_dialer* dialer);
};

class h2_connection_pool {
public:
    explicit h2_connection_pool(socket_dialer* dialer) : dialer_(dialer) {}
    // Closes what is left; no operation may hold a connection of it any more.
    ~h2_connection_pool();

    enum class verdict { H2, H1, Fail };
    // The origin's HTTP/2 connection, made if there is none (one dial at a
    // time per origin; the others wait for it), with one more user: H2 and
    // *out. H1: the origin does not speak HTTP/2 (ALPN chose otherwise, or
    // the h2c preface was not answered as HTTP/2); *h1 is then the fresh TLS
    // connection ALPN settled on HTTP/1.1 (the caller's) or nullptr. Fail,
    // errno set. pooled == false: a connection of the caller's own.
    verdict acquire(const dial_target& t, const std::vector<IPAddr>& bind_ips,
                    const Timeout& deadline, bool pooled, h2_conn** out, ISocketStream** h1);
    // One user less; an unusable or own connection without users is closed.
    void put(h2_conn* c);
    // The home vCPU is ending: idle connections close now, busy ones once
    // their users are done, and no new ones are pooled (callers then get
    // connections of their own).
    void close_all();

private:
    struct origin {
        h2_conn* conn = nullptr;
        bool dialing = false;
        uint64_t h1_until = 0;  // photon::now before which it is taken as HTTP/1.1 only
    };
    void sweep();
    void retire(h2_conn* c);

    socket_dialer* dialer_;
    std::map<std::string, origin> origins_;
    std::vector<h2_conn*> retired_;  // unusable, waiting for their users
    condition_variable dialed_;      // an origin's dial ended
    bool closed_ = false;
    uint64_t last_sweep_ = 0;
};

// An operation's exchange on an HTTP/2 stream: req and resp are bound to it
// (reset(in, this, this)), so that req.send_header() opens the stream with
// the request head, body writes become DATA, and resp.read() reads DATA.
class h2_exchange final : public Message::HeadSender, public IStream {
public:
    explicit h2_exchange(size_t buf_size) : in_(this, buf_size) {}
    ~h2_exchange() override;

    // Binds req and resp to a stream of c (one user of c is now ours); the
    // request head goes out with END_STREAM when !has_body. Every wait ends
    // at deadline (ETIMEDOUT).
    void bind(h2_connection_pool* pool, h2_conn* c, Request* req, Response* resp, bool has_body,
              const Timeout& deadline);
    // Ends the request body (END_STREAM) unless the head carried it: 0 or -1.
    int finish_request();
    // Waits for the final response head and fills resp (status, headers, the
    // body's framing): 0, or -1 with errno (EAGAIN: the server did not
    // process the request; EPROTO, ECONNRESET, ETIMEDOUT).
    int receive_response(Verb request_verb);
    // Done: the stream is released (reset if its response was not read to
    // its end) and our user of the connection given back.
    void release();
    bool bound() const { return conn_ != nullptr; }
    // Whether the request head went out (a stream was opened).
    bool opened() const { return stream_ != nullptr; }
    // Whether any response byte or the head arrived.
    bool responded() const { return responded_; }
    bool secure() const { return conn_ && conn_->secure; }

    int send_head(Message& m) override;
    // req.send(trailers): ends the request body with a HEADERS frame of them (EINVAL when the
    // head or an earlier send ended it).
    int send_trailers(Message& m, const Headers& trailers) override;

    ssize_t read(void* buf, size_t count) override;
    ssize_t readv(const struct iovec* iov, int iovcnt) override;
    ssize_t write(const void* buf, size_t count) override;
    ssize_t writev(const struct iovec* iov, int iovcnt) override;
    int close() override { return 0; }

private:
    h2_connection_pool* pool_ = nullptr;
    h2_conn* conn_ = nullptr;
    http2::client_stream* stream_ = nullptr;
    Request* req_ = nullptr;
    Response* resp_ = nullptr;
    Timeout deadline_;
    InputBuffer in_;
    bool has_body_ = false, finished_ = false, responded_ = false;
    h2_body_end body_end_;  // the response's Content-Length, to see its end in time
};

}  // namespace http
}  // namespace net
}  // namespace photon
