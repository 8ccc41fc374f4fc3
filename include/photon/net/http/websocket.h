// WebSocket (RFC 6455) over the HTTP server and client: the opening
// handshake (a GET with "Upgrade: websocket" answered by 101), then frames on
// the taken-over connection. PhotonLibOS's API, with the protocol checks it
// lacks: fragmented messages are reassembled (control frames may come
// between their fragments), text is checked to be UTF-8, messages are
// bounded in size, and a peer that breaks the protocol is answered with a
// Close frame (1002 protocol error, 1007 bad UTF-8, 1009 too big) and the
// connection is closed.
//
// Calls block the calling coroutine only. A stream may be used by one
// receiving and one sending coroutine at a time (sends, and the pongs and
// close replies a receive sends, are serialized), on the vCPU that made it.
// Errors are -1 (or nullptr) with errno.
//
// Differences from PhotonLibOS: doc/compat.md#nethttpwebsocketh
// No WebSocket extensions (permessage-deflate) or subprotocols are negotiated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <photon/common/callback.h>
#include <photon/common/iovector.h>
#include <photon/common/memory_budget.h>
#include <photon/common/object.h>
#include <photon/net/http/client.h>
#include <photon/net/http/message.h>
#include <photon/net/http/server.h>
#include <photon/net/socket.h>

namespace photon {
namespace net {
namespace http {

enum class WebSocketOpcode : uint8_t {
    Continuation = 0x0,
    Text = 0x1,
    Binary = 0x2,
    Close = 0x8,
    Ping = 0x9,
    Pong = 0xA
};

// Status codes of a Close frame (RFC 6455 7.4.1). 1005, 1006 and 1015 are
// never sent: close(NoStatusRcvd) sends a Close without a code.
enum class WebSocketCloseCode : uint16_t {
    NormalClosure = 1000,
    GoingAway = 1001,
    ProtocolError = 1002,
    UnsupportedDataType = 1003,
    NoStatusRcvd = 1005,
    AbnormalClosure = 1006,
    InvalidFramePayloadData = 1007,
    PolicyViolation = 1008,
    MessageTooBig = 1009,
    MandatoryExt = 1010,
    InternalServerError = 1011,
    TLSHandshake = 1015
};

// Extension: limits of a stream. Times in microseconds; 0 takes the default:
// a server's stream (accepted from an HTTPServer) derives it from the
// server's ServerOptions as noted, a client's has none; -1 is none. The
// deadlines are kept while the stream receives (recv_frame, and the wait for
// the peer's Close when it is deleted). doc/http.md has all the defaults in
// one table.
struct WebSocketOptions {
    // A longer message (its fragments together) is refused with Close 1009.
    size_t max_message_size = 16 * 1024 * 1024;
    // No frame begins for this long: Close 1001 (going away), the
    // connection ends, recv_frame fails with ETIME. Server default:
    // keepalive_timeout.
    uint64_t idle_timeout = 0;
    // A message (or control frame), from its first byte, must arrive whole
    // within this, the wait for memory (below) included: else Close 1008,
    // ETIME. Server default: header_timeout.
    uint64_t message_timeout = 0;
    // Pings a second the peer may send on average, with a burst of as many
    // at once; more, or a Pong whose write does not finish within 5 s (the
    // peer does not read), is a ping flood: Close 1008 (or, when a Pong is
    // stuck, the connection cut), ECONNABORTED. Server
    // default: 16 (-1 here: no bound).
    uint32_t max_ping_rate = 0;
    // Where a message's bytes are counted as they arrive (its buffer
    // growing; never max_message_size up front). nullptr: a server's stream
    // uses its connection's account of the server's budget
    // (ServerOptions::memory_budget), a client's none. When the budget has
    // no room before message_timeout: Close 1009, ENOMEM. While a stream
    // waits for room, it does not read (backpressure). A message past its
    // first 64 KiB never takes the budget's reserve (its last quarter),
    // which stays for requests and small messages: one that would is refused
    // at once (1009, ENOMEM).
    MemoryBudget* memory_budget = nullptr;
};

class IWebSocketStream : public Object {
public:
    virtual ~IWebSocketStream() = default;

    // Sends one message (a single frame). timeout in us (-1: none) bounds
    // the whole send. The payload size, or -1 with errno: EINVAL (text that
    // is not UTF-8, or a fragmented message is being sent), EPIPE (a Close
    // was sent), ETIMEDOUT, the stream's. A send cut short by a timeout or
    // an error leaves a partial frame behind: the connection is then closed.
    virtual ssize_t send_text(std::string_view text, uint64_t timeout = -1) = 0;
    virtual ssize_t send_binary(const void* data, size_t size, uint64_t timeout = -1) = 0;
    virtual ssize_t send_binary(iovector_view iov, uint64_t timeout = -1) = 0;

    // Sends a Ping (data: at most 125 bytes, else EINVAL). 0 or -1 as above.
    // The peer's Pong comes back through recv_frame().
    virtual int ping(std::string_view data = "", uint64_t timeout = -1) = 0;

