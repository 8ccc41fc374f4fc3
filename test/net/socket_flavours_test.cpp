// The io_uring and zero-copy TCP flavours pass the data, timeout, interrupt
// and fault cases that socket_test.cpp checks for plain TCP, under both
// master engines.
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <photon/net/basic_socket.h>
#include <photon/net/socket.h>

#include "../io/engine_fixture.h"

using namespace photon;
using namespace photon::net;
using namespace photon_test;

namespace {

enum Kind { kIouring, kZerocopy };

int g_handlers = 0;  // echo handlers still running

int echo_handler(void*, ISocketStream* s) {
    g_handlers++;
    char buf[4096];
    while (true) {
        ssize_t n = s->recv(buf, sizeof(buf));
        if (n <= 0 || s->write(buf, n) != n) break;
    }
    g_handlers--;
    return 0;
}

std::string pattern(size_t n, uint32_t seed = 1) {
    std::string s(n, 0);
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245 + 12345;
        s[i] = (char)(seed >> 16);
    }
    return s;
}

using Param = std::tuple<uint64_t, Kind>;

class Flavours : public ::testing::TestWithParam<Param> {
protected:
    void SetUp() override {
        uint64_t engine = std::get<0>(GetParam());
        if (photon::init(engine, photon::INIT_IO_NONE) < 0) {
            if (engine == photon::INIT_EVENT_IOURING)
                GTEST_SKIP() << "io_uring unavailable here: " << strerror(errno);
            FAIL() << "photon::init failed: " << strerror(errno);
        }
        bool uring = std::get<1>(GetParam()) == kIouring;
        server.reset(uring ? new_iouring_tcp_server() : new_zerocopy_tcp_server());
        client.reset(uring ? new_iouring_tcp_client() : new_zerocopy_tcp_client());
        if (!server && errno == ENOSYS) GTEST_SKIP() << "built without io_uring";
        ASSERT_TRUE(server && client);
        ASSERT_EQ(0, server->bind_v4localhost(0));
        ASSERT_EQ(0, server->listen());
        ep = server->getsockname();
        ASSERT_NE(0, ep.port);
    }
    void TearDown() override {
        client.reset();
        server.reset();
        if (!photon::CURRENT) return;
        // Handlers parked in io_uring requests end once their peers closed;
        // let them finish before fini takes the rings away.
        EXPECT_TRUE(wait_for([] { return g_handlers == 0; }));
        EXPECT_EQ(0, photon::fini());
    }
    void start_echo() {
        server->set_handler({nullptr, &echo_handler});
        ASSERT_EQ(0, server->start_loop(false));
    }
    std::unique_ptr<ISocketServer> server;
    std::unique_ptr<ISocketClient> client;
    EndPoint ep;
};

TEST_P(Flavours, EchoesAMegabyteIntact) {
    start_echo();
    std::unique_ptr<ISocketStream> s(client->connect(ep));
    ASSERT_NE(nullptr, s);
    std::string out = pattern(1 << 20), in(out.size(), 0);
    auto writer = spawn([&] { EXPECT_EQ((ssize_t)out.size(), s->write(out.data(), out.size())); });
    EXPECT_EQ((ssize_t)in.size(), s->read(&in[0], in.size()));
    writer.join();
    EXPECT_TRUE(in == out);
    EXPECT_EQ(s->getpeername(), ep);
}

TEST_P(Flavours, RecvIsOnePartialTransferAndRecvAtLeastGathers) {
    std::unique_ptr<ISocketStream> c(client->connect(ep));
    std::unique_ptr<ISocketStream> a(server->accept());
    ASSERT_TRUE(c && a);
    ASSERT_EQ(3, c->write("abc", 3));
    char buf[16];
    EXPECT_EQ(3, a->recv(buf, sizeof(buf)));
    auto t = spawn([&] {
        c->write("de", 2);
        thread_usleep(2000);
        c->write("fgh", 3);
    });
    EXPECT_EQ(5, a->recv_at_least(buf, sizeof(buf), 4));
    EXPECT_EQ(0, memcmp(buf, "defgh", 5));
    t.join();
}

TEST_P(Flavours, ReadTimesOutWithEtimedoutAndLosesNothing) {
    std::unique_ptr<ISocketStream> c(client->connect(ep));
    std::unique_ptr<ISocketStream> a(server->accept());
    ASSERT_TRUE(c && a);
    a->timeout(20 * 1000);
    char buf[8];
    auto t0 = Clock::now();
    EXPECT_EQ(-1, a->read(buf, 8));
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_GE(us_since(t0), 19 * 1000u);
    ASSERT_EQ(8, c->write("12345678", 8));
    EXPECT_EQ(8, a->read(buf, 8));
    EXPECT_EQ(0, memcmp(buf, "12345678", 8));
}

TEST_P(Flavours, InterruptedRecvFailsWithInterruptersErrno) {
    std::unique_ptr<ISocketStream> c(client->connect(ep));
    std::unique_ptr<ISocketStream> a(server->accept());
    ASSERT_TRUE(c && a);
    ssize_t r = 0;
    int err = 0;
    auto t = spawn([&] {
        char buf[8];
        r = a->recv(buf, 8);
        err = errno;
    });
    ASSERT_TRUE(until_sleeping(t.th));
    thread_interrupt(t.th, EINTR);
    t.join();
    EXPECT_EQ(-1, r);
    EXPECT_EQ(EINTR, err);
}

