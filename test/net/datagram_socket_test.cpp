// UDP on 127.0.0.1 and unix-domain datagrams in a temporary directory, under
// both event engines: whole messages (never cut: a short buffer gets
// EMSGSIZE and the datagram stays), sizes up to the maximum, timeouts,
// interrupted waits, closed peers, full receivers and bad addresses.
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <photon/net/datagram_socket.h>

#include "../thread/test_util.h"
#include "../util/engine_fixture.h"
#include "../util/fds.h"
#include "../util/temp_dir.h"
#include "net_test_util.h"

using namespace photon;
using namespace photon::net;
using namespace photon_test;

namespace {

// A temporary directory for socket files, removed with what is in it.
class socket_dir : public photon_test::temp_dir {
public:
    socket_dir() : temp_dir("photon-dgram") {}
    std::string file(const char* name) const { return path(name); }
};

// CPU time this OS thread has used, in us.
uint64_t thread_cpu_us() {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

// Sends tiny datagrams without waiting until the kernel refuses more;
// returns how many went, or -1 if it never refused.
int fill_until_eagain(const std::function<ssize_t()>& send_one) {
    for (int i = 0; i < 100000; i++) {
        if (send_one() == 1) continue;
        return errno == EAGAIN ? i : -1;
    }
    return -1;
}

// ---- cases every kind runs -------------------------------------------------------

enum Kind { kUdp, kUds };
using Param = std::tuple<uint64_t, Kind>;

// A socket of either kind, behind the calls the shared cases make.
struct any_socket {
    std::unique_ptr<UDPSocket> udp;
    std::unique_ptr<UDS_DatagramSocket> uds;

    IMessage* msg() { return udp ? (IMessage*)udp.get() : (IMessage*)uds.get(); }
    ISocketBase* base() { return udp ? (ISocketBase*)udp.get() : (ISocketBase*)uds.get(); }
    void timeout(uint64_t us) { udp ? udp->timeout(us) : uds->timeout(us); }
    ssize_t send(const void* buf, size_t n, int flags = 0) {
        return udp ? udp->send(buf, n, flags) : uds->send(buf, n, flags);
    }
    ssize_t recv(void* buf, size_t n, int flags = 0) {
        return udp ? udp->recv(buf, n, flags) : uds->recv(buf, n, flags);
    }
    void set_buffers(int bytes) {
        ASSERT_EQ(0, base()->setsockopt<int>(SOL_SOCKET, SO_SNDBUF, bytes));
        ASSERT_EQ(0, base()->setsockopt<int>(SOL_SOCKET, SO_RCVBUF, bytes));
    }
};

// rx is bound; tx is connected to it.
class Datagram : public ::testing::TestWithParam<Param> {
protected:
    void SetUp() override {
        PHOTON_TEST_INIT_ENGINE(std::get<0>(GetParam()), photon::INIT_IO_NONE);
        ASSERT_TRUE(dir.ok());
        if (kind() == kUdp) {
            rx.udp.reset(new_udp_socket());
            tx.udp.reset(new_udp_socket());
            ASSERT_TRUE(rx.udp && tx.udp);
            ASSERT_EQ(0, rx.udp->bind_v4localhost());
            ASSERT_EQ(0, tx.udp->connect(rx.udp->getsockname()));
        } else {
            rx.uds.reset(new_uds_datagram_socket());
            tx.uds.reset(new_uds_datagram_socket());
            ASSERT_TRUE(rx.uds && tx.uds);
            std::string path = dir.file("rx.sock");
            ASSERT_EQ(0, rx.uds->bind(path.c_str()));
            ASSERT_EQ(0, tx.uds->connect(path.c_str()));
        }
    }
    void TearDown() override {
        rx = {};
        tx = {};
        fini_vcpu();
    }
    Kind kind() const { return std::get<1>(GetParam()); }

    socket_dir dir;
    any_socket rx, tx;
};

TEST_P(Datagram, EachMessageArrivesWholeAndIntact) {
    for (size_t n : {1, 2, 100, 1472, 9000, 40000}) {
        std::string out = pattern(n, (uint32_t)n), in(n + 10, 0);
        ASSERT_EQ((ssize_t)n, tx.send(out.data(), n));
        ASSERT_EQ((ssize_t)n, rx.recv(&in[0], in.size())) << n;
        EXPECT_EQ(out, in.substr(0, n));
    }
}

TEST_P(Datagram, ManyMessagesArriveInOrderInBoundedWindows) {
    // A window fits the smallest unix receive queue (11 datagrams by default).
    constexpr int kWindow = 8, kTotal = 2000;
    std::vector<char> buf(2000);
    tx.timeout(5 * 1000 * 1000);  // a full queue would otherwise hang the case
    rx.timeout(5 * 1000 * 1000);
    for (int base = 0; base < kTotal; base += kWindow) {
        for (int i = base; i < base + kWindow; i++) {
            std::string m = pattern((size_t)(i * 7) % 1500, (uint32_t)i);
            ASSERT_EQ((ssize_t)m.size(), tx.send(m.data(), m.size())) << i;
        }
        for (int i = base; i < base + kWindow; i++) {
            std::string m = pattern((size_t)(i * 7) % 1500, (uint32_t)i);
            ssize_t n = rx.recv(buf.data(), buf.size());
            ASSERT_EQ((ssize_t)m.size(), n) << i;
            ASSERT_EQ(0, memcmp(m.data(), buf.data(), m.size())) << i;
        }
    }
}

TEST_P(Datagram, TheLargestMessageRoundTripsAndOneBeyondWhatTheKernelTakesIsEmsgsize) {
    tx.set_buffers(512 * 1024);
    rx.set_buffers(512 * 1024);
    size_t max = rx.msg()->max_message_size();
    EXPECT_EQ(kind() == kUdp ? 65507u : 207u * 1024, max);
    std::string out = pattern(max, 9), in(max, 0);
    ASSERT_EQ((ssize_t)max, tx.send(out.data(), max));
    ASSERT_EQ((ssize_t)max, rx.recv(&in[0], max));  // a buffer of exactly the size
    EXPECT_TRUE(in == out);
    // UDP's limit is the protocol's; a unix datagram's is the sender's SO_SNDBUF.
    size_t too_big = max + 1;
    if (kind() == kUds) {
        ASSERT_EQ(0, tx.base()->setsockopt<int>(SOL_SOCKET, SO_SNDBUF, 16 * 1024));
        too_big = 64 * 1024;
    }
    std::string big(too_big, 'x');
    EXPECT_EQ(-1, tx.send(big.data(), big.size()));
    EXPECT_EQ(EMSGSIZE, errno);
    ASSERT_EQ(3, tx.send("abc", 3));
    EXPECT_EQ(3, rx.recv(&in[0], in.size()));
}

TEST_P(Datagram, AShortBufferGetsEmsgsizeAndTheDatagramStaysForALargerOne) {
    std::string out = pattern(100, 3);
    ASSERT_EQ(100, tx.send(out.data(), out.size()));
    char buf[200];
    EXPECT_EQ(-1, rx.recv(buf, 10));
    EXPECT_EQ(EMSGSIZE, errno);
    EXPECT_EQ(-1, rx.recv(buf, 0));
    EXPECT_EQ(EMSGSIZE, errno);
    struct iovec short_iov[2] = {{buf, 50}, {buf + 50, 49}};
    EXPECT_EQ(-1, rx.msg()->recv(short_iov, 2));
    EXPECT_EQ(EMSGSIZE, errno);
    struct iovec iov[2] = {{buf, 60}, {buf + 100, 40}};  // scattered: 60 + 40
    ASSERT_EQ(100, rx.msg()->recv(iov, 2));
    EXPECT_EQ(0, memcmp(out.data(), buf, 60));
    EXPECT_EQ(0, memcmp(out.data() + 60, buf + 100, 40));
    EXPECT_EQ(-1, rx.recv(buf, sizeof(buf), MSG_DONTWAIT));  // taken once only
    EXPECT_EQ(EAGAIN, errno);
}

TEST_P(Datagram, MsgTruncTakesThePrefixAndReturnsTheFullLength) {
    std::string out = pattern(100, 4);
    ASSERT_EQ(100, tx.send(out.data(), out.size()));
    char buf[10];
    ASSERT_EQ(100, rx.recv(buf, sizeof(buf), MSG_TRUNC));
    EXPECT_EQ(0, memcmp(out.data(), buf, sizeof(buf)));
    EXPECT_EQ(-1, rx.recv(buf, sizeof(buf), MSG_DONTWAIT));  // the rest is gone, as asked
    EXPECT_EQ(EAGAIN, errno);
}

TEST_P(Datagram, MsgPeekLeavesTheDatagramQueued) {
    ASSERT_EQ(5, tx.send("hello", 5));
    char buf[16] = {};
    ASSERT_EQ(5, rx.recv(buf, sizeof(buf), MSG_PEEK));
    EXPECT_STREQ("hello", buf);
    memset(buf, 0, sizeof(buf));
    ASSERT_EQ(5, rx.recv(buf, sizeof(buf)));
    EXPECT_STREQ("hello", buf);
}

TEST_P(Datagram, AnEmptyDatagramIsAMessageOfLengthZero) {
    ASSERT_EQ(0, tx.send("", 0));
    ASSERT_EQ(2, tx.send("ab", 2));
    char buf[8];
    EXPECT_EQ(0, rx.recv(buf, sizeof(buf)));
    EXPECT_EQ(2, rx.recv(buf, sizeof(buf)));
}

TEST_P(Datagram, GatheredSendIsOneDatagram) {
    struct iovec iov[3] = {{(void*)"ab", 2}, {(void*)"", 0}, {(void*)"cde", 3}};
    ASSERT_EQ(5, tx.msg()->send(iov, 3));
    char buf[16] = {};
    ASSERT_EQ(5, rx.recv(buf, sizeof(buf)));
    EXPECT_STREQ("abcde", buf);
}

TEST_P(Datagram, RecvTimesOutWithEtimedoutAndLaterMessagesStillCome) {
    rx.timeout(50 * 1000);
    char buf[8];
    auto t0 = Clock::now();
    EXPECT_EQ(-1, rx.recv(buf, sizeof(buf)));
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_GE(us_since(t0), 45u * 1000);
    EXPECT_LT(us_since(t0), 5u * 1000 * 1000);
    ASSERT_EQ(2, tx.send("ok", 2));
    EXPECT_EQ(2, rx.recv(buf, sizeof(buf)));
}

TEST_P(Datagram, ZeroTimeoutAndMsgDontwaitFailAtOnce) {
    char buf[8];
    EXPECT_EQ(-1, rx.recv(buf, sizeof(buf), MSG_DONTWAIT));
    EXPECT_EQ(EAGAIN, errno);
    rx.timeout(0);
    EXPECT_EQ(-1, rx.recv(buf, sizeof(buf)));
    EXPECT_EQ(ETIMEDOUT, errno);
    ASSERT_EQ(1, tx.send("z", 1));
    EXPECT_EQ(1, rx.recv(buf, sizeof(buf)));  // ready: no wait needed
}

TEST_P(Datagram, ABlockedRecvWakesWhenAMessageComes) {
    char buf[8] = {};
    ssize_t got = -2;
    auto r = spawn([&] { got = rx.recv(buf, sizeof(buf)); });
    ASSERT_TRUE(until_sleeping(r.th));
    ASSERT_EQ(3, tx.send("hey", 3));
    r.join();
    EXPECT_EQ(3, got);
    EXPECT_STREQ("hey", buf);
}

TEST_P(Datagram, AnInterruptedRecvFailsWithTheInterruptersErrnoAndTheSocketGoesOn) {
    ssize_t got = -2;
    int err = 0;
    auto r = spawn([&] {
        char buf[8];
        got = rx.recv(buf, sizeof(buf));
        err = errno;
    });
    ASSERT_TRUE(until_sleeping(r.th));
    thread_interrupt(r.th, ECANCELED);
    r.join();
    EXPECT_EQ(-1, got);
    EXPECT_EQ(ECANCELED, err);
    char buf[8];
    ASSERT_EQ(1, tx.send("x", 1));
    EXPECT_EQ(1, rx.recv(buf, sizeof(buf)));
}

TEST_P(Datagram, WaitingReceiversEachTakeOneMessage) {
    constexpr int kReaders = 4;
    std::vector<task> readers;
    std::vector<char> got(kReaders, 0);
    rx.timeout(5 * 1000 * 1000);
    for (int i = 0; i < kReaders; i++)
        readers.push_back(spawn([&, i] {
            char c = 0;
            if (rx.recv(&c, 1) == 1) got[i] = c;
        }));
    for (auto& r : readers) ASSERT_TRUE(until_sleeping(r.th));
    for (char c : {'a', 'b', 'c', 'd'}) ASSERT_EQ(1, tx.send(&c, 1));
    for (auto& r : readers) r.join();
    std::sort(got.begin(), got.end());
    EXPECT_EQ(std::string("abcd"), std::string(got.begin(), got.end()));
}

TEST_P(Datagram, ANegativeIovecCountIsEinval) {
    struct iovec iov = {nullptr, 0};
    EXPECT_EQ(-1, tx.msg()->send(&iov, -1));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, rx.msg()->recv(&iov, -1));
    EXPECT_EQ(EINVAL, errno);
}

TEST_P(Datagram, FlagsPromiseNothingAndTheFdIsExposed) {
    EXPECT_EQ(0u, rx.msg()->flags());
    int fd = rx.base()->get_underlay_fd();
    ASSERT_GE(fd, 0);
    int type = 0;
    EXPECT_EQ(0, rx.base()->getsockopt<int>(SOL_SOCKET, SO_TYPE, &type));
    EXPECT_EQ(SOCK_DGRAM, type);
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
    return engine_label(std::get<0>(info.param)) +
           (std::get<1>(info.param) == kUdp ? "_udp" : "_uds");
}

INSTANTIATE_TEST_SUITE_P(Engines, Datagram,
                         ::testing::Combine(PHOTON_TEST_EVENT_ENGINES,
                                            ::testing::Values(kUdp, kUds)),
                         param_name);

// ---- UDP ---------------------------------------------------------------------------

using Udp = EngineTest;

// A loopback UDP port nothing listens on (a small race we accept).
uint16_t closed_udp_port() {
    std::unique_ptr<UDPSocket> s(new_udp_socket());
    if (!s || s->bind_v4localhost() < 0) return 0;
    return s->getsockname().port;
}

TEST_P(Udp, RecvfromNamesTheSenderAndSendtoAnswersIt) {
    std::unique_ptr<UDPSocket> server(new_udp_socket()), client(new_udp_socket());
    ASSERT_TRUE(server && client);
    ASSERT_EQ(0, server->bind_v4localhost());
    ASSERT_EQ(0, client->bind_v4localhost());
    EndPoint sep = server->getsockname(), cep = client->getsockname();
    ASSERT_EQ(4, client->sendto("ping", 4, sep));
    char buf[16] = {};
    EndPoint from;
    ASSERT_EQ(4, server->recvfrom(buf, sizeof(buf), &from));
    EXPECT_STREQ("ping", buf);
    EXPECT_EQ(cep, from);
    ASSERT_EQ(4, server->sendto("pong", 4, from));
    ASSERT_EQ(4, client->recvfrom(buf, sizeof(buf), &from));
    EXPECT_STREQ("pong", buf);
    EXPECT_EQ(sep, from);
    ASSERT_EQ(1, client->sendto("n", 1, sep));
    EXPECT_EQ(1, server->recvfrom(buf, sizeof(buf), nullptr));  // no address wanted
}

TEST_P(Udp, BindToAPortUsesThatPort) {  // Photon's bind(port) bound port 0
    uint16_t port = closed_udp_port();
    ASSERT_NE(0, port);
    std::unique_ptr<UDPSocket> s(new_udp_socket());
    ASSERT_EQ(0, s->bind(port));
    EXPECT_EQ(port, s->getsockname().port);
}

TEST_P(Udp, AConnectedSocketHearsEconnrefusedFromAClosedPort) {
    uint16_t port = closed_udp_port();
    ASSERT_NE(0, port);
    std::unique_ptr<UDPSocket> s(new_udp_socket());
    ASSERT_EQ(0, s->connect(EndPoint(IPAddr::V4Loopback(), port)));
    EXPECT_EQ(EndPoint(IPAddr::V4Loopback(), port), s->getpeername());
    ASSERT_EQ(1, s->send("?", 1));
    s->timeout(5 * 1000 * 1000);
    char buf[4];
    EXPECT_EQ(-1, s->recv(buf, sizeof(buf)));
    EXPECT_EQ(ECONNREFUSED, errno);
}

TEST_P(Udp, AnAddressOfTheWrongLengthIsEinvalAndSendsNothing) {
    std::unique_ptr<UDPSocket> rx(new_udp_socket()), tx(new_udp_socket());
    ASSERT_EQ(0, rx->bind_v4localhost());
    EndPoint ep = rx->getsockname();
    ASSERT_EQ(0, tx->connect(ep));
    IMessage* m = tx.get();
    // Photon sent this to the connected peer.
    EXPECT_EQ(-1, m->send("a", 1, (const IMessage::Addr*)&ep, 7));
    EXPECT_EQ(EINVAL, errno);
    char buf[4];
    EXPECT_EQ(-1, rx->recv(buf, sizeof(buf), MSG_DONTWAIT));
    EXPECT_EQ(EAGAIN, errno);
    ASSERT_EQ(1, tx->send("b", 1));
    size_t len = 3;
    EXPECT_EQ(-1, ((IMessage*)rx.get())->recv(buf, sizeof(buf), (IMessage::Addr*)&ep, &len));
    EXPECT_EQ(EINVAL, errno);
    len = sizeof(EndPoint);
    EXPECT_EQ(1, ((IMessage*)rx.get())->recv(buf, sizeof(buf), (IMessage::Addr*)&ep, &len));
    EXPECT_EQ(sizeof(EndPoint), len);  // reusable as is for the next call
    EXPECT_EQ(tx->getsockname(), ep);
}

TEST_P(Udp, IPv6AddressesOnTheDefaultIPv4SocketAreEafnosupport) {
    std::unique_ptr<UDPSocket> s(new_udp_socket());
    EXPECT_EQ(-1, s->bind_v6localhost());
    EXPECT_EQ(EAFNOSUPPORT, errno);
    EXPECT_EQ(-1, s->sendto("a", 1, EndPoint(IPAddr::V6Loopback(), 9)));
    EXPECT_EQ(EAFNOSUPPORT, errno);
    EXPECT_EQ(-1, s->connect(EndPoint(IPAddr::V6Loopback(), 9)));
    EXPECT_EQ(EAFNOSUPPORT, errno);
}

TEST_P(Udp, AnAdoptedIPv6SocketTalksToIPv4Peers) {
    int fd = ::socket(AF_INET6, SOCK_DGRAM, 0);
    if (fd < 0) GTEST_SKIP() << "no IPv6 here";
    int off = 0;
    ASSERT_EQ(0, ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)));
    std::unique_ptr<UDPSocket> v6(new_udp_socket(fd));
    ASSERT_TRUE(v6);
    EXPECT_EQ(65527u, v6->max_message_size());
    ASSERT_EQ(0, v6->bind_v4localhost());  // v4-mapped
    EndPoint ep6 = v6->getsockname();
    EXPECT_TRUE(ep6.addr.is_ipv4());
    std::unique_ptr<UDPSocket> v4(new_udp_socket());
    ASSERT_EQ(3, v4->sendto("abc", 3, ep6));
    char buf[8] = {};
    EndPoint from;
    ASSERT_EQ(3, v6->recvfrom(buf, sizeof(buf), &from));
    EXPECT_TRUE(from.addr.is_ipv4() && from.addr.is_loopback());
    ASSERT_EQ(2, v6->sendto("ok", 2, from));
    EXPECT_EQ(2, v4->recv(buf, sizeof(buf)));
}

