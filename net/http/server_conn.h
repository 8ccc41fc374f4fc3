// One connection of the HTTP server: the streams its messages use, with the
// server's timeouts and write coalescing, and the per-connection state that
// stop() looks at. Private header of net/http/. A connection is served by
// one coroutine (a CONNECT tunnel may add a second one that only writes).
#pragma once

#include <atomic>
#include <string>

#include <photon/common/list.h>
#include <photon/common/memory_budget.h>
#include <photon/common/timeout.h>
#include <photon/net/http/body.h>
#include <photon/net/http/message.h>
#include <photon/net/http/server.h>
#include <photon/net/socket.h>
#include <photon/thread/thread.h>

#include "../forward_socket.h"
#include "../socket_io.h"
#include "server_metrics.h"

namespace photon {
namespace net {
namespace http {
namespace server_detail {

struct Connection;

// Where a blocked read of the connection is: stop() interrupts the reads
// that wait for a request (Idle, Head) and the server's drain of a body the
// handler left unread (Drain), never a handler's.
// WebSocket: a stream that took the connection over waits for frames (it
// sends Close 1001 when interrupted by stop()).
// Http2: the reader of an HTTP/2 connection, until it has acted on stop().
enum class wait_state : uint8_t { None, Idle, Head, Drain, WebSocket, Http2 };

// An unread body up to this size is read and dropped to keep the connection;
// a larger one closes it.
constexpr uint64_t kDrainLimit = 1024 * 1024;

// A minimum average rate for the bytes of a body or a response, over the
// time spent waiting for the peer (not the handler's own time): per-wait
// timeouts alone let a peer move a byte per timeout forever. The budget is
// `grace` plus bytes / rate; each wait gets at most what is left of it.
class rate_guard {
public:
    void start() { bytes_ = waited_ = 0; }
    // The timeout of the next wait: `tm`, or less when the budget is nearer;
    // 0 once it is spent. rate 0 or grace -1: `tm`.
    uint64_t timeout(uint64_t tm, uint64_t grace, uint64_t rate) const;
    // A wait that took `us` and moved n bytes (or failed, n < 0).
    void account(uint64_t us, ssize_t n) {
        waited_ += us;
        if (n > 0) bytes_ += (uint64_t)n;
    }

private:
    uint64_t bytes_ = 0, waited_ = 0;
};

// The read side, under the InputBuffer: one recv per read() (a short count
// is "what has arrived"), bounded by the timeout of the current phase, after
// sending whatever the write side holds (the peer may wait for it, e.g. a
// 100 Continue).
class read_side : public IStream {
public:
    explicit read_side(Connection* c) : c_(c) {}

    // Waiting for a request: at most `timeout` us for its first byte, which
    // starts the head's deadline.
    void idle(uint64_t timeout) {
        phase_ = phase::Idle;
        idle_timeout_ = timeout;
        timed_out_ = false;
    }
    // A head has started (its first byte is here): header_timeout from now.
    void head();
    // Reading a body: body_timeout per read, and body_min_rate over them.
    void body() { phase_ = phase::Body; }
    // A new request's body: its rate is counted from here.
    void start_body() {
        body();
        rate_.start();
    }
    // The server reads and drops the rest of a body: as body(), and stop()
    // interrupts it (ECANCELED).
    void drain() { phase_ = phase::Drain; }
    bool head_started() const { return phase_ != phase::Idle; }
    // The last read failed with ETIMEDOUT.
    bool timed_out() const { return timed_out_; }

    ssize_t read(void* buf, size_t count) override;
    ssize_t readv(const struct iovec* iov, int iovcnt) override;
    ssize_t write(const void*, size_t) override { return enosys(); }
    ssize_t writev(const struct iovec*, int) override { return enosys(); }
    int close() override { return 0; }

private:
    enum class phase : uint8_t { Idle, Head, Body, Drain };
    static ssize_t enosys() {
        errno = ENOSYS;
        return -1;
    }

