// Stubs shared by endpoint: counted references, one connection attempt at a
// time per endpoint (the others wait for it), idle stubs closed by a timer.
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <photon/common/alog.h>
#include <photon/net/security-context/tls-stream.h>
#include <photon/rpc/rpc.h>
#include <photon/thread/thread.h>
#include <photon/thread/timer.h>

namespace photon {
namespace rpc {

bool stub_broken(Stub* s);  // stub.cpp: its connection ended (e.g. a server's idle close)

namespace {

class stub_pool_impl : public StubPool {
public:
    stub_pool_impl(uint64_t expiration, uint64_t timeout,
                   std::shared_ptr<net::ISocketClient> client)
        : client_(std::move(client)),
          expiration_(expiration ? expiration : 1),
          sweeper_(std::max<uint64_t>(expiration_ / 2, 1000), {this, &stub_pool_impl::sweep}) {
        if (!client_) client_.reset(net::new_tcp_socket_client());
        if (client_) client_->timeout(timeout);
    }
    ~stub_pool_impl() override {
        sweeper_.stop();
        for (auto& kv : map_) delete kv.second.stub;
        delete tls_;
    }

    Stub* get_stub(const net::EndPoint& ep, bool tls) override {
        return get(ep, [&] { return connect(ep, tls); });
    }
    int put_stub(const net::EndPoint& ep, bool immediately) override;
    Stub* acquire(const net::EndPoint& ep) override {
        return get(ep, []() -> Stub* { return errno = ENOENT, nullptr; });
    }
    uint64_t get_timeout() const override { return client_ ? client_->timeout() : 0; }

protected:
    struct Entry {
        Stub* stub = nullptr;  // nullptr while connecting
        int refs = 0;
        uint64_t idle_since = 0;
        bool doomed = false;  // put back "immediately": goes with its last user
    };

    template <typename Make>
    Stub* get(const net::EndPoint& ep, Make&& make);
    virtual net::ISocketStream* dial(const net::EndPoint& ep) { return client_->connect(ep); }
    Stub* connect(const net::EndPoint& ep, bool tls);
    uint64_t sweep();

    std::shared_ptr<net::ISocketClient> client_;
    uint64_t expiration_;
    std::unordered_map<net::EndPoint, Entry> map_;
    net::TLSContext* tls_ = nullptr;
    condition_variable changed_;  // an entry connected, failed, or went away
    Timer sweeper_;
};

template <typename Make>
Stub* stub_pool_impl::get(const net::EndPoint& ep, Make&& make) {
    for (;;) {
        auto it = map_.find(ep);
        if (it == map_.end()) break;
        auto& e = it->second;
        if (e.stub && !e.doomed && e.refs <= 0 && stub_broken(e.stub)) {
            // Unused and its connection gone (the server closed it idle):
            // connect afresh rather than hand out a stub that fails at once.
            // Out of the map before the delete, which may yield (the stub
            // waits for its reader): no one else finds it meanwhile.
            Stub* dead = e.stub;
            map_.erase(it);
            changed_.notify_all();
            delete dead;
            continue;
        }
        if (e.stub && !e.doomed) {
            e.refs++;
            return e.stub;
        }
        changed_.wait_no_lock();  // connecting, or going away; then look again
    }
    auto& e = map_[ep];
    e.refs = 1;
    Stub* s = make();
    auto it = map_.find(ep);  // the map may have changed while connecting
    if (!s) {
        int err = errno;
        changed_.notify_all();
        map_.erase(it);
        errno = err;
        return nullptr;
    }
    it->second.stub = s;
    changed_.notify_all();
    return s;
}

Stub* stub_pool_impl::connect(const net::EndPoint& ep, bool tls) {
    if (!client_) return errno = ENOMEM, nullptr;
    net::ISocketStream* sock = dial(ep);
    if (!sock) LOG_ERRNO_RETURN(0, nullptr, "rpc stub pool: cannot connect to `", ep);
    sock->timeout(UINT64_MAX);
    if (tls) {
        if (!tls_ && !(tls_ = net::new_tls_context(nullptr, nullptr, nullptr))) {
            delete sock;
            return nullptr;
        }
        auto t = net::new_tls_stream(tls_, sock, net::SecurityRole::Client, true);
        if (!t) {
            delete sock;
            return nullptr;
        }
        sock = t;
    }
    auto stub = new_rpc_stub(sock, true);
    if (!stub) delete sock;
    return stub;
}

int stub_pool_impl::put_stub(const net::EndPoint& ep, bool immediately) {
    auto it = map_.find(ep);
    if (it == map_.end() || !it->second.stub) return errno = ENOENT, -1;
    auto& e = it->second;
    if (e.refs <= 0) return errno = EINVAL, -1;  // more puts than gets
    e.refs--;
    if (immediately) e.doomed = true;
    if (e.refs > 0) return 0;
    if (!e.doomed) {
        e.idle_since = photon::now;
        return 0;
    }
    Stub* dead = e.stub;  // out of the map before the delete, which may yield
    map_.erase(it);
    changed_.notify_all();  // waiters connect afresh
    delete dead;
    return 0;
}

uint64_t stub_pool_impl::sweep() {
    // Expired stubs leave the map first: deleting one may yield, and the map
    // must not hold it (nor be walked) meanwhile.
    std::vector<Stub*> dead;
    for (auto it = map_.begin(); it != map_.end();) {
        auto& e = it->second;
        if (e.stub && e.refs <= 0 && photon::now - e.idle_since >= expiration_) {
            dead.push_back(e.stub);
            it = map_.erase(it);
        } else {
            ++it;
        }
    }
    if (!dead.empty()) changed_.notify_all();
    for (Stub* s : dead) delete s;
    return 0;
}

// Every endpoint maps to the one unix socket path.
class uds_stub_pool_impl final : public stub_pool_impl {
public:
    uds_stub_pool_impl(const char* path, uint64_t expiration, uint64_t timeout)
        : stub_pool_impl(expiration, timeout,
                         std::shared_ptr<net::ISocketClient>(net::new_uds_client())),
          path_(path ? path : "") {}

protected:
    net::ISocketStream* dial(const net::EndPoint&) override {
        return client_->connect(path_.c_str());
    }
    std::string path_;
};

}  // namespace

StubPool* new_stub_pool(uint64_t expiration, uint64_t timeout,
                        std::shared_ptr<net::ISocketClient> socket_client) {
    return new (std::nothrow) stub_pool_impl(expiration, timeout, std::move(socket_client));
}

StubPool* new_uds_stub_pool(const char* path, uint64_t expiration, uint64_t timeout) {
    if (!path) return errno = EINVAL, nullptr;
    return new (std::nothrow) uds_stub_pool_impl(path, expiration, timeout);
}

}  // namespace rpc
}  // namespace photon
