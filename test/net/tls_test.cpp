// TLS streams over both event engines: our client and server against each
// other and against openssl s_server / s_client and curl; verification
// (CA, hostname, expiry, NONE), ALPN, SNI, passphrases, close_notify versus
// truncation, timeouts, sendfile, and other base streams.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include <photon/common/alog.h>
#include <photon/common/utility.h>
#include <photon/net/basic_socket.h>
#include <photon/net/security-context/tls-stream.h>
#include <photon/net/socket.h>

#include "../thread/test_util.h"
#include "../util/engine_fixture.h"
#include "net_test_util.h"
#include "tls_test_util.h"

using namespace photon;
using namespace photon::net;
using namespace photon_test;

namespace {

int echo(ISocketStream* s) {
    char buf[16384];
    ssize_t n;
    while ((n = s->recv(buf, sizeof(buf))) > 0)
        if (s->write(buf, n) != n) break;
    return 0;
}

estring_view pick_http11(void*, const std::vector<estring_view>& offered) {
    for (auto p : offered)
        if (p == "http/1.1") return p;
    return {};
}

class Tls : public EngineTest {
protected:
    void SetUp() override {
        EngineTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        TLSContext* probe = keep(new_tls_context());
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
        return new_tls_context(pki().pem(std::string(name) + ".pem").c_str(),
                               pki().pem(std::string(name) + ".key").c_str());
    }
    // A client context trusting the test CA.
    static TLSContext* client_ctx() {
        auto c = new_tls_context();
        if (c && c->set_ca_cert(pki().pem("ca.pem").c_str()) < 0) {
            delete c;
            return nullptr;
        }
        return c;
    }

    // Serves TLS on 127.0.0.1 with ctx, running on_conn per connection.
    void serve(TLSContext* ctx) {
        server.reset(new_tls_server(ctx, new_tcp_socket_server(), true));
        ASSERT_NE(nullptr, server);
        ASSERT_EQ(0, server->bind_v4localhost(0));
        ASSERT_EQ(0, server->listen());
        server->set_handler({this, &Tls::handle});
        ASSERT_EQ(0, server->start_loop(false));
        ep = server->getsockname();
    }

public:
    int handle(ISocketStream* s) {
        // A handler gets its stream before the handshake, which ALPN needs.
        if (tls_stream_handshake(s) < 0) return -1;
        server_alpn = std::string(tls_stream_get_alpn_selected(s));
        return on_conn ? on_conn(s) : echo(s);
    }

protected:
    // A TLS client stream to ep, not yet handshaken; hostname may be nullptr.
    ISocketStream* connect(TLSContext* ctx, const char* hostname = "localhost") {
        client.reset(new_tls_client(ctx, new_tcp_socket_client(), true));
        if (!client) return nullptr;
        client->timeout(kLongUs);
        ISocketStream* s = client->connect(ep);
        if (s && hostname) {
            EXPECT_EQ(0, tls_stream_set_hostname(s, hostname));
        }
        return s;
    }
    // Handshake result of a fresh client: 0, or the errno.
    int handshake_errno(TLSContext* ctx, const char* hostname = "localhost") {
        std::unique_ptr<ISocketStream> s(connect(ctx, hostname));
        if (!s) return errno;
        return tls_stream_handshake(s.get()) == 0 ? 0 : errno;
    }

