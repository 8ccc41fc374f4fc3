// TLS clients and servers: wrappers that put a TLS stream over every stream
// their base client connects or base server accepts.
#include <atomic>
#include <memory>

#include <photon/common/alog.h>
#include <photon/common/utility.h>
#include <photon/net/security-context/tls-stream.h>

#include "../forward_socket.h"
#include "tls_stream.h"

namespace photon {
namespace net {

namespace {

class tls_socket_client : public ForwardSocketClient {
public:
    tls_socket_client(TLSContext* ctx, ISocketClient* base, bool own)
        : ForwardSocketClient(base, own), ctx_(ctx) {}

    ISocketStream* connect(const EndPoint& remote, const EndPoint* local = nullptr) override {
        return wrap(underlay_->connect(remote, local));
    }
    ISocketStream* connect(const char* path, size_t count = 0) override {
        return wrap(underlay_->connect(path, count));
    }

private:
    // The handshake waits for the first I/O, so set a hostname before it.
    ISocketStream* wrap(ISocketStream* s) {
        return s ? new_tls_stream(ctx_, s, SecurityRole::Client, true) : nullptr;
    }

    TLSContext* ctx_;
};

// What connection coroutines need. They may outlive the server (its base
// keeps open connections going), so they share it by reference count.
struct tls_conn_state {
    TLSContext* ctx;
    ISocketServer::Handler handler;
    ISocketServer* base;
    std::atomic<int> refs{1};

    void unref() {
        if (--refs == 0) delete this;
    }
    // In the connection's own coroutine. The handshake waits for the
    // handler's first I/O: the handler's deadlines bound it and its owner
    // can interrupt it (an HTTP server's stop() counts and ends such a
    // connection). The base server deletes `plain` after we return.
    int on_connection(ISocketStream* plain) {
        refs++;
        DEFER(unref());
        // Streams without a timeout take the server's.
        if (plain->timeout() == (uint64_t)-1 && base) plain->timeout(base->timeout());
        std::unique_ptr<ISocketStream> s(
            make_tls_stream(ctx, plain, SecurityRole::Server, false, false));
        if (!s) return -1;
        return handler(s.get());
    }
};

// Owns its base by hand, not through ForwardSocketServer: the base goes
// before the connections' shared state lets go of it.
class tls_socket_server : public ForwardSocketServer {
public:
    tls_socket_server(TLSContext* ctx, ISocketServer* base, bool own)
        : ForwardSocketServer(base, false), state_(new tls_conn_state{ctx, {}, base}), own_(own) {}
    ~tls_socket_server() override {
        underlay_->terminate();
        if (own_) {
            delete underlay_;
        } else {
            underlay_->set_handler({});  // it must not call into us any more
        }
        state_->base = nullptr;
        state_->unref();
    }

    ISocketStream* accept(EndPoint* remote_endpoint = nullptr) override {
        ISocketStream* s = underlay_->accept(remote_endpoint);
        if (s && s->timeout() == (uint64_t)-1) s->timeout(underlay_->timeout());
        if (!s) return nullptr;
        std::unique_ptr<ISocketStream> t(
            make_tls_stream(state_->ctx, s, SecurityRole::Server, true, false));
        if (!t) return nullptr;
        if (tls_stream_handshake(t.get()) < 0) {  // fails accept, as documented
            ERRNO e;
            t.reset();
            errno = e.no;
            return nullptr;
        }
        return t.release();
    }
    ISocketServer* set_handler(Handler handler) override {
        state_->handler = handler;
        underlay_->set_handler({state_, &tls_conn_state::on_connection});
        return this;
    }

private:
    tls_conn_state* state_;
    bool own_;
};

}  // namespace

ISocketClient* new_tls_client(TLSContext* ctx, ISocketClient* base, bool ownership) {
    if (!ctx || !base) LOG_ERROR_RETURN(EINVAL, nullptr, "new_tls_client: no context or base");
    return new tls_socket_client(ctx, base, ownership);
}

ISocketServer* new_tls_server(TLSContext* ctx, ISocketServer* base, bool ownership) {
    if (!ctx || !base) LOG_ERROR_RETURN(EINVAL, nullptr, "new_tls_server: no context or base");
    return new tls_socket_server(ctx, base, ownership);
}

}  // namespace net
}  // namespace photon
