// TLS handshakes over both event engines: verification (CA, hostname or IP,
// expiry, default versus NONE, CA file and directory), ALPN, SNI,
// passphrase-protected keys, client certificates, a server's handshake
// timeout and the rate of its failure log, interoperability with openssl
// s_server / s_client and curl, and the factories' argument checks. The
// streams themselves are in tls_stream_test.cpp.
#include <string.h>

#include <atomic>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <photon/common/alog.h>
#include <photon/common/utility.h>
#include <photon/net/security-context/tls-stream.h>
#include <photon/net/socket.h>

#include "tls_fixture.h"

using namespace photon;
using namespace photon::net;
using namespace photon_test;

namespace {

estring_view pick_http11(void*, const std::vector<estring_view>& offered) {
    for (auto p : offered)
        if (p == "http/1.1") return p;
    return {};
}

TEST_P(Tls, ClientVerifiesCaAndHostnameOrIpAddress) {
    TLSContext* sctx = keep(server_ctx("srv"));
    TLSContext* cctx = keep(client_ctx());
    serve(sctx);
    EXPECT_EQ(0, handshake_errno(cctx, "localhost"));
    EXPECT_EQ(0, handshake_errno(cctx, "127.0.0.1"));  // the IP SAN
    EXPECT_EQ(EACCES, handshake_errno(cctx, "other.example"));
}

TEST_P(Tls, ClientRejectsWrongHostCertificate) {
    TLSContext* sctx = keep(server_ctx("wrong"));
    TLSContext* cctx = keep(client_ctx());
    serve(sctx);
    EXPECT_EQ(EACCES, handshake_errno(cctx, "localhost"));
    EXPECT_EQ(0, handshake_errno(cctx, "wrong.example"));
}

TEST_P(Tls, ClientRejectsExpiredCertificate) {
    TLSContext* sctx = keep(server_ctx("expired"));
    TLSContext* cctx = keep(client_ctx());
    serve(sctx);
    std::unique_ptr<ISocketStream> s(connect(cctx));
    ASSERT_NE(nullptr, s);
    char c;
    EXPECT_EQ(-1, s->read(&c, 1));  // the handshake runs on first I/O
    EXPECT_EQ(EACCES, errno);
    EXPECT_EQ(-1, s->write("x", 1));  // and its failure sticks
    EXPECT_EQ(EACCES, errno);
}

TEST_P(Tls, ClientVerifiesByDefaultAndNoneModeAcceptsSelfSigned) {
    TLSContext* sctx = keep(server_ctx("self"));
    serve(sctx);
    TLSContext* defaults = keep(new_tls_context());
    TLSContext* none = keep(new_tls_context());
    EXPECT_EQ(EACCES, handshake_errno(defaults));  // system CAs do not know it
    ASSERT_EQ(0, none->set_verify_mode(VerifyMode::NONE));
    std::unique_ptr<ISocketStream> s(connect(none));
    ASSERT_NE(nullptr, s);
    ASSERT_EQ(5, s->write("hello", 5));
    char buf[5];
    EXPECT_EQ(5, s->read(buf, 5));
    EXPECT_EQ(0, memcmp(buf, "hello", 5));
}

TEST_P(Tls, TrustsCaFileAndHashedCaDirectory) {
    TLSContext* sctx = keep(server_ctx("srv"));
    serve(sctx);
    TLSContext* by_file = keep(new_tls_context());
    TLSContext* by_dir = keep(new_tls_context());
    ASSERT_EQ(0, by_file->set_ca_file(pki().path("ca.pem").c_str()));
    ASSERT_EQ(0, by_dir->set_ca_file(nullptr, pki().path("cadir").c_str()));
    EXPECT_EQ(0, handshake_errno(by_file));
    EXPECT_EQ(0, handshake_errno(by_dir));
    EXPECT_EQ(-1, by_file->set_ca_file(pki().path("missing.pem").c_str()));
    EXPECT_EQ(ENOENT, errno);
}

TEST_P(Tls, AlpnNegotiatesOnBothSides) {
    TLSContext* sctx = keep(server_ctx("srv"));
    TLSContext* cctx = keep(client_ctx());
    ASSERT_EQ(0, sctx->set_alpn_select_cb({nullptr, &pick_http11}));
    ASSERT_EQ(0, cctx->set_alpn_protos({"h2", "http/1.1"}));
    serve(sctx);
    on_conn = [](ISocketStream* s) { return s->write("k", 1) == 1 ? 0 : -1; };
    std::unique_ptr<ISocketStream> s(connect(cctx));
    ASSERT_NE(nullptr, s);
    char c;
    ASSERT_EQ(1, s->read(&c, 1));
    EXPECT_EQ("http/1.1", tls_stream_get_alpn_selected(s.get()));
    EXPECT_EQ("http/1.1", server_alpn);

    // A server list without a callback: its first protocol the client offers.
    TLSContext* sctx2 = keep(server_ctx("srv"));
    ASSERT_EQ(0, sctx2->set_alpn_protos({"spdy/1", "h2"}));
    serve(sctx2);
    s.reset(connect(cctx));
    ASSERT_EQ(1, s->read(&c, 1));
    EXPECT_EQ("h2", tls_stream_get_alpn_selected(s.get()));

    TLSContext* other = keep(client_ctx());  // no overlap: no protocol
    ASSERT_EQ(0, other->set_alpn_protos({"x-none"}));
    s.reset(connect(other));
    ASSERT_EQ(1, s->read(&c, 1));
    EXPECT_EQ("", tls_stream_get_alpn_selected(s.get()));
    EXPECT_EQ(-1, other->set_alpn_protos({""}));
    EXPECT_EQ(EINVAL, errno);
}

TEST_P(Tls, SniSelectsTheCertificateByName) {
    TLSContext* sctx = keep(server_ctx("srv"));
    TLSContext* a = keep(server_ctx("a"));
    TLSContext* b = keep(server_ctx("b"));
    TLSContext* cctx = keep(client_ctx());
    ASSERT_EQ(0, sctx->add_sni_context("A.Test", a));
    ASSERT_EQ(0, sctx->add_sni_context("b.test", b));
    serve(sctx);
    // Each handshake verifies the name, so it succeeds only with the right cert.
    EXPECT_EQ(0, handshake_errno(cctx, "a.test"));
    EXPECT_EQ(0, handshake_errno(cctx, "b.test"));
    EXPECT_EQ(0, handshake_errno(cctx, "localhost"));    // the default
    EXPECT_EQ(EACCES, handshake_errno(cctx, "c.test"));  // default cert, wrong name
}

TEST_P(Tls, EncryptedKeysNeedTheirPassphrase) {
    std::string cert = pki().pem("srv.pem"), key = pki().pem("srv_enc.key");
    TLSContext* good = keep(new_tls_context(cert.c_str(), key.c_str(), "secret"));
    EXPECT_NE(nullptr, good);
    EXPECT_EQ(nullptr, new_tls_context(cert.c_str(), key.c_str(), "nope"));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(nullptr, new_tls_context(cert.c_str(), key.c_str()));  // fails, never prompts
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(nullptr, new_tls_context(cert.c_str(), pki().pem("a.key").c_str()));  // not its key
    TLSContext* later = keep(new_tls_context(cert.c_str()));
    ASSERT_EQ(0, later->set_pass_phrase("secret"));
    EXPECT_EQ(0, later->set_pkey(key.c_str()));
    EXPECT_EQ(-1, later->set_cert("not a certificate"));
    EXPECT_EQ(EINVAL, errno);

    TLSContext* files = keep(new_tls_context_from_files(
        pki().path("srv.pem").c_str(), pki().path("srv_enc.key").c_str(), "secret"));
    ASSERT_NE(nullptr, files);
    EXPECT_EQ(nullptr, new_tls_context_from_files(pki().path("none.pem").c_str(), nullptr));
    EXPECT_EQ(ENOENT, errno);
    TLSContext* cctx = keep(client_ctx());
    serve(files);
    EXPECT_EQ(0, handshake_errno(cctx));
}

TEST_P(Tls, ServerCanRequireClientCertificates) {
    TLSContext* sctx = keep(server_ctx("srv"));
    ASSERT_EQ(0, sctx->set_ca_cert(pki().pem("ca.pem").c_str()));
    ASSERT_EQ(0, sctx->set_verify_mode(
                     (VerifyMode)((int)VerifyMode::PEER | (int)VerifyMode::FAIL_IF_NO_PEER_CERT)));
    serve(sctx);
    TLSContext* anon = keep(client_ctx());
    TLSContext* with_cert = keep(client_ctx());
    ASSERT_EQ(0, with_cert->set_cert(pki().pem("a.pem").c_str()));
    ASSERT_EQ(0, with_cert->set_pkey(pki().pem("a.key").c_str()));
    for (auto* ctx : {anon, with_cert}) {
        std::unique_ptr<ISocketStream> s(connect(ctx));
        ASSERT_NE(nullptr, s);
        char c = 0;
        // TLS 1.3 clients finish first; the server's verdict comes with the reply.
        ssize_t r = s->write("z", 1) == 1 ? s->read(&c, 1) : -1;
        if (ctx == anon) {
            EXPECT_EQ(-1, r);
            EXPECT_EQ(EPROTO, errno);
        } else {
            EXPECT_EQ(1, r);
            EXPECT_EQ('z', c);
        }
    }
}

TEST_P(Tls, ServerHandshakeTimesOutOnASilentClient) {
    TLSContext* sctx = keep(server_ctx("srv"));
    server.reset(new_tls_server(sctx, new_tcp_socket_server(), true));
    ASSERT_EQ(0, server->bind_v4localhost(0));
    ASSERT_EQ(0, server->listen());
    std::unique_ptr<ISocketClient> plain(new_tcp_socket_client());
    std::unique_ptr<ISocketStream> silent(plain->connect(server->getsockname()));
    ASSERT_NE(nullptr, silent);
    server->timeout(50 * 1000);  // accepted streams inherit it
    auto t0 = Clock::now();
    EXPECT_EQ(nullptr, server->accept());
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_GE(us_since(t0), 40 * 1000u);  // 50 ms on photon's coarse clock
}

// Any peer can fail a server's handshake: each failure logged an ERROR line,
// a log-flood vector. They are logged at most once every 10 s.
TEST_P(Tls, RateLimitsTheLogOfHandshakesThatPeersFail) {
    struct counter final : public ILogOutput {
        std::atomic<int> tls_lines{0};
        void write(int, const char* begin, const char* end) override {
            if (std::string(begin, end).find("TLS handshake") != std::string::npos) tls_lines++;
        }
        int get_log_file_fd() override { return -1; }
        uint64_t set_throttle(uint64_t t) override { return t; }
        uint64_t get_throttle() override { return -1ULL; }
        void destruct() override {}
    } out;
    ALogLogger saved = default_logger;
    default_logger = {&out, ALOG_DEBUG};
    DEFER(default_logger = saved);
    serve(keep(server_ctx("srv")));
    std::unique_ptr<ISocketClient> plain(new_tcp_socket_client());
    plain->timeout(kLongUs);
    for (int i = 0; i < 40; i++) {
        std::unique_ptr<ISocketStream> s(plain->connect(ep));
        ASSERT_NE(nullptr, s);
        ASSERT_EQ(18, s->write("GET / HTTP/1.1\r\n\r\n", 18));
        char buf[256];
        while (s->recv(buf, sizeof(buf)) > 0) {
        }  // until the server, having failed the handshake, closes
    }
    EXPECT_LE(out.tls_lines.load(), 2);  // one per 10 s window; the test is shorter
}

// ---- interoperability -------------------------------------------------------

TEST_P(Tls, ClientTalksToOpensslSServerOverTls13And12) {
    for (const char* version : {"-tls1_3", "-tls1_2"}) {
        uint16_t port = free_loopback_port();
        child_process srv({"openssl", "s_server", "-accept", "127.0.0.1:" + std::to_string(port),
                           "-cert", pki().path("srv.pem"), "-key", pki().path("srv.key"), "-www",
                           version});
        ASSERT_TRUE(srv.started());
        ep = EndPoint(IPAddr("127.0.0.1"), port);
        TLSContext* cctx = keep(client_ctx());
        std::unique_ptr<ISocketStream> s;
        for (int i = 0; i < 500 && !s; i++) {  // until s_server listens
            s.reset(connect(cctx));
            if (!s) thread_usleep(10 * 1000);
        }
        ASSERT_NE(nullptr, s);
        std::string req = "GET / HTTP/1.0\r\n\r\n", resp;
        ASSERT_EQ((ssize_t)req.size(), s->write(req.data(), req.size()));
        char buf[4096];
        ssize_t n;
        while ((n = s->recv(buf, sizeof(buf))) > 0) resp.append(buf, n);
        EXPECT_EQ(0, n) << strerror(errno);
        EXPECT_EQ(0u, resp.find("HTTP/1.0 200 ok")) << resp.substr(0, 200);
        EXPECT_STREQ(strcmp(version, "-tls1_3") ? "TLSv1.2" : "TLSv1.3",
                     tls_stream_get_version(s.get()));
    }
}

TEST_P(Tls, ServerTalksToOpensslSClient) {
    TLSContext* sctx = keep(server_ctx("srv"));
    serve(sctx);
    on_conn = [](ISocketStream* s) {
        char buf[6];
        if (s->read(buf, 6) != 6 || memcmp(buf, "hello\n", 6)) return -1;
        return s->write("world\n", 6) == 6 ? 0 : -1;
    };
    std::string in = pki().path("sclient.in"), out = pki().path("sclient.out");
    std::ofstream(in) << "hello\n";
    child_process cli({"openssl", "s_client", "-connect", "127.0.0.1:" + std::to_string(ep.port),
                       "-servername", "localhost", "-verify_hostname", "localhost", "-CAfile",
                       pki().path("ca.pem"), "-verify_return_error", "-quiet"},
                      in, out);
    ASSERT_TRUE(cli.started());
    EXPECT_EQ(0, cli.wait()) << slurp(out);
    EXPECT_NE(std::string::npos, slurp(out).find("world")) << slurp(out);
}

TEST_P(Tls, ServerAnswersCurl) {
    if (!have_tool("curl")) GTEST_SKIP() << "curl is not installed";
    TLSContext* sctx = keep(server_ctx("srv"));
    serve(sctx);
    on_conn = [](ISocketStream* s) {
        std::string req;
        char buf[1024];
        while (req.find("\r\n\r\n") == std::string::npos && req.size() < 8192) {
            ssize_t n = s->recv(buf, sizeof(buf));
            if (n <= 0) return -1;
            req.append(buf, n);
        }
        static const char kResp[] =
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello";
        return s->write(kResp, sizeof(kResp) - 1) == sizeof(kResp) - 1 ? 0 : -1;
    };
    std::string port = std::to_string(ep.port), out = pki().path("curl.out");
    child_process curl(
        {"curl", "-sS", "--max-time", "10", "--cacert", pki().path("ca.pem"), "--resolve",
         "localhost:" + port + ":127.0.0.1", "https://localhost:" + port + "/"},
        "", out);
    ASSERT_TRUE(curl.started());
    EXPECT_EQ(0, curl.wait()) << slurp(out);
    EXPECT_EQ("hello", slurp(out));
}

TEST_P(Tls, FactoriesRejectMissingArgumentsAndForeignStreams) {
    EXPECT_EQ(nullptr, new_tls_stream(nullptr, nullptr, SecurityRole::Client));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(nullptr, new_tls_client(nullptr, nullptr));
    EXPECT_EQ(nullptr, new_tls_server(nullptr, nullptr));
    std::unique_ptr<ISocketClient> plain(new_tcp_socket_client());
    std::unique_ptr<ISocketServer> srv(new_tcp_socket_server());
    ASSERT_EQ(0, srv->bind_v4localhost(0));
    ASSERT_EQ(0, srv->listen());
    std::unique_ptr<ISocketStream> s(plain->connect(srv->getsockname()));
    ASSERT_NE(nullptr, s);
    EXPECT_EQ(-1, tls_stream_set_hostname(s.get(), "localhost"));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(nullptr, tls_stream_get_version(s.get()));
    EXPECT_EQ("", tls_stream_get_alpn_selected(s.get()));
}

PHOTON_INSTANTIATE_ENGINE_TESTS(Tls);

}  // namespace
