// Sockets: addresses, streams, clients, servers and a keep-alive pool, with
// PhotonLibOS's names and semantics. Streams, clients and servers belong to
// the vCPU that made them; their calls block the calling coroutine only and
// return like POSIX: bytes / 0, or -1 (nullptr for factories) with errno.
// A stream's calls are each bounded by its timeout() (default: none); a
// timeout fails with ETIMEDOUT. No call raises SIGPIPE.
//
// F-Stack (DPDK) is not supported: its factories fail with ENOSYS.
// Differences from PhotonLibOS: doc/compat.md#netsocketh
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <arpa/inet.h>
#include <netinet/ip.h>
#include <cinttypes>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string_view>
#include <type_traits>

#include <photon/common/callback.h>
#include <photon/common/object.h>
#include <photon/common/detail/sys_socket.h>
#include <photon/common/stream.h>
#include <photon/common/string_view.h>

class LogBuffer;
// libc's address structs in logs: "1.2.3.4", "1.2.3.4:80", "::1", "[::1]:80".
LogBuffer& operator<<(LogBuffer& log, const in_addr& iaddr);
LogBuffer& operator<<(LogBuffer& log, const sockaddr_in& addr);
LogBuffer& operator<<(LogBuffer& log, const in6_addr& iaddr);
LogBuffer& operator<<(LogBuffer& log, const sockaddr_in6& addr);

namespace photon {
namespace net {

// setsockopt, getsockopt, getsockname and getpeername on a raw fd, under
// PhotonLibOS's names, come from common/detail/sys_socket.h.

// An IPv4 or IPv6 address in network byte order; IPv4 as v4-mapped IPv6.
struct __attribute__((packed)) IPAddr {
    union {
        in6_addr addr = {};
        struct {
            uint16_t _1, _2, _3, _4, _5, _6;
            uint8_t a, b, c, d;
        };
    } __attribute__((packed));

    IPAddr() { reset(); }
    explicit IPAddr(const in6_addr& in6) { addr = in6; }
    explicit IPAddr(const in_addr& in4) { from_nl(in4.s_addr); }
    explicit IPAddr(uint32_t nl) { from_nl(nl); }
    // Dotted IPv4 or textual IPv6; anything else gives 0.0.0.0 (undefined()).
    explicit IPAddr(const char* s);
    IPAddr(uint32_t nl1, uint32_t nl2, uint32_t nl3, uint32_t nl4) {
        addr.s6_addr32[0] = nl1;
        addr.s6_addr32[1] = nl2;
        addr.s6_addr32[2] = nl3;
        addr.s6_addr32[3] = nl4;
    }

    bool is_ipv4() const {
        return addr.s6_addr32[0] == 0 && addr.s6_addr32[1] == 0 &&
               addr.s6_addr32[2] == htonl(0xffff);
    }
    bool is_ipv6() const { return !is_ipv4(); }
    uint32_t to_nl() const { return addr.s6_addr32[3]; }
    bool undefined() const { return *this == V4Any(); }
    void reset() { from_nl(0); }
    void clear() { reset(); }
    bool is_loopback() const { return is_ipv4() ? a == 127 : *this == V6Loopback(); }
    bool is_localhost() const { return is_loopback(); }
    bool is_broadcast() const { return is_ipv4() && to_nl() == 0xffffffffu; }
    bool is_link_local() const {
        return is_ipv4() ? (a == 169 && b == 254)
                         : (addr.s6_addr[0] == 0xfe && (addr.s6_addr[1] & 0xc0) == 0x80);
    }
    bool operator==(const IPAddr& rhs) const { return memcmp(&addr, &rhs.addr, 16) == 0; }
    bool operator!=(const IPAddr& rhs) const { return !(*this == rhs); }