TEST_P(Udp, AdoptingAnFdOfTheWrongKindFailsAndLeavesItToTheCaller) {
    int tcp = ::socket(AF_INET, SOCK_STREAM, 0), unix_dgram = ::socket(AF_UNIX, SOCK_DGRAM, 0);
    ASSERT_GE(tcp, 0);
    ASSERT_GE(unix_dgram, 0);
    EXPECT_EQ(nullptr, new_udp_socket(tcp));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(nullptr, new_udp_socket(unix_dgram));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(nullptr, new_uds_datagram_socket(tcp));
    EXPECT_EQ(EINVAL, errno);
    pipe_fds p;
    EXPECT_EQ(nullptr, new_uds_datagram_socket(p.r));
    EXPECT_EQ(ENOTSOCK, errno);
    EXPECT_EQ(0, ::close(tcp));  // still open: ours to close
    std::unique_ptr<UDS_DatagramSocket> u(new_uds_datagram_socket(unix_dgram));
    EXPECT_TRUE(u);  // a unix datagram fd is right for this one
}

PHOTON_INSTANTIATE_ENGINE_TESTS(Udp);

// ---- unix domain -------------------------------------------------------------------

class Uds : public EngineTest {
protected:
    void SetUp() override {
        EngineTest::SetUp();
        ASSERT_TRUE(dir.ok());
    }
    std::unique_ptr<UDS_DatagramSocket> bound(const char* name) {
        std::unique_ptr<UDS_DatagramSocket> s(new_uds_datagram_socket());
        if (s && s->bind(dir.file(name).c_str()) < 0) s.reset();
        return s;
    }
    socket_dir dir;
};

