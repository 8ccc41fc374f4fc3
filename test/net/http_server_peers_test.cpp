// The HTTP server against real clients under both event engines: curl
// (keep-alive across URLs, uploads with 100-continue and chunked), Python's
// http.client (keep-alive, chunked upload, HEAD), ApacheBench with
// keep-alive (HTTP/1.0) and wrk. Each tool is skipped when missing.
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <string>

#include "../util/temp_dir.h"
#include "http_server_test_util.h"
#include "net_test_util.h"
#include "tls_test_util.h"

using namespace photon;
using namespace photon_test;

namespace {

int reply(Request& req, Response& resp, std::string_view body) {
    resp.headers.content_length(body.size());
    if (req.verb() == Verb::HEAD || body.empty()) return 0;
    return resp.write(body.data(), body.size()) == (ssize_t)body.size() ? 0 : -1;
}

int text(void*, Request& req, Response& resp, std::string_view) {
    return reply(req, resp, "hello from photon\n");
}

int echo(void*, Request& req, Response& resp, std::string_view) {
    std::string body;
    char buf[16384];
    ssize_t n;
    while ((n = req.read(buf, sizeof(buf))) > 0) body.append(buf, n);
    if (n < 0) return -1;
    return reply(req, resp, body);
}

// The client's port: equal answers mean one connection served them.
int peer(void*, Request& req, Response& resp, std::string_view) {
    auto s = dynamic_cast<ISocketStream*>(resp.output());
    if (!s) return -1;
    return reply(req, resp, std::to_string(s->getpeername().port) + "\n");
}

class HttpServerPeers : public HttpServerTest {
protected:
    void SetUp() override {
        HttpServerTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        serve({}, [](HTTPServer* s) {
            s->add_handler({&text, nullptr}, "/text");
            s->add_handler({&echo, nullptr}, "/echo");
            s->add_handler({&peer, nullptr}, "/peer");
        });
    }
    // Runs argv to its end (the server keeps serving meanwhile); its exit
    // status, its output in *out.
    int run(std::vector<std::string> argv, std::string* out, int max_ms = 30000) {
        child_process p(std::move(argv), "", dir.path("out"));
        if (!p.started()) return -1;
        int st = p.wait(max_ms);
        *out = slurp(dir.path("out"));
        return st;
    }
    photon_test::temp_dir dir{"photon-http"};
};

// "<label> <number>" in tool output, or -1.
long number_after(const std::string& out, const std::string& label) {
    std::smatch m;
    if (!std::regex_search(out, m, std::regex(label + R"(\s*([0-9]+))"))) return -1;
    return std::stol(m[1]);
}

}  // namespace

TEST_P(HttpServerPeers, CurlReusesOneConnectionForSeveralUrls) {
    if (!have_tool("curl")) GTEST_SKIP() << "curl is not installed";
    std::string out;
    ASSERT_EQ(0, run({"curl", "-sS", "--http1.1", "--max-time", "10", url("/peer"), url("/text"),
                      url("/peer"), url("/nothing"), url("/peer")},
                     &out))
        << out;
    std::smatch m;
    ASSERT_TRUE(std::regex_match(out, m,
                                 std::regex(R"(([0-9]+)\nhello from photon\n([0-9]+)\n)"
                                            R"(404 Not Found\n([0-9]+)\n)")))
        << out;
    EXPECT_EQ(m[1], m[2]);
    EXPECT_EQ(m[1], m[3]);
}

TEST_P(HttpServerPeers, CurlUploadsWith100ContinueAndChunked) {
    if (!have_tool("curl")) GTEST_SKIP() << "curl is not installed";
    std::string data = pattern(300000);
    for (auto& c : data) c = 'a' + (unsigned char)c % 26;
    dir.write("up", data);
    std::string out;
    ASSERT_EQ(0, run({"curl", "-sS", "--http1.1", "--max-time", "10", "-H", "Expect: 100-continue",
                      "--data-binary", "@" + dir.path("up"), url("/echo")},
                     &out));
    EXPECT_TRUE(out == data) << out.size();
    ASSERT_EQ(
        0, run({"curl", "-sS", "--http1.1", "--max-time", "10", "-H", "Transfer-Encoding: chunked",
                "--data-binary", "@" + dir.path("up"), url("/echo")},
               &out));
    EXPECT_TRUE(out == data) << out.size();
    // HEAD: headers only, and curl sees the length as metadata.
    ASSERT_EQ(0, run({"curl", "-sS", "--http1.1", "--max-time", "10", "-I", url("/text")}, &out));
    EXPECT_NE(std::string::npos, out.find("HTTP/1.1 200 OK\r\n")) << out;
    EXPECT_NE(std::string::npos, out.find("Content-Length: 18\r\n")) << out;
}

TEST_P(HttpServerPeers, PythonHttpClientKeepsAliveAndUploadsChunked) {
    if (!have_tool("python3")) GTEST_SKIP() << "python3 is not installed";
    dir.write("client.py", R"(import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=10)
def get(method, path, body=None, headers={}):
    c.request(method, path, body=body, headers=headers)
    r = c.getresponse()
    return r.status, r.read().decode()
ports = set()
for i in range(5):
    s, b = get("GET", "/peer")
    assert s == 200, s
    ports.add(b)
def pieces():
    yield b"hello "
    yield b"chunked "
    yield b"world"
print(get("POST", "/echo", pieces()))
print(get("POST", "/echo", b"x" * 100000)[1] == "x" * 100000)
print(get("HEAD", "/text"))
print(get("GET", "/missing"))
ports.add(get("GET", "/peer")[1])
print(len(ports))
)");
    std::string out;
    ASSERT_EQ(0, run({"python3", dir.path("client.py"), std::to_string(ep.port)}, &out)) << out;
    EXPECT_EQ("(200, 'hello chunked world')\nTrue\n(200, '')\n(404, '404 Not Found\\n')\n1\n", out);
}

TEST_P(HttpServerPeers, ApacheBenchWithKeepAliveHasNoFailures) {
    if (!have_tool("ab")) GTEST_SKIP() << "ab (apache2-utils) is not installed";
    std::string out;
    ASSERT_EQ(0, run({"ab", "-k", "-n", "2000", "-c", "10", "-s", "10", url("/text")}, &out))
        << out;
    EXPECT_EQ(2000, number_after(out, "Complete requests:")) << out;
    EXPECT_EQ(0, number_after(out, "Failed requests:")) << out;
    EXPECT_EQ(2000, number_after(out, "Keep-Alive requests:")) << out;
    EXPECT_EQ(-1, number_after(out, "Non-2xx responses:")) << out;
}

TEST_P(HttpServerPeers, WrkSeesNoErrors) {
    if (!have_tool("wrk")) GTEST_SKIP() << "wrk is not installed";
    std::string out;
    ASSERT_EQ(0, run({"wrk", "-t1", "-c10", "-d1s", url("/text")}, &out)) << out;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(out, m, std::regex(R"(([0-9]+) requests in)"))) << out;
    EXPECT_GT(std::stol(m[1]), 0) << out;
    EXPECT_EQ(std::string::npos, out.find("Socket errors")) << out;
    EXPECT_EQ(std::string::npos, out.find("Non-2xx")) << out;
}

PHOTON_INSTANTIATE_ENGINE_TESTS(HttpServerPeers);