    static IPAddr V6None() { return IPAddr(0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu); }
    static IPAddr V6Any() { return IPAddr(in6addr_any); }
    static IPAddr V6Loopback() { return IPAddr(in6addr_loopback); }
    static IPAddr V4Broadcast() { return IPAddr(htonl(INADDR_BROADCAST)); }
    static IPAddr V4Any() { return IPAddr(htonl(INADDR_ANY)); }
    static IPAddr V4Loopback() { return IPAddr(htonl(INADDR_LOOPBACK)); }
    static IPAddr Localhost() { return V4Loopback(); }

private:
    void from_nl(uint32_t nl) {
        addr.s6_addr32[0] = 0;
        addr.s6_addr32[1] = 0;
        addr.s6_addr32[2] = htonl(0xffff);
        addr.s6_addr32[3] = nl;
    }
};
static_assert(sizeof(IPAddr) == 16, "IPAddr is 16 bytes");

struct __attribute__((packed)) EndPoint {
    IPAddr addr;
    uint16_t port = 0;  // host order

    EndPoint() = default;
    EndPoint(IPAddr ip, uint16_t p) : addr(ip), port(p) {}
    EndPoint(const char* ip, uint16_t p) : addr(ip), port(p) {}
    // "a.b.c.d:port" or "[v6]:port"; bad text gives undefined().
    explicit EndPoint(const char* ep);
    // As the text constructor; a missing port gives default_port.
    static EndPoint parse(std::string_view s, uint16_t default_port = 0);

    bool is_ipv4() const { return addr.is_ipv4(); }
    bool operator==(const EndPoint& rhs) const { return rhs.addr == addr && rhs.port == port; }
    bool operator!=(const EndPoint& rhs) const { return !(*this == rhs); }
    bool undefined() const { return addr.undefined() && port == 0; }
    void reset() {
        addr.reset();
        port = 0;
    }
    void clear() { reset(); }
};
static_assert(sizeof(EndPoint) == 18, "EndPoint is 18 bytes");

// Text forms: "1.2.3.4", "::1"; "1.2.3.4:80", "[::1]:80". Returns the length
// written (without NUL), at most n - 1.
size_t to_text(const IPAddr& ip, char* buf, size_t n);
size_t to_text(const EndPoint& ep, char* buf, size_t n);

LogBuffer& operator<<(LogBuffer& log, const IPAddr& ip);
LogBuffer& operator<<(LogBuffer& log, const EndPoint& ep);

class ISocketBase {
public:
    virtual ~ISocketBase() = default;
    virtual Object* get_underlay_object(uint64_t recursion = 0) = 0;
    virtual int setsockopt(int level, int option_name, const void* option_value,
                           socklen_t option_len) = 0;
    virtual int getsockopt(int level, int option_name, void* option_value,
                           socklen_t* option_len) = 0;
    // Typed forms. As in Photon, P is the option's type on the wire (write
    // it: setsockopt<int>(SOL_SOCKET, SO_REUSEADDR, true)); the value is
    // converted to and from it. Without P the value's own type is used.
    template <typename P = void, typename T>
    int setsockopt(int level, int option_name, const T& value) {
        typename std::conditional<std::is_void<P>::value, T, P>::type v = value;
        return setsockopt(level, option_name, &v, sizeof(v));
    }
    template <typename P = void, typename T>
    int getsockopt(int level, int option_name, T* value) {
        typename std::conditional<std::is_void<P>::value, T, P>::type v{};
        socklen_t len = sizeof(v);
        int ret = getsockopt(level, option_name, &v, &len);
        if (ret >= 0) *value = v;
        return ret;
    }
    // The kernel fd under this object, -1 if none.
    int get_underlay_fd() {
        auto r = (intptr_t)get_underlay_object(-1);
        return r < INT32_MIN || r > INT32_MAX ? -1 : (int)r;
    }
};

class ISocketName {
public:
    virtual ~ISocketName() = default;
    virtual int getsockname(EndPoint& addr) = 0;
    virtual int getpeername(EndPoint& addr) = 0;
    virtual int getsockname(char* path, size_t count) = 0;
    virtual int getpeername(char* path, size_t count) = 0;
    EndPoint getsockname() {
        EndPoint ep;
        getsockname(ep);
        return ep;
    }
    EndPoint getpeername() {
        EndPoint ep;
        getpeername(ep);
        return ep;
    }
};

class ISocketStream : public IStream, public ISocketBase, public ISocketName {
public:
    // Photon's flag for send(): MSG_ZEROCOPY where the stream supports it.
    static const int ZEROCOPY_FLAG = 0x4000000;

