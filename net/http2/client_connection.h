// The client side of one HTTP/2 connection (RFC 9113) over a socket stream:
// any number of coroutines of its vCPU send requests on it at once, each on a
// stream of its own; a reader coroutine takes the frames in and hands each
// stream its response. Flow control both ways, the server's
// MAX_CONCURRENT_STREAMS respected (a request waits for a slot), server push
// refused (SETTINGS_ENABLE_PUSH 0), and a GOAWAY or REFUSED_STREAM reported
// as EAGAIN for requests the server never processed (safe to retry on
// another connection).
//
// Internal: the HTTP client puts its requests on it (h2 by ALPN, h2c).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "connection_options.h"
#include "frame.h"
#include "hpack.h"

namespace photon {
namespace net {
class ISocketStream;
namespace http2 {

class client_stream {
public:
    virtual ~client_stream() = default;
    virtual uint32_t id() const = 0;
    // The request body, after the head request() sent: n or -1 (ECONNRESET).
    virtual ssize_t write(const void* buf, size_t n, uint64_t timeout = -1) = 0;
    // Ends the request (with trailers, if given).
    virtual int finish(const std::vector<header_field>* trailers = nullptr) = 0;
    // Waits for the final response head (interim 1xx ones are skipped): its
    // status, or -1 with errno ETIMEDOUT, EPROTO (a malformed response: the
    // stream was reset), EAGAIN (refused by the server, or past its GOAWAY:
    // not processed, may be retried), ECONNRESET.
    virtual int response(uint64_t timeout = -1) = 0;
    // The response's fields, :status first.
    virtual const std::vector<header_field>& response_fields() const = 0;
    // The response body: up to n, 0 at its end, -1 (ETIMEDOUT, ECONNRESET).
    virtual ssize_t read(void* buf, size_t n, uint64_t timeout = -1) = 0;
    virtual const std::vector<header_field>& trailers() const = 0;
    // Ends the stream with RST_STREAM.
    virtual void reset(ErrorCode code = ErrorCode::CANCEL) = 0;
};

class client_connection {
public:
    client_connection(ISocketStream* sock, const connection_options& opt = {});
    // Sends GOAWAY, closes the socket for reading and waits for the reader;
    // the streams it handed out must have been released.
    ~client_connection();
    client_connection(const client_connection&) = delete;
    client_connection& operator=(const client_connection&) = delete;

    // The client preface and SETTINGS; starts the reader. 0 or -1.
    int start();
    // Waits for the server's first SETTINGS (its preface): 0, or -1 with
    // errno EPROTONOSUPPORT (the connection ended without one: not an HTTP/2
    // server, e.g. an HTTP/1.1 one answering an h2c preface) or ETIMEDOUT.
    int wait_settings(uint64_t timeout = -1);
    // A new stream carrying the request head (pseudo-fields :method, :scheme,
    // :authority, :path first); end_stream: no body follows. Waits up to
    // timeout while all the server's concurrent streams are in use. nullptr
    // with errno: EAGAIN (the server sent GOAWAY, or stream ids ran out: use
    // another connection), ECONNRESET, ETIMEDOUT, EINVAL (no :method first).
    client_stream* request(const std::vector<header_field>& fields, bool end_stream,
                           uint64_t timeout = -1);
    // Done with a stream: one whose response was not read to its end is
    // reset (CANCEL). The stream is deleted.
    void release(client_stream* s);
    // Whether new requests may go on this connection.
    bool usable() const;
    // Streams open now.
    size_t active() const;

    struct Impl;

private:
    Impl* impl_;
};

}  // namespace http2
}  // namespace net
}  // namespace photon
