// HTTP/1.1 client with a keep-alive connection pool. PhotonLibOS's API: an
// Operation holds one request and its response; Client::call sends it,
// follows redirects (op->follow at most), re-sends on a pooled connection
// that turns out dead (op->retry at most), and returns with the response head
// read; the caller reads the body with op->resp.read(). The connection goes
// back to the pool when the operation is destroyed or calls again, if its
// body was read to the end and both sides allow keep-alive; otherwise it is
// closed.
//
// HTTP/2 (an extension, see Client::http_version): https URLs offer h2 in
// ALPN and use it when the server picks it; http URLs use h2c by prior
// knowledge when the client is set to HttpVersion::Http2. All coroutines of
// the client's vCPU share one HTTP/2 connection per origin, each request on
// a stream of its own; the Operation API is the same either way.
//
// Calls block the calling coroutine only. A client pools connections (and
// caches DNS answers) for the vCPU of its first call; other vCPUs may call
// too, on connections of their own that are closed after use. Delete the
// client after its operations, on any vCPU (as Photon allows); if the first
// vCPU ends before, its fini closes the pool.
//
//   auto client = new_http_client();
//   auto op = client->new_operation(Verb::GET, "http://127.0.0.1:8080/x");
//   DEFER(client->destroy_operation(op));
//   if (op->call() == 0 && op->status_code == 200) op->resp.read(buf, n);
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <photon/common/callback.h>
#include <photon/common/object.h>
#include <photon/common/stream.h>
#include <photon/common/string_view.h>
#include <photon/common/timeout.h>
#include <photon/net/http/message.h>
#include <photon/net/http/url.h>
#include <photon/net/http/verb.h>
#include <photon/net/socket.h>

namespace photon {
namespace net {
class TLSContext;
namespace http {

class IWebSocketStream;  // websocket.h

// Extension: the protocol versions a client may speak.
enum class HttpVersion : uint8_t {
    // https: ALPN offers "h2" and "http/1.1", and h2 is spoken if the server
    // picks it; http: HTTP/1.1. The default.
    Auto,
    // HTTP/1.1 only (ALPN offers "http/1.1").
    Http1,
    // As Auto, and http URLs use h2c with prior knowledge; an origin that
    // does not answer the preface as HTTP/2 gets HTTP/1.1 (and is asked
    // again after 10 minutes).
    Http2,
};

class ICookieJar : public Object {
public:
    // Stores the cookies of message's Set-Cookie fields for `host`.
    virtual int get_cookies_from_headers(std::string_view host, Message* message) = 0;
    // Adds the cookies stored for the request's host to its Cookie field.
    virtual int set_cookies_to_headers(Request* request) = 0;
};

class Client : public Object {
public:
    class Operation;
    Operation* new_operation(Verb v, std::string_view url, uint16_t buf_size = UINT16_MAX) {
        return Operation::create(this, v, url, buf_size);
    }
    Operation* new_operation(uint16_t buf_size = UINT16_MAX) {
        return Operation::create(this, buf_size);
    }
    void destroy_operation(Operation* op) { op->destroy(); }

    class Operation {
    public:
        Request req;               // verb, target, headers (reset() sets Host)
        Timeout timeout = {-1UL};  // the whole call, redirects and retries included
        uint16_t follow = 8;       // redirects followed at most (see call())
        uint16_t retry = 5;        // re-sends after a dead pooled connection at most
        Response resp;             // valid after call() returned 0
        int status_code = -1;      // resp.status_code(), or -1
        // Extension: 0, or the errno (EPIPE, ECONNRESET) that cut the request
        // body short because the server answered before taking all of it and
        // closed (RFC 9112 9.5: a 413, a handler that ignores the body); call()
        // then returns 0 with that answer, and the connection is not reused.
        int body_errno = 0;
        bool enable_proxy = false;  // starts as the client's has_proxy()
        // If set, the connection goes to this unix socket, plain HTTP; the
        // URL (http://host/... or https://...) still gives Host and target.
        std::string_view uds_path;