    // One receive: at least 1 byte (unless EOF: 0), at most count.
    virtual ssize_t recv(void* buf, size_t count, int flags = 0) = 0;
    virtual ssize_t recv(const struct iovec* iov, int iovcnt, int flags = 0) = 0;
    // One send: may be short.
    virtual ssize_t send(const void* buf, size_t count, int flags = 0) = 0;
    virtual ssize_t send(const struct iovec* iov, int iovcnt, int flags = 0) = 0;
    // Sends `count` bytes of in_fd from `offset`; bytes sent or -1.
    virtual ssize_t sendfile(int in_fd, off_t offset, size_t count) = 0;

    // Receives until at least `least` bytes are in (at most count); fewer
    // only at EOF. Bytes received, or -1.
    ssize_t recv_at_least(void* buf, size_t count, size_t least, int flags = 0);
    ssize_t recv_at_least_mutable(struct iovec* iov, int iovcnt, size_t least, int flags = 0);
    // Reads and drops `count` bytes; false on error or EOF first.
    bool skip_read(size_t count);
};

class ISocketClient : public ISocketBase, public Object {
public:
    // A connected stream (the caller deletes it), or nullptr with errno.
    // `local` is bound first. The client's timeout bounds the connect and is
    // inherited by the stream.
    virtual ISocketStream* connect(const EndPoint& remote, const EndPoint* local = nullptr) = 0;
    // Unix-domain path (count 0: strlen).
    virtual ISocketStream* connect(const char* path, size_t count = 0) = 0;
    virtual uint64_t timeout() const = 0;
    virtual void timeout(uint64_t tm) = 0;
};

class ISocketPool : public ISocketClient {
public:
    using ISocketClient::connect;
    virtual ISocketStream* connect(std::string_view domain_name, uint16_t port,
                                   const EndPoint* local = nullptr) = 0;
    virtual ISocketStream* connect(std::string_view key, const EndPoint& remote,
                                   const EndPoint* local = nullptr) = 0;
    virtual ISocketStream* connect(std::string_view key, std::string_view domain_name,
                                   uint16_t port, const EndPoint* local = nullptr) = 0;
    virtual ISocketStream* connect(std::string_view key,
                                   TempDelegate<ISocketStream*> connector) = 0;
};

class ISocketServer : public ISocketBase, public ISocketName, public Object {
public:
    using Handler = Callback<ISocketStream*>;

    virtual int bind(const EndPoint& ep) = 0;
    virtual int bind(const char* path, size_t count) = 0;
    int bind(uint16_t port = 0) { return bind(EndPoint(IPAddr::V4Any(), port)); }
    int bind(uint16_t port, IPAddr addr) { return bind(EndPoint(addr, port)); }
    int bind_v4any(uint16_t port = 0) { return bind(EndPoint(IPAddr::V4Any(), port)); }
    int bind_v6any(uint16_t port = 0) { return bind(EndPoint(IPAddr::V6Any(), port)); }
    int bind_v4localhost(uint16_t port = 0) { return bind(EndPoint(IPAddr::V4Loopback(), port)); }
    int bind_v6localhost(uint16_t port = 0) { return bind(EndPoint(IPAddr::V6Loopback(), port)); }
    int bind(const char* path) { return bind(path, strlen(path)); }

    virtual int listen(int backlog = 1024) = 0;
    // Blocks until a connection comes; the caller deletes the stream.
    virtual ISocketStream* accept(EndPoint* remote_endpoint = nullptr) = 0;

