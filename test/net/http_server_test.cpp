// The HTTP server under both event engines, through raw connections:
// dispatch, keep-alive, pipelining, request bodies (chunked, 100-continue,
// unread), every parser error status, timeouts (slowloris, idle), failing
// and short handlers, vanishing peers, HEAD / HTTP/1.0, tunnels and event
// streams. stop(), deletion and TLS handshakes are in
// http_server_stop_test.cpp.
#include <atomic>
#include <string>

#include <photon/common/timeout.h>
#include <photon/net/http/client.h>

#include "http_server_handlers.h"

using namespace photon;
using namespace photon_test;

namespace {

TEST_P(HttpServer, DispatchesByPathPrefixInTheOrderAdded) {
    serve({}, [](HTTPServer* s) {
        s->add_handler(new tagged("=E"), true, "=/e/x");  // exact
        s->add_handler(new tagged("AB"), true, "/a/b");
        s->add_handler(new tagged("A"), true, "/a");
        s->add_handler(new tagged("C/"), true, "/c/");
        s->add_handler(new tagged("A2"), true, "/a");  // shadowed by the first "/a"
    });
    raw_client c(ep);
    ASSERT_TRUE(c.ok());
    struct {
        const char* target;
        int status;
        const char* body;
    } cases[] = {
        {"/a", 200, "A|"},
        {"/a/", 200, "A|/"},
        {"/a/x/y", 200, "A|/x/y"},
        {"/a?q=/b", 200, "A|"},
        {"/a/b", 200, "AB|"},
        {"/a/b/c", 200, "AB|/c"},
        {"/a/bc", 200, "A|/bc"},
        {"/ab", 404, nullptr},
        {"/c/d", 200, "C/|d"},
        {"/c/", 200, "C/|"},
        {"/c", 404, nullptr},
        {"/", 404, nullptr},
        {"http://example.com/a/z?x", 200, "A|/z"},
        {"/e/x", 200, "=E|"},
        {"/e/x?q", 200, "=E|"},
        {"/e/x/", 404, nullptr},
        {"/e/xy", 404, nullptr},
        {"/e", 404, nullptr},
    };
    for (auto& t : cases) {
        std::string body;
        EXPECT_EQ(t.status, c.request(head("GET", t.target), &body)) << t.target;
        if (t.body) {
            EXPECT_EQ(t.body, body) << t.target;
        } else {
            EXPECT_EQ("404 Not Found\n", body) << t.target;
        }
    }
    // The empty pattern sets the default; an unowned handler is not deleted.
    tagged def("D");
    http->add_handler(&def, false, "");
    std::string body;
    EXPECT_EQ(200, c.request(head("GET", "/zzz"), &body));
    EXPECT_EQ("D|/zzz", body);
    EXPECT_EQ(200, c.request(head("OPTIONS", "*"), &body));
    EXPECT_EQ("D|*", body);
    EXPECT_EQ(6, g_tagged_alive.load());  // five owned, and def
    tcp.reset();
    http.reset();
    EXPECT_EQ(1, g_tagged_alive.load());  // only `def`, which it did not own
}

TEST_P(HttpServer, DelegateHandlersGetTheRemainder) {
    serve_default();
    raw_client c(ep);
    std::string body;
    ASSERT_EQ(200, c.request(head("PUT", "/info/x/y?z=1"), &body));
    EXPECT_EQ("PUT /info/x/y?z=1 /x/y", body);
    EXPECT_EQ("photon", c.resp.headers["Server"]);
    EXPECT_EQ(29u, c.resp.headers["Date"].size());
    EXPECT_EQ("GMT", c.resp.headers["Date"].substr(26));
}

TEST_P(HttpServer, ServesManyRequestsOnOneKeptAliveConnection) {
    serve_default();
    raw_client c(ep);
    ASSERT_TRUE(c.ok());
    for (int i = 0; i < 300; i++) {
        std::string body;
        std::string path = "/info/" + std::to_string(i);
        ASSERT_EQ(200, c.request(head("GET", path), &body)) << i;
        ASSERT_EQ("GET " + path + " /" + std::to_string(i), body);
        ASSERT_TRUE(c.resp.keep_alive());
    }
    EXPECT_EQ(1u, http->connections());
}

TEST_P(HttpServer, AnswersPipelinedRequestsInOrder) {
    serve_default();
    raw_client c(ep);
    std::string all;
    const int n = 50;
    for (int i = 0; i < n; i++) {
        if (i % 5 == 1)
            all += head("POST", "/echo", "Content-Length: 3\r\n") + std::to_string(100 + i);
        else if (i % 5 == 2)
            all += head("POST", "/echo", "Transfer-Encoding: chunked\r\n") +
                   chunked({"ab", std::to_string(i)});
        else if (i % 5 == 3)
            all += head("HEAD", "/text");
        else
            all += head("GET", "/info/" + std::to_string(i));
    }
    ASSERT_TRUE(c.send(all));  // one write
    for (int i = 0; i < n; i++) {
        std::string body;
        Verb v = i % 5 == 3 ? Verb::HEAD : Verb::GET;
        ASSERT_EQ(200, c.get(&body, v)) << i;
        if (i % 5 == 1)
            EXPECT_EQ(std::to_string(100 + i), body);
        else if (i % 5 == 2)
            EXPECT_EQ("ab" + std::to_string(i), body);
        else if (i % 5 == 3)
            EXPECT_EQ("", body);
        else
            EXPECT_EQ("GET /info/" + std::to_string(i) + " /" + std::to_string(i), body);
    }
    // Nothing more was sent: the HEAD responses had no body bytes.
    EXPECT_FALSE(c.closed(100'000));
}

TEST_P(HttpServer, ReadsChunkedRequestBodies) {
    serve_default();
    raw_client c(ep);
    std::string big(100000, 'x');
    for (size_t i = 0; i < big.size(); i++) big[i] = 'a' + i % 26;
    std::string body;
    ASSERT_EQ(200, c.request(head("POST", "/echo", "Transfer-Encoding: chunked\r\n") +
                                 chunked({"hello ", "chunked", " world"}),
                             &body));
    EXPECT_EQ("hello chunked world", body);
    ASSERT_EQ(200,
              c.request(head("POST", "/echo", "Transfer-Encoding: chunked\r\n") +
                            chunked({big.substr(0, 1), big.substr(1, 70000), big.substr(70001)}),
                        &body));
    EXPECT_EQ(big, body);
    // Trailers are accepted and the connection stays usable.
    ASSERT_EQ(200, c.request(head("POST", "/echo", "Transfer-Encoding: chunked\r\n") +
                                 "3\r\nabc\r\n0\r\nX-Trailer: 1\r\n\r\n",
                             &body));
    EXPECT_EQ("abc", body);
    ASSERT_EQ(200, c.request(head("GET", "/text"), &body));
}

TEST_P(HttpServer, Sends100ContinueBeforeReadingTheBody) {
    serve_default();
    raw_client c(ep);
    ASSERT_TRUE(c.send(head("POST", "/echo", "Content-Length: 5\r\nExpect: 100-continue\r\n")));
    ASSERT_EQ(100, c.get());
    ASSERT_TRUE(c.send("12345"));
    std::string body;
    ASSERT_EQ(200, c.get(&body));
    EXPECT_EQ("12345", body);
    EXPECT_TRUE(c.resp.keep_alive());
    EXPECT_EQ(200, c.request(head("GET", "/text"), &body));
}

TEST_P(HttpServer, ClosesWhenAnsweringWithoutTheBodyAnExpectContinueClientHolds) {
    serve_default();
    raw_client c(ep);
    std::string body;
    // /text does not read: no 100 Continue, a final answer, then close (the
    // client may never send the body).
    ASSERT_EQ(200, c.request(head("POST", "/text", "Content-Length: 5\r\nExpect: 100-continue\r\n"),
                             &body));
    EXPECT_EQ("hello\n", body);
    EXPECT_EQ("close", c.resp.headers["Connection"]);
    EXPECT_TRUE(c.closed());
}

TEST_P(HttpServer, DrainsASmallUnreadBodyAndClosesForALargeOne) {
    serve_default();
    raw_client c(ep);
    std::string body, small(20000, 's');
    ASSERT_EQ(200, c.request(head("POST", "/text", "Content-Length: 20000\r\n") + small, &body));
    EXPECT_TRUE(c.resp.keep_alive());
    ASSERT_EQ(200, c.request(head("POST", "/text", "Transfer-Encoding: chunked\r\n") +
                                 chunked({small, small}),
                             &body));
    ASSERT_EQ(200, c.request(head("GET", "/info"), &body));
    EXPECT_EQ("GET /info ", body);
    // 2 MiB declared, not read: answered, then closed (lingering a little).
    ASSERT_EQ(200, c.request(head("POST", "/text", "Content-Length: 2097152\r\n") + small, &body));
    EXPECT_EQ("close", c.resp.headers["Connection"]);
    EXPECT_TRUE(c.closed());
}

struct bad_request {
    const char* name;
    std::string bytes;
    int status;
};

TEST_P(HttpServer, AnswersEachParserErrorWithItsStatusAndCloses) {
    ServerOptions opts;
    opts.limits.max_body_size = 1000;
    serve_default(opts);
    std::string long_uri = "/" + std::string(9000, 'u');
    std::string big_field = "X-Big: " + std::string(9000, 'v') + "\r\n";
    std::string many_fields;
    for (int i = 0; i < 120; i++) many_fields += "X-F" + std::to_string(i) + ": 1\r\n";
    bad_request cases[] = {
        {"bare LF", "GET / HTTP/1.1\nHost: t\n\n", 400},
        {"garbage", std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 junk\r\n\r\n", 20),
         400},
        {"no Host", "GET / HTTP/1.1\r\n\r\n", 400},
        {"CL and TE", head("POST", "/echo", "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n"),
         400},
        {"long URI", head("GET", long_uri), 414},
        {"big header", head("GET", "/text", big_field), 431},
        {"many fields", head("GET", "/text", many_fields), 431},
        {"body over the limit", head("POST", "/echo", "Content-Length: 1001\r\n"), 413},
        {"unknown method", head("BREW", "/text"), 501},
        {"gzip coding", head("POST", "/echo", "Transfer-Encoding: gzip, chunked\r\n"), 501},
        {"HTTP/2.0", "GET / HTTP/2.0\r\nHost: t\r\n\r\n", 505},
    };
    for (auto& t : cases) {
        raw_client c(ep);
        ASSERT_TRUE(c.ok());
        std::string body;
        ASSERT_EQ(t.status, c.request(t.bytes, &body)) << t.name;
        EXPECT_EQ(std::to_string(t.status), body.substr(0, 3)) << t.name;
        EXPECT_EQ("close", c.resp.headers["Connection"]) << t.name;
        EXPECT_TRUE(c.closed()) << t.name;
    }
    EXPECT_TRUE(wait_for([&] { return http->connections() == 0; }, 10000));
}

TEST_P(HttpServer, AnswersBodyErrorsFoundByTheHandler) {
    ServerOptions opts;
    opts.limits.max_body_size = 1000;
    serve_default(opts);
    {
        raw_client c(ep);  // a chunked body over the limit: 413 from the read
        std::string body;
        ASSERT_EQ(413, c.request(head("POST", "/echo", "Transfer-Encoding: chunked\r\n") +
                                     chunked({std::string(600, 'a'), std::string(600, 'b')}),
                                 &body));
        EXPECT_TRUE(c.closed());
    }
    {
        raw_client c(ep);  // a malformed chunk size: 400
        ASSERT_EQ(400, c.request(head("POST", "/echo", "Transfer-Encoding: chunked\r\n") +
                                 "zz\r\nabc\r\n0\r\n\r\n"));
        EXPECT_TRUE(c.closed());
    }
}

TEST_P(HttpServer, Answers408WhenABodyStallsPastTheBodyTimeout) {
    ServerOptions opts;
    opts.body_timeout = 200'000;
    serve_default(opts);
    raw_client c(ep);
    auto t0 = Clock::now();
    std::string body;
    ASSERT_EQ(408, c.request(head("POST", "/echo", "Content-Length: 10\r\n") + "abc", &body));
    EXPECT_GE(us_since(t0), 150'000u);
    EXPECT_EQ("close", c.resp.headers["Connection"]);
    EXPECT_TRUE(c.closed());
}

TEST_P(HttpServer, AHandlerThatRetriesAfterABodyTimeoutLosesNoByte) {
    ServerOptions opts;
    opts.body_timeout = 200'000;
    opts.body_min_rate = 0;  // else the pause spends the body's budget for good
    serve(opts, [&](HTTPServer* s) {
        s->add_handler({+[](void*, Request& req, Response& resp, std::string_view) -> int {
                            std::string body;
                            char buf[20];
                            for (int tries = 0; body.size() < sizeof(buf) && tries < 20;) {
                                ssize_t n = req.read(buf, sizeof(buf) - body.size());
                                if (n < 0 && errno == ETIMEDOUT && ++tries) continue;
                                if (n <= 0) break;
                                body.append(buf, n);
                            }
                            return reply(resp, body);
                        },
                        nullptr});
    });
    raw_client c(ep);
    ASSERT_TRUE(c.send(head("POST", "/retry", "Content-Length: 20\r\n") + "0123456789"));
    photon::thread_usleep(500'000);  // past the body timeout: the handler's read fails
    std::string body;
    ASSERT_EQ(200, c.request("abcdefghij", &body));
    EXPECT_EQ("0123456789abcdefghij", body);
}

TEST_P(HttpServer, Answers408ToABodyTrickledBelowTheMinimumRate) {
    ServerOptions opts;
    opts.body_timeout = 300'000;  // no single read waits this long
    opts.body_min_rate = 1000;    // bytes/s; the client sends 20
    serve_default(opts);
    raw_client c(ep);
    ASSERT_TRUE(c.send(head("POST", "/echo", "Content-Length: 1000\r\n")));
    auto t0 = Clock::now();
    for (int i = 0; i < 1000 && us_since(t0) < 5'000'000; i++) {
        if (!c.send("x")) break;
        photon::thread_usleep(50'000);
        if (c.readable()) break;  // the answer
    }
    EXPECT_EQ(408, c.get());
    EXPECT_GE(us_since(t0), 250'000u);  // not before body_timeout of waiting
    EXPECT_LT(us_since(t0), 5'000'000u);
    EXPECT_TRUE(c.closed());
}

TEST_P(HttpServer, EndsAResponseToAClientThatReadsBelowTheMinimumRate) {
    ServerOptions opts;
    opts.send_timeout = 300'000;    // no single write waits this long
    opts.send_min_rate = 64 << 20;  // bytes/s; the client reads about 1.6 MB/s
    std::atomic<int> result{1};
    serve(opts, [&](HTTPServer* s) {
        s->add_handler(
            {&result,
             +[](std::atomic<int>* result, Request&, Response& resp, std::string_view) -> int {
                 // Small buffers: each write waits for what the client reads.
                 auto out = dynamic_cast<ISocketStream*>(resp.output());
                 EXPECT_EQ(0, out->setsockopt<int>(SOL_SOCKET, SO_SNDBUF, 4096));
                 std::string chunk(1024, 'z');
                 resp.headers.content_length(64 << 20);
                 for (int i = 0; i < 64 * 1024; i++) {
                     if (resp.write(chunk.data(), chunk.size()) < 0) {
                         *result = -errno;
                         return -1;
                     }
                 }
                 *result = 0;
                 return 0;
             }});
    });
    raw_client c(ep);
    ASSERT_TRUE(c.send(head("GET", "/big")));
    auto t0 = Clock::now();
    char buf[16384];
    ssize_t n = 1;
    c.stream()->timeout(1'000'000);
    while (us_since(t0) < 5'000'000 && (n = c.stream()->recv(buf, sizeof(buf))) > 0)
        photon::thread_usleep(10'000);
    EXPECT_LE(n, 0);  // the server gave up on us
    EXPECT_LT(us_since(t0), 5'000'000u);
    EXPECT_TRUE(wait_for([&] { return result != 1; }, 10000));
    EXPECT_EQ(-ETIMEDOUT, result.load());
    EXPECT_TRUE(wait_for([&] { return http->connections() == 0; }, 10000));
}

TEST_P(HttpServer, OurClientGetsTheAnswerToAnUploadTheHandlerIgnores) {
    // RFC 9112 9.5: the answer goes out before the body is read, the server
    // lingers, then resets; the client reports the answer, as curl does.
    serve(ServerOptions(), [&](HTTPServer* s) {
        s->add_handler({+[](void*, Request&, Response& resp, std::string_view) -> int {
                            resp.headers.insert("Connection", "close");
                            return reply(resp, "ignored");
                        },
                        nullptr});
    });
    std::unique_ptr<Client> client(new_http_client());
    auto op = client->new_operation(Verb::POST, url("/up"));
    DEFER(op->destroy());
    const std::string big(20 << 20, 'x');
    op->set_body(big);
    op->timeout = kLongUs;
    ASSERT_EQ(0, op->call()) << strerror(errno);
    EXPECT_EQ(200, op->status_code);
    EXPECT_NE(0, op->body_errno);
    char buf[64];
    ASSERT_EQ(7, op->resp.read(buf, sizeof(buf)));
    EXPECT_EQ("ignored", std::string(buf, 7));
}

TEST_P(HttpServer, SendsNoBodyFor204And304) {
    serve_default();
    raw_client c(ep);
    std::string body;
    ASSERT_EQ(204, c.request(head("GET", "/status/204"), &body));
    EXPECT_EQ("", body);
    EXPECT_FALSE(c.resp.headers.has("Content-Length"));
    EXPECT_FALSE(c.resp.headers.has("Transfer-Encoding"));
    ASSERT_EQ(304, c.request(head("GET", "/status/304"), &body));
    EXPECT_EQ("", body);
    EXPECT_EQ("\"x\"", c.resp.headers["ETag"]);
    // Any body byte would have been taken for the next head.
    ASSERT_EQ(200, c.request(head("GET", "/text"), &body));
    EXPECT_EQ("hello\n", body);
}

TEST_P(HttpServer, GivesASlowlorisClient408WithinTheHeaderTimeout) {
    ServerOptions opts;
    opts.header_timeout = 300'000;
    serve_default(opts);
    raw_client c(ep);
    std::string req = head("GET", "/text", "X-Slow: " + std::string(200, 's') + "\r\n");
    auto t0 = Clock::now();
    std::string body;
    int status = -1;
    // One byte every 20 ms: each read is quick, the head never completes.
    for (size_t i = 0; i < req.size() && us_since(t0) < 5'000'000; i++) {
        if (!c.send(std::string_view(req).substr(i, 1))) break;
        photon::thread_usleep(20'000);
        if (c.readable()) break;  // the answer
    }
    status = c.get(&body);
    EXPECT_EQ(408, status);  // only header_timeout answers a head with 408
    EXPECT_GE(us_since(t0), 250'000u);
    EXPECT_TRUE(c.closed());
}

TEST_P(HttpServer, ClosesAnIdleKeptAliveConnectionSilently) {
    ServerOptions opts;
    opts.keepalive_timeout = 200'000;
    serve_default(opts);
    raw_client c(ep);
    ASSERT_EQ(200, c.request(head("GET", "/text")));
    auto t0 = Clock::now();
    std::string extra;
    EXPECT_TRUE(c.closed(kLongUs, &extra));
    EXPECT_EQ("", extra);
    EXPECT_GE(us_since(t0), 150'000u);
    EXPECT_TRUE(wait_for([&] { return http->connections() == 0; }, 10000));
}

TEST_P(HttpServer, ClosesANewConnectionThatSendsNothing) {
    ServerOptions opts;
    opts.header_timeout = 200'000;
    serve_default(opts);
    raw_client c(ep);
    std::string extra;
    EXPECT_TRUE(c.closed(kLongUs, &extra));
    EXPECT_EQ("", extra);
}

TEST_P(HttpServer, BoundsAResponseToAClientThatNeverReads) {
    ServerOptions opts;
    opts.send_timeout = 200'000;
    serve(opts, [&](HTTPServer* s) {
        s->add_handler({+[](void*, Request&, Response& resp, std::string_view) -> int {
                            std::string chunk(1 << 20, 'z');
                            resp.headers.content_length(64 << 20);
                            for (int i = 0; i < 64; i++)
                                if (resp.write(chunk.data(), chunk.size()) < 0) return -1;
                            return 0;
                        },
                        nullptr});
    });
    raw_client c(ep);
    ASSERT_TRUE(c.send(head("GET", "/big")));
    // Never read: the server's write times out and the connection ends.
    EXPECT_TRUE(wait_for([&] { return http->connections() == 0; }, 10000));
}

TEST_P(HttpServer, AnswersAFailingHandlerWith500AndCloses) {
    serve_default();
    {
        raw_client c(ep);
        std::string body;
        ASSERT_EQ(500, c.request(head("GET", "/fail"), &body));
        EXPECT_EQ("500 Internal Server Error\n", body);
        EXPECT_EQ("close", c.resp.headers["Connection"]);
        EXPECT_TRUE(c.closed());
    }
    {
        raw_client c(ep);  // the response went out: completed, then closed
        std::string body;
        ASSERT_EQ(200, c.request(head("GET", "/fail-after"), &body));
        EXPECT_EQ("partial\n", body);
        EXPECT_TRUE(c.closed());
    }
    {
        raw_client c(ep);  // a body declared and never written: 500, not a hang
        ASSERT_EQ(500, c.request(head("GET", "/unwritten")));
        EXPECT_TRUE(c.closed());
    }
}

TEST_P(HttpServer, LeavesTheChunkedBodyOfAFailedHandlerUnended) {
    serve_default();
    raw_client c(ep);
    ASSERT_TRUE(c.send(head("GET", "/chunks-fail")));
    std::string all = c.read_to_eof();
    EXPECT_NE(std::string::npos, all.find("Transfer-Encoding: chunked\r\n"));
    EXPECT_EQ("\r\n\r\n4\r\none,\r\n", all.substr(all.size() - 13));
}

TEST_P(HttpServer, ClosesAfterAHandlerWritesLessThanItsContentLength) {
    serve_default();
    raw_client c(ep);
    ASSERT_TRUE(c.send(head("GET", "/short")));
    std::string all = c.read_to_eof();  // ends: no hang
    EXPECT_NE(std::string::npos, all.find("Content-Length: 10\r\n"));
    EXPECT_EQ("12345", all.substr(all.size() - 5));
}

TEST_P(HttpServer, ChunksABodyWithoutLength) {
    serve_default();
    raw_client c(ep);
    std::string body;
    ASSERT_EQ(200, c.request(head("GET", "/chunks"), &body));
    EXPECT_EQ("one,two,three", body);
    EXPECT_EQ("chunked", c.resp.headers["Transfer-Encoding"]);
    ASSERT_EQ(200, c.request(head("GET", "/text"), &body));
}

TEST_P(HttpServer, ForgetsAPeerThatVanishesMidHeadOrMidBody) {
    serve_default();
    {
        raw_client c(ep);
        ASSERT_TRUE(
            c.send(head("POST", "/echo", "Content-Length: 100000\r\n") + std::string(1000, 'b')));
        ASSERT_TRUE(wait_for([&] { return http->connections() == 1; }, 10000));
    }
    {
        raw_client c(ep);
        ASSERT_TRUE(c.send("GET /text HTTP/1.1\r\nHost: "));
        ASSERT_TRUE(wait_for([&] { return http->connections() == 1; }, 10000));
    }
    {
        raw_client c(ep);
        ASSERT_TRUE(c.send(head("POST", "/echo", "Transfer-Encoding: chunked\r\n") + "10\r\nabc"));
    }
    EXPECT_TRUE(wait_for([&] { return http->connections() == 0; }, 10000));
}

TEST_P(HttpServer, HeadAnswersCarryNoBody) {
    serve_default();
    raw_client c(ep);
    std::string body;
    ASSERT_EQ(200, c.request(head("HEAD", "/text"), &body, Verb::HEAD));
    EXPECT_EQ("", body);
    EXPECT_EQ("6", c.resp.headers["Content-Length"]);
    ASSERT_EQ(404, c.request(head("HEAD", "/nothing"), &body, Verb::HEAD));
    EXPECT_EQ("", body);
    // Had a body been sent, it would be read as this response's head.
    ASSERT_EQ(200, c.request(head("GET", "/text"), &body));
    EXPECT_EQ("hello\n", body);
}

// A HEAD whose handler writes a body (chunked or sized) gets the GET's head;
// the writes succeed and send nothing, and the connection goes on. The
// writes failed (EMSGSIZE) and the request pipelined behind was dropped.
TEST_P(HttpServer, HeadOfAHandlerThatWritesABodyGetsTheGetHeadAndKeepsTheConnection) {
    serve_default();
    raw_client c(ep);
    std::string body;
    ASSERT_EQ(200, c.request(head("GET", "/chunks"), &body));
    EXPECT_EQ("chunked", c.resp.headers["Transfer-Encoding"]);
    ASSERT_TRUE(c.send(head("HEAD", "/chunks") + head("HEAD", "/sized") + head("GET", "/text")));
    ASSERT_EQ(200, c.get(&body, Verb::HEAD));
    EXPECT_EQ("", body);
    EXPECT_EQ("chunked", c.resp.headers["Transfer-Encoding"]);
    EXPECT_FALSE(c.resp.headers.has("Content-Length"));
    EXPECT_TRUE(c.resp.keep_alive());
    ASSERT_EQ(200, c.get(&body, Verb::HEAD));
    EXPECT_EQ("", body);
    EXPECT_EQ("6", c.resp.headers["Content-Length"]);
    EXPECT_TRUE(c.resp.keep_alive());
    // Had a body been sent, it would be read as this response's head.
    ASSERT_EQ(200, c.get(&body));
    EXPECT_EQ("hello\n", body);
    EXPECT_TRUE(c.resp.keep_alive());
}

// RFC 9112 3.2.2: an absolute-form target's host overrides Host.
TEST_P(HttpServer, HandlersSeeTheHostAndPathOfAnAbsoluteFormTarget) {
    serve_default();
    raw_client c(ep);
    std::string body;
    ASSERT_EQ(200, c.request("GET http://a/host/x HTTP/1.1\r\nHost: b\r\n\r\n", &body));
    EXPECT_EQ("a /host/x", body);
    ASSERT_EQ(200, c.request("GET /host/y HTTP/1.1\r\nHost: b\r\n\r\n", &body));
    EXPECT_EQ("b /host/y", body);
}

// Over 2^63 - 1 the remaining-body arithmetic went negative: the answer kept
// the connection, and the server read and dropped 1 MiB before closing.
TEST_P(HttpServer, Answers400ToAContentLengthAboveTheSigned64BitRange) {
    serve_default();
    raw_client c(ep);
    std::string body;
    ASSERT_EQ(400, c.request(head("POST", "/text", "Content-Length: 9999999999999999999\r\n") +
                                 std::string(1000, 'b'),
                             &body));
    EXPECT_EQ("close", c.resp.headers["Connection"]);
    EXPECT_TRUE(c.closed());
}

TEST_P(HttpServer, ServesHttp10Peers) {
    serve_default();
    {
        raw_client c(ep);
        ASSERT_TRUE(c.send("GET /text HTTP/1.0\r\n\r\n"));
        std::string all = c.read_to_eof();
        EXPECT_EQ(0u, all.find("HTTP/1.1 200 OK\r\n"));
        EXPECT_NE(std::string::npos, all.find("Connection: close\r\n"));
        EXPECT_EQ("hello\n", all.substr(all.size() - 6));
    }
    {
        raw_client c(ep);
        std::string body;
        ASSERT_EQ(200, c.request("GET /text HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", &body));
        EXPECT_EQ("keep-alive", c.resp.headers["Connection"]);
        // No length known: the body is delimited by the close.
        ASSERT_TRUE(c.send("GET /chunks HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
        std::string all = c.read_to_eof();
        EXPECT_NE(std::string::npos, all.find("Connection: close\r\n"));
        EXPECT_EQ("one,two,three", all.substr(all.size() - 13));
    }
}

TEST_P(HttpServer, ClosesAfterMaxRequestsPerConnection) {
    ServerOptions opts;
    opts.max_requests_per_connection = 3;
    serve_default(opts);
    raw_client c(ep);
    for (int i = 1; i <= 3; i++) {
        ASSERT_EQ(200, c.request(head("GET", "/text")));
        EXPECT_EQ(i < 3, c.resp.keep_alive()) << i;
    }
    EXPECT_TRUE(c.closed());
}

TEST_P(HttpServer, HonoursConnectionCloseFromTheClient) {
    serve_default();
    raw_client c(ep);
    ASSERT_EQ(200, c.request(head("GET", "/text", "Connection: close\r\n")));
    EXPECT_EQ("close", c.resp.headers["Connection"]);
    EXPECT_TRUE(c.closed());
}

TEST_P(HttpServer, TunnelsAfterTakingTheConnectionOver) {
    // A CONNECT-like handler: answers 200, then echoes raw bytes through
    // connection_stream(), which returns what was pipelined after the head.
    serve({}, [](HTTPServer* s) {
        s->add_handler({+[](void*, Request& req, Response& resp, std::string_view) -> int {
                            ISocketStream* conn = connection_stream(req);
                            if (!conn) return -1;
                            resp.headers.content_length(0);
                            if (resp.send() < 0) return -1;
                            char buf[256];
                            ssize_t n;
                            while ((n = conn->recv(buf, sizeof(buf))) > 0)
                                if (conn->write(buf, n) != n) return -1;
                            return 0;
                        },
                        nullptr});
    });
    raw_client c(ep);
    ASSERT_TRUE(c.send(head("CONNECT", "example.com:443") + "early"));
    ASSERT_EQ(200, c.get(nullptr, Verb::CONNECT));
    std::string got;
    ASSERT_FALSE(c.closed(kLongUs, &got));
    EXPECT_EQ("early", got);
    ASSERT_TRUE(c.send("GET / HTTP/1.1\r\n\r\n"));  // not parsed: tunnelled
    got.clear();
    ASSERT_FALSE(c.closed(kLongUs, &got));
    EXPECT_EQ("GET / HTTP/1.1\r\n\r\n", got);
    c.stream()->shutdown(ShutdownHow::Write);
    EXPECT_TRUE(c.closed());
    Request foreign;
    EXPECT_EQ(nullptr, connection_stream(foreign));
    EXPECT_EQ(EINVAL, errno);
}

TEST_P(HttpServer, SendsAStreamingHeadBeforeTheFirstEvent) {
    // A handler that sends a head without a length and waits for an event:
    // the client has the head while the handler waits (chunked for 1.1,
    // until close for 1.0).
    serve_default();
    for (int minor : {1, 0}) {
        SCOPED_TRACE(minor);
        raw_client c(ep);
        ASSERT_TRUE(c.send(minor ? head("GET", "/events")
                                 : std::string("GET /events HTTP/1.0\r\nHost: t\r\n\r\n")));
        std::string got;
        char buf[4096];
        c.stream()->timeout(3'000'000);  // the event comes only after the head
        for (int i = 0; i < 20 && got.find("\r\n\r\n") == got.npos; i++) {
            ssize_t n = c.stream()->recv(buf, sizeof(buf));
            if (n <= 0) break;
            got.append(buf, n);
        }
        h.event.signal(1);  // the handler goes on either way
        c.stream()->timeout(kLongUs);
        size_t end = got.find("\r\n\r\n");
        ASSERT_NE(got.npos, end) << "no head while the handler waits: " << got;
        EXPECT_EQ(got.size(), end + 4) << "bytes after the head: " << got;
        EXPECT_EQ("HTTP/1.1 200", got.substr(0, 12));
        EXPECT_NE(got.npos, got.find("Content-Type: text/event-stream\r\n"));
        if (minor) {
            EXPECT_NE(got.npos, got.find("Transfer-Encoding: chunked\r\n"));
            std::string rest;
            for (int i = 0; i < 20 && rest.find("0\r\n\r\n") == rest.npos; i++) {
                ssize_t n = c.stream()->recv(buf, sizeof(buf));
                if (n <= 0) break;
                rest.append(buf, n);
            }
            EXPECT_EQ("b\r\ndata: one\n\n\r\n0\r\n\r\n", rest);
        } else {
            EXPECT_EQ("data: one\n\n", c.read_to_eof());
        }
    }
}

PHOTON_INSTANTIATE_ENGINE_TESTS(HttpServer);

}  // namespace
