// new_fs_handler through new_http_server (under a pattern) and against curl:
// ranges, HEAD, If-Modified-Since, keep-alive over several URLs, escapes.
#include "http_fs_handler_test_util.h"

using namespace photon;
using namespace photon::net;
using namespace photon::net::http;
using namespace photon_test;
using namespace fs_handler_test;

// ---- through new_http_server, and curl -------------------------------------

class FsHandlerServer : public FsHandler {
protected:
    void TearDown() override {
        if (tcp) tcp->terminate();
        tcp.reset();
        http.reset();
        FsHandler::TearDown();
    }
    // Serves fs (owned) under "/static/" on a new HTTP server.
    void serve_http(fs::IFileSystem* f) {
        tcp.reset();
        http.reset();
        fs.reset(f);
        ASSERT_NE(nullptr, f) << strerror(errno);
        http.reset(new_http_server());
        ASSERT_NE(nullptr, http);
        http->add_handler(new_fs_handler(f), true, "/static/");
        tcp.reset(new_tcp_socket_server());
        tcp->set_handler(http->get_connection_handler());
        ASSERT_EQ(0, tcp->bind_v4localhost(0));
        ASSERT_EQ(0, tcp->listen());
        ASSERT_EQ(0, tcp->start_loop(false));
        base = "http://127.0.0.1:" + std::to_string(tcp->getsockname().port);
    }
    std::unique_ptr<client> connect_http() {
        return std::unique_ptr<client>(new client(new_tcp_socket_client(), tcp->getsockname()));
    }
    // Runs curl with args; its stdout (with -D- headers) or "" on failure.
    std::string curl(std::vector<std::string> args) {
        std::string out = t->dir / "curl.out";
        args.insert(args.begin(), {"curl", "-s", "--max-time", "20"});
        child_process p(args, "", out);
        if (!p.started()) return "";
        int st = p.wait(30000);
        EXPECT_EQ(0, st) << "curl failed";
        return slurp(out);
    }

    std::unique_ptr<HTTPServer> http;
    std::unique_ptr<ISocketServer> tcp;
    std::string base;
};

TEST_P(FsHandlerServer, ServesUnderAPatternThroughTheServer) {
    for (auto& k : fs_kinds()) {
        if (libaio_unusable(k)) continue;
        SCOPED_TRACE(k.name);
        serve_http(k.make(t->root));
        auto c = connect_http();
        ASSERT_TRUE(c->connected());
        reply r = c->get("/static/a.txt");
        ASSERT_EQ(200, r.status);
        EXPECT_EQ(t->small, r.body);
        EXPECT_TRUE(r.headers.has("Date"));
        r = c->get("/static/big.bin");
        ASSERT_EQ(200, r.status);
        EXPECT_TRUE(r.body == t->big) << "body differs, size " << r.body.size();
        r = c->get("/static/4k.bin", "Range: bytes=-100\r\n");
        ASSERT_EQ(206, r.status);
        EXPECT_TRUE(r.body == t->k4.substr(4096 - 100));
        r = c->get("/static/");
        EXPECT_EQ(200, r.status);
        EXPECT_EQ("<h1>root</h1>", r.body);
        r = c->get("/static/dir");
        EXPECT_EQ(301, r.status);
        EXPECT_EQ("/static/dir/", r["Location"]);
        EXPECT_EQ(400, c->get("/static/../static/a.txt").status);
        EXPECT_EQ(400, c->get("/static/%2e%2e/a.txt").status);
        EXPECT_EQ(400, c->get("/static/a%00").status);
        if (k.name.rfind("localfs", 0) == 0) {  // subfs: symlinks resolve inside the root
            EXPECT_EQ(404, c->get("/static/escape_rel").status);
            EXPECT_EQ(404, c->get("/static/escape_abs").status);
        }
        r = c->get("/static/a.txt", "", Verb::HEAD);
        EXPECT_EQ(200, r.status);
        EXPECT_EQ(std::to_string(t->small.size()), r["Content-Length"]);
        std::string etag(c->get("/static/100k.bin")["ETag"]);
        EXPECT_EQ(304, c->get("/static/100k.bin", "If-None-Match: " + etag + "\r\n").status);
        EXPECT_EQ(405, c->get("/static/a.txt", "Content-Length: 0\r\n", Verb::POST).status);
        EXPECT_EQ(200, c->get("/static/a.txt").status);  // still the same connection
    }
}