TEST_P(Uds, RecvfromNamesABoundSenderAndSendtoAnswersIt) {
    auto a = bound("a.sock"), c = bound("c.sock");
    ASSERT_TRUE(a && c);
    char apath[108] = {}, cpath[108] = {};
    ASSERT_EQ(0, a->getsockname(apath, sizeof(apath)));
    ASSERT_EQ(0, c->getsockname(cpath, sizeof(cpath)));
    ASSERT_EQ(4, c->sendto("ping", 4, apath));
    char buf[16] = {}, from[108] = {};
    ASSERT_EQ(4, a->recvfrom(buf, sizeof(buf), from, sizeof(from)));
    EXPECT_STREQ("ping", buf);
    EXPECT_STREQ(cpath, from);
    ASSERT_EQ(4, a->sendto("pong", 4, from));
    ASSERT_EQ(4, c->recv(buf, sizeof(buf)));
    EXPECT_STREQ("pong", buf);
    // A short `from` gets the path cut and terminated.
    ASSERT_EQ(1, c->sendto("x", 1, apath));
    char small[5] = {'#', '#', '#', '#', '#'};
    ASSERT_EQ(1, a->recvfrom(buf, sizeof(buf), small, sizeof(small)));
    EXPECT_EQ(std::string(cpath, 4), std::string(small));
}

