// The HTTP client's metrics (photon_http_client_*): requests, responses by class, connections
// dialed and reused, bytes matched against the server's own count of them, and failed calls
// counted by kind (a bad URL, a refused connection, the timeout, a malformed response).
#include <photon/common/metric-meter/prometheus.h>
#include <photon/net/http/client.h>

#include <memory>
#include <string>

#include "../util/metrics.h"
#include "../util/wait.h"
#include "http_server_test_util.h"
#include "net_test_util.h"

using namespace photon_test;

namespace {

int hello(void*, Request&, Response& resp, std::string_view) {
    (void)resp.set_result(200);
    (void)resp.headers.content_length(5);
    return resp.write("hello", 5) == 5 ? 0 : -1;
}

int slow(void*, Request& req, Response& resp, std::string_view path) {
    photon::thread_usleep(300 * 1000);  // past the caller's 20 ms timeout
    return hello(nullptr, req, resp, path);
}

// A GET of url, its body read: the status, or -1 with errno.
int get(Client* c, const std::string& url, uint64_t timeout = -1ULL) {
    auto op = c->new_operation(Verb::GET, url);
    DEFER(op->destroy());
    op->timeout = Timeout(timeout);
    if (op->call() < 0) return -1;
    char buf[64];
    while (op->resp.read(buf, sizeof(buf)) > 0) {
    }
    return op->status_code;
}

class HttpClientMetrics : public HttpServerTest {};

TEST_P(HttpClientMetrics, CountRequestsResponsesConnectionsAndTheBytesTheServerCounted) {
    PHOTON_TEST_SKIP_WITHOUT_COUNTING();
    ServerOptions o;
    o.metrics_name = "client-metrics-upstream";
    serve(o, [](HTTPServer* h) { h->add_handler({nullptr, &hello}, "/ok"); });
    std::unique_ptr<Client> client(new_http_client());
    for (int i = 0; i < 3; i++) ASSERT_EQ(200, get(client.get(), url("/ok")));
    for (int i = 0; i < 2; i++) ASSERT_EQ(404, get(client.get(), url("/missing")));
    std::string body = scrape();
    const std::string l =
        "{client=\"" + last_label(body, "photon_http_client_requests_total", "client") + "\"";
    EXPECT_EQ(5, sample_value(body, "photon_http_client_requests_total" + l + "} ")) << body;
    EXPECT_EQ(3, sample_value(body, "photon_http_client_responses_total" + l + ",code=\"2xx\"} "));
    EXPECT_EQ(2, sample_value(body, "photon_http_client_responses_total" + l + ",code=\"4xx\"} "));
    EXPECT_EQ(1, sample_value(body, "photon_http_client_connections_total" + l + ",how=\"new\"} "));
    EXPECT_EQ(4,
              sample_value(body, "photon_http_client_connections_total" + l + ",how=\"reused\"} "));
    EXPECT_EQ(0, sample_value(body, "photon_http_client_retries_total" + l + "} "));
    for (auto kind : {"invalid", "connect", "timeout", "send", "receive", "bad_response"})
        EXPECT_EQ(0, sample_value(
                         body, "photon_http_client_errors_total" + l + ",kind=\"" + kind + "\"} "))
            << kind;
    EXPECT_EQ(5, sample_value(body, "photon_http_client_request_seconds_count" + l + "} "));
    // Every byte one side wrote, the other read: the two counts agree exactly (once the server
    // has counted its last write, which the client may have read before the server resumed).
    const std::string s = "{server=\"client-metrics-upstream\"} ";
    wait_for([&] {
        body = scrape();
        return sample_value(body, "photon_http_server_sent_bytes_total" + s) ==
               sample_value(body, "photon_http_client_received_bytes_total" + l + "} ");
    });
    long long sent = sample_value(body, "photon_http_client_sent_bytes_total" + l + "} ");
    long long received = sample_value(body, "photon_http_client_received_bytes_total" + l + "} ");
    EXPECT_GT(sent, 5 * 30);  // five request heads
    EXPECT_EQ(sent, sample_value(body, "photon_http_server_received_bytes_total" + s));
    EXPECT_EQ(received, sample_value(body, "photon_http_server_sent_bytes_total" + s));
}

// HTTP/2 (h2c by prior knowledge): one connection, its first stream new and the others reused,
// and both sides count the frames' bytes (the server writes nothing through HTTP/1.1's path).
TEST_P(HttpClientMetrics, CountHttp2StreamsAndBytesOnBothSides) {
    PHOTON_TEST_SKIP_WITHOUT_COUNTING();
    ServerOptions o;
    o.metrics_name = "client-metrics-h2";
    serve(o, [](HTTPServer* h) { h->add_handler({nullptr, &hello}, "/ok"); });
    std::unique_ptr<Client> client(new_http_client());
    client->http_version(HttpVersion::Http2);
    for (int i = 0; i < 3; i++) ASSERT_EQ(200, get(client.get(), url("/ok")));
    std::string body = scrape();
    const std::string l =
        "{client=\"" + last_label(body, "photon_http_client_requests_total", "client") + "\"";
    EXPECT_EQ(3, sample_value(body, "photon_http_client_requests_total" + l + "} ")) << body;
    EXPECT_EQ(3, sample_value(body, "photon_http_client_responses_total" + l + ",code=\"2xx\"} "));
    EXPECT_EQ(1, sample_value(body, "photon_http_client_connections_total" + l + ",how=\"new\"} "));
    EXPECT_EQ(2,
              sample_value(body, "photon_http_client_connections_total" + l + ",how=\"reused\"} "));
    const std::string s = "{server=\"client-metrics-h2\"} ";
    // Three HEADERS frames and more each way, whatever else is still in flight.
    EXPECT_GT(sample_value(body, "photon_http_client_sent_bytes_total" + l + "} "), 3 * 9);
    EXPECT_GT(sample_value(body, "photon_http_client_received_bytes_total" + l + "} "), 3 * 9);
    EXPECT_GT(sample_value(body, "photon_http_server_received_bytes_total" + s), 3 * 9);
    EXPECT_GT(sample_value(body, "photon_http_server_sent_bytes_total" + s), 3 * 9);
}

// Answers every connection with bytes that are no HTTP response, then closes it.
int garbage(void*, ISocketStream* s) {
    char buf[1024];
    (void)s->recv(buf, sizeof(buf));
    static const char kJunk[] = "NOT HTTP AT ALL\r\n\r\n";
    (void)s->write(kJunk, sizeof(kJunk) - 1);
    return 0;
}

TEST_P(HttpClientMetrics, CountFailedCallsByKind) {
    PHOTON_TEST_SKIP_WITHOUT_COUNTING();
    serve(ServerOptions(), [](HTTPServer* h) { h->add_handler({nullptr, &slow}, "/slow"); });
    std::unique_ptr<ISocketServer> junk(new_tcp_socket_server());
    ASSERT_EQ(0, junk->bind_v4localhost(0));
    ASSERT_EQ(0, junk->listen());
    junk->set_handler({nullptr, &garbage});
    ASSERT_EQ(0, junk->start_loop(false));
    std::string junk_url = "http://127.0.0.1:" + std::to_string(junk->getsockname().port) + "/";

    std::unique_ptr<Client> client(new_http_client());
    EXPECT_EQ(-1, get(client.get(), "ftp://127.0.0.1/x"));
    EXPECT_EQ(EINVAL, errno);
    std::string refused = "http://127.0.0.1:" + std::to_string(free_loopback_port()) + "/";
    for (int i = 0; i < 2; i++) {
        EXPECT_EQ(-1, get(client.get(), refused));
        EXPECT_EQ(ECONNREFUSED, errno);
    }
    EXPECT_EQ(-1, get(client.get(), url("/slow"), 20 * 1000));
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_EQ(-1, get(client.get(), junk_url));
    EXPECT_EQ(EPROTO, errno);

    std::string body = scrape();
    const std::string l =
        "{client=\"" + last_label(body, "photon_http_client_requests_total", "client") + "\"";
    auto errors = [&](const char* kind) {
        return sample_value(body,
                            "photon_http_client_errors_total" + l + ",kind=\"" + kind + "\"} ");
    };
    EXPECT_EQ(5, sample_value(body, "photon_http_client_requests_total" + l + "} ")) << body;
    EXPECT_EQ(1, errors("invalid"));
    EXPECT_EQ(2, errors("connect"));
    EXPECT_EQ(1, errors("timeout"));
    EXPECT_EQ(1, errors("bad_response"));
    EXPECT_EQ(0, errors("send"));
    EXPECT_EQ(0, errors("receive"));
    EXPECT_EQ(0, sample_value(body, "photon_http_client_request_seconds_count" + l + "} "));
    for (auto code : {"1xx", "2xx", "3xx", "4xx", "5xx"})
        EXPECT_EQ(0, sample_value(body, "photon_http_client_responses_total" + l + ",code=\"" +
                                            code + "\"} "));
    junk.reset();
}

PHOTON_INSTANTIATE_ENGINE_TESTS(HttpClientMetrics);

}  // namespace
