// http::Client over HTTP/2 (client.h, net/http/client_h2.h), on both event
// engines: h2c by prior knowledge (HttpVersion::Http2) and h2 by ALPN, against
// our HTTP/2 server connection (a server of this file, counting its accepts),
// nginx and h2o: 100 MiB down and up with sha256 checked, 50 coroutines on
// one connection, redirects, timeouts, a GOAWAY'd request retried on a new
// connection, trailers, and the fall back to HTTP/1.1 where h2 is not spoken.
// A missing peer skips its test. Under a sanitizer the big transfers are
// 16 MiB instead of 100 (kBig).
#include <unistd.h>

#include <photon/common/checksum/digest.h>
#include <photon/net/http/client.h>
#include <photon/net/security-context/tls-stream.h>
#include <photon/net/socket.h>
#include <photon/photon.h>
#include <photon/thread/thread.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../thread/test_util.h"
#include "http2_test_util.h"
#include "http_test_util.h"
#include "tls_test_util.h"

namespace {

using namespace photon::net;
using namespace photon::net::http;
using photon::net::http2::connection_options;
using photon::net::http2::ErrorCode;
using photon::net::http2::header_field;
using photon::net::http2::server_connection;
using photon::net::http2::Stream;
using photon_test::h2_pattern;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr size_t kBig = 16 << 20;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr size_t kBig = 16 << 20;
#else
constexpr size_t kBig = 100 << 20;
#endif
#else
constexpr size_t kBig = 100 << 20;
#endif

std::string hex(std::string_view d) {
    static const char* x = "0123456789abcdef";
    std::string s;
    for (unsigned char c : d) s += x[c >> 4], s += x[c & 15];
    return s;
}

std::string sha256_hex(std::string_view data) { return hex(photon::sha256(data).finalize()); }

// A file of n bytes of the pattern, and its sha256.
std::string write_big(const photon_test::temp_dir& tmp, const std::string& name, size_t n) {
    std::string data = h2_pattern(n);
    tmp.write(name, data);
    return sha256_hex(data);
}

// Reads the rest of op's body: its sha256 and size, or "<error N>".
std::string body_sha(Client::Operation* op, size_t* size) {
    photon::sha256 d;
    std::unique_ptr<char[]> buf(new char[1 << 20]);
    *size = 0;
    while (true) {
        ssize_t n = op->resp.read(buf.get(), 1 << 20);
        if (n < 0) return "<error " + std::to_string(errno) + ">";
        if (n == 0) return hex(d.finalize());
        d.update(buf.get(), n);
        *size += n;
    }
}

// A body of n pattern bytes, made as it is read (no 100 MiB buffer).
class PatternStream : public IStream {
public:
    explicit PatternStream(size_t n) : n_(n) {}
    ssize_t read(void* buf, size_t count) override {
        size_t k = std::min(count, n_ - off_);
        auto p = (char*)buf;
        for (size_t i = 0; i < k; i++, off_++) p[i] = (char)('a' + (off_ * 7 + off_ / 1000) % 26);
        return k;
    }
    ssize_t readv(const struct iovec*, int) override { return errno = ENOSYS, -1; }
    ssize_t write(const void*, size_t) override { return errno = ENOSYS, -1; }
    ssize_t writev(const struct iovec*, int) override { return errno = ENOSYS, -1; }
    int close() override { return 0; }

private:
    size_t n_, off_ = 0;
};

// An HTTP/2 server on 127.0.0.1 (TCP, or TLS offering only h2) on a vCPU of
// its own thread; counts the connections it accepted. Paths: /hello, /echo,
// /big/N, /sha (the body's sha256 in hex), /slow (answers after 2 s),
// /redirect (302 to /hello), /trailers, /req-trailers (the request body's
// size, then its trailers, one per line), /goaway-once (the first such
// request is refused and its connection stopped with GOAWAY).
class Peer {
public:
    explicit Peer(bool tls = false) {
        th_ = std::thread([this, tls] { run(tls); });
        // (An OS thread's wait: the caller need not be a vCPU.)
        EXPECT_TRUE(photon_test::wait_for_off_vcpu([this] { return port_ != 0 || failed_; },
                                                   photon_test::kServerStartMs))
            << "the peer never listened";
    }
    ~Peer() {
        stop_ = true;
        th_.join();
    }
    uint16_t port() const { return port_; }
    bool failed() const { return failed_; }
    std::string url(const std::string& path, bool tls = false) const {
        return (tls ? "https://localhost:" : "http://127.0.0.1:") + std::to_string(port_) + path;
    }
    std::atomic<int> accepts{0}, requests{0};

private:
    void run(bool tls) {
        if (photon::init(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE) != 0) {
            failed_ = true;
            return;
        }
        {
            std::unique_ptr<TLSContext> ctx;
            std::unique_ptr<ISocketServer> srv(new_tcp_socket_server());
            if (tls) {
                auto& pki = photon_test::test_pki::get();
                ctx.reset(new_tls_context(pki.pem("srv.pem").c_str(), pki.pem("srv.key").c_str()));
                if (!ctx || ctx->set_alpn_protos({"h2"}) < 0) failed_ = true;
                if (ctx) srv.reset(new_tls_server(ctx.get(), srv.release(), true));
            }
            srv->set_handler({this, &Peer::serve});
            if (!failed_ && srv->bind_v4localhost(0) == 0 && srv->listen() == 0 &&
                srv->start_loop(false) == 0)
                port_ = srv->getsockname().port;
            else
                failed_ = true;
            while (!stop_ && !failed_) photon::thread_usleep(10 * 1000);
            srv->terminate();
        }
        photon::fini();
    }
    int serve(ISocketStream* sock) {
        accepts++;
        connection_options opt;
        opt.idle_timeout = 10'000'000;
        server_connection* self = nullptr;
        server_connection c(sock, opt, [&](Stream& s) { handle(s, *self); });
        self = &c;
        c.stop_on(&stop_);  // a graceful stop when the peer ends
        return c.serve();
    }
    void handle(Stream& s, server_connection& c) {
        requests++;
        std::string path(s.field(":path"));
        if (path == "/sha") {
            photon::sha256 d;
            std::unique_ptr<char[]> buf(new char[65536]);
            ssize_t n;
            size_t total = 0;
            while ((n = s.read(buf.get(), 65536)) > 0) d.update(buf.get(), n), total += n;
            std::string body = hex(d.finalize()) + " " + std::to_string(total);
            s.respond({{":status", n < 0 ? "400" : "200"},
                       {"content-length", std::to_string(body.size())}});
            s.write(body.data(), body.size());
        } else if (path == "/slow") {
            photon::thread_usleep(2'000'000);
            s.respond({{":status", "200"}, {"content-length", "5"}});
            s.write("slow\n", 5);
        } else if (path == "/redirect") {
            s.respond({{":status", "302"}, {"location", "/hello"}, {"content-length", "0"}}, true);
        } else if (path == "/goaway-once") {
            if (goaway_done_.exchange(true)) {
                s.respond({{":status", "200"}, {"content-length", "2"}});
                s.write("ok", 2);
            } else {  // not processed: the client may send it again elsewhere
                c.stop();
                s.reset(ErrorCode::REFUSED_STREAM);
            }
        } else if (path == "/req-trailers") {
            char buf[4096];
            ssize_t n;
            size_t total = 0;
            while ((n = s.read(buf, sizeof(buf))) > 0) total += n;
            std::string body = std::to_string(total) + "\n";
            for (auto& f : s.trailers()) body += f.name + ": " + f.value + "\n";
            s.respond({{":status", n < 0 ? "400" : "200"},
                       {"content-length", std::to_string(body.size())}});
            s.write(body.data(), body.size());
        } else if (path == "/headers") {  // the request's fields, one per line
            std::string body;
            for (auto& f : s.request()) body += f.name + ": " + f.value + "\n";
            s.respond({{":status", "200"}, {"content-length", std::to_string(body.size())}});
            s.write(body.data(), body.size());
        } else {
            photon_test::serve_stream(s);
        }
    }