TEST_P(Uds, AnUnboundSenderHasAnEmptyPath) {  // Photon read it from uninitialised memory
    auto a = bound("a.sock");
    std::unique_ptr<UDS_DatagramSocket> anon(new_uds_datagram_socket());
    ASSERT_TRUE(a && anon);
    char apath[108] = {};
    ASSERT_EQ(0, a->getsockname(apath, sizeof(apath)));
    ASSERT_EQ(1, anon->sendto("x", 1, apath));
    char buf[4], from[32];
    memset(from, '#', sizeof(from));
    ASSERT_EQ(1, a->recvfrom(buf, sizeof(buf), from, sizeof(from)));
    EXPECT_STREQ("", from);
}

TEST_P(Uds, BadPathsFailClearly) {
    std::unique_ptr<UDS_DatagramSocket> s(new_uds_datagram_socket());
    std::string long_path(200, 'p');
    EXPECT_EQ(-1, s->bind(long_path.c_str()));
    EXPECT_EQ(ENAMETOOLONG, errno);
    EXPECT_EQ(-1, s->connect(long_path.c_str()));
    EXPECT_EQ(ENAMETOOLONG, errno);
    EXPECT_EQ(-1, s->sendto("a", 1, long_path.c_str()));
    EXPECT_EQ(ENAMETOOLONG, errno);
    EXPECT_EQ(-1, s->connect(""));
    EXPECT_EQ(ENOENT, errno);
    EXPECT_EQ(-1, s->bind(nullptr));
    EXPECT_EQ(EINVAL, errno);
    std::string missing = dir.file("missing.sock");
    EXPECT_EQ(-1, s->connect(missing.c_str()));
    EXPECT_EQ(ENOENT, errno);
    EXPECT_EQ(-1, s->sendto("a", 1, missing.c_str()));
    EXPECT_EQ(ENOENT, errno);
    auto a = bound("a.sock");
    ASSERT_TRUE(a);
    std::string taken = dir.file("a.sock");
    EXPECT_EQ(-1, s->bind(taken.c_str()));
    EXPECT_EQ(EADDRINUSE, errno);
}

