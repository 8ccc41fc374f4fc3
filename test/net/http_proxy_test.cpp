// The proxy handlers on both event engines, served by our HTTP server: a
// reverse proxy in front of scripted upstreams, nginx and python3's
// http.server (bodies streamed both ways, re-framed, 502 / 504), and the
// forward proxy for our client and curl (absolute-form, CONNECT tunnels).
#include <photon/net/http/client.h>
#include <photon/net/http/server.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include <photon/net/security-context/tls-stream.h>
#include <photon/net/socket.h>

#include "../thread/test_util.h"
#include "../util/engine_fixture.h"
#include "../util/tls_pair.h"
#include "http_test_util.h"
#include "net_test_util.h"

using namespace photon;
using namespace photon::net;
using namespace photon::net::http;
using namespace photon_test;

namespace {

// Our HTTP server on 127.0.0.1 with one handler (owned).
class http_server {
public:
    explicit http_server(HTTPHandler* h) : tcp_(scripted_server::listening_tcp()) {
        http_.reset(new_http_server());
        http_->add_handler(h, true);
        tcp_->set_handler(http_->get_connection_handler());
        tcp_->start_loop(false);
    }
    ~http_server() {
        tcp_->terminate();
        EXPECT_EQ(0, http_->stop(5 * 1000 * 1000));
    }
    uint16_t port() { return tcp_->getsockname().port; }
    std::string url(const std::string& path = "/") {
        return "http://127.0.0.1:" + std::to_string(port()) + path;
    }
    size_t connections() { return http_->connections(); }

private:
    std::unique_ptr<ISocketServer> tcp_;
    std::unique_ptr<HTTPServer> http_;
};

// A reverse proxy: every request goes to `base` + its target, with X-Via.
struct reverse {
    std::string base;
    int direct(Request& src, Request& dst) {
        if (dst.reset(src.verb(), base + std::string(src.target())) < 0) return -1;
        for (auto f : src.headers)
            if (!iequals(f.first, "Host")) dst.headers.insert(f.first, f.second, 1);
        return 0;
    }
    int modify(Response& src, Response& dst) {
        dst.set_result(src.status_code());
        for (auto f : src.headers) dst.headers.insert(f.first, f.second, 1);
        dst.headers.insert("X-Via", "photon");
        return 0;
    }
    HTTPHandler* handler(Client* c = nullptr) {
        return new_proxy_handler({this, &reverse::direct}, {this, &reverse::modify}, c, c);
    }
};

// The upstream of most tests: echoes method, target, framing and body.
scripted_server::Handler echo(const std::string& data) {
    return [data](Request& req, Response& resp, ISocketStream* s) {
        std::string t(req.target());
        resp.headers.insert("X-Upstream", "yes");
        if (t == "/chunked") {  // no length: chunked
            for (size_t off = 0; off < data.size(); off += 7000)
                if (resp.write(data.data() + off, std::min<size_t>(7000, data.size() - off)) < 0)
                    return -1;
            return 0;
        }
        if (t == "/until-close") {
            std::string raw = "HTTP/1.0 200 OK\r\n\r\n" + data;
            s->write(raw.data(), raw.size());
            return -1;
        }
        if (t == "/stall") {
            char c;
            s->recv(&c, 1);
            return -1;
        }
        if (req.verb() == Verb::HEAD) return resp.headers.content_length(42);
        std::string body = read_all(req);
        std::string framing = req.headers.has("Content-Length")      ? "length"
                              : req.headers.has("Transfer-Encoding") ? "chunked"
                                                                     : "none";
        return reply(resp, std::string(verbstr[(int)req.verb()]) + " " + t + " " + framing + " " +
                               std::to_string(body.size()) + " " +
                               (body == pattern(body.size(), 4) ? "intact" : "garbled"));
    };
}

class HttpProxy : public EngineTest {
protected:
    void SetUp() override {
        EngineTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        client.reset(new_http_client());
    }
    void TearDown() override {
        client.reset();
        EngineTest::TearDown();
    }
    // "<status> <X-Via> <body>" of a request through `c` (client if null).
    std::string fetch(Verb v, const std::string& url, const std::string& body = "",
                      bool stream = false, Client* c = nullptr) {
        auto op = (c ? c : client.get())->new_operation(v, url);
        DEFER(op->destroy());
        string_body.reset(new string_stream(body));
        if (stream)
            op->body_stream = string_body.get();
        else if (!body.empty())
            op->set_body(body);
        if (op->call() < 0) return "<call failed " + std::to_string(errno) + ">";
        return std::to_string(op->status_code) + " " + std::string(op->resp.headers["X-Via"]) +
               " " + body_of(op);
    }