        // The request body, in this priority: set_body > body_stream > body_writer.
        // body_stream is read to its end (Content-Length if set, else chunked);
        // body_writer writes the body itself through req.write() (chunked
        // unless Content-Length is set) and is called again for a retry or a
        // 307/308 redirect; a body_stream body is never re-sent.
        IStream* body_stream = nullptr;
        using BodyWriter = Delegate<ssize_t, Request*>;
        BodyWriter body_writer = {};

        // buf_size bounds the response head (the connection's input buffer).
        static Operation* create(Client* c, Verb v, std::string_view url,
                                 uint16_t buf_size = UINT16_MAX) {
            return new Operation(c, v, url, buf_size);
        }
        static Operation* create(Client* c, uint16_t buf_size = UINT16_MAX) {
            return new Operation(c, buf_size);
        }
        void destroy() { delete this; }

        void set_enable_proxy(bool enable) { enable_proxy = enable; }
        // This operation's own proxy ("http://host:port"), overriding the
        // client's; sets enable_proxy, and if it was off puts the request
        // target in absolute form at once, as Photon's. -1 EINVAL for a bad URL.
        int set_proxy(std::string_view proxy);
        void clear_proxy() { proxy_.clear(); }
        const StoredURL* get_proxy() { return &proxy_; }

        // The URL to request (absolute http/https), keeping verb and headers;
        // -1 EINVAL if it is not a valid URL.
        int set_url(std::string_view url);
        std::string_view url() const { return req.url().url(); }
        int call() { return client_ ? client_->call(this) : (errno = EINVAL, -1); }
        int call(std::string_view unix_socket_path) {
            uds_path = unix_socket_path;
            return call();
        }
        // Sets the body and its Content-Length; the buffer must outlive call().
        void set_body(const void* buf, size_t size) {
            body_buffer_ = buf;
            body_buffer_size_ = size;
            req.headers.content_length(size);
        }
        void set_body(std::string_view buf) { set_body(buf.data(), buf.size()); }

        // Extension: hands over the connection of a call that returned 0 for
        // a request with "Connection: upgrade" (e.g. a 101 Switching
        // Protocols), so that another protocol can speak on it. Such requests
        // get a connection of their own, never a pooled one. The caller owns
        // and deletes the stream; bytes that arrived after the response head
        // are appended to *leftover. nullptr with EINVAL if there is no such
        // connection (no call, a failed one, a plain request, taken already).
        ISocketStream* take_connection(std::string* leftover);

        // Extension: Http1 or Http2, the protocol of the last call's last
        // exchange (Auto before a call).
        HttpVersion http_version() const { return http_version_; }

        ~Operation();
        Operation(const Operation&) = delete;
        Operation& operator=(const Operation&) = delete;

    protected:
        Operation(Client* c, Verb v, std::string_view url, uint16_t buf_size);
        Operation(Client* c, uint16_t buf_size);
        explicit Operation(uint16_t buf_size) : Operation(nullptr, buf_size) {}
        friend class Client;
        friend class ClientImpl;

        Client* client_;
        StoredURL proxy_;
        const void* body_buffer_ = nullptr;
        size_t body_buffer_size_ = 0;
        uint16_t buf_size_;
        // The connection the response is read from, with its input buffer;
        // kept by the client implementation (returned to the pool or closed).
        struct Connection;
        Connection* conn_ = nullptr;
        HttpVersion http_version_ = HttpVersion::Auto;
    };

    // An Operation as a local variable (PhotonLibOS's name; the input buffer
    // is BufferSize bytes on the heap all the same).
    template <uint16_t BufferSize = UINT16_MAX>
    class OperationOnStack : public Operation {
    public:
        OperationOnStack(Client* c, Verb v, std::string_view url)
            : Operation(c, v, url, BufferSize) {}
        explicit OperationOnStack(Client* c) : Operation(c, BufferSize) {}
        OperationOnStack() : Operation(BufferSize) {}
    };

