// Keep-alive pool (new_tcp_socket_pool): connect() hands out an idle
// connection of the same key if one is still alive, else a new one; deleting
// the stream it returned gives the connection back unless it failed, hit EOF,
// or was shut down or closed. Idle connections expire after `expiration` us;
// a heartbeater, if set, runs on them every heartbeat_interval us and drops
// those where it fails. A daemon coroutine (the reaper) does both, so it
// never holds up photon::fini; the pool stops it when deleted. The pool and
// its streams belong to one vCPU and must be deleted on it, streams first.
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <list>
#include <memory>
#include <string>
#include <unordered_map>

#include <photon/common/alog-stdstring.h>
#include <photon/common/alog.h>
#include <photon/net/utils.h>
#include <photon/net/utils-stdstring.h>
#include <photon/thread/thread.h>

#include "kernel_socket.h"
#include "pooled_stream.h"

namespace photon {
namespace net {

namespace {
class tcp_socket_pool : public ISocketPool, public stream_home {
public:
    explicit tcp_socket_pool(const SocketPoolArgs& a) : args_(a) {}
    ~tcp_socket_pool() override;
    int start_reaper();

    ISocketStream* connect(const EndPoint& remote, const EndPoint* local = nullptr) override {
        std::string key = endpoint_key(remote, local);
        return connect(key, remote, local);
    }
    ISocketStream* connect(const char* path, size_t count = 0) override {
        std::string key(path, count ? count : strlen(path));
        if (auto s = take(key)) return s;
        return lend(key, args_.sockclient->connect(path, count));
    }
    ISocketStream* connect(std::string_view domain, uint16_t port,
                           const EndPoint* local = nullptr) override {
        return connect(std::string(domain) + ":" + std::to_string(port), domain, port, local);
    }
    ISocketStream* connect(std::string_view key, const EndPoint& remote,
                           const EndPoint* local = nullptr) override {
        if (auto s = take(key)) return s;
        return lend(key, args_.sockclient->connect(remote, local));
    }
    ISocketStream* connect(std::string_view key, std::string_view domain, uint16_t port,
                           const EndPoint* local = nullptr) override;
    ISocketStream* connect(std::string_view key, TempDelegate<ISocketStream*> connector) override {
        if (auto s = take(key)) return s;
        return lend(key, connector());
    }

    uint64_t timeout() const override { return args_.sockclient->timeout(); }
    void timeout(uint64_t tm) override { args_.sockclient->timeout(tm); }
    Object* get_underlay_object(uint64_t recursion) override {
        return recursion ? args_.sockclient->get_underlay_object(recursion - 1) : args_.sockclient;
    }
    int setsockopt(int level, int name, const void* value, socklen_t len) override {
        return args_.sockclient->setsockopt(level, name, value, len);
    }
    int getsockopt(int level, int name, void* value, socklen_t* len) override {
        return args_.sockclient->getsockopt(level, name, value, len);
    }

    void give_back(const std::string& key, ISocketStream* s) override;

private:
    struct idle_conn {
        std::string key;
        ISocketStream* stream;
        uint64_t idle_since;      // photon::now when it came back
        uint64_t last_heartbeat;  // likewise, when the heartbeater last ran
    };

    static std::string endpoint_key(const EndPoint& remote, const EndPoint* local) {
        return local ? to_string(remote) + "@" + to_string(*local) : to_string(remote);
    }
    ISocketStream* take(std::string_view key);
    ISocketStream* lend(std::string_view key, ISocketStream* s);
    void reap();
    void run_heartbeats();
    uint64_t next_wake() const;
    static void* reaper_entry(void* self);

