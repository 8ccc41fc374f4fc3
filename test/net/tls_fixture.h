// The fixture of the TLS stream tests (tls_handshake_test.cpp,
// tls_stream_test.cpp): once per master event engine, a test CA and
// certificates (test/util/tls_pair.h), a TLS server on 127.0.0.1 that echoes
// or runs the test's handler, and a client to it.
#pragma once

#include <errno.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <photon/net/security-context/tls-stream.h>
#include <photon/net/socket.h>

#include "../thread/test_util.h"
#include "../util/engine_fixture.h"
#include "net_test_util.h"
#include "tls_test_util.h"

namespace photon_test {

inline int tls_echo(photon::net::ISocketStream* s) {
    char buf[16384];
    ssize_t n;
    while ((n = s->recv(buf, sizeof(buf))) > 0)
        if (s->write(buf, n) != n) break;
    return 0;
}

class Tls : public EngineTest {
protected:
    using TLSContext = photon::net::TLSContext;
    using ISocketStream = photon::net::ISocketStream;

    void SetUp() override {
        EngineTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        TLSContext* probe = keep(photon::net::new_tls_context());
        if (!probe && errno == ENOSYS) GTEST_SKIP() << "built without TLS (OpenSSL)";
        if (!have_tool("openssl")) GTEST_SKIP() << "the openssl CLI makes the test certificates";
        ASSERT_TRUE(pki().ok()) << "certificate generation failed, see its log";
    }
    void TearDown() override {
        server.reset();
        client.reset();
        EngineTest::TearDown();
    }
    static test_pki& pki() { return test_pki::get(); }

    // A server context for certificate `name` (srv, wrong, expired, a, b, self).
    static TLSContext* server_ctx(const char* name) {
        return photon::net::new_tls_context(pki().pem(std::string(name) + ".pem").c_str(),
                                            pki().pem(std::string(name) + ".key").c_str());
    }
    // A client context trusting the test CA.
    static TLSContext* client_ctx() {
        auto c = photon::net::new_tls_context();
        if (c && c->set_ca_cert(pki().pem("ca.pem").c_str()) < 0) {
            delete c;
            return nullptr;
        }
        return c;
    }

    // Serves TLS on 127.0.0.1 with ctx, running on_conn per connection.
    void serve(TLSContext* ctx) {
        server.reset(photon::net::new_tls_server(ctx, photon::net::new_tcp_socket_server(), true));
        ASSERT_NE(nullptr, server);
        ASSERT_EQ(0, server->bind_v4localhost(0));
        ASSERT_EQ(0, server->listen());
        server->set_handler({this, &Tls::handle});
        ASSERT_EQ(0, server->start_loop(false));
        ep = server->getsockname();
    }

public:
    int handle(photon::net::ISocketStream* s) {
        // A handler gets its stream before the handshake, which ALPN needs.
        if (photon::net::tls_stream_handshake(s) < 0) return -1;
        server_alpn = std::string(photon::net::tls_stream_get_alpn_selected(s));
        return on_conn ? on_conn(s) : tls_echo(s);
    }

protected:
    // A TLS client stream to ep, not yet handshaken; hostname may be nullptr.
    ISocketStream* connect(TLSContext* ctx, const char* hostname = "localhost") {
        client.reset(photon::net::new_tls_client(ctx, photon::net::new_tcp_socket_client(), true));
        if (!client) return nullptr;
        client->timeout(kLongUs);
        ISocketStream* s = client->connect(ep);
        if (s && hostname) {
            EXPECT_EQ(0, photon::net::tls_stream_set_hostname(s, hostname));
        }
        return s;
    }
    // Handshake result of a fresh client: 0, or the errno.
    int handshake_errno(TLSContext* ctx, const char* hostname = "localhost") {
        std::unique_ptr<ISocketStream> s(connect(ctx, hostname));
        if (!s) return errno;
        return photon::net::tls_stream_handshake(s.get()) == 0 ? 0 : errno;
    }

    // Contexts live until after fini: connection coroutines may outlive a test body.
    TLSContext* keep(TLSContext* ctx) {
        if (ctx) contexts.emplace_back(ctx);
        return ctx;
    }
    std::vector<std::unique_ptr<TLSContext>> contexts;
    std::unique_ptr<photon::net::ISocketServer> server;
    std::unique_ptr<photon::net::ISocketClient> client;
    std::function<int(ISocketStream*)> on_conn;
    std::string server_alpn;
    photon::net::EndPoint ep;
};

}  // namespace photon_test
