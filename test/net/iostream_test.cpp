// new_iostream over a loopback TCP pair, under both event engines: line and
// binary exchange, buffering edges, flush on delete, ownership, a peer that
// closes, timeouts, and (over a fake stream) a write cut short.
#include <photon/net/iostream.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <photon/net/socket.h>

#include "../thread/test_util.h"
#include "../util/engine_fixture.h"
#include "net_test_util.h"

using namespace photon;
using namespace photon::net;
using namespace photon_test;

namespace {

// A connected loopback TCP pair: `a` (client side) and `b` (accepted).
class Iostream : public EngineTest {
protected:
    void SetUp() override {
        EngineTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        server.reset(new_tcp_socket_server());
        client.reset(new_tcp_socket_client());
        ASSERT_TRUE(server && client);
        ASSERT_EQ(0, server->bind_v4localhost());
        ASSERT_EQ(0, server->listen());
        a.reset(client->connect(server->getsockname()));
        ASSERT_TRUE(a);
        b.reset(server->accept());
        ASSERT_TRUE(b);
    }
    void TearDown() override {
        a.reset();
        b.reset();
        client.reset();
        server.reset();
        EngineTest::TearDown();
    }
    std::unique_ptr<ISocketServer> server;
    std::unique_ptr<ISocketClient> client;
    std::unique_ptr<ISocketStream> a, b;
};

TEST_P(Iostream, LinesAndNumbersCrossBothWays) {
    std::unique_ptr<std::iostream> x(new_iostream(a.get())), y(new_iostream(b.get()));
    ASSERT_TRUE(x && y);
    *x << "hello iostream over a socket" << std::endl;
    std::string line;
    ASSERT_TRUE(std::getline(*y, line));
    EXPECT_EQ("hello iostream over a socket", line);
    *y << 123456 << ' ' << 2.5 << ' ' << "word" << std::endl;
    long n = 0;
    double d = 0;
    std::string w;
    ASSERT_TRUE(*x >> n >> d >> w);
    EXPECT_EQ(123456, n);
    EXPECT_EQ(2.5, d);
    EXPECT_EQ("word", w);
}

TEST_P(Iostream, ManyLinesWrittenInOneBurstAreReadBackInOrder) {
    std::unique_ptr<std::iostream> x(new_iostream(a.get())), y(new_iostream(b.get()));
    constexpr int kLines = 3000;  // several times the buffers
    auto w = spawn([&] {
        for (int i = 0; i < kLines; i++) *x << "line " << i << '\n';
        *x << std::flush;
    });
    std::string line;
    for (int i = 0; i < kLines; i++) {
        ASSERT_TRUE(std::getline(*y, line)) << i;
        ASSERT_EQ("line " + std::to_string(i), line);
    }
    w.join();
    EXPECT_TRUE(x->good());
}

TEST_P(Iostream, BinaryBlocksOfEverySizeArriveIntact) {
    std::unique_ptr<std::iostream> x(new_iostream(a.get())), y(new_iostream(b.get()));
    // Around the buffer size (8 KiB) and well beyond it, where reads and
    // writes skip the buffers.
    std::vector<size_t> sizes = {1, 7, 8191, 8192, 8193, 3, 100000, 1 << 20, 0, 5000};
    std::vector<std::string> blocks;
    for (size_t i = 0; i < sizes.size(); i++) blocks.push_back(pattern(sizes[i], (uint32_t)i + 1));
    auto w = spawn([&] {
        for (auto& blk : blocks) x->write(blk.data(), blk.size());
        x->flush();
    });
    for (auto& blk : blocks) {
        std::string in(blk.size(), 0);
        ASSERT_TRUE(y->read(&in[0], in.size())) << blk.size();
        ASSERT_EQ((std::streamsize)blk.size(), y->gcount());
        ASSERT_TRUE(in == blk) << blk.size();
    }
    w.join();
    EXPECT_TRUE(x->good());
    // unget() after a read that bypassed the buffer gives back its last byte.
    ASSERT_EQ(1, a->write("!", 1));
    std::string big(20000, 0);
    std::string out = pattern(20000, 77);
    ASSERT_EQ(20000, a->write(out.data(), out.size()));
    EXPECT_EQ('!', y->get());
    ASSERT_TRUE(y->read(&big[0], big.size()));
    EXPECT_TRUE(y->unget());
    EXPECT_EQ(out.back(), (char)y->get());
}

TEST_P(Iostream, OneCoroutineReadsWhileAnotherWrites) {
    std::unique_ptr<std::iostream> x(new_iostream(a.get())), y(new_iostream(b.get()));
    constexpr int kLines = 500;
    // The peer echoes each line back.
    auto echo = spawn([&] {
        std::string line;
        for (int i = 0; i < kLines && std::getline(*y, line); i++) *y << line << std::endl;
    });
    auto writer = spawn([&] {
        for (int i = 0; i < kLines; i++) *x << "msg " << i << std::endl;
    });
    std::string line;
    for (int i = 0; i < kLines; i++) {
        ASSERT_TRUE(std::getline(*x, line)) << i;
        ASSERT_EQ("msg " + std::to_string(i), line);
    }
    writer.join();
    echo.join();
}

TEST_P(Iostream, ReadingPastWhatThePeerSentBeforeClosingStopsAtEof) {
    std::unique_ptr<std::iostream> y(new_iostream(b.get()));
    std::string out = pattern(100, 5);
    ASSERT_EQ(100, a->write(out.data(), out.size()));
    a.reset();
    std::vector<char> in(100000);
    EXPECT_FALSE(y->read(in.data(), in.size()));
    EXPECT_EQ(100, y->gcount());
    EXPECT_TRUE(y->eof());
    EXPECT_EQ(0, memcmp(out.data(), in.data(), 100));
    y->clear();
    int n;
    EXPECT_FALSE(*y >> n);
    EXPECT_TRUE(y->eof());
}

TEST_P(Iostream, WritingToAClosedPeerSetsBadbit) {
    std::unique_ptr<std::iostream> x(new_iostream(a.get()));
    b.reset();
    std::string chunk(64 * 1024, 'z');
    for (int i = 0; i < 200 && !x->bad(); i++) x->write(chunk.data(), chunk.size()).flush();
    EXPECT_TRUE(x->bad());
    EXPECT_TRUE(errno == EPIPE || errno == ECONNRESET) << errno;
}

TEST_P(Iostream, DeletingFlushesAndOwnershipDecidesWhetherTheSocketGoes) {
    char buf[8] = {};
    {
        std::unique_ptr<std::iostream> x(new_iostream(a.get(), false));
        *x << "abc";  // no flush: deleting sends it
    }
    ASSERT_EQ(3, b->read(buf, 3));
    EXPECT_STREQ("abc", buf);
    ASSERT_EQ(1, a->write("d", 1));  // still ours, still open
    ASSERT_EQ(1, b->read(buf, 1));
    EXPECT_EQ('d', buf[0]);
    std::unique_ptr<std::iostream> owner(new_iostream(a.release(), true));
    *owner << "ef";
    owner.reset();  // flushes, then deletes the socket
    ASSERT_EQ(2, b->read(buf, 2));
    EXPECT_EQ(0, b->recv(buf, sizeof(buf)));  // EOF: the socket is gone
}

TEST_P(Iostream, ATimedOutReadCanBeRetriedAfterClear) {
    std::unique_ptr<std::iostream> x(new_iostream(a.get()));
    a->timeout(50 * 1000);
    int n = 0;
    EXPECT_FALSE(*x >> n);
    EXPECT_EQ(ETIMEDOUT, errno);
    x->clear();
    ASSERT_EQ(3, b->write("42\n", 3));
    ASSERT_TRUE(*x >> n);
    EXPECT_EQ(42, n);
}

PHOTON_INSTANTIATE_ENGINE_TESTS(Iostream);

TEST(IostreamArgs, ANullSocketIsRefused) {
    errno = 0;
    EXPECT_EQ(nullptr, new_iostream(nullptr, true));
    EXPECT_EQ(EINVAL, errno);
}

// A stream whose writes take at most `budget` bytes in all, then fail.
class short_writer : public ISocketStream {
public:
    std::string sent;
    size_t budget = 0;