TEST_P(Flavours, PeerResetMidReadKeepsTheDataThenGivesEconnreset) {
    int peer = net::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(peer, 0);
    net::sockaddr_storage sa(ep);
    ASSERT_EQ(0, net::connect(peer, sa.get_sockaddr(), sa.get_socklen(), kLongUs));
    std::unique_ptr<ISocketStream> a(server->accept());
    ASSERT_NE(nullptr, a);
    ASSERT_EQ(2, ::write(peer, "ab", 2));
    char buf[8];
    ssize_t r = -2;
    auto t = spawn([&] { r = a->read(buf, 8); });
    ASSERT_TRUE(until_sleeping(t.th));
    struct linger lg = {1, 0};  // close with RST
    ASSERT_EQ(0, setsockopt(peer, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)));
    close(peer);
    t.join();
    EXPECT_EQ(2, r);
    EXPECT_EQ(0, memcmp(buf, "ab", 2));
    EXPECT_EQ(-1, a->read(buf, 8));
    EXPECT_EQ(ECONNRESET, errno);
}

TEST_P(Flavours, HalfClosedConnectionStillCarriesTheReply) {
    std::unique_ptr<ISocketStream> c(client->connect(ep));
    std::unique_ptr<ISocketStream> a(server->accept());
    ASSERT_TRUE(c && a);
    ASSERT_EQ(4, c->write("ping", 4));
    ASSERT_EQ(0, c->shutdown(ShutdownHow::Write));
    char buf[8];
    EXPECT_EQ(4, a->read(buf, 8));
    EXPECT_EQ(0, a->recv(buf, 8));
    EXPECT_EQ(4, a->write("pong", 4));
    EXPECT_EQ(4, c->read(buf, 4));
    EXPECT_EQ(0, memcmp(buf, "pong", 4));
}

TEST_P(Flavours, WriteToClosedPeerGivesEpipeNotSigpipe) {
    std::unique_ptr<ISocketStream> c(client->connect(ep));
    std::unique_ptr<ISocketStream> a(server->accept());
    ASSERT_TRUE(c && a);
    a.reset();
    std::string block(64 * 1024, 'x');
    ssize_t r = 0;
    for (int i = 0; i < 100 && r >= 0; i++) r = c->write(block.data(), block.size());
    EXPECT_EQ(-1, r);
    EXPECT_TRUE(errno == EPIPE || errno == ECONNRESET) << strerror(errno);
}

TEST_P(Flavours, ConnectToClosedPortFailsWithEconnrefused) {
    EndPoint dead = ep;
    server.reset();
    EXPECT_EQ(nullptr, client->connect(dead));
    EXPECT_EQ(ECONNREFUSED, errno);
}

TEST_P(Flavours, ManyConcurrentConnectionsEachEchoTheirOwnData) {
    start_echo();
    constexpr int kConns = 100;
    int ok = 0;
    std::vector<task> tasks;
    for (int i = 0; i < kConns; i++) {
        tasks.push_back(spawn([&, i] {
            std::unique_ptr<ISocketStream> s(client->connect(ep));
            if (!s) return;
            std::string out = pattern(20000 + i, i), in(out.size(), 0);
            if (s->write(out.data(), out.size()) != (ssize_t)out.size()) return;
            if (s->read(&in[0], in.size()) != (ssize_t)in.size()) return;
            if (in == out) ok++;
        }));
    }
    for (auto& t : tasks) t.join();
    EXPECT_EQ(kConns, ok);
}

TEST_P(Flavours, WritevAndReadvMoveWholeVectors) {
    std::unique_ptr<ISocketStream> c(client->connect(ep));
    std::unique_ptr<ISocketStream> a(server->accept());
    ASSERT_TRUE(c && a);
    std::string p1 = pattern(70000, 3), p2 = pattern(5, 4), p3 = pattern(90000, 5);
    struct iovec out[4] = {
        {&p1[0], p1.size()}, {nullptr, 0}, {&p2[0], p2.size()}, {&p3[0], p3.size()}};
    std::string q1(100000, 0), q2(60005, 0);
    struct iovec in[2] = {{&q1[0], q1.size()}, {&q2[0], q2.size()}};
    auto t = spawn([&] { EXPECT_EQ(160005, c->writev(out, 4)); });
    EXPECT_EQ(160005, a->readv(in, 2));
    t.join();
    EXPECT_EQ(p1.size(), out[0].iov_len);
    EXPECT_TRUE(q1 + q2 == p1 + p2 + p3);
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
    std::string e = std::get<0>(info.param) == photon::INIT_EVENT_IOURING ? "iouring" : "epoll";
    return e + (std::get<1>(info.param) == kIouring ? "_iouring_tcp" : "_zerocopy_tcp");
}

INSTANTIATE_TEST_SUITE_P(Engines, Flavours,
                         ::testing::Combine(::testing::Values(photon::INIT_EVENT_EPOLL,
                                                              photon::INIT_EVENT_IOURING),
                                            ::testing::Values(kIouring, kZerocopy)),
                         param_name);

}  // namespace
