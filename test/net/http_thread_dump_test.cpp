// new_thread_dump_handler: the coroutine dump over HTTP, text and JSON, and its bad requests.
#include <photon/net/http/server.h>

#include <string>

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

}  // namespace
