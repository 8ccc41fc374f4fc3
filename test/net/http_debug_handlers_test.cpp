// The operators' handlers: new_thread_dump_handler (the coroutine dump over HTTP, text and
// JSON, and its bad requests) and new_metrics_handler (the metrics registry in Prometheus's text
// format, every line of it well-formed).
#include <photon/common/metric-meter/prometheus.h>
#include <photon/net/http/server.h>

#include <regex>
#include <sstream>
#include <string>

#include "../util/metrics.h"
#include "http_server_test_util.h"

using namespace photon_test;

namespace {

void* sleeps_for_the_dump(void*) {
    photon::thread_usleep(kLongUs);
    return nullptr;
}

class HttpThreadDump : public HttpServerTest {};

TEST_P(HttpThreadDump, ServesTextAndJsonAndRefusesWhatItCannotDo) {
    serve(ServerOptions(), [](HTTPServer* h) {
        h->add_handler(new_thread_dump_handler(), true, "/debug/coroutines");
    });
    photon::thread* sleeper = photon::thread_create(&sleeps_for_the_dump, nullptr);
    auto jh = photon::thread_enable_join(sleeper);
    ASSERT_TRUE(until_sleeping(sleeper));
    raw_client c(ep);
    ASSERT_TRUE(c.ok());
    std::string body;
    ASSERT_EQ(200, c.request("GET /debug/coroutines HTTP/1.1\r\nHost: x\r\n\r\n", &body));
    EXPECT_EQ("text/plain; charset=utf-8", c.resp.headers["Content-Type"]);
    EXPECT_EQ("no-store", c.resp.headers["Cache-Control"]);
    EXPECT_EQ(0u, body.find("photon coroutine dump: 1 vCPU(s), ")) << body;
    char id[32];
    snprintf(id, sizeof(id), "%p sleeping", (void*)sleeper);
    EXPECT_NE(std::string::npos, body.find(id)) << body;

    ASSERT_EQ(
        200,
        c.request("GET /debug/coroutines?format=json&frames=0 HTTP/1.1\r\nHost: x\r\n\r\n", &body));
    EXPECT_EQ("application/json", c.resp.headers["Content-Type"]);
    EXPECT_EQ(0u, body.find("{\"vcpus\":1,")) << body;
    EXPECT_EQ(std::string::npos, body.find("\"pc\":")) << body;  // no frames asked for
    EXPECT_NE(std::string::npos, body.find("\"backtrace\":[]")) << body;

    ASSERT_EQ(200, c.request("GET /debug/coroutines HTTP/1.1\r\nHost: x\r\n"
                             "Accept: application/json\r\n\r\n",
                             &body));
    EXPECT_EQ("application/json", c.resp.headers["Content-Type"]);

    ASSERT_EQ(400, c.request("GET /debug/coroutines?frames=x HTTP/1.1\r\nHost: x\r\n\r\n", &body));
    ASSERT_EQ(400, c.request("GET /debug/coroutines?frames=999 HTTP/1.1\r\nHost: x\r\n\r\n"));
    ASSERT_EQ(405, c.request("POST /debug/coroutines HTTP/1.1\r\nHost: x\r\n"
                             "Content-Length: 0\r\n\r\n"));
    EXPECT_EQ("GET, HEAD", c.resp.headers["Allow"]);
    ASSERT_EQ(200, c.request("HEAD /debug/coroutines HTTP/1.1\r\nHost: x\r\n\r\n", &body,
                             photon::net::http::Verb::HEAD));
    EXPECT_TRUE(body.empty());
    photon::thread_interrupt(sleeper);
    photon::thread_join(jh);
}

PHOTON_INSTANTIATE_ENGINE_TESTS(HttpThreadDump);

void app_metrics(void* hits, photon::metrics::Exposition& e) {
    e.family("app_hits_total", "Hits of the test's own.", photon::metrics::Exposition::COUNTER);
    photon::metrics::Label l{"path", "/a \"quoted\""};
    e.sample("app_hits_total", *static_cast<uint64_t*>(hits), &l, 1);
}

class HttpMetrics : public HttpServerTest {};

TEST_P(HttpMetrics, ServesTheRegistryInTheTextFormat) {
    serve(ServerOptions(),
          [](HTTPServer* h) { h->add_handler(new_metrics_handler(), true, "/metrics"); });
    uint64_t hits = 42;
    int id = photon::metrics::register_collector(&app_metrics, &hits);
    ASSERT_GT(id, 0);
    raw_client c(ep);
    ASSERT_TRUE(c.ok());
    std::string body;
    ASSERT_EQ(200, c.request("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", &body));
    EXPECT_EQ("text/plain; version=0.0.4; charset=utf-8", c.resp.headers["Content-Type"]);
    EXPECT_NE(std::string::npos, body.find("app_hits_total{path=\"/a \\\"quoted\\\"\"} 42\n"))
        << body;
    EXPECT_NE(std::string::npos, body.find("photon_vcpu_switches_total{vcpu=")) << body;
    // Every line: a comment (HELP or TYPE) or name{labels} value, as the format defines them.
    std::regex sample(
        R"re([a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*"(,[a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*")*\})? (-?[0-9.e+-]+|NaN|[+-]Inf))re");
    std::regex comment(
        R"re(# (HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*|TYPE [a-zA-Z_:][a-zA-Z0-9_:]* (counter|gauge|histogram)))re");
    std::istringstream in(body);
    std::string line;
    int samples = 0;
    while (std::getline(in, line)) {
        if (line[0] == '#') {
            EXPECT_TRUE(std::regex_match(line, comment)) << line;
        } else {
            EXPECT_TRUE(std::regex_match(line, sample)) << line;
            samples++;
        }
    }
    EXPECT_GT(samples, 50);
    EXPECT_EQ('\n', body.back());
    hits = 43;  // collected at each scrape
    ASSERT_EQ(200, c.request("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", &body));
    EXPECT_NE(std::string::npos, body.find("\"} 43\n")) << body;
    ASSERT_EQ(405, c.request("POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"));
    EXPECT_EQ(0, photon::metrics::unregister_collector(id));
    ASSERT_EQ(200, c.request("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", &body));
    EXPECT_EQ(std::string::npos, body.find("app_hits_total")) << body;
}

int failing_handler(void*, Request&, Response&, std::string_view) {
    errno = EIO;
    return -1;
}

TEST_P(HttpMetrics, TheServerCountsRequestsByClassAndErrorsByKind) {
    PHOTON_TEST_SKIP_WITHOUT_COUNTING();
    ServerOptions o;
    o.metrics_name = "under-test";
    o.header_timeout = 200 * 1000;
    serve(o, [](HTTPServer* h) {
        h->add_handler(new_metrics_handler(), true, "/metrics");
        h->add_handler({nullptr, &failing_handler}, "/fails");
    });
    raw_client c(ep);
    ASSERT_TRUE(c.ok());
    std::string body;
    ASSERT_EQ(404, c.request("GET /nothing HTTP/1.1\r\nHost: x\r\n\r\n"));
    ASSERT_EQ(404, c.request("GET /nothing HTTP/1.1\r\nHost: x\r\n\r\n"));
    ASSERT_EQ(500, c.request("GET /fails HTTP/1.1\r\nHost: x\r\n\r\n"));  // closes
    raw_client bad(ep);  // a malformed head: 400, counted as a bad request
    ASSERT_TRUE(bad.ok());
    ASSERT_EQ(400, bad.request("GET /x HTTP/1.1\r\nHost x\r\n\r\n"));
    raw_client late(ep);  // half a head, then silence: 408
    ASSERT_TRUE(late.ok());
    ASSERT_EQ(408, late.request("GET /x HTTP/1.1\r\n"));
    raw_client m(ep);
    ASSERT_TRUE(m.ok());
    ASSERT_EQ(200, m.request("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", &body));
    const std::string l = "{server=\"under-test\"";
    EXPECT_EQ(2, sample_value(body, "photon_http_server_requests_total" + l + ",code=\"4xx\"} "))
        << body;
    EXPECT_EQ(1, sample_value(body, "photon_http_server_requests_total" + l + ",code=\"5xx\"} "));
    EXPECT_EQ(0, sample_value(body, "photon_http_server_requests_total" + l + ",code=\"2xx\"} "));
    EXPECT_EQ(1, sample_value(
                     body, "photon_http_server_errors_total" + l + ",kind=\"handler_failed\"} "));
    EXPECT_EQ(
        1, sample_value(body, "photon_http_server_errors_total" + l + ",kind=\"bad_request\"} "));
    EXPECT_EQ(
        1, sample_value(body, "photon_http_server_errors_total" + l + ",kind=\"head_timeout\"} "));
    EXPECT_EQ(4, sample_value(body, "photon_http_server_connections_total" + l + "} "));
    EXPECT_GE(sample_value(body, "photon_http_server_connections" + l + "} "), 1);
    // One handler run in 16 is timed: at most one of these 3.
    EXPECT_LE(sample_value(body, "photon_http_server_handler_seconds_count" + l + "} "), 1);
}

// Of any 32 requests in a row on one vCPU, exactly 2 are timed (the scrape's own is timed
// after it renders).
TEST_P(HttpMetrics, OneHandlerRunInSixteenIsTimed) {
    PHOTON_TEST_SKIP_WITHOUT_COUNTING();
    ServerOptions o;
    o.metrics_name = "sampled";
    serve(o, [](HTTPServer* h) { h->add_handler(new_metrics_handler(), true, "/metrics"); });
    raw_client c(ep);
    ASSERT_TRUE(c.ok());
    for (int i = 0; i < 32; i++) ASSERT_EQ(404, c.request("GET /x HTTP/1.1\r\nHost: x\r\n\r\n"));
    std::string body;
    ASSERT_EQ(200, c.request("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", &body));
    const std::string l = "{server=\"sampled\"";
    EXPECT_EQ(32, sample_value(body, "photon_http_server_requests_total" + l + ",code=\"4xx\"} "));
    EXPECT_EQ(2, sample_value(body, "photon_http_server_handler_seconds_count" + l + "} ")) << body;
}

// Sends `req` on a connection of its own and reads until the server closes: the bytes read.
size_t exchange_raw(const EndPoint& ep, const std::string& req) {
    std::unique_ptr<ISocketClient> cli(new_tcp_socket_client());
    cli->timeout(kLongUs);
    std::unique_ptr<ISocketStream> s(cli->connect(ep));
    if (!s || s->write(req.data(), req.size()) != (ssize_t)req.size()) return 0;
    size_t got = 0;
    char buf[4096];
    for (ssize_t n; (n = s->recv(buf, sizeof(buf))) > 0;) got += (size_t)n;
    return got;
}

TEST_P(HttpMetrics, TheServerCountsTheBytesOfEveryReadAndWrite) {
    PHOTON_TEST_SKIP_WITHOUT_COUNTING();
    ServerOptions o;
    o.metrics_name = "bytes-test";
    serve(o, [](HTTPServer*) {});  // every request: 404
    const std::string req = "GET /nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    size_t sent = 0;
    for (int i = 0; i < 3; i++) {
        size_t n = exchange_raw(ep, req);
        ASSERT_GT(n, 0u);
        sent += n;
    }
    std::string body;
    ASSERT_EQ(0, photon::metrics::render_prometheus(&body));
    const std::string l = "{server=\"bytes-test\"} ";
    EXPECT_EQ((long long)(3 * req.size()),
              sample_value(body, "photon_http_server_received_bytes_total" + l))
        << body;
    EXPECT_EQ((long long)sent, sample_value(body, "photon_http_server_sent_bytes_total" + l));
}

PHOTON_INSTANTIATE_ENGINE_TESTS(HttpMetrics);

}  // namespace