    // Each accepted connection runs handler(stream) in a coroutine of its
    // own; the server deletes the stream after the handler returns.
    virtual ISocketServer* set_handler(Handler handler) = 0;
    // block = false: starts the accept loop in a coroutine and returns 0;
    // true: runs it in the caller until terminate(). -1 EALREADY if running.
    virtual int start_loop(bool block = false) = 0;
    // Stops accepting and waits for the loop to leave; open connections and
    // their handlers go on. Callable from a handler.
    virtual void terminate() = 0;

    virtual uint64_t timeout() const = 0;
    virtual void timeout(uint64_t tm) = 0;
};

extern "C" {
// TCP over the vCPU's event engine: non-blocking, TCP_NODELAY, waits
// edge-triggered. bind_ips: source addresses picked at random per connect.
ISocketClient* new_tcp_socket_client(IPAddr* bind_ips = nullptr, uint32_t bind_ips_n = 0);
ISocketServer* new_tcp_socket_server();
ISocketClient* new_tcp_socket_client_ipv6();
ISocketServer* new_tcp_socket_server_ipv6();
// Edge-triggered TCP: the same sockets as above (edge-triggered always).
ISocketClient* new_et_tcp_socket_client();
ISocketServer* new_et_tcp_socket_server();
// Unix-domain stream sockets; autoremove unlinks a stale path at bind and
// the path at destruction.
ISocketClient* new_uds_client();
ISocketServer* new_uds_server(bool autoremove = false);
// TCP whose send() uses MSG_ZEROCOPY (returns when the kernel has let go
// of the buffer).
ISocketClient* new_zerocopy_tcp_client();
ISocketServer* new_zerocopy_tcp_server();
// TCP whose I/O goes through io_uring requests.
ISocketClient* new_iouring_tcp_client();
ISocketServer* new_iouring_tcp_server();
// SMC (AF_SMC, RDMA/ISM shared memory; the kernel falls back to TCP when the
// peer has no SMC): TCP sockets otherwise. Connect / bind fail with
// EAFNOSUPPORT where the kernel has no SMC. No unix-domain paths.
ISocketClient* new_smc_socket_client();
ISocketServer* new_smc_socket_server();
// F-Stack (DPDK) is not supported: nullptr with ENOSYS.
ISocketClient* new_fstack_dpdk_socket_client();
ISocketServer* new_fstack_dpdk_socket_server();
}

// No-ops kept for PhotonLibOS compatibility: edge triggering is built into
// the event engines.
inline int et_poller_init() { return 0; }
inline int et_poller_fini() { return 0; }

struct SocketPoolArgs {
    ISocketClient* sockclient = nullptr;
    bool client_ownership = false;
    bool enable_tcp_keepalive = false;
    uint16_t tcp_keepalive_time = 2;
    uint16_t tcp_keepalive_intvl = 2;
    uint16_t tcp_keepalive_probes = 15;
    Callback<ISocketStream*> heartbeater = {};
    uint64_t heartbeat_interval = 10'000'000;
    uint64_t expiration = -1ULL;
};
extern "C" ISocketPool* new_tcp_socket_pool(const SocketPoolArgs& args);
inline ISocketPool* new_tcp_socket_pool(ISocketClient* client, uint64_t expiration = -1ULL,
                                        bool client_ownership = false) {
    SocketPoolArgs args;
    args.sockclient = client;
    args.client_ownership = client_ownership;
    args.expiration = expiration;
    return new_tcp_socket_pool(args);
}

}  // namespace net
}  // namespace photon

namespace std {
template <>
struct hash<photon::net::IPAddr> {
    size_t operator()(const photon::net::IPAddr& ip) const {
        return hash<string_view>()(string_view((const char*)&ip.addr, 16));
    }
};
template <>
struct hash<photon::net::EndPoint> {
    size_t operator()(const photon::net::EndPoint& ep) const {
        return hash<photon::net::IPAddr>()(ep.addr) ^ ((size_t)ep.port * 0x9E3779B97F4A7C15ULL);
    }
};
}  // namespace std
