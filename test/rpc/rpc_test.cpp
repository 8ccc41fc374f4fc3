// Stubs and skeletons over loopback TCP and unix sockets, on both event
// engines: every field type end to end, many calls in flight on one stub with
// replies out of order, timeouts and interrupts that disturb nobody else, and
// hostile peers on either side.
#include <photon/rpc/rpc.h>

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <photon/common/metric-meter/prometheus.h>
#include <photon/net/security-context/tls-stream.h>
#include <photon/net/socket.h>
#include <photon/photon.h>
#include <photon/thread/thread11.h>

#include "../util/engine_fixture.h"
#include "../net/net_test_util.h"
#include "../thread/test_util.h"
#include "../util/metrics.h"
#include "../util/temp_dir.h"
#include "../util/tls_pair.h"
#include "rpc_messages.h"

using namespace photon;
using namespace photon::net;
using namespace rpc_test;
using photon_test::spawn;

namespace {

struct Service {
    int running = 0, max_running = 0;
    int do_rpc_service(Echo::Request* req, Echo::Response* resp, IOVector*, IStream*) {
        running++;
        max_running = std::max(max_running, running);
        if (req->delay_ms) thread_usleep(req->delay_ms * 1000);
        running--;
        resp->str = req->str;
        return 0;
    }
    int do_rpc_service(All* req, All* resp, IOVector*, IStream*) {
        *resp = *req;  // points at the request's received memory
        return 0;
    }
    int do_rpc_service(Checked* req, Checked* resp, IOVector*, IStream*) {
        resp->n = req->n + 1;
        resp->s = req->s;
        return 0;
    }
};

int serve_handler(void* sk, ISocketStream* s) { return ((rpc::Skeleton*)sk)->serve(s); }

class Rpc : public ::testing::TestWithParam<uint64_t> {
protected:
    void SetUp() override {
        PHOTON_TEST_INIT_ENGINE(GetParam(), INIT_IO_NONE);
        sk.reset(rpc::new_skeleton());
        ASSERT_TRUE(sk);
        ASSERT_EQ(0, (sk->register_service<Echo, Everything, Verify>(&svc)));
        server.reset(new_tcp_socket_server());
        ASSERT_EQ(0, server->bind_v4localhost(0));
        ASSERT_EQ(0, server->listen());
        ep = server->getsockname();
        server->set_handler({sk.get(), &serve_handler});
        ASSERT_EQ(0, server->start_loop(false));
        client.reset(new_tcp_socket_client());
    }
    void TearDown() override {
        if (!CURRENT) return;
        stub.reset();
        server.reset();
        sk.reset();
        client.reset();
        photon_test::fini_vcpu();
    }
    rpc::Stub* connect_stub() {
        auto s = client->connect(ep);
        if (!s) return nullptr;
        stub.reset(rpc::new_rpc_stub(s, true));
        return stub.get();
    }
    // A raw connection to the server, for frames no stub would send.
    ISocketStream* raw() {
        auto s = client->connect(ep);
        if (s) s->timeout(5 * 1000 * 1000);
        return s;
    }