TEST_P(Uds, SendingToAClosedPeerIsEconnrefused) {
    auto a = bound("a.sock");
    std::unique_ptr<UDS_DatagramSocket> s(new_uds_datagram_socket());
    ASSERT_TRUE(a && s);
    ASSERT_EQ(0, s->connect(dir.file("a.sock").c_str()));
    ASSERT_EQ(1, s->send("x", 1));
    a.reset();
    EXPECT_EQ(-1, s->send("y", 1));
    EXPECT_EQ(ECONNREFUSED, errno);
}

TEST_P(Uds, AConnectedSendToAFullReceiverWaitsUntilItDrains) {
    auto a = bound("a.sock");
    std::unique_ptr<UDS_DatagramSocket> s(new_uds_datagram_socket());
    ASSERT_TRUE(a && s);
    ASSERT_EQ(0, s->connect(dir.file("a.sock").c_str()));
    int queued = fill_until_eagain([&] { return s->send("x", 1, MSG_DONTWAIT); });
    ASSERT_GT(queued, 0);
    ssize_t sent = -2;
    s->timeout(10 * 1000 * 1000);
    auto w = spawn([&] { sent = s->send("!", 1); });
    ASSERT_TRUE(until_sleeping(w.th));
    char c;
    for (int i = 0; i < queued; i++) ASSERT_EQ(1, a->recv(&c, 1));
    w.join();
    EXPECT_EQ(1, sent);
    a->timeout(5 * 1000 * 1000);
    ASSERT_EQ(1, a->recv(&c, 1));
    EXPECT_EQ('!', c);
}