    // Receives the next message or control frame into buf: its size, with
    // *opcode Text, Binary (a whole message, however fragmented), Ping (the
    // Pong was sent already), Pong, or Close (payload: the big-endian code
    // and the reason; the reply was sent; nothing follows). -1 with errno:
    // ENOBUFS (size is too small: the message stays for the next call),
    // ETIMEDOUT (nothing lost: call again), ENOTCONN (the Close was received,
    // or the connection failed before), ECONNRESET (the peer closed without a
    // Close), EPROTO / EILSEQ / EMSGSIZE (the peer broke the protocol, sent
    // text that is not UTF-8, or a message above max_message_size: answered
    // with Close 1002 / 1007 / 1009 and the connection closed), ETIME (the
    // peer was idle for idle_timeout, or a message missed message_timeout:
    // Close 1001 / 1008 sent, the connection closed), ECONNABORTED (a ping
    // flood: Close 1008), ENOMEM (no room in the memory budget for the
    // message: Close 1009), ECANCELED (the HTTPServer stopped and the peer
    // did not answer our Close 1001 within a second, or it stopped while
    // the stream waited for room in the budget), the stream's. When
    // the server stops, a receive sends Close 1001 and returns what the peer
    // sends until its Close, then that Close.
    virtual ssize_t recv_frame(void* buf, size_t size, WebSocketOpcode* opcode = nullptr,
                               uint64_t timeout = -1) = 0;
    // As above into iov, which is extended (with its allocator) when its
    // buffers are too small; ENOBUFS if that fails. Returns the payload size
    // (iov may hold more bytes than that).
    virtual ssize_t recv_frame(iovector* iov, WebSocketOpcode* opcode = nullptr,
                               uint64_t timeout = -1) = 0;

    // Sends a Close with code and reason (UTF-8, at most 123 bytes, else
    // EINVAL; 1006 and 1015 are EINVAL too) unless one was sent, waiting at
    // most 5 s for the connection. 0 or -1.
    // recv_frame() may still return what the peer sent before its reply.
    virtual int close(WebSocketCloseCode code = WebSocketCloseCode::NormalClosure,
                      std::string_view reason = "") = 0;

    // Whether a Close was sent or received, or the connection failed.
    virtual bool is_closed() const = 0;

    // The connection (the server's, or the one the client owns). Reading it
    // directly breaks the framing.
    virtual ISocketStream* get_socket_stream() = 0;

    // Extension: sends one frame of a fragmented message: opcode Text or
    // Binary for the first, Continuation for the rest; fin ends the message.
    // A text message must be UTF-8 as a whole (a character may straddle
    // fragments). The payload size, or -1 with errno as send_text(); EINVAL
    // for an opcode out of order. Control frames may be sent in between.
    virtual ssize_t send_fragment(WebSocketOpcode /*opcode*/, iovector_view /*iov*/, bool /*fin*/,
                                  uint64_t /*timeout*/ = -1) {
        errno = ENOSYS;
        return -1;
    }
};

// Opens a WebSocket to url (http:// or https://; ws:// and wss:// are taken
// for them) on a connection of its own: the returned stream owns it. Keep
// the client (and its TLS context) alive while the stream lives. nullptr
// with errno: EINVAL (no client, a bad URL), ECONNREFUSED (the server
// answered other than 101), EPROTO (a 101 without the right
// Sec-WebSocket-Accept, or with extensions or a subprotocol not asked for),
// or the call's (client.h).
IWebSocketStream* websocket_connect(Client* client, std::string_view url, uint64_t timeout = -1);
// Extension: with options.
IWebSocketStream* websocket_connect(Client* client, std::string_view url, uint64_t timeout,
                                    const WebSocketOptions& options);

// From an HTTP handler: checks the upgrade request (GET, HTTP/1.1, Upgrade:
// websocket, Connection: upgrade, Sec-WebSocket-Version: 13, a valid
// Sec-WebSocket-Key, no body), sends the 101 and takes the connection over
// (connection_stream()). The stream does not own the connection: delete it
// before the handler returns, after which the server closes the connection.
// nullptr with errno: EPROTO (not a valid upgrade request: resp is then set
// to 400, or 426 with Sec-WebSocket-Version: 13, for the handler to return),
// EINVAL (req is not being served by an HTTPServer), the stream's.
IWebSocketStream* server_accept_websocket(Request& req, Response& resp);
// Extension: with options.
IWebSocketStream* server_accept_websocket(Request& req, Response& resp,
                                          const WebSocketOptions& options);

// Called with each accepted stream (deleted when it returns); its return
// value is the HTTP handler's.
using WebSocketHandler = Delegate<int, IWebSocketStream*>;

// An HTTPHandler that accepts WebSocket upgrades (answering others with 400)
// and runs handler on them. The caller owns it (or gives it to the server).
HTTPHandler* new_websocket_handler(WebSocketHandler handler);
// Extension: with options.
HTTPHandler* new_websocket_handler(WebSocketHandler handler, const WebSocketOptions& options);

}  // namespace http
}  // namespace net
}  // namespace photon