    Connection* c_;
    phase phase_ = phase::Idle;
    bool timed_out_ = false;
    rate_guard rate_;  // of the current body (Body, Drain)
    uint64_t idle_timeout_ = -1;
    lazy_timeout head_deadline_{UINT64_MAX};
};

// The write side, which the messages write to and connection_stream()
// hands out. It holds the first write of a response (its head) and sends it
// with the next write, so a head and its body leave in one writev; the
// server flushes what is held when the exchange ends, and so does any read
// or sendfile. server_response::start_line() says which heads are held. Each
// write is bounded by send_timeout. Once a handler took the connection
// over, reads serve the buffered bytes first and the handler's timeout()
// bounds reads and writes. Socket options and names are the socket's; the
// socket is the server's (close() leaves it open).
class conn_stream : public ForwardSocketStream {
public:
    explicit conn_stream(Connection* c);

    // Holds the next write (up to kMaxHold bytes) until the one after it.
    void hold_next() { hold_ = true; }
    // The next write goes out at once (a head whose body may be long in
    // coming).
    void hold_none() { hold_ = false; }
    // Sends what is held: 0 or -1 with errno. `flags` go to the send (e.g.
    // MSG_MORE before a sendfile).
    int flush(int flags = 0);
    // Before a read: flushes unless a write is under way (it sends the held
    // bytes itself), and holds the next write again if the response head is
    // still to come (a 100 Continue went first).
    int flush_for_read();
    // connection_stream(): sends what is held and holds nothing more.
    int take_over();
    bool taken_over() const { return taken_over_; }
    // The timeout of a write: send_timeout (cut to send_min_rate's budget),
    // or the handler's after take_over().
    uint64_t write_timeout() const;
    // A new response: its first write (the head, or a 100 Continue) is held,
    // and its send rate is counted from here.
    void start_response() {
        hold_ = true;
        rate_.start();
    }

    int shutdown(ShutdownHow how) override;

    ssize_t read(void* buf, size_t count) override;
    ssize_t readv(const struct iovec* iov, int iovcnt) override;
    ssize_t write(const void* buf, size_t count) override;
    ssize_t writev(const struct iovec* iov, int iovcnt) override;

    ssize_t recv(void* buf, size_t count, int flags = 0) override;
    ssize_t recv(const struct iovec* iov, int iovcnt, int flags = 0) override;
    ssize_t send(const void* buf, size_t count, int flags = 0) override;
    ssize_t send(const struct iovec* iov, int iovcnt, int flags = 0) override;
    ssize_t sendfile(int in_fd, off_t offset, size_t count) override;

    uint64_t timeout() const override;
    void timeout(uint64_t tm) override;

    // No layer of its own: callers see the socket's objects.
    Object* get_underlay_object(uint64_t recursion) override {
        return underlay_->get_underlay_object(recursion);
    }

    static constexpr size_t kMaxHold = 4096;  // a head, or a head and a small body

private:
    // Writes held bytes then iov, all of them: the bytes of iov, or -1.
    ssize_t write_through(const struct iovec* iov, int iovcnt, size_t sum);
    // Runs one socket write f() under write_timeout(), counting its time and
    // bytes against send_min_rate: f's result, or -1 ETIMEDOUT.
    template <typename F>
    ssize_t timed(F f);

    Connection* c_;
    std::string held_;
    bool hold_ = false;
    bool writing_ = false;
    bool taken_over_ = false;
    bool user_set_ = false;
    uint64_t user_timeout_ = -1;  // timeout(us) of a handler that took over
    rate_guard rate_;             // of the current response
};

class server_request : public Request {
public:
    server_request(const Limits& l, Connection* c) : Request(l), conn(c) {}
    Connection* const conn;
    // Body bytes not yet read, when a Content-Length says; -1 if unknown.
    int64_t body_left() const {
        return body_size() < 0 ? -1 : body_size() - (int64_t)reader_.received();
    }
};

class server_response : public Response {
public:
    server_response(const Limits& l, Connection* c) : Response(l), conn(c) {}
    Connection* const conn;
    bool head_sent() const { return head_sent_; }
    bool may_have_body() const { return body_allowed(); }
    // A HEAD answer: framed as the GET's, its body writes dropped.
    bool discards_body() const { return body_discarded(); }
    // The head sent (or to send) ends the connection.
    bool closes() const { return !keep_alive() || list_has_token(headers["Connection"], "close"); }

