// A gRPC server on photon's HTTP/2 (net/http2): methods registered by their
// full name ("/pkg.Service/Method") with handlers that take and give
// serialized messages (protobuf.h adds typed ones). Each call runs its
// handler in a coroutine of its own, on the vCPU that serves the connection;
// a handler may block (its coroutine only). Connections come from an
// ISocketServer through get_connection_handler(), as HTTPServer's do: h2c
// with prior knowledge on a plain socket server, h2 on a TLS one (its
// TLSContext must offer ALPN "h2": ctx->set_alpn_protos({"h2"})).
//
//   grpc::Server server;
//   server.add_unary("/echo.Echo/Say", [](grpc::ServerCall& call, const std::string& req,
//                                        std::string* resp) { *resp = req; return grpc::Status();
//                                        });
//   tcp->set_handler(server.get_connection_handler());
//
// What the server does for a handler: the deadline the client sent
// (grpc-timeout) bounds the handler's reads and writes, and at the deadline
// the client hears DEADLINE_EXCEEDED even from a handler busy elsewhere
// (it is not interrupted; cancelled() turns true and its later reads and
// writes fail with ETIMEDOUT); unknown methods get UNIMPLEMENTED, messages
// over max_receive_message_size RESOURCE_EXHAUSTED, a malformed message
// (length prefix, compressed flag without grpc-encoding, bad gzip) INTERNAL,
// an unsupported grpc-encoding UNIMPLEMENTED, a content-type other than
// application/grpc* HTTP 415, all without the handler where possible (an
// error before any response is sent is a trailers-only response).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include <photon/common/callback.h>
#include <photon/net/grpc/status.h>
#include <photon/net/socket.h>

namespace photon {
namespace net {
namespace grpc {

struct ServerOptions {
    size_t max_receive_message_size = 4 << 20;     // larger: RESOURCE_EXHAUSTED
    size_t max_send_message_size = SIZE_MAX;       // a larger write() fails (EMSGSIZE)
    uint32_t max_concurrent_streams = 128;         // calls at once per connection
    uint32_t initial_window_size = 1 << 20;        // each call's HTTP/2 receive window
    uint32_t connection_window = 16 << 20;         // the connection's
    uint64_t idle_timeout = 300ULL * 1000 * 1000;  // us without a frame: the connection ends
};

// One call, as its handler sees it. Calls yield the handler's coroutine
// only; use the call from that coroutine.
class ServerCall {
public:
    virtual ~ServerCall() = default;
    // "/pkg.Service/Method".
    virtual const std::string& method() const = 0;
    virtual const std::string& authority() const = 0;
    // The client's custom metadata ("-bin" values decoded).
    virtual const Metadata& client_metadata() const = 0;
    // The deadline the client set, on photon::now's clock (us); UINT64_MAX if none.
    virtual uint64_t deadline() const = 0;
    // Whether the call is over for the client: it cancelled, its deadline
    // passed, or the connection ended. Writes then fail.
    virtual bool cancelled() const = 0;

    // Entries sent with the response head / with the status. 0, or -1 with
    // errno EINVAL (not valid_metadata()), EALREADY (already sent).
    virtual int add_initial_metadata(const std::string& key, const std::string& value) = 0;
    virtual int add_trailing_metadata(const std::string& key, const std::string& value) = 0;
    // Compresses the messages written from now on (the client must accept
    // it). Default: what the client's own messages used. 0, or -1 ENOSYS
    // (gzip without zlib).
    virtual int set_compression(Compression c) = 0;
    // Sends the response head now (it goes with the first message or the
    // status otherwise). 0 or -1 (ECONNRESET: the call is over).
    virtual int send_initial_metadata() = 0;

    // Streaming calls (a unary handler has its request already): the next
    // message from the client. 1 with *msg, 0 once the client has sent
    // all, or -1 with errno: ETIMEDOUT (the deadline passed), ECONNRESET
    // (cancelled), EMSGSIZE / EPROTO (a message too large, or malformed:
    // the call then ends with RESOURCE_EXHAUSTED / INTERNAL whatever the
    // handler returns).
    virtual int read(std::string* msg) = 0;
    // Sends a message (server streaming, bidi; a client-streaming handler
    // writes its one response). 0, or -1 with errno ETIMEDOUT, ECONNRESET,
    // EMSGSIZE.
    virtual int write(const void* msg, size_t n) = 0;
    int write(const std::string& msg) { return write(msg.data(), msg.size()); }
};

// Handlers return the call's status; a non-OK status discards a unary
// response. They run on the connection's vCPU, one coroutine per call.
using UnaryHandler =
    std::function<Status(ServerCall& call, const std::string& request, std::string* response)>;
using StreamingHandler = std::function<Status(ServerCall& call)>;

class Server {
public:
    explicit Server(const ServerOptions& opt = {});
    // Abrupt: connections still served are shut down and waited for.
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    // Registers a method by its full name ("/pkg.Service/Method"); add them
    // before serving. 0, or -1 with errno EEXIST (registered already) or
    // EINVAL (not "/a/b").
    int add_unary(const std::string& name, UnaryHandler handler);
    // Client streaming, server streaming and bidi: the handler reads and
    // writes as the method's kind says.
    int add_streaming(const std::string& name, StreamingHandler handler);

    // Serves one connection (HTTP/2, prior knowledge) until it closes, fails
    // or stop() ends it; the stream stays the caller's. 0, or -1 with errno.
    int handle_connection(ISocketStream* stream);
    ISocketServer::Handler get_connection_handler() { return {this, &Server::handle_connection}; }

    // Graceful stop: each connection gets GOAWAY, calls running finish, new
    // ones are refused (the client retries them elsewhere). Returns when no
    // connection is served or after timeout us: 0, or -1 ETIMEDOUT. Call it
    // from a photon coroutine of any vCPU (the connections may be served on
    // several); terminate the ISocketServer first (later connections are
    // closed at once).
    int stop(uint64_t timeout = UINT64_MAX);
    // Connections / calls being served now.
    size_t connections() const;
    size_t calls() const;

    struct Impl;

private:
    Impl* impl_;
};

}  // namespace grpc
}  // namespace net
}  // namespace photon
