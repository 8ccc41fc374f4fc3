// The HTTP/2 client connection (net/http2/client_connection.h), on both
// event engines: against our server connection (a response, an 8 MiB body
// echoed while it is sent, 100 coroutines sharing one connection, a refused
// stream, the server's stream limit and its GOAWAY, wait_settings() against it
// and against an HTTP/1.1 server) and against nginx's h2c (a 1 MiB file, 20
// at once). A missing nginx skips its test.
#include "../../net/http2/client_connection.h"

#include <photon/net/socket.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "../thread/test_util.h"
#include "http2_test_util.h"
#include "http_test_util.h"

namespace {

using namespace photon::net::http2;
using photon_test::h2_pattern;
using photon_test::H2Server;

class Http2Client : public photon_test::EngineTest {
protected:
    // A client connection to 127.0.0.1:port, started.
    std::unique_ptr<client_connection> connect(uint16_t port) {
        cli_.reset(photon::net::new_tcp_socket_client());
        sock_.reset(cli_->connect(photon::net::EndPoint(photon::net::IPAddr("127.0.0.1"), port)));
        if (!sock_) return nullptr;
        std::unique_ptr<client_connection> c(new client_connection(sock_.get()));
        if (c->start() < 0) return nullptr;
        return c;
    }
    void TearDown() override {
        sock_.reset();
        cli_.reset();
        photon_test::EngineTest::TearDown();
    }
    static std::vector<header_field> get(const std::string& path, const char* method = "GET") {
        return {
            {":method", method}, {":scheme", "http"}, {":authority", "127.0.0.1"}, {":path", path}};
    }
    // The whole response body, or "<error E>".
    static std::string body(client_stream* s) {
        std::string out;
        char buf[16384];
        while (true) {
            ssize_t n = s->read(buf, sizeof(buf), 10 * 1000 * 1000);
            if (n < 0) return "<error " + std::to_string(errno) + ">";
            if (n == 0) return out;
            out.append(buf, n);
        }
    }
    std::unique_ptr<photon::net::ISocketClient> cli_;
    std::unique_ptr<photon::net::ISocketStream> sock_;
};

TEST_P(Http2Client, GetsAResponseAndEchoesEightMiBWhileSendingIt) {
    H2Server server;
    auto c = connect(server.port());
    ASSERT_NE(nullptr, c);
    auto s = c->request(get("/hello"), true);
    ASSERT_NE(nullptr, s);
    EXPECT_EQ(200, s->response());
    EXPECT_EQ("hello\n", body(s));
    c->release(s);

    std::string sent = h2_pattern(8 << 20);
    s = c->request(get("/echo", "POST"), false);
    ASSERT_NE(nullptr, s);
    auto writer = photon_test::spawn([&] {  // both ways at once: the windows need it
        for (size_t off = 0; off < sent.size(); off += 100000)
            ASSERT_GT(s->write(sent.data() + off, std::min<size_t>(100000, sent.size() - off)), 0);
        EXPECT_EQ(0, s->finish());
    });
    EXPECT_EQ(200, s->response());
    std::string back = body(s);
    writer.join();
    EXPECT_EQ(sent.size(), back.size());
    EXPECT_TRUE(sent == back);
    c->release(s);
}

TEST_P(Http2Client, AHundredCoroutinesShareOneConnection) {
    H2Server server;
    auto c = connect(server.port());
    ASSERT_NE(nullptr, c);
    int ok = 0;
    size_t peak = 0;
    std::vector<photon_test::task> tasks;
    for (int i = 0; i < 100; i++)
        tasks.push_back(photon_test::spawn([&, i] {
            size_t n = 1000 + 997 * i;
            auto s = c->request(get("/big/" + std::to_string(n)), true);
            if (!s) return;
            peak = std::max(peak, c->active());
            if (s->response() == 200 && body(s) == h2_pattern(n)) ok++;
            c->release(s);
        }));
    for (auto& t : tasks) t.join();
    EXPECT_EQ(100, ok);
    EXPECT_GT(peak, 10u) << "the requests were in flight together";
    EXPECT_EQ(0u, c->active());
}

TEST_P(Http2Client, ARefusedStreamIsEagainAndTheConnectionGoesOn) {
    H2Server server;
    auto c = connect(server.port());
    ASSERT_NE(nullptr, c);
    auto s = c->request(get("/refuse"), true);
    ASSERT_NE(nullptr, s);
    errno = 0;
    EXPECT_EQ(-1, s->response());
    EXPECT_EQ(EAGAIN, errno);
    c->release(s);
    s = c->request(get("/hello"), true);
    ASSERT_NE(nullptr, s);
    EXPECT_EQ(200, s->response());
    c->release(s);
}

TEST_P(Http2Client, RequestsWaitForTheServersStreamLimit) {
    connection_options opt;
    opt.max_concurrent_streams = 2;
    H2Server server(opt);
    auto c = connect(server.port());
    ASSERT_NE(nullptr, c);
    // The server's SETTINGS come before its first response.
    auto first = c->request(get("/hello"), true);
    ASSERT_NE(nullptr, first);
    EXPECT_EQ(200, first->response());
    c->release(first);
    int ok = 0;
    size_t peak = 0;
    std::vector<photon_test::task> tasks;
    for (int i = 0; i < 10; i++)
        tasks.push_back(photon_test::spawn([&] {
            auto s = c->request(get("/"), true, 10 * 1000 * 1000);
            if (!s) return;
            peak = std::max(peak, c->active());
            if (s->response() == 200 && body(s).size() == 128u << 10) ok++;
            c->release(s);
        }));
    for (auto& t : tasks) t.join();
    EXPECT_EQ(10, ok);
    EXPECT_LE(peak, 2u);
}

TEST_P(Http2Client, AServersGoawayMakesTheConnectionUnusable) {
    connection_options opt;
    opt.idle_timeout = 200 * 1000;  // the server says GOAWAY(NO_ERROR) when idle
    H2Server server(opt);
    auto c = connect(server.port());
    ASSERT_NE(nullptr, c);
    EXPECT_TRUE(c->usable());
    EXPECT_TRUE(photon_test::wait_for([&] { return !c->usable(); }, 5000));
    errno = 0;
    EXPECT_EQ(nullptr, c->request(get("/hello"), true));
    EXPECT_TRUE(errno == EAGAIN || errno == ECONNRESET) << errno;
}

TEST_P(Http2Client, WaitSettingsTellsAnHttp2ServerFromAnHttp11One) {
    H2Server server;
    auto c = connect(server.port());
    ASSERT_NE(nullptr, c);
    EXPECT_EQ(0, c->wait_settings(10 * 1000 * 1000));
    c.reset();
    // An HTTP/1.1 server answers the preface with a 400 and closes.
    photon_test::scripted_server h1(
        [](photon::net::http::Request&, photon::net::http::Response& r,
           photon::net::ISocketStream*) { return photon_test::reply(r, "h1"); });
    auto c1 = connect(h1.port());
    ASSERT_NE(nullptr, c1);
    errno = 0;
    EXPECT_EQ(-1, c1->wait_settings(10 * 1000 * 1000));
    EXPECT_EQ(EPROTONOSUPPORT, errno);
    EXPECT_FALSE(c1->usable());
}

TEST_P(Http2Client, TalksToNginxOverH2c) {
    photon_test::temp_dir tmp;
    uint16_t h2 = photon_test::free_loopback_port();
    photon_test::nginx_server ngx(tmp, "listen 127.0.0.1:" + std::to_string(h2) + " http2;");
    if (!ngx.ok()) GTEST_SKIP() << "nginx did not start: " << ngx.error_log();
    std::string file = h2_pattern(1 << 20);
    tmp.write("www/f.bin", file);
    auto c = connect(h2);
    ASSERT_NE(nullptr, c);
    int ok = 0;
    std::vector<photon_test::task> tasks;
    for (int i = 0; i < 20; i++)
        tasks.push_back(photon_test::spawn([&] {
            auto s = c->request(get("/f.bin"), true);
            if (!s) return;
            if (s->response() == 200 && body(s) == file) ok++;
            c->release(s);
        }));
    for (auto& t : tasks) t.join();
    EXPECT_EQ(20, ok) << ngx.error_log();
}

PHOTON_INSTANTIATE_ENGINE_TESTS(Http2Client);

}  // namespace
