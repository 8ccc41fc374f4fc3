// WebSocketOptions' limits after the upgrade (websocket.h), on both event
// engines: the idle and message deadlines (set, and derived from the
// HTTPServer's ServerOptions), the ping-flood bound, the memory budget (a
// server's through ServerOptions::memory_budget, a client's through its
// options), and HTTPServer::stop() with upgraded connections (Close 1001).
// The HTTP server's own use of the budget (503) is here too. Every server
// listens on 127.0.0.1.
#include <photon/net/http/websocket.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <photon/common/memory_budget.h>
#include <photon/thread/thread11.h>

#include "websocket_test_util.h"

using namespace photon;
using namespace photon::net;
using namespace photon::net::http;
using namespace photon_test;

namespace {

constexpr uint64_t kMs = 1000;
constexpr uint64_t kBound = 5'000 * kMs;  // "within": generous, never a tight window

// A server handler that echoes text and records how its receiving ended.
struct recorder {
    size_t buf_size = 64 * 1024;
    uint64_t delay = 0;  // us after each echo (a slow handler)
    int sndbuf = 0;      // SO_SNDBUF of the connection, if set
    bool done = false;
    bool closed = false;  // is_closed() when receiving ended
    int recv_errno = 0;   // 0: a Close came
    std::string close_payload;

    int handle(IWebSocketStream* ws) {
        if (sndbuf)
            ws->get_socket_stream()->setsockopt(SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
        for (int i = 0; i < 10000; i++) {
            auto r = recv_on(ws, kLongUs, buf_size);
            if (r.n < 0) {
                recv_errno = r.err;
                break;
            }
            if (r.op == Op::Close) {
                close_payload = r.data;
                break;
            }
            if (r.op == Op::Text) ws->send_text(r.data);
            if (delay) photon::thread_usleep(delay);
        }
        closed = ws->is_closed();
        done = true;
        return 0;
    }
};

// Answers "hi\n", noting what the budget held meanwhile.
struct hi_handler {
    MemoryBudget* budget = nullptr;
    size_t during = 0;
    int handle(Request&, Response& resp, std::string_view) {
        if (budget) during = budget->used();
        resp.headers.content_length(3);
        return resp.write("hi\n", 3) == 3 ? 0 : -1;
    }
};

// Reads the server's frames until its Close: that Close's code (1005 for one
// without a code; 0 if the connection ended or nothing came within
// `timeout`). *pongs counts the Pongs before it.
uint16_t read_until_close(raw_client& raw, int* pongs = nullptr, uint64_t timeout = kBound) {
    std::string got;
    char buf[4096];
    Timeout t(timeout);
    for (;;) {
        while (got.size() >= 2) {
            uint64_t len = (uint8_t)got[1] & 0x7F;
            size_t h = 2;
            if (len == 126) {
                if (got.size() < 4) break;
                len = (uint64_t)(uint8_t)got[2] << 8 | (uint8_t)got[3];
                h = 4;
            } else if (len == 127) {
                if (got.size() < 10) break;
                len = 0;
                for (int i = 0; i < 8; i++) len = len << 8 | (uint8_t)got[2 + i];
                h = 10;
            }
            if (got.size() < h + len) break;
            uint8_t op = (uint8_t)got[0] & 0x0F;
            if (op == 0xA && pongs) ++*pongs;
            if (op == 0x8) return len >= 2 ? code_of(got.substr(h, 2)) : 1005;
            got.erase(0, h + len);
        }
        if (t.expired()) return 0;
        raw.stream()->timeout(t.timeout());
        ssize_t n = raw.stream()->recv(buf, sizeof(buf));
        if (n <= 0) return 0;
        got.append(buf, (size_t)n);
    }
}

class WebSocketLimits : public HttpServerTest {
protected:
    void TearDown() override {
        client.reset();
        tcp.reset();  // the server's accounts go before their budget
        http.reset();
        budget.reset();
        HttpServerTest::TearDown();
    }
    MemoryBudget* new_budget(size_t limit) {
        budget.reset(new MemoryBudget(limit));
        return budget.get();
    }
    // Serves rec on /ws with these options.
    void serve_ws(const ServerOptions& so, const WebSocketOptions& wo) {
        serve(so, [&](HTTPServer* h) {
            h->add_handler(new_websocket_handler({&rec, &recorder::handle}, wo), true, "/ws");
            h->add_handler(new_websocket_handler({&other, &recorder::handle}), true, "/other");
            h->add_handler({&hi, &hi_handler::handle});
        });
        client.reset(new_http_client());
    }
    std::unique_ptr<IWebSocketStream> connect(std::string_view path = "/ws",
                                              const WebSocketOptions& o = WebSocketOptions()) {
        return std::unique_ptr<IWebSocketStream>(
            websocket_connect(client.get(), url(path), kLongUs, o));
    }
    // A raw connection upgraded on path.
    std::unique_ptr<raw_client> upgraded(const char* path = "/ws") {
        std::unique_ptr<raw_client> raw(new raw_client(ep));
        EXPECT_TRUE(raw->ok());
        if (raw->ok()) {
            EXPECT_EQ(101, raw->request(upgrade_head(path)));
        }
        return raw;
    }

