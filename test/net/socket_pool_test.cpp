// The keep-alive pool: reuse of an idle connection (same local port), and
// the ways one leaves the pool: an error or EOF while lent, the server
// closing it while idle, expiry, and a failing heartbeat.
#include <poll.h>
#include <sys/ioctl.h>

#include <memory>
#include <string>

#include <photon/net/socket.h>

#include "../thread/test_util.h"
#include "../util/engine_fixture.h"

using namespace photon;
using namespace photon::net;
using namespace photon_test;

namespace {

class SocketPool : public EngineTest {
protected:
    void SetUp() override {
        EngineTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        server.reset(new_tcp_socket_server());
        ASSERT_EQ(0, server->bind_v4localhost(0));
        ASSERT_EQ(0, server->listen());
        server->timeout(kLongUs);  // a failing test must not hang in accept
        ep = server->getsockname();
    }
    void TearDown() override {
        pool.reset();
        server.reset();
        EngineTest::TearDown();
    }
    void make_pool(SocketPoolArgs args = {}) {
        args.sockclient = new_tcp_socket_client();
        args.client_ownership = true;
        pool.reset(new_tcp_socket_pool(args));
        ASSERT_NE(nullptr, pool);
    }
    // A round trip over c, with `a` (the server's side) echoing.
    static bool round_trip(ISocketStream* c, ISocketStream* a) {
        char buf[4];
        return c->write("ping", 4) == 4 && a->read(buf, 4) == 4 && a->write(buf, 4) == 4 &&
               c->read(buf, 4) == 4 && memcmp(buf, "ping", 4) == 0;
    }
    // True if the server side sees EOF soon (the pool closed the connection).
    static bool sees_eof(ISocketStream* a) {
        char c;
        a->timeout(kLongUs);
        return a->recv(&c, 1) == 0;
    }
    std::unique_ptr<ISocketServer> server;
    std::unique_ptr<ISocketPool> pool;
    EndPoint ep;
};

TEST_P(SocketPool, ReusesAnIdleConnectionWithTheSameLocalPort) {
    make_pool();
    std::unique_ptr<ISocketStream> c(pool->connect(ep));
    std::unique_ptr<ISocketStream> a(server->accept());
    ASSERT_TRUE(c && a);
    ASSERT_TRUE(round_trip(c.get(), a.get()));
    uint16_t port = c->getsockname().port;
    c.reset();  // back to the pool
    c.reset(pool->connect(ep));
    ASSERT_NE(nullptr, c);
    EXPECT_EQ(port, c->getsockname().port);
    EXPECT_TRUE(round_trip(c.get(), a.get()));
}

TEST_P(SocketPool, KeysSeparateConnectionsAndConnectorsFillThem) {
    make_pool();
    auto client = std::unique_ptr<ISocketClient>(new_tcp_socket_client());
    int made = 0;
    auto connector = [&]() -> ISocketStream* {
        made++;
        return client->connect(ep);
    };
    std::unique_ptr<ISocketStream> c(pool->connect("k1", connector));
    std::unique_ptr<ISocketStream> a(server->accept());
    ASSERT_TRUE(c && a);
    uint16_t port = c->getsockname().port;
    c.reset();
    c.reset(pool->connect("k1", connector));
    ASSERT_NE(nullptr, c);
    EXPECT_EQ(port, c->getsockname().port);
    EXPECT_EQ(1, made);
    std::unique_ptr<ISocketStream> other(pool->connect("k2", connector));
    ASSERT_NE(nullptr, other);
    EXPECT_NE(port, other->getsockname().port);
    EXPECT_EQ(2, made);
}

TEST_P(SocketPool, ConnectsByDomainName) {
    make_pool();
    // string_view: a const char* would pick the unix-domain connect(path, count).
    std::unique_ptr<ISocketStream> c(pool->connect(std::string_view("localhost"), ep.port));
    std::unique_ptr<ISocketStream> a(server->accept());
    ASSERT_TRUE(c && a);
    EXPECT_TRUE(round_trip(c.get(), a.get()));
}

TEST_P(SocketPool, AStreamThatWasShutDownOrHitEofIsNotReused) {
    make_pool();
    std::unique_ptr<ISocketStream> c(pool->connect(ep));
    std::unique_ptr<ISocketStream> a(server->accept());
    ASSERT_TRUE(c && a);
    uint16_t port = c->getsockname().port;
    c->shutdown(ShutdownHow::Write);
    c.reset();
    EXPECT_TRUE(sees_eof(a.get()));
    c.reset(pool->connect(ep));
    std::unique_ptr<ISocketStream> a2(server->accept());
    ASSERT_TRUE(c && a2);
    EXPECT_NE(port, c->getsockname().port);
    port = c->getsockname().port;
    a2.reset();  // the server hangs up: the client reads EOF
    char buf[4];
    EXPECT_EQ(0, c->recv(buf, sizeof(buf)));
    c.reset();
    c.reset(pool->connect(ep));
    ASSERT_NE(nullptr, c);
    EXPECT_NE(port, c->getsockname().port);
}

// The unread rest of a reply may sit in the stream's read-ahead, where a
// peek at the fd cannot see it: the pool must not lend it out again.
TEST_P(SocketPool, AStreamWithUnreadBufferedBytesIsNotReused) {
    make_pool();
    std::unique_ptr<ISocketStream> c(pool->connect(ep));
    std::unique_ptr<ISocketStream> a(server->accept());
    ASSERT_TRUE(c && a);
    uint16_t port = c->getsockname().port;
    ASSERT_EQ(4, c->write("ping", 4));
    char buf[8];
    ASSERT_EQ(4, a->read(buf, 4));
    ASSERT_EQ(8, a->write("pongpong", 8));
    int fd = c->get_underlay_fd();
    ASSERT_TRUE(wait_for([&] {  // both halves in c's receive queue
        int queued = 0;
        return ioctl(fd, FIONREAD, &queued) == 0 && queued == 8;
    }));
    ASSERT_EQ(4, c->read(buf, 4));  // takes them both, hands out one
    c.reset();
    c.reset(pool->connect(ep));  // the check is made here, on reuse
    std::unique_ptr<ISocketStream> a2(server->accept());
    ASSERT_TRUE(c && a2);
    EXPECT_NE(port, c->getsockname().port);
    EXPECT_TRUE(sees_eof(a.get()));
}

TEST_P(SocketPool, DropsAConnectionTheServerClosedWhileIdle) {
    make_pool();
    std::unique_ptr<ISocketStream> c(pool->connect(ep));
    std::unique_ptr<ISocketStream> a(server->accept());
    ASSERT_TRUE(c && a);
    uint16_t port = c->getsockname().port;
    int fd = c->get_underlay_fd();
    c.reset();
    a.reset();                  // closed while idle in the pool
    ASSERT_TRUE(wait_for([&] {  // the FIN arrived on the pooled fd
        pollfd p = {fd, POLLRDHUP, 0};
        return ::poll(&p, 1, 0) == 1 && (p.revents & POLLRDHUP);
    }));
    c.reset(pool->connect(ep));
    std::unique_ptr<ISocketStream> a2(server->accept());
    ASSERT_TRUE(c && a2);
    EXPECT_NE(port, c->getsockname().port);
    EXPECT_TRUE(round_trip(c.get(), a2.get()));
}

TEST_P(SocketPool, IdleConnectionsExpire) {
    SocketPoolArgs args;
    args.expiration = 30 * 1000;
    make_pool(args);
    std::unique_ptr<ISocketStream> c(pool->connect(ep));
    std::unique_ptr<ISocketStream> a(server->accept());
    ASSERT_TRUE(c && a);
    uint16_t port = c->getsockname().port;
    auto t0 = Clock::now();
    c.reset();
    EXPECT_TRUE(sees_eof(a.get()));  // the reaper closed it
    EXPECT_GE(us_since(t0), 29 * 1000u);
    c.reset(pool->connect(ep));
    ASSERT_NE(nullptr, c);
    EXPECT_NE(port, c->getsockname().port);
}

int failing_heartbeat(void* calls, ISocketStream*) {
    ++*(int*)calls;
    return -1;
}

int passing_heartbeat(void* calls, ISocketStream*) {
    ++*(int*)calls;
    return 0;
}

TEST_P(SocketPool, HeartbeaterDropsTheConnectionsItFails) {
    int calls = 0;
    SocketPoolArgs args;
    args.heartbeater = {&calls, &failing_heartbeat};
    args.heartbeat_interval = 10 * 1000;
    make_pool(args);
    std::unique_ptr<ISocketStream> c(pool->connect(ep));
    std::unique_ptr<ISocketStream> a(server->accept());
    ASSERT_TRUE(c && a);
    c.reset();
    EXPECT_TRUE(sees_eof(a.get()));
    EXPECT_EQ(1, calls);
}

TEST_P(SocketPool, HeartbeaterKeepsTheConnectionsItPasses) {
    int calls = 0;
    SocketPoolArgs args;
    args.heartbeater = {&calls, &passing_heartbeat};
    args.heartbeat_interval = 5 * 1000;
    args.enable_tcp_keepalive = true;
    make_pool(args);
    std::unique_ptr<ISocketStream> c(pool->connect(ep));
    std::unique_ptr<ISocketStream> a(server->accept());
    ASSERT_TRUE(c && a);
    int keepalive = 0;
    EXPECT_EQ(0, c->getsockopt(SOL_SOCKET, SO_KEEPALIVE, &keepalive));
    EXPECT_NE(0, keepalive);
    uint16_t port = c->getsockname().port;
    c.reset();
    EXPECT_TRUE(wait_for([&] { return calls >= 3; }));
    c.reset(pool->connect(ep));
    ASSERT_NE(nullptr, c);
    EXPECT_EQ(port, c->getsockname().port);
}

PHOTON_INSTANTIATE_ENGINE_TESTS(SocketPool);

}  // namespace
