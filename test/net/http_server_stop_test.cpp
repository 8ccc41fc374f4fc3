// The HTTP server's ends under both event engines: stop() with idle,
// in-flight and draining connections, deleting a server with open
// connections, and HTTPS connections still in their TLS handshake.
#include <atomic>
#include <string>

#include <photon/common/timeout.h>
#include <photon/net/http/client.h>
#include <photon/net/security-context/tls-stream.h>

#include "http_server_handlers.h"
#include "../util/tls_pair.h"

using namespace photon;
using namespace photon_test;

namespace {

TEST_P(HttpServer, StopClosesIdleConnectionsAtOnce) {
    serve_default();
    raw_client idle(ep), fresh(ep);
    ASSERT_EQ(200, idle.request(head("GET", "/text")));
    ASSERT_TRUE(wait_for([&] { return http->connections() == 2; }, 10000));
    tcp->terminate();
    // Returning 0 within kLongUs proves it did not wait for the keep-alive
    // timeout (60 s).
    EXPECT_EQ(0, http->stop(kLongUs));
    EXPECT_EQ(0u, http->connections());
    std::string extra;
    EXPECT_TRUE(idle.closed(kLongUs, &extra));
    EXPECT_EQ("", extra);
    EXPECT_TRUE(fresh.closed());
}

TEST_P(HttpServer, ServesAndStopsOverIouringSockets) {
    if (GetParam() != photon::INIT_EVENT_IOURING) GTEST_SKIP() << "io_uring sockets need io_uring";
    ServerOptions opts;
    opts.header_timeout = 200'000;
    serve(
        opts, [&](HTTPServer* s) { h.install(s); }, &new_iouring_tcp_server);
    {
        raw_client slow(ep);  // the header timeout holds on these sockets too
        ASSERT_TRUE(slow.send("GET /text HTTP/1.1\r\n"));
        EXPECT_EQ(408, slow.get());
    }
    raw_client c(ep);
    std::string body;
    for (int i = 0; i < 20; i++) ASSERT_EQ(200, c.request(head("GET", "/text"), &body));
    ASSERT_EQ(200, c.request(head("POST", "/echo", "Transfer-Encoding: chunked\r\n") +
                                 chunked({"a", "bc"}),
                             &body));
    EXPECT_EQ("abc", body);
    tcp->terminate();
    EXPECT_EQ(0, http->stop(kLongUs));
    EXPECT_TRUE(c.closed());
}

TEST_P(HttpServer, StopLetsAnInFlightRequestFinishWithConnectionClose) {
    serve_default();
    h.slow_us = 300'000;
    raw_client c(ep);
    ASSERT_TRUE(c.send(head("GET", "/slow")));
    ASSERT_TRUE(wait_for([&] { return h.slow_started == 1; }, 10000));
    tcp->terminate();
    int stopped = -2;
    std::atomic<bool> done{false};
    auto th = photon::thread_enable_join(photon::thread_create11([&] {
        stopped = http->stop(kLongUs);
        done = true;
    }));
    std::string body;
    ASSERT_EQ(200, c.get(&body));
    EXPECT_EQ("slow\n", body);
    EXPECT_EQ("close", c.resp.headers["Connection"]);
    EXPECT_TRUE(c.closed());
    photon::thread_join(th);
    EXPECT_EQ(0, stopped);
    EXPECT_EQ(1, h.slow_done.load());
    EXPECT_EQ(0u, http->connections());
}

TEST_P(HttpServer, StopTimesOutOnAHandlerThatTakesLonger) {
    serve_default();
    h.slow_us = 1'000'000;
    raw_client c(ep);
    ASSERT_TRUE(c.send(head("GET", "/slow")));
    ASSERT_TRUE(wait_for([&] { return h.slow_started == 1; }, 10000));
    EXPECT_EQ(-1, http->stop(50'000));
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_EQ(1u, http->connections());
    ASSERT_EQ(200, c.get());  // still answered
    EXPECT_TRUE(c.closed());
}

TEST_P(HttpServer, DeletingTheServerWithOpenConnectionsIsSafe) {
    serve_default();
    h.slow_us = 200'000;
    raw_client idle(ep), busy(ep), partial(ep);
    ASSERT_EQ(200, idle.request(head("GET", "/text")));
    ASSERT_TRUE(busy.send(head("GET", "/slow")));
    ASSERT_TRUE(partial.send("GET /text HTTP/1.1\r\n"));
    ASSERT_TRUE(wait_for([&] { return h.slow_started == 1; }, 10000));
    tcp.reset();
    http.reset();  // returns once no connection uses it
    EXPECT_TRUE(idle.closed());
    EXPECT_TRUE(partial.closed());
    EXPECT_EQ(1, h.slow_done.load());
}

TEST_P(HttpServer, StopInterruptsTheDrainOfAnUnreadBody) {
    // Bodies the handler leaves unread while their client trickles them:
    // small enough to be drained (a Content-Length, chunked), and one so
    // large the connection lingers before closing.
    serve_default();
    std::string part(4096, 'b');
    raw_client sized(ep), chunks(ep), large(ep);
    ASSERT_EQ(200, sized.request(head("POST", "/text", "Content-Length: 1000000\r\n") + part));
    EXPECT_TRUE(sized.resp.keep_alive());
    ASSERT_EQ(200, chunks.request(head("POST", "/text", "Transfer-Encoding: chunked\r\n") +
                                  "1000\r\n" + part + "\r\n"));
    EXPECT_TRUE(chunks.resp.keep_alive());
    ASSERT_EQ(200, large.request(head("POST", "/text", "Content-Length: 10000000\r\n") + part));
    // Each answer went out with the server's first read of what follows:
    // the three connections now wait for body bytes.
    ASSERT_EQ(3u, http->connections());
    tcp->terminate();
    int stopped = -2;
    auto th = photon::thread_enable_join(photon::thread_create11([&] {
        // Without the interruption, the drains would go on until
        // body_timeout (30 s) and this stop would fail with ETIMEDOUT.
        stopped = http->stop(5 * 1000 * 1000);
    }));
    photon::thread_join(th);
    EXPECT_EQ(0, stopped);
    EXPECT_EQ(0u, http->connections());
    EXPECT_TRUE(sized.closed());
    EXPECT_TRUE(chunks.closed());
    EXPECT_TRUE(large.closed());
}

PHOTON_INSTANTIATE_ENGINE_TESTS(HttpServer);

// ---- HTTPS: connections still in their TLS handshake -----------------------

class HttpsServer : public HttpServer {
protected:
    void SetUp() override {
        HttpServer::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        PHOTON_TEST_MAKE_TLS_PAIR(tls);
    }
    void TearDown() override {
        HttpServer::TearDown();
        tls = {};  // after the connections that use it
    }
    void serve_https(const ServerOptions& opts = {}) {
        serve(
            opts, [&](HTTPServer* s) { h.install(s); },
            [&] { return new_tls_server(tls.server.get(), new_tcp_socket_server(), true); });
    }
    // A TLS record header announcing a 512-byte ClientHello, and 100 bytes of it.
    static std::string half_client_hello() {
        return std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11) +
               std::string(100, 'r');
    }
    tls_pair tls;
};

// The handshake ran before the HTTP server's deadlines applied and had none
// of its own: such a client held its connection forever.
TEST_P(HttpsServer, ClosesClientsStuckInTheHandshakeAfterTheHandshakeTimeout) {
    ASSERT_EQ(0, tls.server->set_handshake_timeout(200'000));
    serve_https();
    {  // A real client: the handshake runs in the server's first read.
        std::unique_ptr<ISocketClient> cli(
            new_tls_client(tls.client.get(), new_tcp_socket_client(), true));
        cli->timeout(kLongUs);
        std::unique_ptr<ISocketStream> s(cli->connect(ep));
        ASSERT_TRUE(s);
        ASSERT_EQ(0, tls_stream_set_hostname(s.get(), "localhost"));
        std::string req = head("GET", "/text", "Connection: close\r\n"), all;
        ASSERT_EQ((ssize_t)req.size(), s->write(req.data(), req.size()));
        char buf[4096];
        ssize_t n;
        while ((n = s->recv(buf, sizeof(buf))) > 0) all.append(buf, n);
        EXPECT_EQ(0u, all.find("HTTP/1.1 200 OK\r\n")) << all;
        EXPECT_EQ("hello\n", all.substr(all.size() - 6));
    }
    auto t0 = Clock::now();
    raw_client silent(ep), half(ep);
    ASSERT_TRUE(silent.ok() && half.ok());
    ASSERT_TRUE(half.send(half_client_hello()));
    EXPECT_TRUE(silent.closed(kLongUs));
    EXPECT_TRUE(half.closed(kLongUs));
    EXPECT_GE(us_since(t0), 150'000u);  // not before the deadline (200 ms)
    EXPECT_TRUE(wait_for([&] { return http->connections() == 0; }, 10000));
}

// stop() did not see connections in their handshake: it returned 0 at once
// while they stayed open.
TEST_P(HttpsServer, StopEndsConnectionsStillInTheirHandshake) {
    serve_https();  // the default handshake timeout: 30 s
    raw_client silent(ep), half(ep);
    ASSERT_TRUE(silent.ok() && half.ok());
    ASSERT_TRUE(half.send(half_client_hello()));
    ASSERT_TRUE(wait_for([&] { return http->connections() == 2; }, 10000));
    tcp->terminate();
    EXPECT_EQ(0, http->stop(kLongUs));
    EXPECT_EQ(0u, http->connections());
    EXPECT_TRUE(silent.closed(kLongUs));
    EXPECT_TRUE(half.closed(kLongUs));
}

PHOTON_INSTANTIATE_ENGINE_TESTS(HttpsServer);

}  // namespace