    Service svc;
    std::unique_ptr<rpc::Skeleton> sk;
    std::unique_ptr<ISocketServer> server;
    std::unique_ptr<ISocketClient> client;
    std::unique_ptr<rpc::Stub> stub;
    EndPoint ep;
};

int echo(rpc::Stub* stub, const std::string& text, std::string* out, uint32_t delay_ms = 0,
         uint64_t timeout = 5 * 1000 * 1000) {
    Echo::Request req;
    req.delay_ms = delay_ms;
    req.str = std::string_view(text);
    Echo::Response resp;
    char buf[4096];
    resp.str.assign(buf, sizeof(buf));
    int r = stub->call<Echo>(req, resp, timeout);
    if (r >= 0 && out) *out = std::string(resp.str.sv());
    return r;
}

// n concurrent echo calls of `text` on s, each kept delay_ms on the server;
// *ok counts those answered with it. Join the returned tasks.
std::vector<photon_test::task> echo_in_parallel(rpc::Stub* s, int n, const std::string& text,
                                                uint32_t delay_ms, uint64_t timeout, int* ok) {
    std::vector<photon_test::task> calls;
    for (int i = 0; i < n; ++i)
        calls.push_back(spawn([=] {
            std::string out;
            if (echo(s, text, &out, delay_ms, timeout) > 0 && out == text) ++*ok;
        }));
    return calls;
}

TEST_P(Rpc, EchoIntoCallersBuffer) {
    auto s = connect_stub();
    ASSERT_NE(nullptr, s);
    Echo::Request req;
    req.str = "zero-copy please";
    Echo::Response resp;
    char buf[64];
    resp.str.assign(buf, sizeof(buf));
    int r = s->call<Echo>(req, resp);
    ASSERT_GT(r, 0);
    EXPECT_EQ("zero-copy please", resp.str.sv());
    EXPECT_EQ(buf, resp.str.c_str());  // the reply landed in our buffer
}

TEST_P(Rpc, EveryFieldTypeThroughTheNetwork) {
    auto s = connect_stub();
    ASSERT_NE(nullptr, s);
    std::vector<uint64_t> a{5, 6, 7};
    std::string b(10000, 'b'), ab(4096, 'q'), p1(3000, '1'), p2 = "two";
    iovec iovs[2] = {{&p1[0], p1.size()}, {&p2[0], p2.size()}};
    Point pt{3, -4};
    std::vector<uint32_t> nums{9, 8};
    std::vector<Inner> inners(3);
    All req;
    req.pod = 77;
    req.d = -1.25;
    req.s = "all the fields";
    req.a.assign(a);
    req.b.assign(b.data(), b.size());
    req.ab.assign(ab.data(), ab.size());
    req.iov.assign(iovs, 2);
    req.fb.assign(&pt);
    req.inner.id = 1;
    req.inner.name = "nested";
    req.inner.nums.assign(nums);
    for (int i = 0; i < 3; ++i) {
        inners[i].id = 10 + i;
        inners[i].name = std::string_view(i == 1 ? "middle" : "edge");
        inners[i].nums.assign(nums);
    }
    req.inners.assign(inners);

    IOVector resp_iov;
    auto r = s->call<Everything>(req, resp_iov);
    ASSERT_NE(nullptr, r) << strerror(errno);
    EXPECT_EQ(77u, r->pod);
    EXPECT_EQ(-1.25, r->d);
    EXPECT_EQ("all the fields", r->s.sv());
    ASSERT_EQ(3u, r->a.size());
    EXPECT_EQ(7u, r->a[2]);
    EXPECT_EQ(b, std::string((char*)r->b.addr(), r->b.size()));
    EXPECT_EQ(ab, std::string((char*)r->ab.addr(), r->ab.size()));
    std::string got;
    for (auto& v : r->iov) got.append((char*)v.iov_base, v.iov_len);
    EXPECT_EQ(p1 + p2, got);
    EXPECT_EQ(3, r->fb.get()->x);
    EXPECT_EQ(-4, r->fb.get()->y);
    EXPECT_EQ("nested", r->inner.name.sv());
    ASSERT_EQ(2u, r->inner.nums.size());
    ASSERT_EQ(3u, r->inners.size());
    EXPECT_EQ("middle", r->inners[1].name.sv());
    EXPECT_EQ(12u, r->inners[2].id);
    EXPECT_EQ(8u, r->inners[2].nums[1]);
}

TEST_P(Rpc, CheckedMessagesVerify) {
    auto s = connect_stub();
    ASSERT_NE(nullptr, s);
    Checked req;
    req.n = 41;
    req.s = "integrity";
    IOVector resp_iov;
    auto r = s->call<Verify>(req, resp_iov);
    ASSERT_NE(nullptr, r);
    EXPECT_EQ(42u, r->n);
    EXPECT_EQ("integrity", r->s.sv());
}

TEST_P(Rpc, ManyCallsInFlightRepliesOutOfOrder) {
    auto s = connect_stub();
    ASSERT_NE(nullptr, s);
    const int N = 64;
    int ok = 0;
    std::vector<photon_test::task> tasks;
    for (int i = 0; i < N; ++i) {
        tasks.push_back(spawn([&, i] {
            std::string out, text = "call #" + std::to_string(i);
            // Later calls finish first.
            if (echo(s, text, &out, (N - i) % 7 * 5) > 0 && out == text) ok++;
        }));
    }
    for (auto& t : tasks) t.join();
    EXPECT_EQ(N, ok);
    EXPECT_GT(svc.max_running, 8);  // they really ran at once on the server
    EXPECT_EQ(0, s->get_queue_count());
}

TEST_P(Rpc, TimeoutLeavesOthersAndStubIntact) {
    auto s = connect_stub();
    ASSERT_NE(nullptr, s);
    std::string out_fast;
    int fast = -2;
    auto t = spawn([&] { fast = echo(s, "fast", &out_fast, 50); });
    // This one gives up before its reply; the fast one, sent after, still works.
    errno = 0;
    EXPECT_EQ(-1, echo(s, "slow", nullptr, 300, 100 * 1000));
    EXPECT_EQ(ETIMEDOUT, errno);
    t.join();
    EXPECT_GT(fast, 0);
    EXPECT_EQ("fast", out_fast);
    // The slow call's handler finishes; its late reply is dropped by the stub.
    ASSERT_TRUE(photon_test::wait_for([&] { return svc.running == 0; }));
    std::string out;
    EXPECT_GT(echo(s, "after", &out), 0);
    EXPECT_EQ("after", out);
}

TEST_P(Rpc, InterruptedCallerLeavesAlone) {
    auto s = connect_stub();
    ASSERT_NE(nullptr, s);
    int r = 0, e = 0;
    auto t = spawn([&] {
        r = echo(s, "interrupt me", nullptr, 200);
        e = errno;
    });
    ASSERT_TRUE(photon_test::until_sleeping(t.th));  // parked for its reply
    thread_interrupt(t.th);
    t.join();
    EXPECT_EQ(-1, r);
    EXPECT_EQ(EINTR, e);
    std::string out;
    EXPECT_GT(echo(s, "still fine", &out), 0);
    EXPECT_EQ("still fine", out);
}

TEST_P(Rpc, UnknownFunctionGetsENOSYSAndConnectionGoesOn) {
    auto s = connect_stub();
    ASSERT_NE(nullptr, s);
    Missing::Request req;
    req.str = "anyone?";
    Missing::Response resp;
    char buf[16];
    resp.str.assign(buf, sizeof(buf));
    errno = 0;
    EXPECT_EQ(-1, s->call<Missing>(req, resp));
    EXPECT_EQ(ENOSYS, errno);
    std::string out;
    EXPECT_GT(echo(s, "next", &out), 0);
    EXPECT_EQ("next", out);
}

struct Op : TestSvc {
    const static uint32_t FID = 7;
    using Request = Echo::Request;
    using Response = Echo::Response;
};

TEST_P(Rpc, FunctionThatFailsWithoutReplyingReportsItsErrno) {
    ASSERT_EQ(0, sk->add_function(rpc::FunctionID(Op::IID, Op::FID),
                                  {nullptr,
                                   [](void*, iovector*, rpc::Skeleton::ResponseSender,
                                      IStream*) -> int { return errno = EPERM, -1; }}));
    EXPECT_EQ(-1, sk->add_function(rpc::FunctionID(Op::IID, Op::FID), {}));  // already there
    auto s = connect_stub();
    ASSERT_NE(nullptr, s);
    Echo::Request req;
    req.str = "x";
    Echo::Response resp;
    errno = 0;
    EXPECT_EQ(-1, s->call<Op>(req, resp));
    EXPECT_EQ(EPERM, errno);
    EXPECT_EQ(0, sk->remove_function(rpc::FunctionID(Op::IID, Op::FID)));
    EXPECT_EQ(-1, sk->remove_function(rpc::FunctionID(Op::IID, Op::FID)));
}

// Sends bytes and reports whether the server then closed the connection.
bool server_closes_after(ISocketStream* s, const void* data, size_t n) {
    if (n && s->write(data, n) != (ssize_t)n) return true;
    char c;
    ssize_t r = s->read(&c, 1);
    return r == 0 || (r < 0 && errno == ECONNRESET);
}

TEST_P(Rpc, BadFramesCloseOnlyTheirConnection) {
    auto s = connect_stub();
    ASSERT_NE(nullptr, s);
    rpc::Header good;
    good.size = 0;
    good.function = rpc::FunctionID(Echo::IID, Echo::FID);
    good.tag = 1;
    {
        rpc::Header h = good;
        h.magic ^= 1;
        std::unique_ptr<ISocketStream> r(raw());
        EXPECT_TRUE(server_closes_after(r.get(), &h, sizeof(h)));
    }
    {
        rpc::Header h = good;
        h.version = 9;
        std::unique_ptr<ISocketStream> r(raw());
        EXPECT_TRUE(server_closes_after(r.get(), &h, sizeof(h)));
    }
    {
        sk->set_max_message_size(1 << 20);
        rpc::Header h = good;
        h.size = (1 << 20) + 1;
        std::unique_ptr<ISocketStream> r(raw());
        EXPECT_TRUE(server_closes_after(r.get(), &h, sizeof(h)));
    }
    {
        // A request whose message does not decode: the caller hears EINVAL.
        rpc::Header h = good;
        h.size = 5;
        std::unique_ptr<ISocketStream> r(raw());
        ASSERT_EQ((ssize_t)sizeof(h), r->write(&h, sizeof(h)));
        ASSERT_EQ(5, r->write("short", 5));
        rpc::Header reply;
        ASSERT_EQ((ssize_t)sizeof(reply), r->read(&reply, sizeof(reply)));
        EXPECT_EQ(1u, reply.tag);
        EXPECT_EQ(0u, reply.size);
        EXPECT_EQ(0x50455252u, reply.reserved >> 32);
        EXPECT_EQ((uint64_t)EINVAL, reply.reserved & 0xffffffff);
    }
    {
        // The peer leaves in the middle of a body.
        rpc::Header h = good;
        h.size = 1000;
        std::unique_ptr<ISocketStream> r(raw());
        ASSERT_EQ((ssize_t)sizeof(h), r->write(&h, sizeof(h)));
        ASSERT_EQ(10, r->write("0123456789", 10));
    }
    std::string out;
    EXPECT_GT(echo(s, "unharmed", &out), 0);
    EXPECT_EQ("unharmed", out);
}

TEST_P(Rpc, MetricsCountRequestsBytesAndErrorsByKind) {
    PHOTON_TEST_SKIP_WITHOUT_COUNTING();
    sk->set_metrics_name("under-test");
    ASSERT_EQ(0, sk->add_function(rpc::FunctionID(Op::IID, Op::FID),
                                  {nullptr,
                                   [](void*, iovector*, rpc::Skeleton::ResponseSender,
                                      IStream*) -> int { return errno = EPERM, -1; }}));
    auto s = connect_stub();
    ASSERT_NE(nullptr, s);
    std::string out;
    for (int i = 0; i < 32; i++) ASSERT_GT(echo(s, "hello", &out), 0);
    Missing::Request mreq;
    mreq.str = "anyone?";
    Missing::Response mresp;
    char buf[16];
    mresp.str.assign(buf, sizeof(buf));
    EXPECT_EQ(-1, s->call<Missing>(mreq, mresp));
    Echo::Request req;
    req.str = "x";
    Echo::Response resp;
    EXPECT_EQ(-1, s->call<Op>(req, resp));
    {
        rpc::Header h;
        h.size = 0;
        h.magic ^= 1;
        std::unique_ptr<ISocketStream> r(raw());
        EXPECT_TRUE(server_closes_after(r.get(), &h, sizeof(h)));
    }
    const std::string l = "{skeleton=\"under-test\"";
    auto scraped = [&](const std::string& name, const std::string& more) {
        return photon_test::sample_value(photon_test::scrape(), name + l + more + "} ");
    };
    EXPECT_EQ(34, scraped("photon_rpc_server_requests_total", ""));
    EXPECT_EQ(2, scraped("photon_rpc_server_connections_total", ""));
    EXPECT_EQ(1, scraped("photon_rpc_server_errors_total", ",kind=\"no_function\""));
    EXPECT_EQ(1, scraped("photon_rpc_server_errors_total", ",kind=\"handler_failed\""));
    EXPECT_EQ(1, scraped("photon_rpc_server_errors_total", ",kind=\"bad_frame\""));
    EXPECT_EQ(0, scraped("photon_rpc_server_errors_total", ",kind=\"no_memory\""));
    EXPECT_GT(scraped("photon_rpc_server_received_bytes_total", ""), 32 * 5);
    EXPECT_GT(scraped("photon_rpc_server_sent_bytes_total", ""), 32 * 5);
    EXPECT_GE(scraped("photon_rpc_server_handler_seconds_count", ""), 1);  // 1 in 16
    EXPECT_GE(scraped("photon_rpc_server_connections", ""), 1);            // the stub's
}

TEST_P(Rpc, StalledFrameIsCutByTheFrameTimeout) {
    sk->set_frame_timeout(200 * 1000);
    std::unique_ptr<ISocketStream> idle(raw()), half(raw());
    rpc::Header h;
    h.size = 0;
    h.function = rpc::FunctionID(Echo::IID, Echo::FID);
    h.tag = 1;
    auto t0 = now;
    EXPECT_TRUE(server_closes_after(half.get(), &h, 20));  // half a header, then nothing
    EXPECT_LT(now - t0, 3 * 1000 * 1000u);
    // An idle connection (between frames) is not cut.
    idle->timeout(500 * 1000);
    char c;
    EXPECT_EQ(-1, idle->read(&c, 1));
    EXPECT_EQ(ETIMEDOUT, errno);
}

TEST_P(Rpc, IdleConnectionIsClosedAfterTheIdleTimeout) {
    sk->set_idle_timeout(200 * 1000);
    std::unique_ptr<ISocketStream> idle(raw());  // reads time out after 5 s
    EXPECT_TRUE(server_closes_after(idle.get(), nullptr, 0));
    // A connection that keeps calling is not idle.
    auto s = connect_stub();
    ASSERT_NE(nullptr, s);
    std::string out;
    for (int i = 0; i < 5; ++i) {
        EXPECT_GT(echo(s, "busy", &out), 0);
        thread_usleep(50 * 1000);
    }
}

TEST_P(Rpc, FrameDeadlineCountsFromItsFirstByte) {
    // Idle longer than the frame timeout, then a header in two parts: the
    // frame's deadline starts with its first byte (it used to start when the
    // wait for it began, so such a frame was cut at once).
    sk->set_frame_timeout(500 * 1000);
    std::unique_ptr<ISocketStream> r(raw());
    rpc::Header h;
    h.size = 0;  // does not decode: answered with an error reply
    h.function = rpc::FunctionID(Echo::IID, Echo::FID);
    h.tag = 7;
    thread_usleep(700 * 1000);
    ASSERT_EQ(20, r->write(&h, 20));
    thread_usleep(20 * 1000);
    ASSERT_EQ((ssize_t)sizeof(h) - 20, r->write((char*)&h + 20, sizeof(h) - 20));
    rpc::Header reply;
    ASSERT_EQ((ssize_t)sizeof(reply), r->read(&reply, sizeof(reply)));
    EXPECT_EQ(7u, reply.tag);
    EXPECT_EQ((uint64_t)EINVAL, reply.reserved & 0xffffffff);
}

TEST_P(Rpc, MaxInflightBoundsTheRequestsOfAConnection) {
    sk->set_max_inflight(4);
    auto s = connect_stub();
    ASSERT_NE(nullptr, s);
    int ok = 0;
    for (auto& t : echo_in_parallel(s, 32, "slow", 20, 20 * 1000 * 1000, &ok)) t.join();
    EXPECT_EQ(32, ok);              // the others waited, none failed
    EXPECT_LE(svc.max_running, 4);  // never more than the cap at once
    EXPECT_GE(svc.max_running, 2);  // but they did run side by side
}

TEST_P(Rpc, RaisingTheInflightCapWakesAConnectionWaitingAtTheOldOne) {
    sk->set_max_inflight(2);
    auto s = connect_stub();
    ASSERT_NE(nullptr, s);
    int ok = 0;
    auto calls = echo_in_parallel(s, 3, "capped", 300, 5 * 1000 * 1000, &ok);
    ASSERT_TRUE(photon_test::wait_for([&] { return svc.running == 2; }));
    sk->set_max_inflight(8);  // the third waits in the socket until one ends
    for (auto& t : calls) t.join();
    EXPECT_EQ(3, ok);
}

TEST_P(Rpc, ALongCallIsNotIdleTime) {
    // Quiet for longer than the idle timeout while a call runs: the
    // connection stays, and a call sent meanwhile is read and answered.
    sk->set_idle_timeout(200 * 1000);
    auto s = connect_stub();
    ASSERT_NE(nullptr, s);
    int slow = 0;
    auto t = spawn([&] { slow = echo(s, "long", nullptr, 900); });
    ASSERT_TRUE(photon_test::wait_for([&] { return svc.running == 1; }));
    thread_usleep(500 * 1000);  // past the idle timeout: what the test is about
    std::string out;
    EXPECT_GT(echo(s, "meanwhile", &out), 0);
    EXPECT_EQ("meanwhile", out);
    t.join();
    EXPECT_GT(slow, 0);
}

TEST_P(Rpc, ClientThatNeverReadsItsRepliesIsCut) {
    // Replies that cannot be written within the frame timeout end the
    // connection; the server neither waits forever nor piles up requests.
    sk->set_frame_timeout(300 * 1000);
    std::unique_ptr<ISocketStream> r(raw());
    int small = 4096;
    r->setsockopt(SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
    std::string text(4000, 'r');
    Echo::Request req;
    req.str = std::string_view(text);
    rpc::SerializerIOV ser;
    ser.serialize(req);
    std::string frame(sizeof(rpc::Header), '\0');
    for (auto& v : ser.iov) frame.append((const char*)v.iov_base, v.iov_len);
    rpc::Header h;
    h.size = (uint32_t)(frame.size() - sizeof(h));
    h.function = rpc::FunctionID(Echo::IID, Echo::FID);
    h.tag = 1;
    memcpy(&frame[0], &h, sizeof(h));
    r->timeout(500 * 1000);
    bool cut = false;
    Timeout bound(20 * 1000 * 1000);
    while (!cut && !bound.expired()) {
        ssize_t n = r->write(frame.data(), frame.size());
        if (n < 0 && errno != ETIMEDOUT) cut = true;  // EPIPE / ECONNRESET
    }
    EXPECT_TRUE(cut);
    std::string out;
    EXPECT_GT(echo(connect_stub(), "unharmed", &out), 0);
}

TEST_P(Rpc, StubPoolReconnectsAfterTheServerClosedAnIdleStub) {
    sk->set_idle_timeout(200 * 1000);
    std::unique_ptr<rpc::StubPool> pool(rpc::new_stub_pool(60 * 1000 * 1000, 1000 * 1000));
    ASSERT_TRUE(pool);
    auto a = pool->get_stub(ep, false);
    ASSERT_NE(nullptr, a);
    std::string out;
    EXPECT_GT(echo(a, "before", &out), 0);
    EXPECT_EQ(0, pool->put_stub(ep, false));
    thread_usleep(600 * 1000);  // the server closed it; the pool has not expired it
    auto b = pool->get_stub(ep, false);
    ASSERT_NE(nullptr, b);
    EXPECT_GT(echo(b, "after", &out), 0);
    EXPECT_EQ("after", out);
    EXPECT_EQ(0, pool->put_stub(ep, false));
}

// A fake server: answers each request first with a frame of a tag nobody
// waits for, then with the right one.
int two_replies(void*, ISocketStream* s) {
    rpc::Header h;
    while (s->read(&h, sizeof(h)) == (ssize_t)sizeof(h)) {
        std::string body(h.size, '\0');
        if (h.size && s->read(&body[0], h.size) != (ssize_t)h.size) break;
        Echo::Response resp;
        resp.str = "from the fake";
        rpc::SerializerIOV ser;
        ser.serialize(resp);
        rpc::Header r = h;
        r.size = (uint32_t)ser.iov.sum();
        r.tag = h.tag + 1000;
        s->write(&r, sizeof(r));
        s->write(&body[0], std::min<size_t>(body.size(), r.size));  // junk of the same size
        if (body.size() < r.size)
            s->write(std::string(r.size - body.size(), 'j').data(), r.size - body.size());
        r.tag = h.tag;
        s->write(&r, sizeof(r));
        s->writev(ser.iov.iovec(), ser.iov.iovcnt());
    }
    return 0;
}

TEST_P(Rpc, StubDropsRepliesNobodyWaitsFor) {
    std::unique_ptr<ISocketServer> fake(new_tcp_socket_server());
    ASSERT_EQ(0, fake->bind_v4localhost(0));
    ASSERT_EQ(0, fake->listen());
    fake->set_handler({nullptr, &two_replies});
    ASSERT_EQ(0, fake->start_loop(false));
    std::unique_ptr<rpc::Stub> s(rpc::new_rpc_stub(client->connect(fake->getsockname()), true));
    ASSERT_TRUE(s);
    for (int i = 0; i < 3; ++i) {
        std::string out;
        ASSERT_GT(echo(s.get(), "tagged", &out), 0) << strerror(errno);
        EXPECT_EQ("from the fake", out);
    }
}

TEST_P(Rpc, PeerThatVanishesFailsPendingCalls) {
    std::unique_ptr<ISocketServer> fake(new_tcp_socket_server());
    ASSERT_EQ(0, fake->bind_v4localhost(0));
    ASSERT_EQ(0, fake->listen());
    fake->set_handler({nullptr, [](void*, ISocketStream* s) -> int {
                           rpc::Header h;
                           s->read(&h, sizeof(h));
                           return 0;  // and close
                       }});
    ASSERT_EQ(0, fake->start_loop(false));
    std::unique_ptr<rpc::Stub> s(rpc::new_rpc_stub(client->connect(fake->getsockname()), true));
    errno = 0;
    EXPECT_EQ(-1, echo(s.get(), "hello?", nullptr));
    EXPECT_EQ(ECONNRESET, errno);
    EXPECT_EQ(-1, echo(s.get(), "again", nullptr));  // broken: fails at once
    EXPECT_EQ(ECONNRESET, errno);
}

TEST_P(Rpc, GracefulShutdownLetsRunningCallsFinish) {
    auto s = connect_stub();
    ASSERT_NE(nullptr, s);
    std::string out;
    int r = 0;
    auto t = spawn([&] { r = echo(s, "finishing", &out, 150); });
    ASSERT_TRUE(photon_test::wait_for([&] { return svc.running == 1; }));
    EXPECT_EQ(0, sk->shutdown(true));
    t.join();
    EXPECT_GT(r, 0);
    EXPECT_EQ("finishing", out);
    EXPECT_EQ(-1, echo(s, "too late", nullptr, 0, 500 * 1000));
}

TEST_P(Rpc, ShutdownDeadlineInterruptsStragglers) {
    auto s = connect_stub();
    ASSERT_NE(nullptr, s);
    int r = 0;
    auto t = spawn([&] { r = echo(s, "forever", nullptr, 10 * 1000); });
    ASSERT_TRUE(photon_test::wait_for([&] { return svc.running == 1; }));
    auto t0 = now;
    errno = 0;
    EXPECT_EQ(-1, sk->shutdown(true, 100 * 1000));
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_LT(now - t0, 2 * 1000 * 1000u);
    t.join();
    EXPECT_EQ(-1, r);
}

TEST_P(Rpc, StubPoolSharesExpiresAndReconnects) {
    std::unique_ptr<rpc::StubPool> pool(rpc::new_stub_pool(200 * 1000, 1000 * 1000));
    ASSERT_TRUE(pool);
    EXPECT_EQ(nullptr, pool->acquire(ep));
    auto a = pool->get_stub(ep, false);
    ASSERT_NE(nullptr, a);
    auto b = pool->get_stub(ep, false);
    EXPECT_EQ(a, b);
    EXPECT_EQ(a, pool->acquire(ep));
    std::string out;
    EXPECT_GT(echo(a, "pooled", &out), 0);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(0, pool->put_stub(ep, false));
    EXPECT_EQ(-1, pool->put_stub(ep, false));  // no more references
    thread_usleep(600 * 1000);                 // idle past the expiration: closed
    EXPECT_EQ(nullptr, pool->acquire(ep));
    auto c = pool->get_stub(ep, false);
    ASSERT_NE(nullptr, c);
    EXPECT_GT(echo(c, "fresh", &out), 0);
    EXPECT_EQ(0, pool->put_stub(ep, true));  // dropped now
    EXPECT_EQ(nullptr, pool->acquire(ep));
    EndPoint dead = ep;
    server.reset();
    EXPECT_EQ(nullptr, pool->get_stub(dead, false));
}

TEST_P(Rpc, UnixDomainStubPool) {
    photon_test::temp_dir dir("photon-rpc");
    ASSERT_TRUE(dir.ok());
    const std::string path = dir / "sock";
    std::unique_ptr<ISocketServer> uds(new_uds_server(true));
    ASSERT_EQ(0, uds->bind(path.c_str(), path.size()));
    ASSERT_EQ(0, uds->listen());
    uds->set_handler({sk.get(), &serve_handler});
    ASSERT_EQ(0, uds->start_loop(false));
    std::unique_ptr<rpc::StubPool> pool(
        rpc::new_uds_stub_pool(path.c_str(), 1000 * 1000, 1000 * 1000));
    auto s = pool->get_stub(EndPoint(), false);
    ASSERT_NE(nullptr, s);
    std::string out;
    EXPECT_GT(echo(s, "over a unix socket", &out), 0);
    EXPECT_EQ("over a unix socket", out);
    pool->put_stub(EndPoint(), true);
    pool.reset();
    uds.reset();
}

TEST_P(Rpc, StubPoolOverTls) {
#if !PHOTON_HAVE_TLS
    GTEST_SKIP() << "built without TLS (OpenSSL)";
#endif
    photon_test::tls_pair pair;
    PHOTON_TEST_MAKE_TLS_PAIR(pair);
    std::unique_ptr<ISocketServer> tls(
        new_tls_server(pair.server.get(), new_tcp_socket_server(), true));
    ASSERT_TRUE(tls);
    ASSERT_EQ(0, tls->bind_v4localhost(0));
    ASSERT_EQ(0, tls->listen());
    tls->set_handler({sk.get(), &serve_handler});
    ASSERT_EQ(0, tls->start_loop(false));
    // get_stub(ep, true) verifies the server against the system's CAs; a
    // private CA comes in through the pool's socket client.
    std::unique_ptr<rpc::StubPool> strict(rpc::new_stub_pool(1000 * 1000, 1000 * 1000));
    auto unverified = strict->get_stub(tls->getsockname(), true);
    ASSERT_NE(nullptr, unverified);  // the handshake comes with the first call
    EXPECT_EQ(-1, echo(unverified, "refused", nullptr));
    EXPECT_EQ(0, strict->put_stub(tls->getsockname(), true));
    std::shared_ptr<ISocketClient> tls_client(
        new_tls_client(pair.client.get(), new_tcp_socket_client(), true));
    std::unique_ptr<rpc::StubPool> pool(rpc::new_stub_pool(1000 * 1000, 1000 * 1000, tls_client));
    auto s = pool->get_stub(tls->getsockname(), false);
    ASSERT_NE(nullptr, s) << strerror(errno);
    std::string out;
    EXPECT_GT(echo(s, "encrypted", &out), 0);
    EXPECT_EQ("encrypted", out);
    pool->put_stub(tls->getsockname(), true);
    pool.reset();
    strict.reset();
    tls.reset();
}

TEST_P(Rpc, LargeMessages) {
    auto s = connect_stub();
    ASSERT_NE(nullptr, s);
    std::string big = photon_test::pattern(3 * 1024 * 1024);
    big.back() = '\0';
    Echo::Request req;
    req.str.assign(big.data(), big.size());
    IOVector iov;
    auto r = s->call<Echo>(req, iov);
    ASSERT_NE(nullptr, r) << strerror(errno);
    ASSERT_EQ(big.size(), r->str.size());
    EXPECT_EQ(0, memcmp(big.data(), r->str.c_str(), big.size()));
    // Past the stub's own limit: refused before sending.
    s->set_max_message_size(1024);
    errno = 0;
    EXPECT_EQ(nullptr, s->call<Echo>(req, iov));
    EXPECT_EQ(EMSGSIZE, errno);
}

PHOTON_INSTANTIATE_ENGINE_TESTS(Rpc);

}  // namespace
