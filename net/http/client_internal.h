// Private to net/http/client*.cpp: a stream bounded by one deadline, and the
// dialer that makes, tunnels and pools the client's connections.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <photon/common/timeout.h>
#include <photon/net/http/url.h>
#include <photon/net/socket.h>
#include <photon/net/utils.h>

#include "../resolver_internal.h"

namespace photon {
struct vcpu_base;
namespace net {
class TLSContext;
namespace http {

// Forwards to `stream` with every call bounded by what is left of
// `deadline`, so that a whole exchange (many reads and writes) keeps to one
// timeout; ETIMEDOUT once it passed, ENOTCONN without a stream. Counts the
// bytes that went each way.
class bounded_stream final : public ISocketStream {
public:
    ISocketStream* stream = nullptr;  // not owned
    Timeout deadline;
    uint64_t sent = 0, received = 0;

    int close() override { return stream ? stream->close() : 0; }
    int shutdown(ShutdownHow how) override { return stream ? stream->shutdown(how) : 0; }
    ssize_t read(void* buf, size_t count) override {
        return in(bounded([&] { return stream->read(buf, count); }));
    }
    ssize_t readv(const struct iovec* iov, int iovcnt) override {
        return in(bounded([&] { return stream->readv(iov, iovcnt); }));
    }
    ssize_t recv(void* buf, size_t count, int flags = 0) override {
        return in(bounded([&] { return stream->recv(buf, count, flags); }));
    }
    ssize_t recv(const struct iovec* iov, int iovcnt, int flags = 0) override {
        return in(bounded([&] { return stream->recv(iov, iovcnt, flags); }));
    }
    ssize_t write(const void* buf, size_t count) override {
        return out(bounded([&] { return stream->write(buf, count); }));
    }
    ssize_t writev(const struct iovec* iov, int iovcnt) override {
        return out(bounded([&] { return stream->writev(iov, iovcnt); }));
    }
    ssize_t send(const void* buf, size_t count, int flags = 0) override {
        return out(bounded([&] { return stream->send(buf, count, flags); }));
    }
    ssize_t send(const struct iovec* iov, int iovcnt, int flags = 0) override {
        return out(bounded([&] { return stream->send(iov, iovcnt, flags); }));
    }
    ssize_t sendfile(int in_fd, off_t offset, size_t count) override {
        return out(bounded([&] { return stream->sendfile(in_fd, offset, count); }));
    }
    uint64_t timeout() const override { return deadline.timeout(); }
    void timeout(uint64_t tm) override { deadline.timeout(tm); }
    Object* get_underlay_object(uint64_t recursion) override {
        return stream ? stream->get_underlay_object(recursion) : nullptr;
    }
    int setsockopt(int level, int name, const void* value, socklen_t len) override {
        return stream ? stream->setsockopt(level, name, value, len) : (errno = ENOTCONN, -1);
    }
    int getsockopt(int level, int name, void* value, socklen_t* len) override {
        return stream ? stream->getsockopt(level, name, value, len) : (errno = ENOTCONN, -1);
    }
    int getsockname(EndPoint& addr) override {
        return stream ? stream->getsockname(addr) : (errno = ENOTCONN, -1);
    }
    int getpeername(EndPoint& addr) override {
        return stream ? stream->getpeername(addr) : (errno = ENOTCONN, -1);
    }
    int getsockname(char* path, size_t count) override {
        return stream ? stream->getsockname(path, count) : (errno = ENOTCONN, -1);
    }
    int getpeername(char* path, size_t count) override {
        return stream ? stream->getpeername(path, count) : (errno = ENOTCONN, -1);
    }

private:
    template <typename F>
    ssize_t bounded(F f) {
        if (!stream) {
            errno = ENOTCONN;
            return -1;
        }
        uint64_t left = deadline.timeout();
        if (left == 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        stream->timeout(left);
        return f();
    }
    ssize_t in(ssize_t n) {
        if (n > 0) received += n;
        return n;
    }
    ssize_t out(ssize_t n) {
        if (n > 0) sent += n;
        return n;
    }
};

// Where a request goes: host:port (TLS if secure), through a unix socket
// instead, or through an HTTP proxy (forwarded for http, a CONNECT tunnel
// for https).
// "Basic <base64(user:passwd)>" for a proxy URL with userinfo (decoded
// from its %XX escapes), else "".
std::string proxy_authorization(const URL& proxy);

// What a TLS connection offers in ALPN: the context's list (native_connect),
// HTTP/1.1 alone (pooled HTTP/1.1 connections, upgrades, tunnels), or h2
// first (a probe of an origin for HTTP/2).
enum class alpn_offer { Context, Http1, H2 };

struct dial_target {
    std::string_view host;
    uint16_t port = 0;
    bool secure = false;
    std::string_view uds_path;
    const URL* proxy = nullptr;
    alpn_offer alpn = alpn_offer::Http1;
};

// The pool key: a connection serves only requests that would have made the
// same one (a TLS one was verified for its host name).
std::string pool_key(const dial_target& t);

class h2_connection_pool;  // client_h2.h

// Makes the client's connections and keeps the idle ones in a keep-alive
// pool, for the vCPU of its first get() only (the pool, its reaper and the
// DNS cache belong to that vCPU); other vCPUs get connections of their own.
class socket_dialer {
public:
    explicit socket_dialer(TLSContext* tls_ctx);
    ~socket_dialer();