    std::thread th_;
    std::atomic<uint16_t> port_{0};
    std::atomic<bool> failed_{false}, stop_{false}, goaway_done_{false};
};

// GET url with sha256 of the body: "<sha> <size>", or what failed.
std::string get_sha(Client* c, const std::string& url, HttpVersion* v = nullptr) {
    Client::OperationOnStack<> op(c, Verb::GET, url);
    op.timeout = 60'000'000;
    if (op.call() < 0) return "<call failed " + std::to_string(errno) + ">";
    if (v) *v = op.http_version();
    if (op.status_code != 200) return "<status " + std::to_string(op.status_code) + ">";
    size_t n;
    std::string sha = body_sha(&op, &n);
    return sha + " " + std::to_string(n);
}
// PUT (or POST) n pattern bytes from a stream to url: the status, or -errno.
int upload(Client* c, Verb v, const std::string& url, size_t n, std::string* body,
           HttpVersion* ver = nullptr) {
    Client::OperationOnStack<> op(c, v, url);
    op.timeout = 60'000'000;
    PatternStream ps(n);
    op.body_stream = &ps;
    op.req.headers.content_length(n);
    if (op.call() < 0) return -errno;
    if (ver) *ver = op.http_version();
    *body = photon_test::body_of(&op);
    return op.status_code;
}

class Http2HttpClient : public photon_test::EngineTest {
protected:
    // A client for our test CA's certificates, speaking h2c to http URLs
    // (the test's own: declared after its servers, it goes first).
    std::unique_ptr<Client> client() {
        auto& pki = photon_test::test_pki::get();
        if (!tls_) {
            tls_.reset(new_tls_context());
            if (tls_) tls_->set_ca_cert(pki.pem("ca.pem").c_str());
        }
        std::unique_ptr<Client> c(new_http_client(nullptr, tls_.get()));
        c->http_version(HttpVersion::Http2);
        return c;
    }
    void TearDown() override {
        tls_.reset();
        photon_test::EngineTest::TearDown();
    }
    std::unique_ptr<TLSContext> tls_;
};

TEST_P(Http2HttpClient, SpeaksH2cWhenAskedAndHttp11Otherwise) {
    Peer peer;
    ASSERT_FALSE(peer.failed());
    auto client_owned = client();
    Client* c = client_owned.get();
    auto op = c->new_operation(Verb::GET, peer.url("/hello"));
    DEFER(op->destroy());
    ASSERT_EQ(0, op->call()) << errno;
    EXPECT_EQ(200, op->status_code);
    EXPECT_EQ(HttpVersion::Http2, op->http_version());
    EXPECT_EQ("hello\n", photon_test::body_of(op));
    EXPECT_EQ("text/plain", op->resp.headers["Content-Type"]);

    // The head as the server got it: pseudo-fields, lower-case names, no
    // connection-specific fields, Host as :authority.
    auto op2 = c->new_operation(Verb::GET, peer.url("/headers"));
    DEFER(op2->destroy());
    op2->req.headers.insert("X-Custom", "v");
    op2->req.headers.insert("Connection", "keep-alive");
    ASSERT_EQ(0, op2->call()) << errno;
    std::string h = photon_test::body_of(op2);
    EXPECT_NE(std::string::npos, h.find(":method: GET\n")) << h;
    EXPECT_NE(std::string::npos, h.find(":scheme: http\n")) << h;
    EXPECT_NE(std::string::npos, h.find(":authority: 127.0.0.1:" + std::to_string(peer.port())))
        << h;
    EXPECT_NE(std::string::npos, h.find(":path: /headers\n")) << h;
    EXPECT_NE(std::string::npos, h.find("x-custom: v\n")) << h;
    EXPECT_EQ(std::string::npos, h.find("connection")) << h;
    EXPECT_EQ(std::string::npos, h.find("host:")) << h;
    EXPECT_EQ(1, peer.accepts.load());

    // Told HTTP/1.1, the same server cannot be reached (it speaks only h2).
    c->http_version(HttpVersion::Http1);
    auto op3 = c->new_operation(Verb::GET, peer.url("/hello"));
    DEFER(op3->destroy());
    op3->retry = 0;
    EXPECT_TRUE(op3->call() < 0 || op3->status_code != 200);
}

TEST_P(Http2HttpClient, FiftyCoroutinesShareOneConnection) {
    Peer peer;
    ASSERT_FALSE(peer.failed());
    auto client_owned = client();
    Client* c = client_owned.get();
    int ok = 0;
    std::vector<photon_test::task> tasks;
    for (int i = 0; i < 50; i++)
        tasks.push_back(photon_test::spawn([&, i] {
            size_t n = 1000 + 20011 * i;
            Client::OperationOnStack<> op(c, Verb::GET, peer.url("/big/" + std::to_string(n)));
            op.timeout = 30'000'000;
            if (op.call() == 0 && op.status_code == 200 &&
                op.http_version() == HttpVersion::Http2 &&
                photon_test::body_of(&op) == h2_pattern(n))
                ok++;
        }));
    for (auto& t : tasks) t.join();
    EXPECT_EQ(50, ok);
    EXPECT_EQ(1, peer.accepts.load()) << "one connection for the origin";
    EXPECT_EQ(50, peer.requests.load());
}

TEST_P(Http2HttpClient, EchoesAndHashesBodiesOfEachKind) {
    Peer peer;
    ASSERT_FALSE(peer.failed());
    auto client_owned = client();
    Client* c = client_owned.get();
    std::string data = h2_pattern(3 << 20);
    {  // set_body: echoed while it is sent (within the windows: the call
       // reads the answer only after sending the body)
        auto op = c->new_operation(Verb::POST, peer.url("/echo"));
        DEFER(op->destroy());
        std::string small = data.substr(0, 512 << 10);
        op->set_body(small);
        ASSERT_EQ(0, op->call()) << errno;
        EXPECT_EQ(200, op->status_code);
        EXPECT_TRUE(photon_test::body_of(op) == small);
    }
    {  // body_writer, no Content-Length: framed by the stream
        auto op = c->new_operation(Verb::POST, peer.url("/sha"));
        DEFER(op->destroy());
        auto writer = [&](Request* req) -> ssize_t { return req->write(data.data(), data.size()); };
        op->body_writer = writer;
        ASSERT_EQ(0, op->call()) << errno;
        EXPECT_EQ(sha256_hex(data) + " " + std::to_string(data.size()), photon_test::body_of(op));
    }
    {  // trailers
        auto op = c->new_operation(Verb::GET, peer.url("/trailers"));
        DEFER(op->destroy());
        ASSERT_EQ(0, op->call()) << errno;
        EXPECT_EQ("body", photon_test::body_of(op));
        EXPECT_EQ("1234", op->resp.trailers["x-checksum"]);
    }
    {  // request trailers from the body writer; pseudo and connection fields dropped
        auto op = c->new_operation(Verb::POST, peer.url("/req-trailers"));
        DEFER(op->destroy());
        int sent = -2, again = -2, again_errno = 0;
        auto writer = [&](Request* req) -> ssize_t {
            if (req->write(data.data(), data.size()) != (ssize_t)data.size()) return -1;
            Headers t;
            t.insert("X-Checksum", "abcd");
            t.insert("Connection", "close");
            t.insert("grpc-status", "0");
            sent = req->send(t);
            again = req->send(t);  // the stream has ended
            again_errno = errno;
            return sent;
        };
        op->body_writer = writer;
        ASSERT_EQ(0, op->call()) << errno;
        EXPECT_EQ(0, sent);
        EXPECT_EQ(-1, again);
        EXPECT_EQ(EINVAL, again_errno);
        EXPECT_EQ(HttpVersion::Http2, op->http_version());
        EXPECT_EQ(std::to_string(data.size()) + "\nx-checksum: abcd\ngrpc-status: 0\n",
                  photon_test::body_of(op));
    }
    EXPECT_EQ(1, peer.accepts.load());
}

TEST_P(Http2HttpClient, FollowsRedirectsAndKeepsToTheTimeout) {
    Peer peer;
    ASSERT_FALSE(peer.failed());
    auto client_owned = client();
    Client* c = client_owned.get();
    auto op = c->new_operation(Verb::GET, peer.url("/redirect"));
    DEFER(op->destroy());
    ASSERT_EQ(0, op->call()) << errno;
    EXPECT_EQ(200, op->status_code);
    EXPECT_EQ("hello\n", photon_test::body_of(op));
    EXPECT_EQ(peer.url("/hello"), op->url());

    auto slow = c->new_operation(Verb::GET, peer.url("/slow"));
    DEFER(slow->destroy());
    slow->timeout = 200'000;
    auto t0 = photon_test::Clock::now();
    errno = 0;
    EXPECT_EQ(-1, slow->call());
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_LT(photon_test::ms_since(t0), 1900.0) << "the call's timeout, not the server's delay";
    // The connection serves on (the timed-out stream was reset).
    auto again = c->new_operation(Verb::GET, peer.url("/hello"));
    DEFER(again->destroy());
    ASSERT_EQ(0, again->call()) << errno;
    EXPECT_EQ("hello\n", photon_test::body_of(again));
    EXPECT_EQ(1, peer.accepts.load());
}

TEST_P(Http2HttpClient, ARequestRefusedWithGoawayIsRetriedOnANewConnection) {
    Peer peer;
    ASSERT_FALSE(peer.failed());
    auto client_owned = client();
    Client* c = client_owned.get();
    auto op = c->new_operation(Verb::POST, peer.url("/goaway-once"));  // not idempotent
    DEFER(op->destroy());
    op->set_body("x");
    ASSERT_EQ(0, op->call()) << errno;
    EXPECT_EQ(200, op->status_code);
    EXPECT_EQ("ok", photon_test::body_of(op));
    EXPECT_EQ(2, peer.accepts.load());
    EXPECT_EQ(2, peer.requests.load());
}

TEST_P(Http2HttpClient, SpeaksH2ByAlpnAndFallsBackWhereItIsNotChosen) {
    auto& pki = photon_test::test_pki::get();
    if (!pki.ok()) GTEST_SKIP() << "no openssl CLI for the test certificates";
    Peer peer(true);
    ASSERT_FALSE(peer.failed());
    auto client_owned = client();
    Client* c = client_owned.get();
    c->http_version(HttpVersion::Auto);  // h2 by ALPN needs no asking
    std::string sha = h2_pattern(1 << 20);
    HttpVersion v = HttpVersion::Auto;
    EXPECT_EQ(sha256_hex(sha) + " " + std::to_string(sha.size()),
              get_sha(c, peer.url("/big/" + std::to_string(1 << 20), true), &v));
    EXPECT_EQ(HttpVersion::Http2, v);

    // An HTTP/1.1-only TLS server (ALPN chooses nothing) and an HTTP/1.1
    // plain one asked for h2c: both answer as HTTP/1.1.
    std::unique_ptr<TLSContext> sctx(
        new_tls_context(pki.pem("srv.pem").c_str(), pki.pem("srv.key").c_str()));
    auto srv = new_tls_server(sctx.get(), photon_test::scripted_server::listening_tcp(), true);
    ASSERT_NE(nullptr, srv);
    photon_test::scripted_server h1tls(srv, [](Request&, Response& resp, ISocketStream*) {
        return photon_test::reply(resp, "h1");
    });
    photon_test::scripted_server h1(
        [](Request&, Response& resp, ISocketStream*) { return photon_test::reply(resp, "h1"); });
    c->http_version(HttpVersion::Http2);
    for (auto url : {"https://localhost:" + std::to_string(h1tls.port()) + "/x", h1.url("/x")}) {
        for (int i = 0; i < 2; i++) {
            auto op = c->new_operation(Verb::GET, url);
            DEFER(op->destroy());
            ASSERT_EQ(0, op->call()) << url << " " << errno;
            EXPECT_EQ(200, op->status_code);
            EXPECT_EQ(HttpVersion::Http1, op->http_version());
            EXPECT_EQ("h1", photon_test::body_of(op));
        }
    }
    EXPECT_EQ(1, h1tls.accepts) << "the ALPN probe's connection served as HTTP/1.1, pooled";
    EXPECT_EQ(2, h1.accepts) << "the h2c preface, then one HTTP/1.1 connection";
}

// kBig bytes down (sha256 checked) and up, then 50 coroutines at once, over
// h2c (base_c) and h2 (base_s). `uploaded` gives the sha256 and size the
// server saw of an upload, from its answer and the path it went to.
void big_both_ways(
    Client* c, const std::string& base_c, const std::string& base_s, const std::string& big_sha,
    const std::string& up_path,
    const std::function<std::string(const std::string&, const std::string&)>& uploaded) {
    std::string expect = big_sha + " " + std::to_string(kBig);
    for (auto base : {base_c, base_s}) {
        SCOPED_TRACE(base);
        HttpVersion v = HttpVersion::Auto;
        auto t0 = photon_test::Clock::now();
        EXPECT_EQ(expect, get_sha(c, base + "/big.bin", &v));
        EXPECT_EQ(HttpVersion::Http2, v);
        double down = photon_test::ms_since(t0);
        std::string path = up_path + (base == base_c ? "c.bin" : "s.bin"), answer;
        t0 = photon_test::Clock::now();
        int st = upload(c, Verb::PUT, base + path, kBig, &answer, &v);
        double up = photon_test::ms_since(t0);
        EXPECT_TRUE(st == 200 || st == 201 || st == 204) << st << " " << answer;
        EXPECT_EQ(HttpVersion::Http2, v);
        EXPECT_EQ(expect, uploaded(answer, path));
        printf("  %s: %zu MiB down in %.0f ms, up in %.0f ms\n", base.c_str(), kBig >> 20, down,
               up);

        int ok = 0;
        std::vector<photon_test::task> tasks;
        for (int i = 0; i < 50; i++)
            tasks.push_back(photon_test::spawn([&] {
                Client::OperationOnStack<> op(c, Verb::GET, base + "/small.bin");
                op.timeout = 30'000'000;
                if (op.call() == 0 && op.status_code == 200 &&
                    op.http_version() == HttpVersion::Http2 &&
                    photon_test::body_of(&op) == h2_pattern(64 << 10))
                    ok++;
            }));
        for (auto& t : tasks) t.join();
        EXPECT_EQ(50, ok);
    }
}

TEST_P(Http2HttpClient, TalksToNginxOverH2cAndH2) {
    auto& pki = photon_test::test_pki::get();
    if (!pki.ok()) GTEST_SKIP() << "no openssl CLI for the test certificates";
    if (!photon_test::have_tool("nginx")) GTEST_SKIP() << "no nginx";
    photon_test::temp_dir tmp;
    uint16_t h2c = photon_test::free_loopback_port(), h2 = photon_test::free_loopback_port();
    std::string big_sha = write_big(tmp, "www/big.bin", kBig);
    tmp.write("www/small.bin", h2_pattern(64 << 10));
    std::filesystem::create_directories(tmp.path("www/up"));
    photon_test::nginx_server ngx(
        tmp, "listen 127.0.0.1:" + std::to_string(h2c) + " http2;\n    listen 127.0.0.1:" +
                 std::to_string(h2) + " ssl http2;\n    ssl_certificate " + pki.path("srv.pem") +
                 ";\n    ssl_certificate_key " + pki.path("srv.key") +
                 ";\n    client_max_body_size 0;\n    location /up/ { dav_methods PUT; }");
    if (!ngx.ok()) GTEST_SKIP() << "nginx did not start: " << ngx.error_log();
    ASSERT_TRUE(photon_test::wait_until_listening(h2c) && photon_test::wait_until_listening(h2));
    auto client_owned = client();
    Client* c = client_owned.get();
    big_both_ways(c, "http://127.0.0.1:" + std::to_string(h2c),
                  "https://localhost:" + std::to_string(h2), big_sha, "/up/",
                  [&](const std::string&, const std::string& path) {
                      std::string got = photon_test::slurp(tmp.path("www" + path));
                      return sha256_hex(got) + " " + std::to_string(got.size());
                  });
    // Each origin had one connection: its 102 requests share an nginx $connection.
    EXPECT_EQ(2u, ngx.connections("HTTP/2.0").size()) << ngx.access_log().substr(0, 2000);
    EXPECT_EQ(0u, ngx.connections("HTTP/1.1").size());
}

TEST_P(Http2HttpClient, TalksToH2oOverH2cAndH2) {
    auto& pki = photon_test::test_pki::get();
    if (!pki.ok()) GTEST_SKIP() << "no openssl CLI for the test certificates";
    if (!photon_test::have_tool("h2o")) GTEST_SKIP() << "no h2o";
    photon_test::temp_dir tmp;
    std::string big_sha = write_big(tmp, "www/big.bin", kBig);
    tmp.write("www/small.bin", h2_pattern(64 << 10));
    // Uploads go through h2o's proxy to an HTTP/1.1 server of ours that hashes them.
    photon_test::scripted_server hasher([](Request& req, Response& resp, ISocketStream*) {
        photon::sha256 d;
        std::unique_ptr<char[]> buf(new char[1 << 20]);
        size_t total = 0;
        ssize_t n;
        while ((n = req.read(buf.get(), 1 << 20)) > 0) d.update(buf.get(), n), total += n;
        return photon_test::reply(resp, hex(d.finalize()) + " " + std::to_string(total));
    });
    uint16_t h2c = photon_test::free_loopback_port(), h2 = photon_test::free_loopback_port();
    std::string t = tmp.path();
    // As root, h2o would serve as "nobody", who may not read our temp dir.
    std::string user = geteuid() == 0 ? "user: root\n" : "";
    tmp.write("h2o.conf", user + "error-log: " + t + "/error.log\n" + "access-log:\n  path: " + t +
                              "/access.log\n" + "  format: \"%{connection-id}x %r %s\"\n" +
                              "listen:\n  host: 127.0.0.1\n  port: " + std::to_string(h2c) + "\n" +
                              "listen:\n  host: 127.0.0.1\n  port: " + std::to_string(h2) + "\n" +
                              "  ssl:\n    certificate-file: " + pki.path("srv.pem") +
                              "\n    key-file: " + pki.path("srv.key") + "\n" +
                              "hosts:\n  \"127.0.0.1\":\n    paths:\n" +
                              "      /up:\n        proxy.reverse.url: " + hasher.url("/up") +
                              "\n      /:\n        file.dir: " + t + "/www\n");
    photon_test::child_process h2o({"h2o", "-c", tmp.path("h2o.conf")}, "", tmp.path("h2o.out"));
    if (!h2o.started() || !photon_test::wait_until_listening(h2c) ||
        !photon_test::wait_until_listening(h2))
        GTEST_SKIP() << "h2o did not start: " << photon_test::slurp(tmp.path("h2o.out"))
                     << photon_test::slurp(tmp.path("error.log"));
    auto client_owned = client();
    Client* c = client_owned.get();
    big_both_ways(c, "http://127.0.0.1:" + std::to_string(h2c),
                  "https://localhost:" + std::to_string(h2), big_sha, "/up/",
                  [](const std::string& answer, const std::string&) { return answer; });
    std::string log = photon_test::slurp(tmp.path("access.log"));
    std::set<std::string> conns;
    std::istringstream in(log);
    for (std::string line; std::getline(in, line);)
        if (line.find("HTTP/2") != std::string::npos) conns.insert(line.substr(0, line.find(' ')));
    EXPECT_EQ(2u, conns.size()) << log.substr(0, 2000);
}

PHOTON_INSTANTIATE_ENGINE_TESTS(Http2HttpClient);

}  // namespace