    ssize_t write(const void* buf, size_t count) override {
        size_t n = std::min(count, budget);
        sent.append((const char*)buf, n);
        budget -= n;
        if (n == 0) {
            errno = EPIPE;
            return -1;
        }
        return (ssize_t)n;
    }
    int close() override { return 0; }
    ssize_t read(void*, size_t) override { return 0; }
    ssize_t readv(const struct iovec*, int) override { return 0; }
    ssize_t writev(const struct iovec* iov, int) override {
        return write(iov->iov_base, iov->iov_len);
    }
    ssize_t recv(void*, size_t, int) override { return 0; }
    ssize_t recv(const struct iovec*, int, int) override { return 0; }
    ssize_t send(const void* buf, size_t count, int) override { return write(buf, count); }
    ssize_t send(const struct iovec* iov, int n, int) override { return writev(iov, n); }
    ssize_t sendfile(int, off_t, size_t) override { return -1; }
    Object* get_underlay_object(uint64_t) override { return nullptr; }
    int setsockopt(int, int, const void*, socklen_t) override { return 0; }
    int getsockopt(int, int, void*, socklen_t*) override { return 0; }
    int getsockname(EndPoint&) override { return 0; }
    int getpeername(EndPoint&) override { return 0; }
    int getsockname(char*, size_t) override { return 0; }
    int getpeername(char*, size_t) override { return 0; }
};

// Photon's sent the whole buffer again after a short write.
TEST(IostreamArgs, AShortWriteKeepsTheUnsentTailForTheNextFlush) {
    short_writer s;
    s.budget = 30;
    std::unique_ptr<std::iostream> x(new_iostream(&s));
    std::string out = pattern(100, 6);
    EXPECT_FALSE(x->write(out.data(), out.size()).flush());
    EXPECT_EQ(30u, s.sent.size());
    x->clear();
    s.budget = 1000;
    EXPECT_TRUE(x->flush());
    EXPECT_TRUE(s.sent == out);
    *x << "tail";
    x.reset();  // flushes on delete
    EXPECT_EQ(out + "tail", s.sent);
}

}  // namespace
