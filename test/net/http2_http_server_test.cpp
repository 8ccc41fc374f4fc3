// The HTTP server (new_http_server) speaking HTTP/2 on the listener that
// serves HTTP/1.1: h2c with prior knowledge and by Upgrade, h2 over TLS by
// ALPN, each stream running the same handlers. Against real clients: curl,
// h2load and h2spec (every case must pass, h2c and h2); a 100 MiB file and a
// 100 MiB upload with their sha256 checked; a handler that fails mid-body;
// a graceful stop() with a request in flight. A missing peer skips its test.
#include <unistd.h>

#include <photon/fs/localfs.h>
#include <photon/net/http/server.h>
#include <photon/net/security-context/tls-stream.h>
#include <photon/net/socket.h>
#include <photon/photon.h>
#include <photon/thread/thread-local.h>
#include <photon/thread/thread.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "../../net/http2/client_connection.h"
#include "../util/temp_dir.h"
#include "../util/wait.h"
#include "http2_test_util.h"
#include "tls_test_util.h"

namespace {

using namespace photon::net;
using namespace photon::net::http;
using photon_test::curl_http2_missing;
using photon_test::expect_h2spec_passes;
using photon_test::h2_pattern;
using photon_test::h2spec_path;
using photon_test::have_tool;
using photon_test::run_command;

// What the last /trailers-cl handler's send(trailers) returned (errno if -1).
std::atomic<int> g_trailers_result{-2};

// The handlers: /hello, /echo (the body back, no Content-Length), /slow
// (answers after 300 ms), /fail (declares 1000 bytes, writes 10 and fails),
// /trailers (the request body's size and trailers back, then trailers of its
// own: x-checksum, the size), /trailers-cl (the same with a Content-Length),
// /files/ (the fixture's directory) and / (128 KiB: h2spec needs a body past
// the initial window).
int handle(Request& req, Response& resp, std::string_view) {
    std::string_view path = req.abs_path();
    if (path == "/trailers" || path == "/trailers-cl") {
        char buf[65536];
        size_t total = 0;
        ssize_t n;
        while ((n = req.read(buf, sizeof(buf))) > 0) total += n;
        if (n < 0) return -1;
        std::string v = "got " + std::to_string(total) + ";";
        for (auto f : req.trailers) v.append(" ").append(f.first).append("=").append(f.second);
        if (path == "/trailers-cl") resp.headers.content_length(v.size());
        if (resp.write(v.data(), v.size()) != (ssize_t)v.size()) return -1;
        Headers t;
        t.insert("X-Checksum", std::to_string(total));
        int r = resp.send(t);
        if (path == "/trailers-cl") g_trailers_result = r < 0 ? errno : 0;
        return r < 0 && path == "/trailers" ? -1 : 0;
    }
    if (path == "/hello") {
        resp.headers.content_length(6);
        return resp.write("hello\n", 6) == 6 ? 0 : -1;
    }
    if (path == "/echo") {
        char buf[65536];
        ssize_t n;
        while ((n = req.read(buf, sizeof(buf))) > 0)
            if (resp.write(buf, n) != n) return -1;
        return n < 0 ? -1 : 0;
    }
    if (path == "/slow") {
        photon::thread_usleep(300'000);
        resp.headers.content_length(5);
        return resp.write("slow\n", 5) == 5 ? 0 : -1;
    }
    if (path == "/fail") {
        resp.headers.content_length(1000);
        resp.write("0123456789", 10);
        return -1;
    }
    if (path == "/version") {  // what the handler sees of the request
        std::string v = std::string(verbstr[req.verb()]) + " " + std::string(req.target()) + " " +
                        std::string(req.host()) + " " + std::string(req.headers["Cookie"]);
        resp.headers.content_length(v.size());
        return resp.write(v.data(), v.size()) == (ssize_t)v.size() ? 0 : -1;
    }
    if (path == "/served") {  // requests this coroutine has served
        static photon::thread_local_ptr<int> served;
        std::string v = std::to_string(++*served);
        resp.headers.content_length(v.size());
        return resp.write(v.data(), v.size()) == (ssize_t)v.size() ? 0 : -1;
    }
    if (path == "/") {
        std::string body = h2_pattern(128 << 10);
        resp.headers.content_length(body.size());
        return resp.write(body.data(), body.size()) == (ssize_t)body.size() ? 0 : -1;
    }
    resp.set_result(404);
    resp.headers.content_length(0);
    return 0;
}

class Handlers : public HTTPHandler {
    int handle_request(Request& req, Response& resp, std::string_view p) override {
        return handle(req, resp, p);
    }
};

// An HTTPServer on a TCP (or TLS, offering h2 and http/1.1) listener of
// 127.0.0.1, on a vCPU of its own thread.
class Server {
public:
    explicit Server(const std::string& files, bool tls = false, ServerOptions opt = {}) {
        th_ = std::thread([=] { run(files, tls, opt); });
        // (An OS thread's wait: the caller need not be a vCPU.)
        EXPECT_TRUE(photon_test::wait_for_off_vcpu([this] { return port_ != 0 || failed_; },
                                                   photon_test::kServerStartMs))
            << "the server never listened";
    }
    ~Server() {
        done_ = true;
        th_.join();
    }
    uint16_t port() const { return port_; }
    bool failed() const { return failed_; }
    // Calls stop() on the server's vCPU: its result.
    int stop() {
        stop_ = true;
        // Blocks this OS thread, vCPU or not, as long as stop() may take (10 s) and then some.
        EXPECT_TRUE(photon_test::wait_for_off_vcpu([this] { return stop_result_ != 1; }, 30'000))
            << "stop() did not return";
        return stop_result_;
    }

private:
    void run(const std::string& files, bool tls, ServerOptions opt) {
        if (photon::init(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE) != 0) {
            failed_ = true;
            return;
        }
        {
            std::unique_ptr<TLSContext> ctx;
            ISocketServer* base = new_tcp_socket_server();
            if (tls) {
                auto& pki = photon_test::test_pki::get();
                ctx.reset(new_tls_context(pki.pem("srv.pem").c_str(), pki.pem("srv.key").c_str()));
                if (!ctx || ctx->set_alpn_protos({"h2", "http/1.1"}) < 0)
                    failed_ = true;
                else
                    base = new_tls_server(ctx.get(), base, true);
            }
            std::unique_ptr<ISocketServer> tcp(base);
            std::unique_ptr<photon::fs::IFileSystem> fs(
                photon::fs::new_localfs_adaptor(files.c_str()));
            std::unique_ptr<HTTPServer> http(new_http_server(opt));
            http->add_handler(new_fs_handler(fs.get()), true, "/files/");
            http->add_handler(new Handlers, true);
            tcp->set_handler(http->get_connection_handler());
            if (!failed_ && tcp->bind_v4localhost(0) == 0 && tcp->listen() == 0 &&
                tcp->start_loop(false) == 0)
                port_ = tcp->getsockname().port;
            else
                failed_ = true;
            while (!done_ && !failed_) {
                if (stop_ && stop_result_ == 1) stop_result_ = http->stop(10'000'000);
                photon::thread_usleep(5'000);
            }
            tcp->terminate();
        }
        photon::fini();
    }

    std::thread th_;
    std::atomic<uint16_t> port_{0};
    std::atomic<bool> failed_{false}, done_{false}, stop_{false};
    std::atomic<int> stop_result_{1};
};

class Http2HttpServer : public ::testing::Test {
protected:
    void SetUp() override {
        auto why = curl_http2_missing();
        if (!why.empty()) GTEST_SKIP() << why;
        ASSERT_TRUE(dir_.ok());
        server_.reset(new Server(dir_.path()));
        ASSERT_FALSE(server_->failed());
        base_ = "http://127.0.0.1:" + std::to_string(server_->port());
    }
    // curl's stdout; *status its exit status (else expected 0).
    std::string curl(const std::string& args, int* status = nullptr) {
        std::string out;
        int st = run_command("curl -s --max-time 60 " + args, &out);
        if (status)
            *status = st;
        else
            EXPECT_EQ(0, st) << args;
        return out;
    }
    std::string file(const std::string& name) { return dir_.path() + "/" + name; }

    photon_test::temp_dir dir_;
    std::unique_ptr<Server> server_;
    std::string base_;
};

const char* kPrior = "--http2-prior-knowledge ";
const char* kVersion = "-o /dev/null -w '%{http_version} %{http_code}' ";

TEST_F(Http2HttpServer, PriorKnowledgeRunsTheHandlers) {
    EXPECT_EQ("hello\n", curl(kPrior + base_ + "/hello"));
    EXPECT_EQ("2 200", curl(kPrior + std::string(kVersion) + base_ + "/hello"));
    EXPECT_EQ("2 404", curl(kPrior + std::string(kVersion) + base_ + "/nothing"));
    // :authority is the Host; cookie crumbs are joined again.
    EXPECT_EQ(
        "GET /version?q=1 127.0.0.1:" + std::to_string(server_->port()) + " a=1; b=2",
        curl(kPrior + std::string("-H 'Cookie: a=1' -H 'Cookie: b=2' ") + base_ + "/version?q=1"));
    std::string head = curl(kPrior + std::string("-sI ") + base_ + "/hello");
    EXPECT_NE(std::string::npos, head.find("HTTP/2 200")) << head;
    EXPECT_NE(std::string::npos, head.find("server: photon")) << head;
    EXPECT_NE(std::string::npos, head.find("content-length: 6")) << head;
    EXPECT_EQ(std::string::npos, head.find("connection:")) << head;
}

TEST_F(Http2HttpServer, HTTP11StillServedOnTheSameListener) {
    EXPECT_EQ("1.1 200", curl("--http1.1 " + std::string(kVersion) + base_ + "/hello"));
}

TEST_F(Http2HttpServer, UpgradeToH2cForARequestWithoutBody) {
    EXPECT_EQ("2 200", curl("--http2 " + std::string(kVersion) + base_ + "/hello"));
    EXPECT_EQ("hello\n", curl("--http2 " + base_ + "/hello"));
    // 128 KiB: the answer waits for the preface (curl 7.88 fails on more than
    // 32 KiB of HTTP/2 in the read that brings the 101).
    for (int i = 0; i < 20; i++)
        ASSERT_EQ("2 200", curl("--http2 " + std::string(kVersion) + base_ + "/")) << i;
    // With a body the request is answered as HTTP/1.1 (no upgrade).
    EXPECT_EQ("abc", curl("--http2 --data-binary abc " + base_ + "/echo"));
}

TEST_F(Http2HttpServer, ManyStreamsAtOnceOnOneConnection) {
    if (!have_tool("h2load")) GTEST_SKIP() << "h2load not installed (Debian nghttp2-client)";
    std::string out;
    int st = run_command("h2load -n 400 -c 2 -m 32 " + base_ + "/hello 2>&1", &out);
    EXPECT_EQ(0, st) << out;
    EXPECT_NE(std::string::npos, out.find("400 succeeded, 0 failed, 0 errored")) << out;
    EXPECT_NE(std::string::npos, out.find("status codes: 400 2xx")) << out;
}

// nghttp (nghttp2-client): 20 requests at once on one connection, by prior
// knowledge and by Upgrade, and an upload.
TEST_F(Http2HttpServer, NghttpTalksToIt) {
    if (!have_tool("nghttp")) GTEST_SKIP() << "nghttp not installed (Debian nghttp2-client)";
    for (const char* how : {"", "-u "}) {
        std::string out;
        int st = run_command(
            "timeout 30 nghttp -v -m 20 " + std::string(how) + base_ + "/hello 2>&1", &out);
        EXPECT_EQ(0, st) << how << out.substr(0, 3000);
        size_t n = 0;
        for (size_t at = 0; (at = out.find(":status: 200", at)) != std::string::npos; at++) n++;
        EXPECT_EQ(20u, n) << how;
    }
    std::ofstream(file("up")) << std::string(300000, 'u');
    std::string out;
    EXPECT_EQ(0, run_command("timeout 30 nghttp -d " + file("up") + " " + base_ + "/echo", &out));
    EXPECT_EQ(std::string(300000, 'u'), out);
}

// Trailers both ways over HTTP/2: nghttp's request trailer reaches the
// handler (req.trailers), the handler's reach nghttp as a trailing HEADERS
// frame, with or without a Content-Length.
TEST_F(Http2HttpServer, TrailersGoBothWays) {
    if (!have_tool("nghttp")) GTEST_SKIP() << "nghttp not installed (Debian nghttp2-client)";
    std::ofstream(file("t")) << std::string(1000, 't');
    for (const char* path : {"/trailers", "/trailers-cl"}) {
        g_trailers_result = -2;
        std::string out;
        EXPECT_EQ(0, run_command("timeout 30 nghttp -v --trailer='x-req: r1' -d " + file("t") +
                                     " " + base_ + path + " 2>&1",
                                 &out));
        EXPECT_NE(std::string::npos, out.find("got 1000; x-req=r1")) << out.substr(0, 3000);
        EXPECT_NE(std::string::npos, out.find("x-checksum: 1000")) << out.substr(0, 3000);
    }
    EXPECT_EQ(0, g_trailers_result.load());  // HTTP/2 carries them past a Content-Length
}

// And over HTTP/1.1: a chunked request's trailer reaches the handler, the
// handler's follow the last chunk of its chunked response; a response framed
// by Content-Length cannot carry them (EINVAL) and is answered whole.
TEST_F(Http2HttpServer, TrailersOverHttp11ChunkedBodies) {
    if (!have_tool("python3")) GTEST_SKIP() << "python3 not installed";
    auto raw = [&](const std::string& path) {
        std::string out;
        EXPECT_EQ(0, run_command("python3 -c \"import socket,sys\n"
                                 "s=socket.create_connection(('127.0.0.1'," +
                                     std::to_string(server_->port()) +
                                     "))\n"
                                     "s.sendall(b'POST " +
                                     path +
                                     " HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n"
                                     "Transfer-Encoding: chunked\\r\\n\\r\\n5\\r\\nhello\\r\\n"
                                     "0\\r\\nx-req: r1\\r\\n\\r\\n')\n"
                                     "d=b''\n"
                                     "while True:\n"
                                     " b=s.recv(65536)\n"
                                     " if not b: break\n"
                                     " d+=b\n"
                                     "sys.stdout.write(d.decode())\"",
                                 &out));
        return out;
    };
    std::string out = raw("/trailers");
    EXPECT_NE(std::string::npos, out.find("Transfer-Encoding: chunked")) << out;
    EXPECT_NE(std::string::npos, out.find("got 5; x-req=r1")) << out;
    EXPECT_NE(std::string::npos, out.find("\r\n0\r\nX-Checksum: 5\r\n\r\n")) << out;
    g_trailers_result = -2;
    out = raw("/trailers-cl");
    EXPECT_EQ(EINVAL, g_trailers_result.load());
    EXPECT_NE(std::string::npos, out.find("Content-Length: 15")) << out;
    EXPECT_EQ(out.size() - 15, out.find("got 5; x-req=r1")) << out;  // the body ends it
}

// 100 MiB both ways, checked with sha256sum: a file through the static
// file handler, and an upload echoed back while it is being sent.
TEST_F(Http2HttpServer, HundredMiBDownloadAndUploadKeepEveryByte) {
    if (!have_tool("sha256sum")) GTEST_SKIP() << "no sha256sum";
    size_t size = 100 << 20;
    {
        std::ofstream f(file("big"), std::ios::binary);
        std::string chunk = h2_pattern(1 << 20);
        for (size_t i = 0; i < size >> 20; i++) {
            chunk[i % chunk.size()] ^= (char)i;  // no two MiB alike
            f << chunk;
        }
    }
    auto sha = [&](const std::string& path) {
        std::string out;
        run_command("sha256sum " + path + " | cut -c1-64", &out);
        return out;
    };
    std::string want = sha(file("big"));
    ASSERT_EQ(65u, want.size());
    curl(kPrior + std::string("-o ") + file("down") + " " + base_ + "/files/big");
    EXPECT_EQ(want, sha(file("down")));
    curl(kPrior + std::string("--data-binary @") + file("big") + " -o " + file("up") + " " + base_ +
         "/echo");
    EXPECT_EQ(want, sha(file("up")));
}

TEST_F(Http2HttpServer, AHandlerFailingMidBodyResetsItsStream) {
    int st = 0;
    std::string body = curl(kPrior + base_ + "/fail", &st);
    EXPECT_NE(0, st);  // curl: the stream was reset (92) or the body cut short
    EXPECT_LT(body.size(), 1000u);
    EXPECT_EQ("hello\n", curl(kPrior + base_ + "/hello"));  // the server goes on
}

TEST_F(Http2HttpServer, StopFinishesTheStreamInFlight) {
    std::string out;
    std::thread slow([&] { out = curl(kPrior + base_ + "/slow"); });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the request is in
    EXPECT_EQ(0, server_->stop());
    slow.join();
    EXPECT_EQ("slow\n", out);
    int st = 0;
    curl(kPrior + base_ + "/hello", &st);
    EXPECT_NE(0, st);  // new connections are closed at once
}

TEST_F(Http2HttpServer, HeaderListPastTheLimitGets431) {
    std::string big(40 << 10, 'x');  // past the default 32 KiB max_head_size
    EXPECT_EQ("2 431",
              curl(kPrior + std::string(kVersion) + "-H 'X-Big: " + big + "' " + base_ + "/hello"));
}

// Our HTTP/2 client connection against the server, for what curl cannot
// send: a body that never comes, a method the server does not know.
class Http2HttpServerLimits : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_EQ(0, photon::init(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE));
        ASSERT_TRUE(dir_.ok());
        ServerOptions opt;
        opt.body_timeout = 200'000;
        opt.send_timeout = 300'000;
        opt.limits.max_body_size = 1000;
        opt.http2_max_concurrent_streams = 3;
        server_.reset(new Server(dir_.path(), false, opt));
        ASSERT_FALSE(server_->failed());
        cli_.reset(new_tcp_socket_client());
        conn_ = connect(&sock_, {});
        ASSERT_NE(nullptr, conn_);
    }
    std::unique_ptr<http2::client_connection> connect(std::unique_ptr<ISocketStream>* sock,
                                                      const http2::connection_options& o) {
        sock->reset(cli_->connect(EndPoint(IPAddr("127.0.0.1"), server_->port())));
        if (!*sock) return nullptr;
        std::unique_ptr<http2::client_connection> c(new http2::client_connection(sock->get(), o));
        return c->start() == 0 ? std::move(c) : nullptr;
    }
    void TearDown() override {
        conn_.reset();
        sock_.reset();
        cli_.reset();
        server_.reset();
        photon::fini();
    }
    // The body of a GET of path, "" on failure.
    std::string get(const char* path) {
        auto s = conn_->request(head("GET", path), true, 5'000'000);
        if (!s) return "";
        std::string body;
        char buf[4096];
        ssize_t n = s->response(5'000'000) == 200 ? 1 : -1;
        while (n > 0 && (n = s->read(buf, sizeof(buf), 5'000'000)) > 0) body.append(buf, n);
        conn_->release(s);
        return n == 0 ? body : "";
    }
    // The status of a request (its body, if any, then ends).
    int status(std::vector<http2::header_field> fields, std::string_view body = {},
               bool end = true) {
        auto s = conn_->request(fields, body.empty() && end, 5'000'000);
        if (!s) return -1;
        if (!body.empty()) s->write(body.data(), body.size());
        if (!body.empty() && end) s->finish();
        int st = s->response(5'000'000);
        conn_->release(s);
        return st;
    }
    static std::vector<http2::header_field> head(const char* method, const char* path) {
        return {
            {":method", method}, {":scheme", "http"}, {":authority", "127.0.0.1"}, {":path", path}};
    }

    photon_test::temp_dir dir_;
    std::unique_ptr<Server> server_;
    std::unique_ptr<ISocketClient> cli_;
    std::unique_ptr<ISocketStream> sock_;
    std::unique_ptr<http2::client_connection> conn_;
};

TEST_F(Http2HttpServerLimits, EachViolationGetsItsStatusAndTheConnectionGoesOn) {
    EXPECT_EQ(408, status(head("POST", "/echo"), {}, false));  // no body within body_timeout
    auto big = head("POST", "/echo");
    big.push_back({"content-length", "5000"});
    EXPECT_EQ(413, status(big, "x", false));  // past max_body_size
    EXPECT_EQ(501, status(head("BREW", "/hello")));

    EXPECT_EQ(200, status(head("GET", "/hello")));
    EXPECT_TRUE(conn_->usable());
}

// A peer that opens no window for the response body (SETTINGS_INITIAL_WINDOW_SIZE
// 0): the handler's write gives up after send_timeout and the stream is reset.
TEST_F(Http2HttpServerLimits, AZeroWindowStallEndsAfterSendTimeout) {
    http2::connection_options o;
    o.initial_window_size = 0;
    std::unique_ptr<ISocketStream> sock;
    auto c = connect(&sock, o);
    ASSERT_NE(nullptr, c);
    auto s = c->request(head("GET", "/"), true, 5'000'000);
    ASSERT_NE(nullptr, s);
    EXPECT_EQ(200, s->response(5'000'000));
    char buf[16];
    EXPECT_EQ(-1, s->read(buf, sizeof(buf), 5'000'000));
    EXPECT_EQ(ECONNRESET, errno);
    c->release(s);
    EXPECT_EQ(200, status(head("GET", "/hello")));  // others are served meanwhile
}

// ServerOptions::http2_max_concurrent_streams reaches the peer in SETTINGS:
// while three handlers run, our client's fourth request waits for a slot.
TEST_F(Http2HttpServerLimits, TheStreamLimitIsAnnouncedAndHeldTo) {
    std::vector<http2::client_stream*> slow;
    for (int i = 0; i < 3; i++)
        slow.push_back(conn_->request(head("GET", "/slow"), true, 1'000'000));
    photon::thread_usleep(50'000);  // the three are running
    EXPECT_EQ(nullptr, conn_->request(head("GET", "/hello"), true, 100'000));
    EXPECT_EQ(ETIMEDOUT, errno);
    for (auto s : slow) {
        ASSERT_NE(nullptr, s);
        EXPECT_EQ(200, s->response(5'000'000));
        conn_->release(s);
    }
    EXPECT_EQ(200, status(head("GET", "/hello")));
}

// A connection's handler coroutines are reused from one stream to the next,
// and leave once it has been quiet for 2 s (the next stream gets a new one).
// A loaded machine may run the server's timer late: a request that finds the
// coroutine still parked takes it, and the quiet period starts again.
TEST_F(Http2HttpServerLimits, HandlerCoroutinesAreReusedAndRetiredWhenQuiet) {
    EXPECT_EQ("1", get("/served"));
    EXPECT_EQ("2", get("/served"));
    EXPECT_EQ("3", get("/served"));
    std::string after;
    for (int i = 0; i < 4 && after != "1"; i++) {
        photon::thread_usleep(2'500'000);
        after = get("/served");
    }
    EXPECT_EQ("1", after);
}

// stop() with an idle HTTP/2 connection open: GOAWAY, and the connection
// ends at once (well within stop()'s 10 s, far from keepalive_timeout).
TEST_F(Http2HttpServerLimits, StopEndsAnIdleConnection) {
    EXPECT_EQ("hello\n", get("/hello"));
    EXPECT_EQ(0, server_->stop());
    // the GOAWAY came
    EXPECT_TRUE(photon_test::wait_for([&] { return !conn_->usable(); }));
}

// Why a TLS test cannot run here, or "".
std::string tls_why_not() {
    std::unique_ptr<TLSContext> probe(new_tls_context());
    if (!probe) return "built without TLS (OpenSSL)";
    return have_tool("openssl") ? "" : "the openssl CLI makes the test certificates";
}

// On a listener that serves HTTP/1.1 too, h2spec's "invalid connection
// preface" gets an HTTP/1.1 400 (as it should), which h2spec counts as a
// failure: h2c is checked on an HTTP/2-only listener.
TEST(Http2HttpServerConformance, H2specPassesEveryCaseOverH2c) {
    if (h2spec_path().empty()) GTEST_SKIP() << "h2spec not installed (tools/install-deps.sh)";
    photon_test::temp_dir dir;
    ServerOptions opt;
    opt.http2 = ServerOptions::Http2::Only;
    Server server(dir.path(), false, opt);
    ASSERT_FALSE(server.failed());
    expect_h2spec_passes(server.port(), "");
}

TEST(Http2HttpServerConformance, H2specPassesEveryCaseOverTLS) {
    if (h2spec_path().empty()) GTEST_SKIP() << "h2spec not installed (tools/install-deps.sh)";
    if (!tls_why_not().empty()) GTEST_SKIP() << tls_why_not();
    ASSERT_TRUE(photon_test::test_pki::get().ok()) << "certificate generation failed";
    photon_test::temp_dir dir;
    Server server(dir.path(), true);
    ASSERT_FALSE(server.failed());
    expect_h2spec_passes(server.port(), "-t -k");
}

// ALPN picks h2 over TLS, http/1.1 for a client that offers only that.
TEST(Http2HttpServerTLS, AlpnChoosesTheProtocol) {
    if (!curl_http2_missing().empty()) GTEST_SKIP() << curl_http2_missing();
    if (!tls_why_not().empty()) GTEST_SKIP() << tls_why_not();
    ASSERT_TRUE(photon_test::test_pki::get().ok()) << "certificate generation failed";
    photon_test::temp_dir dir;
    Server server(dir.path(), true);
    ASSERT_FALSE(server.failed());
    std::string url = "https://127.0.0.1:" + std::to_string(server.port()) + "/hello";
    std::string out;
    EXPECT_EQ(0,
              run_command("curl -sk --max-time 20 --http2 " + std::string(kVersion) + url, &out));
    EXPECT_EQ("2 200", out);
    out.clear();
    EXPECT_EQ(0,
              run_command("curl -sk --max-time 20 --http1.1 " + std::string(kVersion) + url, &out));
    EXPECT_EQ("1.1 200", out);
}

}  // namespace