    class string_stream : public IStream {
    public:
        explicit string_stream(std::string s) : s_(std::move(s)) {}
        int close() override { return 0; }
        ssize_t read(void* buf, size_t count) override {
            size_t n = std::min({count, (size_t)5000, s_.size() - pos_});
            memcpy(buf, s_.data() + pos_, n);
            pos_ += n;
            return (ssize_t)n;
        }
        ssize_t readv(const struct iovec* iov, int) override {
            return read(iov[0].iov_base, iov[0].iov_len);
        }
        ssize_t write(const void*, size_t) override { return errno = EBADF, -1; }
        ssize_t writev(const struct iovec*, int) override { return errno = EBADF, -1; }

    private:
        std::string s_;
        size_t pos_ = 0;
    };
    std::unique_ptr<string_stream> string_body;
    std::unique_ptr<Client> client;
};

TEST_P(HttpProxy, ReverseProxyStreamsBodiesBothWays) {
    const std::string data = pattern(250000, 4);
    scripted_server up(echo(data));
    reverse rev{"http://127.0.0.1:" + std::to_string(up.port())};
    http_server proxy(rev.handler());
    EXPECT_EQ("200 photon GET /hello none 0 intact", fetch(Verb::GET, proxy.url("/hello")));
    EXPECT_EQ("200 photon POST /up length 250000 intact",
              fetch(Verb::POST, proxy.url("/up"), data));
    EXPECT_EQ("200 photon PUT /up chunked 250000 intact",
              fetch(Verb::PUT, proxy.url("/up"), data, true));
    EXPECT_TRUE("200 photon " + data == fetch(Verb::GET, proxy.url("/chunked")));
    {
        auto op = client->new_operation(Verb::GET, proxy.url("/chunked"));
        DEFER(op->destroy());
        ASSERT_EQ(0, op->call());
        EXPECT_EQ("chunked", op->resp.headers["Transfer-Encoding"]);
        EXPECT_EQ("yes", op->resp.headers["X-Upstream"]);
        EXPECT_TRUE(data == body_of(op));
    }
    auto head = client->new_operation(Verb::HEAD, proxy.url("/x"));
    ASSERT_EQ(0, head->call());
    EXPECT_EQ(200, head->status_code);
    EXPECT_TRUE(head->resp.body_done());
    head->destroy();
    EXPECT_EQ(1, up.accepts);  // the proxy's client kept its upstream connection
    // An until-close upstream body reaches the client chunked.
    auto op = client->new_operation(Verb::GET, proxy.url("/until-close"));
    ASSERT_EQ(0, op->call());
    EXPECT_EQ("chunked", op->resp.headers["Transfer-Encoding"]);
    EXPECT_TRUE(data == body_of(op));
    op->destroy();
}

TEST_P(HttpProxy, ReverseProxyAnswers502And504) {
    scripted_server up(echo(""));
    Client* slow = new_http_client();
    slow->timeout_ms(200);
    reverse stall{"http://127.0.0.1:" + std::to_string(up.port())};
    http_server proxy2(stall.handler(slow));
    EXPECT_EQ("504  504 Gateway Timeout\n", fetch(Verb::GET, proxy2.url("/stall")));
    EXPECT_EQ("200 photon GET /fine none 0 intact", fetch(Verb::GET, proxy2.url("/fine")));
    reverse refused{"http://127.0.0.1:" + std::to_string(free_loopback_port())};
    http_server proxy1(refused.handler());
    EXPECT_EQ("502  502 Bad Gateway\n", fetch(Verb::GET, proxy1.url("/x")));
}

TEST_P(HttpProxy, ReverseProxyInFrontOfNginxAndPython) {
    temp_dir tmp;
    const std::string data = pattern(300000, 6);
    tmp.write("www/file.bin", data);
    if (have_tool("nginx")) {
        nginx_server ngx(tmp, "");
        ASSERT_TRUE(ngx.ok()) << ngx.error_log();
        reverse rev{ngx.url("")};
        http_server proxy(rev.handler());
        for (int i = 0; i < 3; i++)
            EXPECT_TRUE("200 photon " + data == fetch(Verb::GET, proxy.url("/file.bin")));
        EXPECT_EQ(404, atoi(fetch(Verb::GET, proxy.url("/missing")).c_str()));
        ASSERT_TRUE(wait_for([&] { return ngx.connections("/missing").size() == 1; }));
        EXPECT_EQ(1u, ngx.connections(" ").size()) << ngx.access_log();
    }
    if (have_tool("python3")) {  // HTTP/1.0: until-close bodies, re-framed
        child_server py(python_http_server(tmp, tmp.path("www"), "HTTP/1.0"), tmp.path("py"));
        ASSERT_NE(0, py.port()) << py.output();
        reverse rev{"http://127.0.0.1:" + std::to_string(py.port())};
        http_server proxy(rev.handler());
        for (int i = 0; i < 2; i++)
            EXPECT_TRUE("200 photon " + data == fetch(Verb::GET, proxy.url("/file.bin")));
    }
}

TEST_P(HttpProxy, ForwardProxyFetchesAbsoluteTargetsForOurClient) {
    const std::string data = pattern(100000, 4);
    scripted_server up(echo(data));
    http_server proxy(new_default_forward_proxy_handler(5 * 1000 * 1000));
    std::unique_ptr<Client> via(new_http_client());
    via->set_proxy(proxy.url());
    EXPECT_EQ("200  GET /a?b=1 none 0 intact",
              fetch(Verb::GET, up.url("/a?b=1"), "", false, via.get()));
    EXPECT_EQ("200  POST /p length 100000 intact",
              fetch(Verb::POST, up.url("/p"), data, false, via.get()));
    EXPECT_TRUE("200  " + data == fetch(Verb::GET, up.url("/until-close"), "", false, via.get()));
    // Operation-level proxy on a client without one.
    auto op = client->new_operation(Verb::GET, up.url("/op"));
    ASSERT_EQ(0, op->set_proxy(proxy.url()));
    ASSERT_EQ(0, op->call());
    EXPECT_EQ("GET /op none 0 intact", body_of(op));
    op->destroy();
    // Origin-form requests are not for a forward proxy.
    EXPECT_EQ(400, atoi(fetch(Verb::GET, proxy.url("/x")).c_str()));
    EXPECT_EQ("502  502 Bad Gateway\n",
              fetch(Verb::GET, "http://127.0.0.1:" + std::to_string(free_loopback_port()) + "/", "",
                    false, via.get()));
}

TEST_P(HttpProxy, ForwardProxyTunnelsHttpsWithConnect) {
    tls_pair pair;
    PHOTON_TEST_MAKE_TLS_PAIR(pair);
    {
        scripted_server up(
            new_tls_server(pair.server.get(), scripted_server::listening_tcp(), true), echo(""));
        http_server proxy(new_default_forward_proxy_handler(5 * 1000 * 1000));
        std::unique_ptr<Client> via(new_http_client(nullptr, pair.client.get()));
        via->set_proxy(proxy.url());
        std::string url = "https://localhost:" + std::to_string(up.port()) + "/secret";
        EXPECT_EQ("200  GET /secret none 0 intact", fetch(Verb::GET, url, "", false, via.get()));
        EXPECT_EQ("200  GET /secret none 0 intact", fetch(Verb::GET, url, "", false, via.get()));
        EXPECT_EQ(1, up.accepts);  // the tunnel was pooled
        std::string refused = "https://localhost:" + std::to_string(free_loopback_port()) + "/";
        EXPECT_EQ("<call failed " + std::to_string(ECONNREFUSED) + ">",
                  fetch(Verb::GET, refused, "", false, via.get()));
        via.reset();
    }
    thread_usleep(10 * 1000);  // tunnel coroutines see their ends before the contexts go
}

// An upstream that reads until EOF, then answers "got <n>\n" and what it
// read, and closes: it needs the client's half-close to come through.
struct reply_after_eof {
    std::unique_ptr<ISocketServer> tcp{scripted_server::listening_tcp()};
    int served = 0;
    reply_after_eof() {
        tcp->set_handler({this, &reply_after_eof::serve});
        tcp->start_loop(false);
    }
    ~reply_after_eof() { tcp->terminate(); }
    uint16_t port() { return tcp->getsockname().port; }
    int serve(ISocketStream* s) {
        s->timeout(kLongUs);
        std::string got;
        char buf[16384];
        ssize_t n;
        while ((n = s->recv(buf, sizeof(buf))) > 0) got.append(buf, n);
        if (n < 0) return -1;
        std::string r = "got " + std::to_string(got.size()) + "\n" + got;
        if (s->write(r.data(), r.size()) != (ssize_t)r.size()) return -1;
        served++;
        return 0;
    }
};

TEST_P(HttpProxy, ForwardProxyTunnelPassesHalfCloseOn) {
    reply_after_eof up;
    http_server proxy(new_default_forward_proxy_handler(5 * 1000 * 1000));
    std::unique_ptr<ISocketClient> cli(new_tcp_socket_client());
    ASSERT_TRUE(cli);
    cli->timeout(kLongUs);
    std::unique_ptr<ISocketStream> s(cli->connect(EndPoint(IPAddr("127.0.0.1"), proxy.port())));
    ASSERT_TRUE(s) << strerror(errno);
    std::string where = "127.0.0.1:" + std::to_string(up.port());
    std::string head = "CONNECT " + where + " HTTP/1.1\r\nHost: " + where + "\r\n\r\n";
    ASSERT_EQ((ssize_t)head.size(), s->write(head.data(), head.size()));
    std::string got;
    char buf[16384];
    for (int i = 0; i < 100 && got.find("\r\n\r\n") == got.npos; i++) {
        ssize_t n = s->recv(buf, sizeof(buf));
        if (n <= 0) break;
        got.append(buf, n);
    }
    ASSERT_EQ(0u, got.find("HTTP/1.1 200 ")) << got;
    got.erase(0, got.find("\r\n\r\n") + 4);
    const std::string data = pattern(100000, 4);
    ASSERT_EQ((ssize_t)data.size(), s->write(data.data(), data.size()));
    ASSERT_EQ(0, s->shutdown(ShutdownHow::Write));  // our half-close; the reply still comes
    for (int i = 0; i < 1000; i++) {
        ssize_t n = s->recv(buf, sizeof(buf));
        ASSERT_GE(n, 0) << strerror(errno);
        if (n == 0) break;
        got.append(buf, n);
    }
    EXPECT_TRUE("got 100000\n" + data == got) << got.size() << " bytes: " << got.substr(0, 40);
    EXPECT_EQ(1, up.served);
    s.reset();
    EXPECT_TRUE(wait_for([&] { return proxy.connections() == 0; }));  // both ends closed
}

TEST_P(HttpProxy, ForwardProxyServesCurl) {
    if (!have_tool("curl")) GTEST_SKIP() << "curl is not installed";
    scripted_server up(echo(""));
    http_server proxy(new_default_forward_proxy_handler(5 * 1000 * 1000));
    temp_dir tmp;
    child_process curl({"curl", "-sS", "--max-time", "10", "-x", proxy.url(), up.url("/via-curl")},
                       "", tmp.path("out"));
    ASSERT_TRUE(curl.started());
    EXPECT_EQ(0, curl.wait()) << slurp(tmp.path("out"));
    EXPECT_EQ("GET /via-curl none 0 intact", slurp(tmp.path("out")));
    // No socket may close while a child is being spawned: the child holds
    // it until its exec, and the engine would hear of it under a reused fd
    // number (see the report of the client helper).
    ASSERT_TRUE(wait_for([&] { return proxy.connections() == 0; }));
    // curl -p: a CONNECT tunnel for plain HTTP too.
    child_process tunnel(
        {"curl", "-sS", "--max-time", "10", "-p", "-x", proxy.url(), up.url("/tunnelled")}, "",
        tmp.path("out2"));
    ASSERT_TRUE(tunnel.started());
    EXPECT_EQ(0, tunnel.wait()) << slurp(tmp.path("out2"));
    EXPECT_EQ("GET /tunnelled none 0 intact", slurp(tmp.path("out2")));
}

PHOTON_INSTANTIATE_ENGINE_TESTS(HttpProxy);

}  // namespace
