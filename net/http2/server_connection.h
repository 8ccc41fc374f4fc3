// The server side of one HTTP/2 connection (RFC 9113) over a socket
// stream: it reads frames in the calling coroutine and runs each request
// stream's handler in a coroutine of its own, on the same vCPU. Flow control
// both ways (the handler's reads open the receive windows; its writes wait
// for the send windows), SETTINGS with their acknowledgement, PING, GOAWAY,
// RST_STREAM, CONTINUATION runs, requests checked as RFC 9113 8 requires
// (malformed ones are reset), and limits against a peer that floods: streams
// at once, header list size, resets per second (CVE-2023-44487), control
// frames per second, an idle deadline.
//
// Internal: the HTTP server puts its handlers on it (h2c, and h2 over TLS).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "connection_options.h"
#include "frame.h"
#include "hpack.h"

namespace photon {
namespace net {
class ISocketStream;
namespace http2 {

// One request stream, as its handler sees it. Calls block the handler's
// coroutine only; -1 with errno ECONNRESET once the stream was reset or the
// connection ended.
class Stream {
public:
    virtual ~Stream() = default;
    virtual uint32_t id() const = 0;
    // The request's fields, pseudo-fields (:method, :scheme, :authority,
    // :path) first, names in lower case.
    virtual const std::vector<header_field>& request() const = 0;
    // The value of a request field, "" if absent.
    std::string_view field(std::string_view name) const {
        for (auto& f : request())
            if (f.name == name) return f.value;
        return {};
    }
    // Whether the request's head said a body follows (no END_STREAM on it).
    virtual bool has_body() const = 0;
    // Body bytes: up to n, 0 at the end; ETIMEDOUT after timeout us.
    virtual ssize_t read(void* buf, size_t n, uint64_t timeout = -1) = 0;
    // The trailers that ended the body, if any (after read() returned 0).
    virtual const std::vector<header_field>& trailers() const = 0;
    // The response head (:status first); end_stream: no body follows.
    virtual int respond(const std::vector<header_field>& fields, bool end_stream = false) = 0;
    // The same from a field_list, which must give :status first (unchecked).
    virtual int respond(const field_list& fields, bool end_stream) = 0;
    // Body bytes, as the windows allow: n, or -1.
    virtual ssize_t write(const void* buf, size_t n, uint64_t timeout = -1) = 0;
    // Ends the response (with trailers, if given).
    virtual int finish(const std::vector<header_field>* trailers = nullptr) = 0;
    // Ends the stream with RST_STREAM.
    virtual void reset(ErrorCode code = ErrorCode::CANCEL) = 0;
};

// Serves a request stream. When it returns, the response is finished for it
// (a 500 if it sent none).
using stream_handler = std::function<void(Stream&)>;

class server_connection {
public:
    server_connection(ISocketStream* sock, const connection_options& opt, stream_handler handler);
    ~server_connection();
    server_connection(const server_connection&) = delete;
    server_connection& operator=(const server_connection&) = delete;

    // Serves until the peer closes, breaks the protocol (answered with
    // GOAWAY), stays idle too long, or stop(); returns once every handler
    // has returned. `read` holds bytes of the connection already read (the
    // client preface, in part or whole). 0 on a clean end, -1 with errno.
    int serve(std::string_view read = {});
    // Serves a connection upgraded from HTTP/1.1 (RFC 7540 3.2: "Upgrade:
    // h2c", answered 101 by the caller): `request` (a request without a body)
    // is stream 1, `settings` the decoded HTTP2-Settings of the request (the
    // client's SETTINGS payload, acknowledged by the 101), `read` the bytes
    // read after the request (the client preface, in part or whole). As
    // serve(); -1 EPROTO for malformed settings (nothing sent then).
    int serve_upgraded(std::vector<header_field> request, std::string_view settings,
                       std::string_view read = {});
    // `flag` turning true (another vCPU may set it, then interrupt the
    // serving coroutine with ECANCELED) stops the connection as stop() does;
    // `on_stop` runs (in the serving coroutine) once it did.
    void stop_on(const std::atomic<bool>* flag, std::function<void()> on_stop = {});
    // Graceful stop (from any coroutine of the vCPU): GOAWAY(NO_ERROR), no
    // new streams; serve() returns when the running ones are done.
    void stop();

    struct Impl;

private:
    Impl* impl_;
};

}  // namespace http2
}  // namespace net
}  // namespace photon