    // A connection, idle in the pool (*reused = true) or new; deleting it
    // gives it back unless it failed or was closed. nullptr with errno.
    ISocketStream* get(const dial_target& t, const std::vector<IPAddr>& bind_ips,
                       const Timeout& deadline, bool* reused);
    // A new connection (TLS handshaken if secure), not pooled.
    ISocketStream* dial(const dial_target& t, const std::vector<IPAddr>& bind_ips,
                        const Timeout& deadline);
    // s (a fresh connection to t) as get() would return it, to go to the pool
    // after use; an idle pooled one of t instead if there is one (s is then
    // deleted). nullptr with errno.
    ISocketStream* adopt(const dial_target& t, ISocketStream* s);
    // The HTTP/2 connections of the home vCPU; nullptr elsewhere.
    h2_connection_pool* h2_pool();

    // Test seam: how every socket_dialer looks host names up, bounded by the
    // operation's deadline (through the DNS cache on the home vCPU, directly
    // elsewhere). nullptr: gethostbyname_nb. A test may set it to a slow or
    // scripted lookup before it makes a client, and clear it after deleting
    // that client; nothing else writes it.
    static lookup_fn lookup_for_tests;

    // The client's counters of bytes, which its HTTP/2 connections count into (nullptr: none).
    std::atomic<uint64_t>* received_bytes = nullptr;
    std::atomic<uint64_t>* sent_bytes = nullptr;

private:
    bool at_home();
    ISocketStream* connect_host(std::string_view host, uint16_t port, bool secure, alpn_offer alpn,
                                const std::vector<IPAddr>& bind_ips, const Timeout& deadline);
    IPAddr resolve(std::string_view host, const Timeout& deadline);
    ISocketStream* wrap_tls(ISocketStream* s, std::string_view host, alpn_offer alpn,
                            const Timeout& deadline);
    ISocketPool* pool();
    static int open_tunnel(ISocketStream* leg, const URL& proxy, std::string_view host,
                           uint16_t port, const Timeout& deadline);

    // What belongs to the home vCPU. Shared with that vCPU's fini: a home
    // that ends before the client frees them there (their coroutines and
    // fds are its), and the client, deleted later on any vCPU, finds them
    // gone instead of joining a reaper whose vCPU is no more.
    struct home_state;
    static void fini_homes();
    static void fini_h2();

    TLSContext* tls_ctx_;
    vcpu_base* home_ = nullptr;
    std::shared_ptr<home_state> h_;  // made with the socket_dialer; its parts at home only
};

}  // namespace http
}  // namespace net
}  // namespace photon