    // Contexts live until after fini: connection coroutines may outlive a test body.
    TLSContext* keep(TLSContext* ctx) {
        if (ctx) contexts.emplace_back(ctx);
        return ctx;
    }
    std::vector<std::unique_ptr<TLSContext>> contexts;
    std::unique_ptr<ISocketServer> server;
    std::unique_ptr<ISocketClient> client;
    std::function<int(ISocketStream*)> on_conn;
    std::string server_alpn;
    EndPoint ep;
};

TEST_P(Tls, EchoesAMegabyteOverTls13WithConcurrentReaderAndWriter) {
    TLSContext* sctx = keep(server_ctx("srv"));
    TLSContext* cctx = keep(client_ctx());
    serve(sctx);
    std::unique_ptr<ISocketStream> s(connect(cctx));
    ASSERT_NE(nullptr, s);
    std::string out = pattern(1 << 20), in(out.size(), 0);
    // The reader starts first and parks in the handshake / read while the
    // writer coroutine sends: the two directions must not block each other.
    auto writer = spawn([&] { EXPECT_EQ((ssize_t)out.size(), s->write(out.data(), out.size())); });
    EXPECT_EQ((ssize_t)in.size(), s->read(&in[0], in.size()));
    writer.join();
    EXPECT_TRUE(in == out);
    EXPECT_STREQ("TLSv1.3", tls_stream_get_version(s.get()));
    EXPECT_EQ(s->getpeername(), ep);
    EXPECT_GE(s->get_underlay_fd(), 0);
    ASSERT_EQ(0, s->shutdown(ShutdownHow::Write));  // close_notify: the echo ends cleanly
    char c;
    EXPECT_EQ(0, s->read(&c, 1));
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

// ---- closing, truncation and timeouts -------------------------------------

class TlsRaw : public Tls {
protected:
    // A plain TCP listener; the test makes the server side by hand.
    void listen_plain() {
        plain.reset(new_tcp_socket_server());
        ASSERT_EQ(0, plain->bind_v4localhost(0));
        ASSERT_EQ(0, plain->listen());
        ep = plain->getsockname();
    }
    void TearDown() override {
        plain.reset();
        Tls::TearDown();
    }
    std::unique_ptr<ISocketServer> plain;
};

TEST_P(TlsRaw, CloseNotifyReadsAsEofAndTruncationAsEconnreset) {
    listen_plain();
    TLSContext* sctx = keep(server_ctx("srv"));
    TLSContext* cctx = keep(client_ctx());
    for (bool clean : {true, false}) {
        std::unique_ptr<ISocketStream> raw, tls;
        auto peer = spawn([&] {
            raw.reset(plain->accept());
            tls.reset(new_tls_stream(sctx, raw.get(), SecurityRole::Server));
            if (!tls) return;
            tls->write("abc", 3);
            if (clean)
                tls->close();  // close_notify, then nothing
            else
                ::shutdown(raw->get_underlay_fd(), SHUT_RDWR);  // FIN, no close_notify
        });
        std::unique_ptr<ISocketStream> s(connect(cctx));
        ASSERT_NE(nullptr, s);
        char buf[10];
        EXPECT_EQ(3, s->read(buf, sizeof(buf)));  // short: the stream ended
        EXPECT_EQ(0, memcmp(buf, "abc", 3));
        peer.join();
        ASSERT_NE(nullptr, tls);
        if (clean) {
            EXPECT_EQ(0, s->read(buf, sizeof(buf)));
        } else {
            EXPECT_EQ(-1, s->read(buf, sizeof(buf)));
            EXPECT_EQ(ECONNRESET, errno);
        }
        tls.reset();
    }
}

TEST_P(TlsRaw, PeerClosingDuringHandshakeFailsFast) {
    listen_plain();
    TLSContext* cctx = keep(client_ctx());
    auto peer = spawn([&] { delete plain->accept(); });
    std::unique_ptr<ISocketStream> s(connect(cctx));
    ASSERT_NE(nullptr, s);
    auto t0 = Clock::now();
    EXPECT_EQ(-1, tls_stream_handshake(s.get()));
    EXPECT_TRUE(errno == ECONNRESET || errno == EPIPE) << strerror(errno);
    EXPECT_LT(us_since(t0), kLongUs);
    peer.join();
}

// Records leave straight from OpenSSL's buffer while the socket has room;
// what a full socket refuses is queued and sent after. Many small gathered
// writes to a reader that starts late must arrive whole and in order.
TEST_P(TlsRaw, SmallWritesToALateReaderArriveWholeAndInOrder) {
    listen_plain();
    TLSContext* sctx = keep(server_ctx("srv"));
    TLSContext* cctx = keep(client_ctx());
    constexpr int kRecords = 6000;
    constexpr size_t kHead = 15, kBody = 300, kRecord = kHead + kBody;
    std::string body = pattern(kBody);
    std::unique_ptr<ISocketStream> raw, tls;
    ssize_t written = 0;
    auto peer = spawn([&] {
        raw.reset(plain->accept());
        int small = 8192;  // full after a few records
        raw->setsockopt(SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
        tls.reset(new_tls_stream(sctx, raw.get(), SecurityRole::Server));
        if (!tls) return;
        for (int i = 0; i < kRecords; i++) {
            char head[kHead + 1];
            snprintf(head, sizeof(head), "%015d", i);
            struct iovec iov[2] = {{head, kHead}, {&body[0], kBody}};
            if (tls->writev(iov, 2) != (ssize_t)kRecord) break;
            written += kRecord;
        }
    });
    std::unique_ptr<ISocketStream> s(connect(cctx));
    ASSERT_NE(nullptr, s);
    ASSERT_EQ(0, tls_stream_handshake(s.get()));
    // The server has written and parked: its socket is full.
    ASSERT_TRUE(wait_for(
        [&] { return written > 0 && photon::thread_stat(peer.th) == photon::SLEEPING; }, 10000));
    std::string got(kRecords * kRecord, 0);
    ASSERT_EQ((ssize_t)got.size(), s->read(&got[0], got.size()));
    peer.join();
    EXPECT_EQ((ssize_t)got.size(), written);
    for (int i = 0; i < kRecords; i++) {
        char head[kHead + 1];
        snprintf(head, sizeof(head), "%015d", i);
        size_t at = (size_t)i * kRecord;
        ASSERT_EQ(0, memcmp(&got[at], head, kHead)) << "record " << i;
        ASSERT_EQ(0, memcmp(&got[at + kHead], body.data(), kBody)) << "record " << i;
    }
    tls.reset();
}

// A record sent straight from OpenSSL's buffer meets the peer's reset: the
// write says ECONNRESET, which the kernel reports once, not a later EPIPE.
TEST_P(TlsRaw, AWriteAfterThePeerResetSaysEconnreset) {
    listen_plain();
    TLSContext* sctx = keep(server_ctx("srv"));
    TLSContext* cctx = keep(client_ctx());
    std::unique_ptr<ISocketStream> raw, tls;
    auto peer = spawn([&] {
        raw.reset(plain->accept());
        tls.reset(new_tls_stream(sctx, raw.get(), SecurityRole::Server));
    });
    std::unique_ptr<ISocketStream> s(connect(cctx));
    ASSERT_NE(nullptr, s);
    ASSERT_EQ(0, tls_stream_handshake(s.get()));
    peer.join();
    ASSERT_NE(nullptr, tls);
    struct linger lg = {1, 0};  // close with RST
    ASSERT_EQ(0, ::setsockopt(s->get_underlay_fd(), SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)));
    s.reset();
    ASSERT_TRUE(wait_for([&] {  // the reset reached the server's socket
        pollfd p = {raw->get_underlay_fd(), POLLIN, 0};
        return ::poll(&p, 1, 0) == 1 && (p.revents & POLLERR);
    }));
    EXPECT_EQ(-1, tls->write("x", 1));
    EXPECT_EQ(ECONNRESET, errno) << strerror(errno);
    tls.reset();
}

// A failed write ends the sending side only: an answer the peer sent before
// it reset the connection (an HTTP server's early 413 to an upload) can
// still be read. Found by test/hostile (early_413 over TLS).
TEST_P(TlsRaw, AnAnswerSentBeforeAResetIsReadAfterAFailedWrite) {
    listen_plain();
    TLSContext* sctx = keep(server_ctx("srv"));
    TLSContext* cctx = keep(client_ctx());
    std::unique_ptr<ISocketStream> raw, tls;
    auto peer = spawn([&] {
        raw.reset(plain->accept());
        tls.reset(new_tls_stream(sctx, raw.get(), SecurityRole::Server));
        if (!tls) return;
        tls->write("413", 3);
        struct linger lg = {1, 0};  // close with RST
        ::setsockopt(raw->get_underlay_fd(), SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
        tls.reset();  // close_notify (the base is not the stream's)
        raw.reset();  // RST
    });
    std::unique_ptr<ISocketStream> s(connect(cctx));
    ASSERT_NE(nullptr, s);
    ASSERT_EQ(0, tls_stream_handshake(s.get()));
    peer.join();
    thread_usleep(20 * 1000);  // the reset reaches our socket
    std::string upload(256 * 1024, 'u');
    EXPECT_EQ(-1, s->write(upload.data(), upload.size()));
    EXPECT_TRUE(errno == ECONNRESET || errno == EPIPE) << strerror(errno);
    EXPECT_EQ(-1, s->write("x", 1));  // the sending side stays failed
    char buf[16];
    ASSERT_EQ(3, s->read(buf, sizeof(buf))) << strerror(errno);
    EXPECT_EQ(0, memcmp(buf, "413", 3));
}

// A close_notify sent while a writer's records wait in an io_uring send must
// queue behind them, even when the socket has room again: the reader, on its
// own vCPU, drains it while this vCPU spins without entering its ring, so the
// queued send (deferred task work on the io_uring master) has not run yet.
TEST_P(Tls, CloseNotifyQueuesBehindAPendingIouringSend) {
    std::unique_ptr<ISocketClient> ur(new_iouring_tcp_client());
    if (!ur) GTEST_SKIP() << "no io_uring sockets: " << strerror(errno);
    TLSContext* sctx = keep(server_ctx("srv"));
    TLSContext* cctx = keep(client_ctx());
    constexpr size_t kTotal = 4 << 20;
    std::string out = pattern(kTotal);
    std::atomic<uint16_t> port{0};
    std::atomic<bool> accepted{false}, reader_done{false};
    std::atomic<bool> writer_stalled{false}, emptied{false};  // see below
    size_t got = 0;
    ssize_t end = -2;
    bool intact = false;
    std::thread reader([&] {
        if (photon::init(INIT_EVENT_EPOLL, INIT_IO_NONE) == 0) {
            std::unique_ptr<ISocketServer> srv(new_tcp_socket_server());
            if (srv->bind_v4localhost(0) == 0 && srv->listen() == 0) {
                port = srv->getsockname().port;
                std::unique_ptr<ISocketStream> raw(srv->accept());
                accepted = true;
                std::unique_ptr<ISocketStream> tls(
                    raw ? new_tls_stream(sctx, raw.get(), SecurityRole::Server) : nullptr);
                if (tls) {
                    tls->timeout(kLongUs);
                    // Reads nothing until the writer's socket is full.
                    wait_for([&] { return writer_stalled.load(); }, 10000);
                    int fd = raw->get_underlay_fd(), left = -1;
                    std::string in(kTotal, 0);
                    while (got < kTotal && (end = tls->recv(&in[got], kTotal - got)) > 0) {
                        got += end;
                        if (ioctl(fd, FIONREAD, &left) == 0 && left == 0) emptied = true;
                    }
                    char c;
                    if (got == kTotal) end = tls->recv(&c, 1);
                    intact = memcmp(in.data(), out.data(), got) == 0;
                }
            }
            photon::fini();
        }
        reader_done = true;
    });
    DEFER({
        if (!reader.joinable()) return;
        if (!accepted && port) {  // a failed test must not leave the reader in accept
            int fd = ::socket(AF_INET, SOCK_STREAM, 0);
            sockaddr_in a = {};
            a.sin_family = AF_INET;
            a.sin_port = htons(port);
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            ::connect(fd, (sockaddr*)&a, sizeof(a));
            ::close(fd);
        }
        reader.join();
    });
    ASSERT_TRUE(wait_for([&] { return port != 0 || reader_done; }));
    ASSERT_NE(0, port.load());
    client.reset(new_tls_client(cctx, ur.release(), true));
    client->timeout(kLongUs);
    std::unique_ptr<ISocketStream> s(client->connect(EndPoint(IPAddr("127.0.0.1"), port)));
    ASSERT_NE(nullptr, s);
    ASSERT_EQ(0, tls_stream_set_hostname(s.get(), "localhost"));
    ASSERT_EQ(0, tls_stream_handshake(s.get()));
    int small = 16384;
    ASSERT_EQ(0, s->setsockopt(SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)));
    ssize_t written = -1;
    auto writer = spawn([&] { written = s->write(out.data(), out.size()); });
    // The writer parks with its records in a send request that the full
    // socket cannot take.
    int fd = s->get_underlay_fd();
    ASSERT_TRUE(wait_for(
        [&] {
            pollfd p = {fd, POLLOUT, 0};
            return ::poll(&p, 1, 0) == 0 && photon::thread_stat(writer.th) == photon::SLEEPING;
        },
        10000));
    writer_stalled = true;
    // No syscall (none enters the ring) until the reader has emptied its
    // receive queue, so that the socket has room again; bounded for a
    // broken reader.
    auto until = Clock::now() + std::chrono::seconds(10);
    while (!emptied && !reader_done && Clock::now() < until) {
    }
    EXPECT_EQ(0, s->shutdown(ShutdownHow::Write));
    writer.join();
    s.reset();
    reader.join();
    EXPECT_GT(written, 0);
    EXPECT_EQ((size_t)written, got);  // every byte written arrived before close_notify
    EXPECT_EQ(0, end);                // then close_notify, not a reset
    EXPECT_TRUE(intact);
}

// The first write of a fresh client stream runs the handshake before it
// gathers a small writev: two such streams on one vCPU, whose handshakes
// interleave, each send their own bytes.
TEST_P(Tls, FirstGatheredWritesOfTwoStreamsKeepTheirOwnBytes) {
    TLSContext* sctx = keep(server_ctx("srv"));
    TLSContext* cctx = keep(client_ctx());
    serve(sctx);
    std::unique_ptr<ISocketClient> c2(new_tls_client(cctx, new_tcp_socket_client(), true));
    ASSERT_NE(nullptr, c2);
    c2->timeout(kLongUs);
    std::unique_ptr<ISocketStream> a(connect(cctx)), b(c2->connect(ep));
    ASSERT_NE(nullptr, a);
    ASSERT_NE(nullptr, b);
    ASSERT_EQ(0, tls_stream_set_hostname(b.get(), "localhost"));
    auto exchange = [](ISocketStream* s, char tag) {
        std::string head(8, tag), body(200, tag);
        struct iovec iov[2] = {{&head[0], head.size()}, {&body[0], body.size()}};
        if (s->writev(iov, 2) != 208) return std::string("write failed");
        std::string back(208, 0);
        if (s->read(&back[0], back.size()) != 208) return std::string("read failed");
        return back;
    };
    std::string got_a;
    auto other = spawn([&] { got_a = exchange(a.get(), 'a'); });
    std::string got_b = exchange(b.get(), 'b');
    other.join();
    EXPECT_EQ(std::string(208, 'a'), got_a);
    EXPECT_EQ(std::string(208, 'b'), got_b);
}

TEST_P(TlsRaw, HandshakeAndReadTimeOutWithEtimedout) {
    listen_plain();
    TLSContext* sctx = keep(server_ctx("srv"));
    TLSContext* cctx = keep(client_ctx());
    std::unique_ptr<ISocketStream> mute;  // accepts but never speaks TLS
    auto peer = spawn([&] { mute.reset(plain->accept()); });
    std::unique_ptr<ISocketStream> s(connect(cctx));
    ASSERT_NE(nullptr, s);
    s->timeout(50 * 1000);
    auto t0 = Clock::now();
    EXPECT_EQ(-1, tls_stream_handshake(s.get()));
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_GE(us_since(t0), 40 * 1000u);  // 50 ms on photon's coarse clock
    peer.join();

    // A handshaken stream whose peer is silent: the read times out, and the
    // stream still works afterwards.
    std::unique_ptr<ISocketStream> raw, tls;
    bool release = false;
    auto slow = spawn([&] {
        raw.reset(plain->accept());
        tls.reset(new_tls_stream(sctx, raw.get(), SecurityRole::Server));
        while (!release) thread_usleep(1000);
        if (tls) tls->write("late", 4);
    });
    s.reset(connect(cctx));
    ASSERT_EQ(0, tls_stream_handshake(s.get()));
    s->timeout(50 * 1000);
    char buf[4];
    t0 = Clock::now();
    EXPECT_EQ(-1, s->read(buf, 4));
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_GE(us_since(t0), 40 * 1000u);  // 50 ms on photon's coarse clock
    release = true;
    s->timeout(kLongUs);
    EXPECT_EQ(4, s->read(buf, 4));
    EXPECT_EQ(0, memcmp(buf, "late", 4));
    slow.join();
    tls.reset();
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

TEST_P(Tls, SendfileEncryptsTheFileRange) {
    TLSContext* sctx = keep(server_ctx("srv"));
    TLSContext* cctx = keep(client_ctx());
    serve(sctx);
    std::string data = pattern(300 * 1000), file = pki().path("sendfile.bin");
    std::ofstream(file, std::ios::binary) << data;
    int fd = ::open(file.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    std::unique_ptr<ISocketStream> s(connect(cctx));
    ASSERT_NE(nullptr, s);
    size_t n = data.size() - 1000;
    std::string in(n, 0);
    auto writer = spawn([&] { EXPECT_EQ((ssize_t)n, s->sendfile(fd, 1000, n)); });
    EXPECT_EQ((ssize_t)n, s->read(&in[0], n));
    writer.join();
    ::close(fd);
    EXPECT_TRUE(in == data.substr(1000));
}

TEST_P(Tls, LayersOverUnixDomainAndIouringStreams) {
    TLSContext* sctx = keep(server_ctx("srv"));
    TLSContext* cctx = keep(client_ctx());
    std::string path = pki().path("tls.sock");
    server.reset(new_tls_server(sctx, new_uds_server(true), true));
    ASSERT_EQ(0, server->bind(path.c_str()));
    ASSERT_EQ(0, server->listen());
    server->set_handler({this, &Tls::handle});
    ASSERT_EQ(0, server->start_loop(false));
    client.reset(new_tls_client(cctx, new_uds_client(), true));
    std::unique_ptr<ISocketStream> s(client->connect(path.c_str()));
    ASSERT_NE(nullptr, s);
    ASSERT_EQ(0, tls_stream_set_hostname(s.get(), "localhost"));
    char buf[4];
    ASSERT_EQ(4, s->write("unix", 4));
    EXPECT_EQ(4, s->read(buf, 4));
    EXPECT_EQ(0, memcmp(buf, "unix", 4));
    s.reset();

    std::unique_ptr<ISocketClient> ur(new_iouring_tcp_client());
    if (!ur) GTEST_SKIP() << "no io_uring sockets: " << strerror(errno);
    server.reset();
    serve(sctx);
    client.reset(new_tls_client(cctx, ur.release(), true));
    s.reset(client->connect(ep));
    ASSERT_NE(nullptr, s);
    ASSERT_EQ(0, tls_stream_set_hostname(s.get(), "localhost"));
    ASSERT_EQ(4, s->write("ring", 4));
    EXPECT_EQ(4, s->read(buf, 4));
    EXPECT_EQ(0, memcmp(buf, "ring", 4));
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
PHOTON_INSTANTIATE_ENGINE_TESTS(TlsRaw);

}  // namespace