    // A new response to conn's request, 200 unless the handler says: the
    // standard fields, and "Connection" as `keep` and the request's version
    // need; its head is held for its body.
    void start(bool keep);
    // In place of anything set so far: a short `status` answer that closes
    // the connection (head and body in one write).
    void error(int status);
    // Frames a head the handler left unsent (an empty body if it has no
    // framing; "Connection: close" if `close`): false. Or, if the handler
    // failed or declared a body it did not write, puts an error answer in
    // its place: true (the connection closes).
    bool frame_unsent(bool failed, bool close);

    // Body writes: a head they send goes out with their bytes.
    ssize_t write(const void* buf, size_t count) override;
    ssize_t writev(const struct iovec* iov, int iovcnt) override;

protected:
    // Called as the head is serialized (by the handler's first write, or by
    // the server): the last moment to say "Connection: close", and where the
    // stream is told whether to hold the head (see the definition).
    int start_line(std::string* out) const override;

private:
    // Runs a body write, during which a head it sends counts as sent with
    // body bytes.
    template <typename F>
    ssize_t body_write(F write);

    bool body_write_ = false;  // the head being sent comes with body bytes
};

// Whether the connection will close after the response being sent, as far as
// is known now: stop(), or a request body it cannot keep up with.
bool closing_after(const Connection& c);

struct Connection : public intrusive_list_node<Connection> {
    Connection(ISocketStream* s, const ServerOptions& o, const std::atomic<bool>* stopping,
               server_metrics* m);

    ISocketStream* const sock;
    const ServerOptions& opts;
    MemoryBudget::Account account;            // the server's budget, for this connection
    BudgetHold request_hold;                  // of the request in flight
    const std::atomic<bool>* const stopping;  // the server's
    server_metrics* const metrics;            // the server's: bytes each way
    photon::thread* const th;                 // the coroutine serving it
    std::atomic<wait_state> wait{wait_state::None};
    bool in_handler = false;  // a handler is running
    bool no_room = false;     // the request found no room in the budget (503)
    read_side reader;
    conn_stream stream;
    InputBuffer in;
    server_request req;
    server_response resp;
    const uint64_t orig_timeout;  // the stream's, restored at the end

    // Takes request_bytes() for the request whose head begins, waiting at
    // most header_timeout: 0, or -1 ENOMEM with no_room set.
    int hold_request();
};

// The connection req (a request being served by an HTTPServer) came on, or
// nullptr.
Connection* connection_of(Request& req);

// The bytes the server holds for a request in flight on c.
size_t request_bytes(const Connection& c);

// The Server and Date fields every response gets.
void standard_headers(Response& resp);
// A short text response "<code> <reason>\n" (the body only if `body`: the
// response may carry one).
void simple_response(Response& resp, int status, bool body);

// The IMF-fixdate of now ("Sun, 06 Nov 1994 08:49:37 GMT"), made at most
// once a second per OS thread.
std::string_view http_date();

// Inline: once a request, on the server's hot path.
inline void server_response::start(bool keep) {
    const server_request& req = conn->req;
    reset(&conn->in, &conn->stream);
    (void)set_result(200);
    for_request(req.verb(), req.minor_version());
    standard_headers(*this);
    if (!keep)
        (void)keep_alive(false);  // Connection: close
    else if (req.minor_version() == 0)
        (void)headers.insert("Connection", "keep-alive");
    conn->stream.start_response();
}

}  // namespace server_detail
}  // namespace http
}  // namespace net
}  // namespace photon