TEST_P(Uds, AnUnconnectedSendToAFullReceiverTimesOutWithoutSpinning) {
    auto a = bound("a.sock");
    std::unique_ptr<UDS_DatagramSocket> s(new_uds_datagram_socket());
    ASSERT_TRUE(a && s);
    std::string path = dir.file("a.sock");
    int queued = fill_until_eagain([&] { return s->sendto("x", 1, path.c_str(), MSG_DONTWAIT); });
    ASSERT_GT(queued, 0);
    s->timeout(200 * 1000);
    uint64_t cpu0 = thread_cpu_us();
    auto t0 = Clock::now();
    EXPECT_EQ(-1, s->sendto("!", 1, path.c_str()));
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_GE(us_since(t0), 190u * 1000);
    // Spinning would burn the whole 200 ms; the back-off sleeps through it.
    EXPECT_LT(thread_cpu_us() - cpu0, 100u * 1000);
}

TEST_P(Uds, AnUnconnectedSendToAFullReceiverGoesOutOnceItDrains) {
    auto a = bound("a.sock");
    std::unique_ptr<UDS_DatagramSocket> s(new_uds_datagram_socket());
    ASSERT_TRUE(a && s);
    std::string path = dir.file("a.sock");
    int queued = fill_until_eagain([&] { return s->sendto("x", 1, path.c_str(), MSG_DONTWAIT); });
    ASSERT_GT(queued, 0);
    ssize_t sent = -2;
    s->timeout(10 * 1000 * 1000);
    auto w = spawn([&] { sent = s->sendto("!", 1, path.c_str()); });
    ASSERT_TRUE(until_sleeping(w.th));
    char c;
    for (int i = 0; i < queued; i++) ASSERT_EQ(1, a->recv(&c, 1));
    a->timeout(5 * 1000 * 1000);
    ASSERT_EQ(1, a->recv(&c, 1));
    EXPECT_EQ('!', c);
    w.join();
    EXPECT_EQ(1, sent);
}

TEST_P(Uds, AnInterruptedSendBackingOffFailsWithTheInterruptersErrno) {
    auto a = bound("a.sock");
    std::unique_ptr<UDS_DatagramSocket> s(new_uds_datagram_socket());
    ASSERT_TRUE(a && s);
    std::string path = dir.file("a.sock");
    ASSERT_GT(fill_until_eagain([&] { return s->sendto("x", 1, path.c_str(), MSG_DONTWAIT); }), 0);
    ssize_t sent = -2;
    int err = 0;
    auto w = spawn([&] {
        sent = s->sendto("!", 1, path.c_str());
        err = errno;
    });
    ASSERT_TRUE(until_sleeping(w.th));
    // Interrupted until it ends: the io_uring engine drops an interrupt
    // that races with a poll completing (the first wait, on a writable fd),
    // so keep on until one lands in the back-off.
    EXPECT_TRUE(wait_for([&] {
        if (sent == -2) thread_interrupt(w.th, ECANCELED);
        return sent != -2;
    }));
    w.join();
    EXPECT_EQ(-1, sent);
    EXPECT_EQ(ECANCELED, err);
}

PHOTON_INSTANTIATE_ENGINE_TESTS(Uds);

}  // namespace
