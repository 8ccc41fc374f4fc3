// A gRPC client channel: calls to one target ("host:port") multiplexed on
// one HTTP/2 connection (h2c with prior knowledge, or h2 over TLS with ALPN),
// opened at the first call and opened again when it dies or the server sent
// GOAWAY. Any number of coroutines of the channel's vCPU (the one that
// created it) call at once; calls yield the calling coroutine only.
//
//   grpc::Channel ch("127.0.0.1:50051");
//   std::string resp;
//   grpc::CallOptions opt;
//   opt.timeout = 1000 * 1000;  // 1 s, sent as grpc-timeout and enforced here
//   grpc::Status st = ch.call("/echo.Echo/Say", req, &resp, opt);
//
// A call the server never processed (refused, or past its GOAWAY: HTTP/2's
// REFUSED_STREAM / last stream id) is retried, on a new connection if the
// old one went away, up to ChannelOptions::max_attempts. Errors of the
// transport come back as a Status: UNAVAILABLE (no connection, or it
// broke), DEADLINE_EXCEEDED, INTERNAL (a malformed response), CANCELLED.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <photon/net/grpc/status.h>

namespace photon {
namespace net {
class TLSContext;
namespace grpc {

struct ChannelOptions {
    // h2 over TLS with this context; it must offer ALPN "h2"
    // (set_alpn_protos({"h2"})), and the server must select it. nullptr: h2c.
    TLSContext* tls = nullptr;
    std::string authority;  // :authority (and the TLS server name); default: the target
    uint64_t connect_timeout = 10 * 1000 * 1000;  // us, the TCP and TLS handshakes
    size_t max_receive_message_size = 4 << 20;    // larger: RESOURCE_EXHAUSTED
    uint32_t initial_window_size = 1 << 20;       // each call's HTTP/2 receive window
    uint32_t connection_window = 16 << 20;        // the connection's
    int max_attempts = 3;                         // for calls the server never processed
};

struct CallOptions {
    uint64_t timeout = UINT64_MAX;                // us from the call's start; sent as grpc-timeout
    Metadata metadata;                            // custom request metadata (valid_metadata())
    Compression compression = Compression::none;  // of the request messages
    // Unary calls: filled with the server's initial / trailing metadata.
    Metadata* initial_metadata = nullptr;
    Metadata* trailing_metadata = nullptr;
};

// A streaming call (client, server or bidi streaming; unary works too).
// Use it from one coroutine at a time, or one reader and one writer.
// Deleting it before finish() returned cancels the call (RST_STREAM CANCEL).
class ClientCall {
public:
    virtual ~ClientCall() = default;
    // Sends a message. 0, or -1 once the call is over (finish() says why).
    virtual int write(const void* msg, size_t n) = 0;
    int write(const std::string& msg) { return write(msg.data(), msg.size()); }
    // The client's half ends (no more writes). 0 or -1.
    virtual int writes_done() = 0;
    // The next message: 1 with *msg, 0 at the end of the server's messages,
    // -1 if the call failed (finish() says why).
    virtual int read(std::string* msg) = 0;
    // Waits for the response head; its custom metadata (empty if the call
    // failed or the response was trailers-only).
    virtual const Metadata& initial_metadata() = 0;
    // Ends the client's half if needed, drops messages not read, and waits
    // for the status.
    virtual Status finish() = 0;
    // After finish(): the trailing metadata.
    virtual const Metadata& trailing_metadata() const = 0;
    // Cancels the call (RST_STREAM CANCEL); finish() then gives CANCELLED.
    virtual void cancel() = 0;
};

class Channel {
public:
    // target: "host:port" (an IPv4 or DNS name, or "[v6]:port").
    explicit Channel(const std::string& target, const ChannelOptions& opt = {});
    // Every call must have been deleted.
    ~Channel();
    Channel(const Channel&) = delete;
    Channel& operator=(const Channel&) = delete;

    // A unary call: one request message, one response message.
    Status call(const std::string& method, const std::string& request, std::string* response,
                const CallOptions& opt = {});
    // Starts a streaming call; never nullptr (a call that could not start
    // fails its reads and writes, and finish() says why).
    std::unique_ptr<ClientCall> start_call(const std::string& method, const CallOptions& opt = {});
    // Connections opened so far (a new one after the last died or went away).
    size_t connections_opened() const;

    struct Impl;

private:
    Impl* impl_;
};

}  // namespace grpc
}  // namespace net
}  // namespace photon
