// socket_dialer (client_internal.h): name lookup, TCP / unix-socket / TLS
// connections, CONNECT tunnels through a proxy, and the keep-alive pool.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <string>

#include <photon/common/alog-stdstring.h>
#include <photon/common/alog.h>
#include <photon/net/http/message.h>
#include <photon/net/security-context/tls-stream.h>
#include <photon/net/utils.h>
#include <photon/photon.h>
#include <photon/thread/thread.h>

#include "client_h2.h"
#include "client_internal.h"

namespace photon {
namespace net {
namespace http {

namespace {
// Idle pooled connections are closed after this long (servers drop theirs
// after 5 s to 2 min; a peer's close is also noticed before reuse).
constexpr uint64_t kIdleExpiration = 60ULL * 1000 * 1000;
constexpr size_t kTunnelHeadSize = 8 * 1024;

// "[v6]:port" or "host:port".
std::string authority(std::string_view host, uint16_t port) {
    std::string a;
    bool v6 = host.find(':') != host.npos;
    a.append(v6 ? "[" : "").append(host).append(v6 ? "]:" : ":").append(std::to_string(port));
    return a;
}

}  // namespace

std::string pool_key(const dial_target& t) {
    if (!t.uds_path.empty()) return std::string("unix:").append(t.uds_path);
    std::string key;
    if (t.proxy) {
        key.append(t.secure ? "tunnel:" : "proxy:").append(t.proxy->scheme()).append("://");
        if (!t.proxy->user_passwd().empty()) key.append(t.proxy->user_passwd()).append("@");
        key.append(authority(t.proxy->host(), t.proxy->port()));
        if (!t.secure) return key;  // forwarded requests to any host share it
        key.append(">");
    } else {
        key.append(t.secure ? "https://" : "http://");
    }
    return key.append(authority(t.host, t.port));
}

struct socket_dialer::home_state {
    spinlock lock;  // orders the two ends: the parts are handed over once
    std::atomic<bool> dialer_gone{false};
    std::atomic<bool> home_gone{false};
    std::unique_ptr<timed_resolver> resolver;
    std::unique_ptr<ISocketClient> tcp;
    std::vector<IPAddr> tcp_bind_ips;  // tcp's
    std::unique_ptr<ISocketPool> pool;
    std::unique_ptr<h2_connection_pool> h2;  // declared last: goes first (its dials use the rest)