    // Sends op (see the top of this file): 0 with op->status_code and
    // op->resp ready, or -1 with errno: EINVAL (no or a bad URL, both
    // Content-Length and Transfer-Encoding), ETIMEDOUT, ECONNREFUSED, ENOENT
    // (unknown host), EACCES (TLS certificate rejected), ECONNRESET (closed
    // without a response), ELOOP (a redirect after op->follow of them),
    // EPROTO (a malformed response), EPIPE / ECONNRESET (the server closed
    // while the body was sent, without an answer; with one, the answer is
    // returned and op->body_errno set), ... With op->follow == 0, or for a
    // 307/308 whose body_stream cannot be re-sent, the 3xx is returned as it
    // is; 303, and 301/302 after a POST, are followed with a GET without
    // body. A reused connection that dies before any response byte is retried
    // on another one if nothing was written or the method is idempotent, and
    // the body can be made again (a set_body buffer or body_writer).
    virtual int call(Operation* op) = 0;
    // Headers added to every request that does not set them itself.
    virtual Headers* common_headers() = 0;

    // "http://[user:passwd@]host:port" of an HTTP proxy: requests go to it
    // in absolute form; https:// targets are tunnelled with CONNECT; a
    // user:passwd is sent as Proxy-Authorization: Basic. Operations made
    // afterwards use it (Operation::enable_proxy).
    void set_proxy(std::string_view proxy) {
        m_proxy_url.from_string(proxy);
        m_proxy = true;
    }
    void set_user_agent(std::string_view user_agent) { m_user_agent = std::string(user_agent); }
    // Source addresses, picked at random per new connection.
    void set_bind_ips(std::vector<IPAddr>& ips) { m_bind_ips = ips; }
    StoredURL* get_proxy() { return &m_proxy_url; }
    void enable_proxy() { m_proxy = true; }
    void disable_proxy() { m_proxy = false; }
    bool has_proxy() { return m_proxy; }
    // Default per-call timeout (us); a call takes the shorter of it and op->timeout.
    void timeout(uint64_t timeout) { m_timeout = timeout; }
    void timeout_ms(uint64_t tmo) { timeout(tmo * 1000UL); }
    void timeout_s(uint64_t tmo) { timeout(tmo * 1000UL * 1000UL); }

    // Extension: which versions of HTTP new connections may speak (see
    // HttpVersion). Requests through a proxy or a unix socket, and upgrades
    // (WebSocket), always go as HTTP/1.1.
    void http_version(HttpVersion v) { http_version_ = v; }
    HttpVersion http_version() const { return http_version_; }

    // An upgraded WebSocket connection to url (websocket.h), or nullptr.
    IWebSocketStream* websocket_connect(std::string_view url, uint64_t timeout = -1ULL);

    // A new connection (TLS if secure, handshaken) to host:port, not pooled;
    // the caller deletes it. nullptr with errno on failure.
    virtual ISocketStream* native_connect(std::string_view host, uint16_t port, bool secure = false,
                                          uint64_t timeout = -1UL) = 0;

protected:
    // Called by Operation's destructor: returns or closes its connection.
    virtual void release(Operation* op) = 0;

    StoredURL m_proxy_url;
    std::string m_user_agent;
    uint64_t m_timeout = -1UL;
    bool m_proxy = false;
    std::vector<IPAddr> m_bind_ips;
    HttpVersion http_version_ = HttpVersion::Auto;
};

// A client without a cookie jar ignores Set-Cookie; the caller keeps the jar
// (and tls_ctx) alive while the client lives. tls_ctx: for https URLs
// (nullptr: a context of the client's, verifying against the system CAs).
Client* new_http_client(ICookieJar* cookie_jar = nullptr, TLSContext* tls_ctx = nullptr);

// Keeps Set-Cookie name=value pairs per host (no paths, expiry or domains:
// Max-Age=0 or an empty value deletes) and sends them back as Cookie.
ICookieJar* new_simple_cookie_jar();

}  // namespace http
}  // namespace net
}  // namespace photon
