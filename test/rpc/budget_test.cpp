// A skeleton's memory budget: request bodies, their coroutines and replies
// are held against it; a peer that pins memory waits unread and is shed with
// ENOMEM replies while a well-behaved stub keeps being answered; every byte
// is given back. Over loopback TCP, on both event engines.
#include <photon/rpc/rpc.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <photon/common/memory_budget.h>
#include <photon/net/socket.h>
#include <photon/photon.h>
#include <photon/thread/thread11.h>

#include "../thread/test_util.h"
#include "../util/wait.h"
#include "../util/engine_fixture.h"
#include "rpc_messages.h"

using namespace photon;
using namespace photon::net;
using namespace rpc_test;
using photon_test::spawn;

namespace {

constexpr uint64_t kMs = 1000;
constexpr size_t kMiB = 1 << 20;
constexpr uint32_t kWire = 0x5045525200000000u >> 32;  // an error reply's mark

// Echo: echoes after delay_ms. Everything: a body of any size, kept pod ms,
// an empty reply. Verify: a reply of n KiB, much larger than its request.
struct Service {
    int running = 0, max_running = 0;
    MemoryBudget* budget = nullptr;
    size_t max_used = 0;
    std::string big;
    int do_rpc_service(Echo::Request* req, Echo::Response* resp, IOVector*, IStream*) {
        running++;
        max_running = std::max(max_running, running);
        if (budget) max_used = std::max(max_used, budget->used());
        if (req->delay_ms) thread_usleep(req->delay_ms * kMs);
        running--;
        resp->str = req->str;
        return 0;
    }
    int do_rpc_service(All* req, All*, IOVector*, IStream*) {
        running++;
        thread_usleep(req->pod * kMs);
        running--;
        return 0;
    }
    int do_rpc_service(Checked* req, Checked* resp, IOVector*, IStream*) {
        big.assign(req->n * 1024, 'b');
        resp->s = std::string_view(big);
        return 0;
    }
};

int serve_handler(void* sk, ISocketStream* s) { return ((rpc::Skeleton*)sk)->serve(s); }

class RpcBudget : public ::testing::TestWithParam<uint64_t> {
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
        stubs.clear();
        server.reset();
        sk.reset();
        client.reset();
        photon_test::fini_vcpu();
    }
    void use_budget(size_t limit) {
        budget.reset(new MemoryBudget(limit));
        sk->set_memory_budget(budget.get());
        svc.budget = budget.get();
    }
    rpc::Stub* stub() {
        auto s = client->connect(ep);
        if (!s) return nullptr;
        stubs.emplace_back(rpc::new_rpc_stub(s, true));
        return stubs.back().get();
    }
    ISocketStream* raw() {
        auto s = client->connect(ep);
        if (s) s->timeout(10 * 1000 * kMs);
        return s;
    }

    Service svc;
    std::unique_ptr<MemoryBudget> budget;
    std::unique_ptr<rpc::Skeleton> sk;
    std::unique_ptr<ISocketServer> server;
    std::unique_ptr<ISocketClient> client;
    std::vector<std::unique_ptr<rpc::Stub>> stubs;
    EndPoint ep;
};

// One Echo frame carrying `len` bytes of text.
std::string echo_frame(size_t len, uint64_t tag, uint32_t delay_ms = 0) {
    return rpc_test::echo_frame(std::string(len, 'x'), tag, delay_ms);
}

// Reads one reply frame: its error (0 if none); -1 if the connection ended.
int read_reply(ISocketStream* s, uint64_t* tag = nullptr) {
    rpc::Header h;
    if (s->read(&h, sizeof(h)) != (ssize_t)sizeof(h)) return -1;
    std::string body(h.size, '\0');
    if (h.size && s->read(&body[0], h.size) != (ssize_t)h.size) return -1;
    if (tag) *tag = h.tag;
    return (uint32_t)(h.reserved >> 32) == kWire ? (int)(uint32_t)h.reserved : 0;
}

int echo(rpc::Stub* s, size_t len, uint32_t delay_ms = 0, uint64_t timeout = 20 * 1000 * kMs) {
    std::string text(len, 'e');
    Echo::Request req;
    req.delay_ms = delay_ms;
    req.str = std::string_view(text);
    Echo::Response resp;
    std::string buf(len + 1, '\0');
    resp.str.assign(&buf[0], buf.size());
    int r = s->call<Echo>(req, resp, timeout);
    if (r >= 0 && resp.str.sv() != text) return errno = EBADMSG, -1;
    return r;
}

TEST_P(RpcBudget, PeerThatPinsMemoryWaitsUnreadAndIsShedWhileOthersAreServed) {
    use_budget(8 * kMiB);
    sk->set_frame_timeout(600 * kMs);
    // The hog: 1 MiB calls sent without pause, replies never read.
    std::unique_ptr<ISocketStream> hog(raw());
    ASSERT_TRUE(hog);
    std::string frame = echo_frame(kMiB, 1, 300);
    bool hog_done = false;
    int hog_sent = 0;
    auto pusher = spawn([&] {
        hog->timeout(300 * kMs);
        Timeout bound(5 * 1000 * kMs);
        while (!bound.expired() && hog->write(frame.data(), frame.size()) == (ssize_t)frame.size())
            hog_sent++;
        hog_done = true;
    });
    // Meanwhile a well-behaved stub's calls are answered, every one.
    auto s = stub();
    ASSERT_NE(nullptr, s);
    int ok = 0;
    for (int i = 0; i < 20; i++) ok += echo(s, 4096) > 0;
    EXPECT_EQ(20, ok);
    pusher.join();
    EXPECT_GE(hog_sent, 2);
    // The budget held: never more than its limit, and the hog waited for room.
    EXPECT_LE(svc.max_used, budget->limit());
    EXPECT_LE(svc.max_running, 7);  // 1 MiB and 64 KiB each
    EXPECT_GT(budget->waits(), 0u);
    hog.reset();
    // Every byte comes back once the connections are gone.
    stubs.clear();
    EXPECT_TRUE(photon_test::wait_for([&] { return budget->used() == 0; }, 10 * 1000));
    EXPECT_TRUE(photon_test::wait_for([&] { return budget->accounts() == 0; }, 10 * 1000));
}

