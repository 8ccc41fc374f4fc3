// Read-ahead of the readiness-based TCP streams (net/read_ahead.h): small
// reads are served from one large kernel read, in order, through every read
// call, with peeks, EOF, timeouts and the keep-alive pool's reuse check
// seeing the buffered bytes. The io_uring flavour reads no further than
// asked.
#include <sys/socket.h>

#include <memory>
#include <string>
#include <tuple>

#include <photon/net/socket.h>

#include "net_test_util.h"
#include "tcp_flavour_fixture.h"

using namespace photon;
using namespace photon::net;
using namespace photon_test;

namespace {

class ReadAhead : public TcpFlavourTest {
protected:
    void SetUp() override {
        TcpFlavourTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        server->timeout(kLongUs);
        c.reset(client->connect(ep));
        ASSERT_NE(nullptr, c);
        a.reset(server->accept());  // the stream under test
        ASSERT_NE(nullptr, a);
        a->timeout(kLongUs);  // a failing test must not hang
    }
    void TearDown() override {
        a.reset();
        c.reset();
        TcpFlavourTest::TearDown();
    }
    bool reads_ahead() const { return kind() != kIouring; }
    // Bytes the kernel still holds for `a`, without taking them.
    ssize_t kernel_queued() {
        char buf[65536];
        ssize_t r = ::recv(a->get_underlay_fd(), buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
        return r < 0 && errno == EAGAIN ? 0 : r;
    }
    std::unique_ptr<ISocketStream> c, a;
};

TEST_P(ReadAhead, SmallRecvsAreServedFromOneKernelRead) {
    std::string out = pattern(1000);
    ASSERT_EQ(1000, c->write(out.data(), out.size()));
    thread_usleep(5000);  // all of it in a's receive queue
    std::string in(1000, 0);
    ASSERT_EQ(100, a->recv(&in[0], 100));
    EXPECT_EQ(reads_ahead() ? 0 : 900, kernel_queued());
    for (int i = 1; i < 10; i++) ASSERT_EQ(100, a->recv(&in[i * 100], 100)) << i;
    EXPECT_TRUE(in == out);
    EXPECT_EQ(0, kernel_queued());
}

TEST_P(ReadAhead, EveryReadCallSeesEveryByteInOrder) {
    const size_t kTotal = 1 << 20;
    std::string out = pattern(kTotal, 7), in;
    auto writer = spawn([&] {
        for (size_t off = 0; off < kTotal;) {
            size_t n = std::min<size_t>(kTotal - off, 1 + (off * 2654435761u) % 9000);
            if (c->write(&out[off], n) != (ssize_t)n) return ADD_FAILURE();
            off += n;
        }
    });
    char buf[8192];
    for (uint32_t k = 0; in.size() < kTotal; k++) {
        size_t want = std::min<size_t>(kTotal - in.size(), 1 + (k * 40503u) % 6000);
        ssize_t r;
        switch (k % 4) {
            case 0:  // recv: one transfer, may be short
                r = a->recv(buf, want);
                break;
            case 1:  // read: the whole count
                r = a->read(buf, want);
                ASSERT_EQ((ssize_t)want, r);
                break;
            case 2: {  // a vector recv over two pieces
                struct iovec v[2] = {{buf, want / 2}, {buf + want / 2, want - want / 2}};
                r = a->recv(v, 2);
                break;
            }
            default: {  // a peek, then the same bytes taken
                char peek[8192];
                ssize_t p = a->recv(peek, want, MSG_PEEK);
                ASSERT_GT(p, 0);
                r = a->recv(buf, (size_t)p);
                ASSERT_EQ(p, r);
                ASSERT_EQ(0, memcmp(peek, buf, (size_t)p));
                break;
            }
        }
        ASSERT_GT(r, 0) << "call " << k << ": " << strerror(errno);
        in.append(buf, (size_t)r);
    }
    writer.join();
    EXPECT_TRUE(in == out);
}

TEST_P(ReadAhead, BufferedBytesComeBeforeEof) {
    ASSERT_EQ(300, c->write(pattern(300).data(), 300));
    c.reset();  // FIN after the data
    std::string in(300, 0);
    for (int i = 0; i < 3; i++) ASSERT_EQ(100, a->recv(&in[i * 100], 100)) << i;
    EXPECT_TRUE(in == pattern(300));
    char x;
    EXPECT_EQ(0, a->recv(&x, 1));
    EXPECT_EQ(0, a->read(&x, 1));
}

TEST_P(ReadAhead, ASmallReadTimesOutAndLosesNothing) {
    a->timeout(20 * 1000);
    char buf[64];
    EXPECT_EQ(-1, a->recv(buf, sizeof(buf)));
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_EQ(-1, a->recv(buf, sizeof(buf), MSG_DONTWAIT));
    EXPECT_EQ(EAGAIN, errno);
    a->timeout(kLongUs);
    ASSERT_EQ(6, c->write("abcdef", 6));
    EXPECT_EQ(3, a->read(buf, 3));
    EXPECT_EQ(3, a->recv(buf + 3, sizeof(buf) - 3, MSG_DONTWAIT));
    EXPECT_EQ(0, memcmp(buf, "abcdef", 6));
}

TEST_P(ReadAhead, ALargeReadTakesTheBufferedBytesFirst) {
    std::string out = pattern(200000, 3);
    auto writer = spawn([&] { EXPECT_EQ((ssize_t)out.size(), c->write(out.data(), out.size())); });
    std::string in(out.size(), 0);
    ASSERT_EQ(10, a->read(&in[0], 10));  // buffers up to 16 KiB
    ASSERT_EQ((ssize_t)out.size() - 10, a->read(&in[10], out.size() - 10));
    writer.join();
    EXPECT_TRUE(in == out);
}

PHOTON_INSTANTIATE_TCP_FLAVOUR_TESTS(ReadAhead);

}  // namespace