    SocketPoolArgs args_;
    std::list<idle_conn> idle_;  // oldest first
    std::unique_ptr<Resolver> resolver_;
    thread* reaper_ = nullptr;
    join_handle* reaper_jh_ = nullptr;
    bool reaper_sleeps_ = false;  // only then may give_back wake it (not mid-heartbeat)
    bool stopping_ = false;
};

// Alive for reuse: a non-blocking peek finds neither EOF, an error nor stray
// data (a reply nobody read would confuse the next user).
bool still_idle(ISocketStream* s) {
    if (auto k = dynamic_cast<kernel_socket_stream*>(s); k && k->buffered()) return false;
    int fd = s->get_underlay_fd();
    if (fd < 0) return true;  // not a kernel socket: trust it
    char c;
    ssize_t r = ::recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

tcp_socket_pool::~tcp_socket_pool() {
    stopping_ = true;
    if (reaper_) {
        thread_interrupt(reaper_, ECANCELED);
        thread_join(reaper_jh_);
    }
    for (auto& c : idle_) delete c.stream;
    if (args_.client_ownership) delete args_.sockclient;
}

int tcp_socket_pool::start_reaper() {
    bool expires = args_.expiration != -1ULL;
    if (!expires && !args_.heartbeater) return 0;
    reaper_ = thread_create(&reaper_entry, this, 64 * 1024, 0, THREAD_DAEMON);
    if (!reaper_) LOG_ERRNO_RETURN(0, -1, "socket pool: no reaper coroutine");
    reaper_jh_ = thread_enable_join(reaper_);
    return 0;
}

ISocketStream* tcp_socket_pool::connect(std::string_view key, std::string_view domain,
                                        uint16_t port, const EndPoint* local) {
    if (auto s = take(key)) return s;
    if (!resolver_) resolver_.reset(new_default_resolver());
    IPAddr ip = resolver_->resolve(domain);
    if (ip.undefined()) return nullptr;  // logged by the resolver
    ISocketStream* s = args_.sockclient->connect(EndPoint(ip, port), local);
    if (!s) resolver_->discard_cache(domain, ip);  // maybe stale: look it up afresh next time
    return lend(key, s);
}

ISocketStream* tcp_socket_pool::take(std::string_view key) {
    for (auto it = idle_.rbegin(); it != idle_.rend(); ++it) {  // newest first
        if (it->key != key) continue;
        ISocketStream* s = it->stream;
        std::string k = std::move(it->key);
        idle_.erase(std::next(it).base());
        if (still_idle(s)) return new_pooled_stream(this, k, s);
        delete s;  // the peer closed it while idle
        return take(key);
    }
    return nullptr;
}

ISocketStream* tcp_socket_pool::lend(std::string_view key, ISocketStream* s) {
    if (!s) return nullptr;  // the client logged why
    if (args_.enable_tcp_keepalive) {
        int one = 1, idle = args_.tcp_keepalive_time, intvl = args_.tcp_keepalive_intvl,
            cnt = args_.tcp_keepalive_probes;
        s->setsockopt(SOL_SOCKET, SO_KEEPALIVE, one);
        s->setsockopt(IPPROTO_TCP, TCP_KEEPIDLE, idle);
        s->setsockopt(IPPROTO_TCP, TCP_KEEPINTVL, intvl);
        s->setsockopt(IPPROTO_TCP, TCP_KEEPCNT, cnt);
    }
    return new_pooled_stream(this, std::string(key), s);
}

void tcp_socket_pool::give_back(const std::string& key, ISocketStream* s) {
    if (stopping_) {
        delete s;
        return;
    }
    uint64_t t = __update_now();
    idle_.push_back({key, s, t, t});
    if (reaper_sleeps_) thread_interrupt(reaper_, EAGAIN);  // recompute its sleep
}

// Microseconds until the reaper has work; -1 if none is due.
uint64_t tcp_socket_pool::next_wake() const {
    uint64_t t = __update_now(), best = -1ULL;
    auto until = [&](uint64_t since, uint64_t span) {
        if (span == -1ULL) return;
        uint64_t due = since + span;
        uint64_t left = due > t ? due - t : 0;
        if (left < best) best = left;
    };
    for (auto& c : idle_) {
        until(c.idle_since, args_.expiration);
        if (args_.heartbeater) until(c.last_heartbeat, args_.heartbeat_interval);
    }
    return best;
}

void tcp_socket_pool::run_heartbeats() {
    uint64_t t = __update_now();
    std::list<idle_conn> due;
    for (auto it = idle_.begin(); it != idle_.end();) {
        auto cur = it++;
        if (t - cur->last_heartbeat >= args_.heartbeat_interval) due.splice(due.end(), idle_, cur);
    }
    // Out of idle_ meanwhile, so connect() cannot hand them out mid-beat.
    for (auto& c : due) {
        if (!stopping_ && args_.heartbeater(c.stream) == 0 && still_idle(c.stream)) {
            c.last_heartbeat = __update_now();
            idle_.push_back(std::move(c));
        } else {
            delete c.stream;
        }
    }
}

void tcp_socket_pool::reap() {
    while (!stopping_) {
        reaper_sleeps_ = true;
        thread_usleep(next_wake());  // cut short by give_back() and the dtor
        reaper_sleeps_ = false;
        if (stopping_) break;
        uint64_t t = __update_now();
        for (auto it = idle_.begin(); it != idle_.end();) {
            auto cur = it++;
            if (args_.expiration != -1ULL && t - cur->idle_since >= args_.expiration) {
                delete cur->stream;
                idle_.erase(cur);
            }
        }
        if (args_.heartbeater) run_heartbeats();
    }
}

void* tcp_socket_pool::reaper_entry(void* self) {
    static_cast<tcp_socket_pool*>(self)->reap();
    return nullptr;
}
}  // namespace

}  // namespace net
}  // namespace photon

using namespace photon::net;

extern "C" ISocketPool* new_tcp_socket_pool(const SocketPoolArgs& args) {
    if (!args.sockclient) LOG_ERROR_RETURN(EINVAL, nullptr, "socket pool: no client");
    auto pool = new tcp_socket_pool(args);
    if (pool->start_reaper() < 0) {
        delete pool;
        return nullptr;
    }
    return pool;
}