TEST_P(FsHandlerServer, AnswersCurl) {
    if (!have_tool("curl")) GTEST_SKIP() << "curl is not installed";
    for (auto& k : fs_kinds()) {
        if (libaio_unusable(k) || k.name == "nofd") continue;
        SCOPED_TRACE(k.name);
        serve_http(k.make(t->root));
        // The big file (sendfile from a local fd), byte for byte.
        std::string body = t->dir / "big.out";
        std::string out =
            curl({"-o", body, "-w", "%{http_code} %{size_download}", base + "/static/big.bin"});
        EXPECT_EQ("200 " + std::to_string(kBig), out);
        EXPECT_TRUE(slurp(body) == t->big);

        out = curl({"-D-", "-o", body, "--range", "10-19", base + "/static/100k.bin"});
        EXPECT_EQ(0u, out.find("HTTP/1.1 206 Partial Content\r\n")) << out;
        EXPECT_NE(std::string::npos, out.find("Content-Range: bytes 10-19/102400\r\n")) << out;
        EXPECT_EQ(t->k100.substr(10, 10), slurp(body));

        out = curl({"-I", base + "/static/4k.bin"});
        EXPECT_EQ(0u, out.find("HTTP/1.1 200 OK\r\n")) << out;
        EXPECT_NE(std::string::npos, out.find("Content-Length: 4096\r\n")) << out;
        EXPECT_NE(std::string::npos, out.find("Accept-Ranges: bytes\r\n")) << out;

        // -z: If-Modified-Since from a file's mtime (ours: not modified since).
        out = curl(
            {"-o", body, "-w", "%{http_code}", "-z", t->root + "/4k.bin", base + "/static/4k.bin"});
        EXPECT_EQ("304", out);
        out = curl({"-o", body, "-w", "%{http_code}", "-z", "Sun, 06 Nov 1994 08:49:37 GMT",
                    base + "/static/4k.bin"});
        EXPECT_EQ("200", out);

        // Keep-alive: several URLs over one connection.
        out = curl({"--http1.1", "-w", "%{http_code} %{num_connects} %{size_download}\n", "-o",
                    "/dev/null", base + "/static/4k.bin", "-o", "/dev/null",
                    base + "/static/100k.bin", "-o", "/dev/null", base + "/static/missing", "-o",
                    "/dev/null", base + "/static/big.bin"});
        EXPECT_EQ("200 1 4096\n200 0 102400\n404 0 14\n200 0 " + std::to_string(kBig) + "\n", out);

        // Paths as they are sent: dot segments, encoded dots and NUL, slashes.
        for (auto& pc : std::vector<std::pair<std::string, std::string>>{
                 {"/static/../static/a.txt", "400"},
                 {"/static/%2e%2e/a.txt", "400"},
                 {"/static/dir/..%2F..%2Fa.txt", "400"},
                 {"/static/a.txt%00", "400"},
                 {"/static//a.txt", "200"},
                 {"/static/dir/../a.txt", "200"},
             }) {
            out = curl({"--path-as-is", "-o", "/dev/null", "-w", "%{http_code}", base + pc.first});
            EXPECT_EQ(pc.second, out) << pc.first;
        }
        if (k.name.rfind("localfs", 0) == 0) {
            out = curl({"-w", "%{http_code}", base + "/static/escape_abs"});
            EXPECT_EQ("404 Not Found\n404", out);
        }
    }
}

PHOTON_INSTANTIATE_ENGINE_TESTS(FsHandlerServer);