TEST_P(RpcBudget, RequestThatCanNeverFitGetsENOMEMAndTheConnectionGoesOn) {
    use_budget(2 * kMiB);
    std::unique_ptr<ISocketStream> r(raw());
    ASSERT_TRUE(r);
    std::string big = echo_frame(3 * kMiB, 7);  // past the limit: never fits
    ASSERT_EQ((ssize_t)big.size(), r->write(big.data(), big.size()));
    uint64_t tag = 0;
    EXPECT_EQ(ENOMEM, read_reply(r.get(), &tag));
    EXPECT_EQ(7u, tag);
    std::string small = echo_frame(100, 8);
    ASSERT_EQ((ssize_t)small.size(), r->write(small.data(), small.size()));
    EXPECT_EQ(0, read_reply(r.get(), &tag));
    EXPECT_EQ(8u, tag);
    EXPECT_GE(budget->sheds(), 1u);
}

TEST_P(RpcBudget, RequestThatFindsNoRoomInTimeIsShed) {
    // Two slow calls hold most of what heavy connections may (3 of the 4
    // MiB: a quarter is kept for connections holding little); a third waits
    // unread for at most half its frame's time, then hears ENOMEM; the slow
    // ones finish.
    use_budget(4 * kMiB);
    sk->set_frame_timeout(400 * kMs);
    auto s = stub();
    ASSERT_NE(nullptr, s);
    std::string held(1400 * 1024, 'h');
    int slow_ok = 0;
    std::vector<photon_test::task> slow;
    for (int i = 0; i < 2; i++)
        slow.push_back(spawn([&] {
            All req, resp;
            req.pod = 1500;
            req.b.assign(held.data(), held.size());
            slow_ok += s->call<Everything>(req, resp, 20 * 1000 * kMs) >= 0;
        }));
    ASSERT_TRUE(photon_test::wait_for([&] { return svc.running == 2; }));
    auto s2 = stub();
    ASSERT_NE(nullptr, s2);
    uint64_t t0 = __update_now();
    EXPECT_EQ(-1, echo(s2, 1200 * 1024));
    EXPECT_EQ(ENOMEM, errno);
    EXPECT_GE(__update_now() - t0, 150 * kMs);  // it waited before it was shed
    EXPECT_GT(echo(s2, 100), 0);                // and its connection goes on
    for (auto& t : slow) t.join();
    EXPECT_EQ(2, slow_ok);
}

TEST_P(RpcBudget, ReplyBytesCountToo) {
    use_budget(2 * kMiB);
    auto s = stub();
    ASSERT_NE(nullptr, s);
    std::string into(4 * kMiB, '\0');
    Checked req, resp;
    resp.s.assign(&into[0], into.size());
    req.n = 100;  // a 100 KiB reply: fits
    EXPECT_GT(s->call<Verify>(req, resp), 0);
    EXPECT_EQ(100u * 1024, resp.s.sv().size());
    req.n = 3 * 1024;  // 3 MiB: past the limit, the caller hears ENOMEM
    Checked resp2;
    resp2.s.assign(&into[0], into.size());
    EXPECT_EQ(-1, s->call<Verify>(req, resp2));
    EXPECT_EQ(ENOMEM, errno);
    EXPECT_GT(echo(s, 10), 0);
    EXPECT_TRUE(photon_test::wait_for([&] { return budget->used() == 0; }));
}

TEST_P(RpcBudget, CoroutineChargeBoundsConcurrencyAcrossConnections) {
    // 1 MiB at 64 KiB a running request, heavy connections held to three
    // quarters of it: at most 16 run at once, whatever the connections.
    use_budget(kMiB);
    int ok = 0;
    std::vector<photon_test::task> calls;
    for (int c = 0; c < 4; c++) {
        auto s = stub();
        ASSERT_NE(nullptr, s);
        for (int i = 0; i < 10; i++) calls.push_back(spawn([&, s] { ok += echo(s, 16, 50) > 0; }));
    }
    for (auto& t : calls) t.join();
    EXPECT_EQ(40, ok);  // the others waited for room, none was shed
    EXPECT_LE(svc.max_running, 16);
    EXPECT_GE(svc.max_running, 4);
    EXPECT_LE(svc.max_used, budget->limit());
}

TEST_P(RpcBudget, NoBudgetMeansNoLimit) {
    sk->set_memory_budget(nullptr);
    auto s = stub();
    ASSERT_NE(nullptr, s);
    EXPECT_GT(echo(s, 3 * kMiB), 0);
}

TEST_P(RpcBudget, TheProcessBudgetIsTheDefault) {
    auto before = MemoryBudget::process()->accounts();
    auto s = stub();
    ASSERT_NE(nullptr, s);
    EXPECT_GT(echo(s, 100, 200), 0);
    // The served connection holds an account of the process-wide budget.
    EXPECT_EQ(before + 1, MemoryBudget::process()->accounts());
    stubs.clear();
    EXPECT_TRUE(
        photon_test::wait_for([&] { return MemoryBudget::process()->accounts() == before; }));
}

PHOTON_INSTANTIATE_ENGINE_TESTS(RpcBudget);

}  // namespace