    // Empties this state into `into` (destroyed by the caller, out of the lock).
    void hand_over(home_state& into) {
        into.h2 = std::move(h2);
        into.pool = std::move(pool);
        into.tcp = std::move(tcp);
        into.resolver = std::move(resolver);
    }
};

namespace {
// Per vCPU: the home states of the clients whose home it is, for its fini.
thread_local std::vector<std::shared_ptr<void>>* t_homes = nullptr;
}  // namespace

// A late fini hook of a home vCPU: its other coroutines have ended, its
// engine still runs, so the pools' reapers and idle connections end here.
void socket_dialer::fini_homes() {
    auto homes = t_homes;
    t_homes = nullptr;
    if (!homes) return;
    for (auto& p : *homes) {
        auto h = static_cast<home_state*>(p.get());
        home_state parts;
        {
            SCOPED_LOCK(h->lock);
            if (h->dialer_gone) continue;
            h->home_gone = true;
            h->hand_over(parts);
        }
    }
    delete homes;
}

// An early fini hook of a home vCPU: HTTP/2 connections have coroutines of
// their own (a reader, a writer), which fini() would wait for forever, so
// they close before it waits.
void socket_dialer::fini_h2() {
    if (!t_homes) return;
    for (auto& p : *t_homes) {
        auto h = static_cast<home_state*>(p.get());
        if (!h->dialer_gone && h->h2) h->h2->close_all();
    }
}

socket_dialer::socket_dialer(TLSContext* tls_ctx)
    : tls_ctx_(tls_ctx), h_(std::make_shared<home_state>()) {}

socket_dialer::~socket_dialer() {
    home_state parts;
    {
        SCOPED_LOCK(h_->lock);
        h_->dialer_gone = true;
        if (!h_->home_gone) h_->hand_over(parts);
    }
    bool home = __atomic_load_n(&home_, __ATOMIC_ACQUIRE) == get_vcpu();
    if (home && t_homes) {  // else its entry goes at the home's fini or next registration
        auto& v = *t_homes;
        v.erase(std::remove(v.begin(), v.end(), std::static_pointer_cast<void>(h_)), v.end());
    }
    // parts go here: off the home vCPU, the pool joins its reaper there.
}

bool socket_dialer::at_home() {
    vcpu_base* v = get_vcpu();
    vcpu_base* home = nullptr;  // the first caller's vCPU, even if two race
    if (!__atomic_compare_exchange_n(&home_, &home, v, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return home == v && !h_->home_gone.load(std::memory_order_acquire);
    // Home from now on: its fini frees the home parts if the client outlives it.
    if (!t_homes) {
        t_homes = new std::vector<std::shared_ptr<void>>;
        fini_hook_late(Delegate<void>(&fini_homes));
        fini_hook(Delegate<void>(&fini_h2));
    }
    auto& list = *t_homes;
    list.erase(std::remove_if(list.begin(), list.end(),
                              [](const std::shared_ptr<void>& p) {
                                  return static_cast<home_state*>(p.get())->dialer_gone.load();
                              }),
               list.end());
    list.push_back(h_);
    return true;
}

ISocketStream* socket_dialer::get(const dial_target& t, const std::vector<IPAddr>& bind_ips,
                                  const Timeout& deadline, bool* reused) {
    *reused = false;
    if (!at_home()) return dial(t, bind_ips, deadline);
    ISocketPool* pool = this->pool();
    if (!pool) return nullptr;
    bool fresh = false;
    ISocketStream* s = pool->connect(pool_key(t), [&]() -> ISocketStream* {
        fresh = true;
        return dial(t, bind_ips, deadline);
    });
    *reused = s && !fresh;
    return s;
}

ISocketPool* socket_dialer::pool() {
    auto& pool = h_->pool;
    if (!pool) {
        SocketPoolArgs args;
        args.sockclient = new_tcp_socket_client();  // unused: every connection is ours
        args.client_ownership = true;
        args.expiration = kIdleExpiration;
        pool.reset(args.sockclient ? new_tcp_socket_pool(args) : nullptr);
        if (!pool) delete args.sockclient;
    }
    return pool.get();
}

ISocketStream* socket_dialer::adopt(const dial_target& t, ISocketStream* s) {
    ISocketPool* pool = at_home() ? this->pool() : nullptr;
    if (!pool) return s;  // not pooled: closed after use
    bool used = false;
    ISocketStream* p = pool->connect(pool_key(t), [&]() -> ISocketStream* {
        used = true;
        return s;
    });
    if (!used) delete s;
    return p;
}

h2_connection_pool* socket_dialer::h2_pool() {
    if (!at_home()) return nullptr;
    if (!h_->h2) h_->h2.reset(new h2_connection_pool(this));
    return h_->h2.get();
}

ISocketStream* socket_dialer::dial(const dial_target& t, const std::vector<IPAddr>& bind_ips,
                                   const Timeout& deadline) {
    if (!t.uds_path.empty()) {  // plain, whatever the URL's scheme (as Photon)
        std::unique_ptr<ISocketClient> uds(new_uds_client());
        if (!uds) return nullptr;
        uds->timeout(deadline.timeout());
        return uds->connect(std::string(t.uds_path).c_str());
    }
    if (!t.proxy) return connect_host(t.host, t.port, t.secure, t.alpn, bind_ips, deadline);
    ISocketStream* leg = connect_host(t.proxy->host(), t.proxy->port(), t.proxy->secure(),
                                      alpn_offer::Http1, bind_ips, deadline);
    if (!leg || !t.secure) return leg;  // http: requests are forwarded in absolute form
    if (open_tunnel(leg, *t.proxy, t.host, t.port, deadline) < 0) {
        int e = errno;
        delete leg;
        errno = e;
        return nullptr;
    }
    return wrap_tls(leg, t.host, alpn_offer::Http1,
                    deadline);  // HTTP/2 does not go through proxies
}

lookup_fn socket_dialer::lookup_for_tests = nullptr;

// The lookup runs off the vCPU (gethostbyname_nb's helper thread) and is
// given up at the deadline with ETIMEDOUT; its late answer is dropped there.
IPAddr socket_dialer::resolve(std::string_view host, const Timeout& deadline) {
    std::string name(host);
    IPAddr ip(name.c_str());
    if (!ip.undefined() || name == "0.0.0.0") return ip;  // a literal
    lookup_fn lookup = lookup_for_tests;
    if (at_home()) {
        auto& resolver = h_->resolver;
        if (!resolver) resolver.reset(new_timed_resolver(3600ULL * 1000 * 1000, -1, lookup));
        return resolver->resolve_within(host, deadline);
    }
    std::vector<IPAddr> addrs;
    int n = lookup ? lookup(host, addrs, deadline) : gethostbyname_nb(host, addrs, deadline);
    if (n <= 0 || addrs.empty()) {
        if (errno == 0) errno = ENOENT;
        return IPAddr();
    }
    for (auto& a : addrs)
        if (a.is_ipv4()) return a;
    return addrs.front();
}

ISocketStream* socket_dialer::connect_host(std::string_view host, uint16_t port, bool secure,
                                           alpn_offer alpn, const std::vector<IPAddr>& bind_ips,
                                           const Timeout& deadline) {
    IPAddr ip = resolve(host, deadline);
    if (ip.undefined() && std::string_view(host) != "0.0.0.0") {
        if (deadline.expired()) errno = ETIMEDOUT;
        return nullptr;  // the resolver logged why
    }
    std::unique_ptr<ISocketClient> own;
    ISocketClient* cli;
    auto* ips = const_cast<IPAddr*>(bind_ips.data());
    if (at_home()) {
        if (!h_->tcp || h_->tcp_bind_ips != bind_ips) {
            h_->tcp.reset(new_tcp_socket_client(ips, (uint32_t)bind_ips.size()));
            h_->tcp_bind_ips = bind_ips;
        }
        cli = h_->tcp.get();
    } else {
        own.reset(new_tcp_socket_client(ips, (uint32_t)bind_ips.size()));
        cli = own.get();
    }
    if (!cli) return nullptr;
    cli->timeout(deadline.timeout());
    ISocketStream* s = cli->connect(EndPoint(ip, port));
    if (!s) {
        int e = errno;
        if (at_home() && h_->resolver) h_->resolver->discard_cache(host, ip);  // maybe stale
        errno = e;
        return nullptr;
    }
    return secure ? wrap_tls(s, host, alpn, deadline) : s;
}

ISocketStream* socket_dialer::wrap_tls(ISocketStream* s, std::string_view host, alpn_offer alpn,
                                       const Timeout& deadline) {
    if (!tls_ctx_) {
        delete s;
        LOG_ERROR_RETURN(ENOSYS, nullptr, "http client: no TLS context for https");
    }
    ISocketStream* t = new_tls_stream(tls_ctx_, s, SecurityRole::Client, true);
    if (!t) return nullptr;  // s went with it
    std::string name(host);
    t->timeout(deadline.timeout());
    int offered = 0;
    if (alpn == alpn_offer::H2)
        offered = tls_stream_set_alpn_protos(t, {"h2", "http/1.1"});
    else if (alpn == alpn_offer::Http1)
        offered = tls_stream_set_alpn_protos(t, {"http/1.1"});
    if (offered < 0 || tls_stream_set_hostname(t, name.c_str()) < 0 ||
        tls_stream_handshake(t) < 0) {
        int e = errno;
        delete t;
        errno = e;
        return nullptr;
    }
    return t;
}

std::string proxy_authorization(const URL& proxy) {
    if (proxy.user_passwd().empty()) return {};
    std::string user, pass, plain, enc;
    if (url_unescape(proxy.user(), &user) < 0 || url_unescape(proxy.passwd(), &pass) < 0)
        plain.assign(proxy.user_passwd());  // not valid escapes: as written
    else
        plain = user + ":" + pass;
    Base64Encode(plain, enc);
    return "Basic " + enc;
}

int socket_dialer::open_tunnel(ISocketStream* leg, const URL& proxy, std::string_view host,
                               uint16_t port, const Timeout& deadline) {
    bounded_stream bs;
    bs.stream = leg;
    bs.deadline = deadline;
    std::string where = authority(host, port);
    Request req;
    req.reset(nullptr, &bs);
    req.verb(Verb::CONNECT);
    std::string auth = proxy_authorization(proxy);
    if (req.target(where) < 0 || req.headers.insert("Host", where) < 0 ||
        (!auth.empty() && req.headers.insert("Proxy-Authorization", auth) < 0) || req.send() < 0)
        return -1;
    InputBuffer in(&bs, kTunnelHeadSize);
    Response resp;
    resp.reset(&in, &bs);
    if (resp.receive_header(Verb::CONNECT) < 0) {
        if (errno == ENODATA) errno = ECONNRESET;
        return -1;
    }
    if (resp.status_code() / 100 != 2) {
        LOG_EVERY_T(
            10, LOG_WARN("http client: proxy refused CONNECT ` with `", where, resp.status_code()));
        errno = ECONNREFUSED;
        return -1;
    }
    if (in.size() != 0) {  // bytes before our ClientHello: not a tunnel we understand
        errno = EPROTO;
        return -1;
    }
    return 0;
}

}  // namespace http
}  // namespace net
}  // namespace photon
