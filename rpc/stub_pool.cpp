// Stubs shared by endpoint: counted references, one connection attempt at a
// time per endpoint (the others wait for it), idle stubs closed by a timer.
#include <memory>
#include <string>
#include <unordered_map>

#include <photon/common/alog.h>
#include <photon/net/security-context/tls-stream.h>
#include <photon/rpc/rpc.h>
#include <photon/thread/thread.h>
#include <photon/thread/timer.h>

namespace photon {
namespace rpc {

bool stub_broken(Stub* s);  // stub.cpp: its connection ended (e.g. a server's idle close)

namespace {

class StubPoolImpl : public StubPool {
public:
    StubPoolImpl(uint64_t expiration, uint64_t timeout, std::shared_ptr<net::ISocketClient> client)
        : m_client(std::move(client)),
          m_expiration(expiration ? expiration : 1),
          m_sweeper(std::max<uint64_t>(m_expiration / 2, 1000), {this, &StubPoolImpl::sweep}) {
        if (!m_client) m_client.reset(net::new_tcp_socket_client());
        if (m_client) m_client->timeout(timeout);
    }
    ~StubPoolImpl() override {
        m_sweeper.stop();
        for (auto& kv : m_map) delete kv.second.stub;
        delete m_tls;
    }

    Stub* get_stub(const net::EndPoint& ep, bool tls) override {
        return get(ep, [&] { return connect(ep, tls); });
    }
    int put_stub(const net::EndPoint& ep, bool immediately) override;
    Stub* acquire(const net::EndPoint& ep) override {
        return get(ep, []() -> Stub* { return errno = ENOENT, nullptr; });
    }
    uint64_t get_timeout() const override { return m_client ? m_client->timeout() : 0; }

protected:
    struct Entry {
        Stub* stub = nullptr;  // nullptr while connecting
        int refs = 0;
        uint64_t idle_since = 0;
        bool doomed = false;  // put back "immediately": goes with its last user
    };

    template <typename Make>
    Stub* get(const net::EndPoint& ep, Make&& make);
    virtual net::ISocketStream* dial(const net::EndPoint& ep) { return m_client->connect(ep); }
    Stub* connect(const net::EndPoint& ep, bool tls);
    uint64_t sweep();

    std::shared_ptr<net::ISocketClient> m_client;
    uint64_t m_expiration;
    std::unordered_map<net::EndPoint, Entry> m_map;
    net::TLSContext* m_tls = nullptr;
    condition_variable m_changed;  // an entry connected, failed, or went away
    Timer m_sweeper;
};

template <typename Make>
Stub* StubPoolImpl::get(const net::EndPoint& ep, Make&& make) {
    for (;;) {
        auto it = m_map.find(ep);
        if (it == m_map.end()) break;
        auto& e = it->second;
        if (e.stub && !e.doomed && e.refs <= 0 && stub_broken(e.stub)) {
            // Unused and its connection gone (the server closed it idle):
            // connect afresh rather than hand out a stub that fails at once.
            delete e.stub;
            m_map.erase(it);
            m_changed.notify_all();
            break;
        }
        if (e.stub && !e.doomed) {
            e.refs++;
            return e.stub;
        }
        m_changed.wait_no_lock();  // connecting, or going away; then look again
    }
    auto& e = m_map[ep];
    e.refs = 1;
    Stub* s = make();
    auto it = m_map.find(ep);  // the map may have changed while connecting
    if (!s) {
        int err = errno;
        m_changed.notify_all();
        m_map.erase(it);
        errno = err;
        return nullptr;
    }
    it->second.stub = s;
    m_changed.notify_all();
    return s;
}

Stub* StubPoolImpl::connect(const net::EndPoint& ep, bool tls) {
    if (!m_client) return errno = ENOMEM, nullptr;
    net::ISocketStream* sock = dial(ep);
    if (!sock) LOG_ERRNO_RETURN(0, nullptr, "rpc stub pool: cannot connect to `", ep);
    sock->timeout(UINT64_MAX);
    if (tls) {
        if (!m_tls && !(m_tls = net::new_tls_context(nullptr, nullptr, nullptr))) {
            delete sock;
            return nullptr;
        }
        auto t = net::new_tls_stream(m_tls, sock, net::SecurityRole::Client, true);
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

int StubPoolImpl::put_stub(const net::EndPoint& ep, bool immediately) {
    auto it = m_map.find(ep);
    if (it == m_map.end() || !it->second.stub) return errno = ENOENT, -1;
    auto& e = it->second;
    if (e.refs <= 0) return errno = EINVAL, -1;  // more puts than gets
    e.refs--;
    if (immediately) e.doomed = true;
    if (e.refs > 0) return 0;
    if (!e.doomed) {
        e.idle_since = photon::now;
        return 0;
    }
    delete e.stub;  // waiters connect afresh
    m_changed.notify_all();
    m_map.erase(it);
    return 0;
}

uint64_t StubPoolImpl::sweep() {
    for (auto it = m_map.begin(); it != m_map.end();) {
        auto& e = it->second;
        if (e.stub && e.refs <= 0 && photon::now - e.idle_since >= m_expiration) {
            delete e.stub;
            it = m_map.erase(it);
        } else {
            ++it;
        }
    }
    return 0;
}

// Every endpoint maps to the one unix socket path.
class UDSStubPoolImpl final : public StubPoolImpl {
public:
    UDSStubPoolImpl(const char* path, uint64_t expiration, uint64_t timeout)
        : StubPoolImpl(expiration, timeout,
                       std::shared_ptr<net::ISocketClient>(net::new_uds_client())),
          m_path(path ? path : "") {}

protected:
    net::ISocketStream* dial(const net::EndPoint&) override {
        return m_client->connect(m_path.c_str());
    }
    std::string m_path;
};

}  // namespace

StubPool* new_stub_pool(uint64_t expiration, uint64_t timeout,
                        std::shared_ptr<net::ISocketClient> socket_client) {
    return new (std::nothrow) StubPoolImpl(expiration, timeout, std::move(socket_client));
}

StubPool* new_uds_stub_pool(const char* path, uint64_t expiration, uint64_t timeout) {
    if (!path) return errno = EINVAL, nullptr;
    return new (std::nothrow) UDSStubPoolImpl(path, expiration, timeout);
}

}  // namespace rpc
}  // namespace photon