    // Serves /ws with a handler that appends each session's recv_errno to *errnos.
    void serve_each(const ServerOptions& so, const WebSocketOptions& wo, std::vector<int>* errnos) {
        each.errnos = errnos;
        serve(so, [&](HTTPServer* s) {
            s->add_handler(new_websocket_handler({&each, &collector::handle}, wo), true, "/ws");
            s->add_handler(new_websocket_handler({&other, &recorder::handle}), true, "/other");
        });
        client.reset(new_http_client());
    }
    struct collector : recorder {
        std::vector<int>* errnos;
        int handle(IWebSocketStream* ws) {
            recorder::handle(ws);
            errnos->push_back(recv_errno);
            return 0;
        }
    } each;

    recorder rec, other;
    hi_handler hi;
    std::unique_ptr<MemoryBudget> budget;
    std::unique_ptr<Client> client;
};

// ---- deadlines ------------------------------------------------------------------

TEST_P(WebSocketLimits, AnIdlePeerGetsGoingAwayAndTheHandlerEtime) {
    WebSocketOptions wo;
    wo.idle_timeout = 300 * kMs;
    serve_ws(ServerOptions(), wo);
    auto ws = connect();
    ASSERT_TRUE(ws);
    uint64_t t0 = photon::now;
    auto r = recv_on(ws.get(), kBound, 1024);
    uint64_t took = photon::now - t0;
    ASSERT_EQ(Op::Close, r.op) << r.err;
    EXPECT_EQ(1001, code_of(r.data));
    EXPECT_GE(took, 250 * kMs);
    ASSERT_TRUE(wait_for([&] { return rec.done; }));
    EXPECT_EQ(ETIME, rec.recv_errno);
    EXPECT_TRUE(rec.closed);
}

TEST_P(WebSocketLimits, FramesKeepAConnectionFromBeingIdle) {
    WebSocketOptions wo;
    wo.idle_timeout = 500 * kMs;
    serve_ws(ServerOptions(), wo);
    auto ws = connect();
    ASSERT_TRUE(ws);
    for (int i = 0; i < 10; i++) {  // a second in all, a message every 100 ms
        photon::thread_usleep(100 * kMs);
        ASSERT_EQ(2, ws->send_text("hi", kLongUs));
        auto r = recv_on(ws.get(), kBound, 1024);
        ASSERT_EQ(Op::Text, r.op) << r.err;
    }
    EXPECT_FALSE(rec.done);
}

TEST_P(WebSocketLimits, AFrameThatWaitedForASlowHandlerDoesNotCountAsIdle) {
    WebSocketOptions wo;
    wo.idle_timeout = 200 * kMs;
    rec.delay = 500 * kMs;  // past idle_timeout after each echo
    serve_ws(ServerOptions(), wo);
    auto ws = connect();
    ASSERT_TRUE(ws);
    ASSERT_EQ(1, ws->send_text("a", kLongUs));
    ASSERT_EQ("a", recv_on(ws.get(), kBound, 1024).data);
    ASSERT_EQ(1, ws->send_text("b", kLongUs));  // here long before the handler looks
    auto r = recv_on(ws.get(), kBound, 1024);
    EXPECT_EQ(Op::Text, r.op) << r.err;
    EXPECT_EQ("b", r.data);
}

TEST_P(WebSocketLimits, TheServersDefaultsComeFromItsServerOptions) {
    ServerOptions so;
    so.keepalive_timeout = 300 * kMs;  // idle_timeout
    serve_ws(so, WebSocketOptions());
    auto ws = connect();
    ASSERT_TRUE(ws);
    auto r = recv_on(ws.get(), kBound, 1024);
    ASSERT_EQ(Op::Close, r.op) << r.err;
    EXPECT_EQ(1001, code_of(r.data));
    ASSERT_TRUE(wait_for([&] { return rec.done; }));
    EXPECT_EQ(ETIME, rec.recv_errno);
}

TEST_P(WebSocketLimits, AMessageThatDripsPastMessageTimeoutGetsA1008) {
    WebSocketOptions wo;
    wo.message_timeout = 400 * kMs;  // the server default would be header_timeout
    serve_ws(ServerOptions(), wo);
    auto raw = upgraded();
    // A 1000-byte text message sent 10 bytes per 50 ms (2 s in all), with a
    // Ping between its fragments: the Ping does not restart the deadline.
    std::string msg =
        frame(0x01, std::string(500, 'a')) + frame(0x89, "p") + frame(0x80, std::string(500, 'b'));
    uint64_t t0 = photon::now;
    photon::thread_create11([&] {
        for (size_t i = 0; i < msg.size() && !rec.done; i += 10) {
            if (!raw->send(msg.substr(i, 10))) return;
            photon::thread_usleep(50 * kMs);
        }
    });
    EXPECT_EQ(1008, read_until_close(*raw));
    EXPECT_LT(photon::now - t0, 1'500 * kMs);
    ASSERT_TRUE(wait_for([&] { return rec.done; }));
    EXPECT_EQ(ETIME, rec.recv_errno);
    raw->stream()->shutdown(ShutdownHow::ReadWrite);  // ends the dripping coroutine's sends
    photon::thread_usleep(100 * kMs);
}

TEST_P(WebSocketLimits, TheServerDefaultMessageTimeoutIsHeaderTimeout) {
    ServerOptions so;
    so.header_timeout = 300 * kMs;
    serve_ws(so, WebSocketOptions());
    auto raw = upgraded();
    ASSERT_TRUE(raw->send(std::string("\x82", 1)));  // half a frame header, then silence
    EXPECT_EQ(1008, read_until_close(*raw));
    ASSERT_TRUE(wait_for([&] { return rec.done; }));
    EXPECT_EQ(ETIME, rec.recv_errno);
}

TEST_P(WebSocketLimits, ACallersShortTimeoutStillLosesNothingUnderTheDeadlines) {
    WebSocketOptions wo;
    wo.idle_timeout = 2'000 * kMs;
    wo.message_timeout = 2'000 * kMs;
    serve_ws(ServerOptions(), wo);
    auto ws = connect("/other");  // the client keeps its own deadlines: none
    ASSERT_TRUE(ws);
    auto r = recv_on(ws.get(), 50 * kMs, 1024);
    EXPECT_EQ(ETIMEDOUT, r.err);
    EXPECT_FALSE(ws->is_closed());
    ASSERT_EQ(4, ws->send_text("echo", kLongUs));
    r = recv_on(ws.get(), kBound, 1024);
    EXPECT_EQ(Op::Text, r.op);
    EXPECT_EQ("echo", r.data);
}

// ---- pings --------------------------------------------------------------------

TEST_P(WebSocketLimits, APingFloodIsClosedWith1008) {
    WebSocketOptions wo;
    wo.max_ping_rate = 4;  // a burst of 4, then 4 a second
    serve_ws(ServerOptions(), wo);
    auto raw = upgraded();
    std::string pings;
    for (int i = 0; i < 4; i++) pings += frame(0x89, "p" + std::to_string(i));
    ASSERT_TRUE(raw->send(pings));
    // Four are answered; the fifth, at once, is one too many.
    int pongs = 0;
    ASSERT_TRUE(raw->send(frame(0x89, "too many")));
    EXPECT_EQ(1008, read_until_close(*raw, &pongs));
    EXPECT_EQ(4, pongs);
    ASSERT_TRUE(wait_for([&] { return rec.done; }));
    EXPECT_EQ(ECONNABORTED, rec.recv_errno);
}

TEST_P(WebSocketLimits, APeerFloodingPingsWithoutReadingIsCut) {
    serve_ws(ServerOptions(), WebSocketOptions());  // the server default, 16 a second
    auto raw = upgraded();
    std::string burst;
    for (int i = 0; i < 1000; i++) burst += frame(0x89, std::string(100, 'f'));
    ASSERT_TRUE(raw->send(burst));  // does not read while it sends
    // Its unread pings reset the connection once the server closes it, which
    // may destroy the Close 1008 and Pongs queued for us: the end is enough.
    int pongs = 0;
    uint16_t code = read_until_close(*raw, &pongs);
    EXPECT_TRUE(code == 1008 || code == 0) << code;
    EXPECT_LE(pongs, 16);
    EXPECT_TRUE(raw->closed());
    ASSERT_TRUE(wait_for([&] { return rec.done; }));
    EXPECT_EQ(ECONNABORTED, rec.recv_errno);
}

TEST_P(WebSocketLimits, PongsThatBackUpBecauseThePeerDoesNotReadAreAFlood) {
    WebSocketOptions wo;
    wo.max_ping_rate = (uint32_t)-1;  // no rate: the Pongs' backlog is the bound
    rec.sndbuf = 4096;
    serve_ws(ServerOptions(), wo);
    auto raw = upgraded();
    int rcvbuf = 4096;  // so that the Pongs back up soon
    raw->stream()->setsockopt(SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
    bool sending = true;
    photon::thread_create11([&] {  // up to 4 MB of pings, never reading a Pong
        std::string burst;
        for (int i = 0; i < 1000; i++) burst += frame(0x89, std::string(100, 'f'));
        for (int i = 0; i < 40 && !rec.done; i++)
            if (!raw->send(burst)) break;
        sending = false;
    });
    uint64_t t0 = photon::now;
    ASSERT_TRUE(wait_for([&] { return rec.done; }, 15'000)) << "sending " << sending;
    EXPECT_EQ(ECONNABORTED, rec.recv_errno);
    EXPECT_GE(photon::now - t0, 4'000 * kMs);  // a Pong waited 5 s for room
    raw->stream()->shutdown(ShutdownHow::ReadWrite);
    EXPECT_TRUE(wait_for([&] { return !sending; }));
}

TEST_P(WebSocketLimits, PingsWithinTheRateAndAnUnboundedRateAreAllAnswered) {
    WebSocketOptions wo;
    wo.max_ping_rate = (uint32_t)-1;  // no bound
    serve_ws(ServerOptions(), wo);
    auto raw = upgraded();
    std::string burst;
    for (int i = 0; i < 200; i++) burst += frame(0x89, "p");
    ASSERT_TRUE(raw->send(burst + frame(0x88, code_bytes(1000))));
    int pongs = 0;
    EXPECT_EQ(1000, read_until_close(*raw, &pongs));
    EXPECT_EQ(200, pongs);
    ASSERT_TRUE(wait_for([&] { return rec.done; }));
    EXPECT_EQ(0, rec.recv_errno);
}

// ---- stop() ----------------------------------------------------------------------

TEST_P(WebSocketLimits, StopSendsGoingAwayAndTheClientsCloseEndsIt) {
    serve_ws(ServerOptions(), WebSocketOptions());
    auto ws = connect();
    ASSERT_TRUE(ws);
    ASSERT_EQ(2, ws->send_text("hi", kLongUs));
    ASSERT_EQ("hi", recv_on(ws.get(), kBound, 1024).data);  // the handler waits for frames
    int stopped = 1;
    uint64_t t0 = photon::now;
    photon::thread_create11([&] { stopped = http->stop(kBound); });
    auto r = recv_on(ws.get(), kBound, 1024);  // our client answers the Close
    ASSERT_EQ(Op::Close, r.op) << r.err;
    EXPECT_EQ(1001, code_of(r.data));
    ASSERT_TRUE(wait_for([&] { return stopped != 1; }));
    EXPECT_EQ(0, stopped);
    EXPECT_LT(photon::now - t0, 1'000 * kMs);  // not the wait for a Close that never comes
    EXPECT_TRUE(rec.done);
    EXPECT_EQ(0, rec.recv_errno);                 // the handler got our client's Close
    EXPECT_EQ(1001, code_of(rec.close_payload));  // echoing its code
}

TEST_P(WebSocketLimits, StopWaitsABoundedTimeForAPeerThatNeverCloses) {
    serve_ws(ServerOptions(), WebSocketOptions());
    auto raw = upgraded();
    ASSERT_TRUE(raw->send(frame(0x81, "hi")));
    photon::thread_usleep(50 * kMs);
    int stopped = 1;
    uint64_t t0 = photon::now;
    photon::thread_create11([&] { stopped = http->stop(kBound); });
    // The echo, then Close 1001; we never answer it.
    EXPECT_EQ(1001, read_until_close(*raw));
    ASSERT_TRUE(wait_for([&] { return stopped != 1; }));
    EXPECT_EQ(0, stopped);
    uint64_t took = photon::now - t0;
    EXPECT_GE(took, 800 * kMs);  // a second for the peer's Close
    EXPECT_LT(took, 3'000 * kMs);
    EXPECT_EQ(ECANCELED, rec.recv_errno);
    EXPECT_TRUE(raw->closed());
}

// ---- the memory budget ------------------------------------------------------------

// Samples a budget's use every millisecond until stopped: the peak.
struct peak_sampler {
    explicit peak_sampler(MemoryBudget* b) {
        photon::thread_create11([this, b] {
            while (!stop) {
                peak = std::max(peak, b->used());
                photon::thread_usleep(1000);
            }
            stopped = true;
        });
    }
    ~peak_sampler() {
        stop = true;
        wait_for([&] { return stopped; });
    }
    size_t peak = 0;
    bool stop = false, stopped = false;
};

// Sends a header claiming `claimed` bytes, then `sent` bytes of payload (or
// until the connection fails or *done), pausing `pace` us every 64 KiB.
void send_claimed(raw_client* raw, uint64_t claimed, size_t sent, bool* done, bool* sending,
                  uint64_t pace = 0) {
    *sending = true;
    photon::thread_create11([=] {
        std::string chunk(64 * 1024, 'x');
        raw->send(claim(0x82, claimed));
        for (size_t i = 0; i < sent && !*done; i += chunk.size()) {
            if (!raw->send(chunk.substr(0, std::min(chunk.size(), sent - i)))) break;
            if (pace) photon::thread_usleep(pace);
        }
        *sending = false;
    });
}

TEST_P(WebSocketLimits, AMessageTheBudgetCanNeverHoldGetsA1009AtOnce) {
    MemoryBudget& b = *new_budget(4 << 20);
    ServerOptions so;
    so.memory_budget = &b;
    WebSocketOptions wo;
    wo.message_timeout = 5'000 * kMs;
    serve_ws(so, wo);
    peak_sampler sampler(&b);
    auto raw = upgraded();
    // 8 MiB claimed and sent: the buffer grows with the bytes, to 2 MiB; 4
    // would pass what one connection may hold (limit - reserve, 3 MiB).
    bool sending = false;
    uint64_t t0 = photon::now;
    send_claimed(raw.get(), 8 << 20, 8 << 20, &rec.done, &sending, 5 * kMs);
    ASSERT_TRUE(wait_for([&] { return rec.done; }));
    EXPECT_LT(photon::now - t0, 4'000 * kMs);  // refused, not waited for
    EXPECT_EQ(ENOMEM, rec.recv_errno);
    EXPECT_LE(sampler.peak, b.limit() - b.limit() / 4);
    EXPECT_GE(sampler.peak, 1u << 20);  // it did grow with the bytes
    raw->stream()->shutdown(ShutdownHow::ReadWrite);
    EXPECT_TRUE(wait_for([&] { return !sending; }));
    EXPECT_TRUE(wait_for([&] { return http->connections() == 0; }));
    EXPECT_EQ(0u, b.used());  // all given back
}

TEST_P(WebSocketLimits, AMessageWaitingForRoomPastItsDeadlineGetsA1009) {
    MemoryBudget& b = *new_budget(8 << 20);
    ServerOptions so;
    so.memory_budget = &b;
    WebSocketOptions wo;
    wo.message_timeout = 1'000 * kMs;  // how long it may wait for room
    serve_ws(so, wo);
    // Two peers each send 4 MiB - 1 of a 4 MiB message: both buffers grow to
    // 2 MiB; one then gets to 4 MiB (6 of the 6 MiB outside the reserve), the
    // other waits for room without being read, until its deadline.
    std::vector<int> errnos;
    serve_each(so, wo, &errnos);
    peak_sampler sampler(&b);
    auto raw1 = upgraded(), raw2 = upgraded();
    bool done = false, sending1 = false, sending2 = false;
    uint64_t t0 = photon::now;
    send_claimed(raw1.get(), 4 << 20, (4 << 20) - 1, &done, &sending1);
    send_claimed(raw2.get(), 4 << 20, (4 << 20) - 1, &done, &sending2);
    // A well-behaved client on the same server is served meanwhile.
    auto ws = connect("/other");
    ASSERT_TRUE(ws);
    for (int i = 0; i < 5; i++) {
        ASSERT_EQ(1000, ws->send_text(std::string(1000, 'w'), kLongUs));
        auto r = recv_on(ws.get(), kBound, 4096);
        ASSERT_EQ(Op::Text, r.op) << r.err;
        photon::thread_usleep(20 * kMs);
    }
    ASSERT_TRUE(wait_for([&] { return errnos.size() == 2; }));
    EXPECT_GE(photon::now - t0, 900 * kMs);  // the second waited for room until its deadline
    done = true;
    std::sort(errnos.begin(), errnos.end());
    EXPECT_EQ((std::vector<int>{ENOMEM, ETIME}), errnos);  // 1009 waiting, 1008 the other
    EXPECT_LE(sampler.peak, b.limit());
    EXPECT_GE(sampler.peak, 6u << 20);
    raw1->stream()->shutdown(ShutdownHow::ReadWrite);
    raw2->stream()->shutdown(ShutdownHow::ReadWrite);
    EXPECT_TRUE(wait_for([&] { return !sending1 && !sending2; }));
    ws.reset();
    EXPECT_TRUE(wait_for([&] { return http->connections() == 0; }));
    EXPECT_EQ(0u, b.used());
}

TEST_P(WebSocketLimits, StopEndsAStreamWaitingForRoomInTheBudget) {
    MemoryBudget& b = *new_budget(8 << 20);
    ServerOptions so;
    so.memory_budget = &b;
    WebSocketOptions wo;
    wo.message_timeout = 20'000 * kMs;  // far beyond what stop() may take
    std::vector<int> errnos;
    serve_each(so, wo, &errnos);
    // As above: one peer's message holds 4 MiB, the other's waits for room.
    auto raw1 = upgraded(), raw2 = upgraded();
    bool done = false, sending1 = false, sending2 = false;
    send_claimed(raw1.get(), 4 << 20, (4 << 20) - 1, &done, &sending1);
    send_claimed(raw2.get(), 4 << 20, (4 << 20) - 1, &done, &sending2);
    ASSERT_TRUE(wait_for([&] { return b.used() >= (6u << 20); }));
    photon::thread_usleep(100 * kMs);
    uint64_t t0 = photon::now;
    EXPECT_EQ(0, http->stop(kBound));
    EXPECT_LT(photon::now - t0, 4'000 * kMs);  // a second for each Close at most
    done = true;
    EXPECT_EQ((std::vector<int>{ECANCELED, ECANCELED}), errnos);
    EXPECT_EQ(0u, b.used());
    raw1->stream()->shutdown(ShutdownHow::ReadWrite);
    raw2->stream()->shutdown(ShutdownHow::ReadWrite);
    EXPECT_TRUE(wait_for([&] { return !sending1 && !sending2; }));
}

TEST_P(WebSocketLimits, AClientsBudgetRefusesAMessageItCannotHold) {
    rec.buf_size = 4 << 20;
    serve_ws(ServerOptions(), WebSocketOptions());
    MemoryBudget& b = *new_budget(1 << 20);
    WebSocketOptions wo;
    wo.memory_budget = &b;
    auto ws = connect("/ws", wo);
    ASSERT_TRUE(ws);
    std::string big(2 << 20, 't');  // echoed back as text: above the client's budget
    ASSERT_EQ((ssize_t)big.size(), ws->send_text(big, kLongUs));
    auto r = recv_on(ws.get(), kBound, 1024);
    EXPECT_EQ(-1, r.n);
    EXPECT_EQ(ENOMEM, r.err);
    EXPECT_TRUE(ws->is_closed());
    ASSERT_TRUE(wait_for([&] { return rec.done; }));
    EXPECT_EQ(1009, code_of(rec.close_payload));
    ws.reset();
    EXPECT_EQ(0u, b.used());
}

TEST_P(WebSocketLimits, AnHttpRequestWithoutRoomGets503AndTheConnectionCloses) {
    MemoryBudget& b = *new_budget(16 * 1024);  // below what one request holds (its 64 KiB buffer)
    ServerOptions so;
    so.memory_budget = &b;
    serve_ws(so, WebSocketOptions());
    raw_client raw(ep);
    ASSERT_TRUE(raw.ok());
    EXPECT_EQ(503, raw.request(head("GET", "/x")));
    EXPECT_EQ("1", raw.resp.headers["Retry-After"]);
    EXPECT_TRUE(raw.closed());
    EXPECT_EQ(0u, b.used());
    EXPECT_GE(b.sheds(), 1u);
}

TEST_P(WebSocketLimits, ARequestHoldsItsBytesUntilItsResponseIsOut) {
    MemoryBudget& b = *new_budget(8 << 20);
    ServerOptions so;
    so.memory_budget = &b;
    hi.budget = &b;
    serve(so, [&](HTTPServer* h) { h->add_handler({&hi, &hi_handler::handle}); });
    raw_client raw(ep);
    ASSERT_TRUE(raw.ok());
    for (int i = 0; i < 3; i++) {
        std::string body;
        ASSERT_EQ(200, raw.request(head("GET", "/"), &body));
        EXPECT_EQ("hi\n", body);
        EXPECT_GE(hi.during, 64u * 1024);                      // the head buffer, at least
        EXPECT_TRUE(wait_for([&] { return b.used() == 0; }));  // kept alive, idle
    }
}

PHOTON_INSTANTIATE_ENGINE_TESTS(WebSocketLimits);

}  // namespace
