// IMessageChannel (photon/common/message-channel.h): the flag values Photon
// defines, the buffer overloads over a channel that implements only the
// iovector ones, the ENOBUFS contract, and the default send_recv().
#include <photon/common/message-channel.h>

#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <string>

namespace {

static_assert(IMessageChannel::OUT_OF_ORDER == 1 && IMessageChannel::DUPLICATION == 2 &&
                  IMessageChannel::LOSSY == 4 && IMessageChannel::ROUND_TRIP == 8 &&
                  IMessageChannel::ALLOCATION == 16 && IMessageChannel::CONCURRENT_RT == 32 &&
                  IMessageChannel::PIPELINING == 64,
              "Photon's flag values");

// A loopback: each message sent is what a later recv() returns, whole, so a
// request is its own response.
class loopback : public IMessageChannel {
public:
    using IMessageChannel::recv;
    using IMessageChannel::send;

    std::deque<std::string> q;
    uint64_t f = ROUND_TRIP;
    int sends = 0;

    ssize_t send(iovector& msg) override {
        sends++;
        std::string m(msg.sum(), '\0');
        msg.memcpy_to(&m[0], m.size());
        q.push_back(m);
        return (ssize_t)m.size();
    }
    ssize_t recv(iovector& msg) override {
        if (q.empty()) {
            errno = EAGAIN;
            return -1;
        }
        const std::string& m = q.front();
        if (msg.sum() < m.size()) {
            errno = ENOBUFS;
            return -(ssize_t)m.size();
        }
        msg.memcpy_from(m.data(), m.size());
        auto n = (ssize_t)m.size();
        q.pop_front();
        return n;
    }
    uint64_t flags() override { return f; }
    uint64_t flags(uint64_t nf) override {
        const uint64_t supported = ROUND_TRIP | PIPELINING;
        f = nf & supported;
        return nf & ~supported;
    }
};

TEST(MessageChannel, BufferOverloadsSendAndReceiveWholeMessages) {
    loopback ch;
    EXPECT_EQ(5, ch.send("hello", 5));
    EXPECT_EQ(3, ch.send("abc", 3));
    char buf[16] = {};
    EXPECT_EQ(5, ch.recv(buf, sizeof(buf)));
    EXPECT_EQ(0, memcmp(buf, "hello", 5));
    EXPECT_EQ(3, ch.recv(buf, sizeof(buf)));
    EXPECT_EQ(0, memcmp(buf, "abc", 3));
    errno = 0;
    EXPECT_EQ(-1, ch.recv(buf, sizeof(buf)));
    EXPECT_EQ(EAGAIN, errno);
}

TEST(MessageChannel, TooSmallABufferGivesMinusTheSizeNeededAndKeepsTheMessage) {
    loopback ch;
    ASSERT_EQ(10, ch.send("0123456789", 10));
    char small[4];
    errno = 0;
    ssize_t r = ch.recv(small, sizeof(small));
    EXPECT_EQ(-10, r);
    EXPECT_EQ(ENOBUFS, errno);
    std::string big((size_t)-r, '\0');
    EXPECT_EQ(10, ch.recv(&big[0], big.size()));
    EXPECT_EQ("0123456789", big);
}

TEST(MessageChannel, DefaultSendRecvSendsTheRequestThenReceives) {
    loopback ch;
    char req[] = "ping";
    char resp[8] = {};
    IOVector rq, rs;
    rq.push_back(req, 4);
    rs.push_back(resp, sizeof(resp));
    EXPECT_EQ(4, ch.send_recv(rq, rs));  // the loopback answers with the request
    EXPECT_EQ(0, memcmp(resp, "ping", 4));
    EXPECT_EQ(1, ch.sends);
}

// Photon returned 0 without receiving when the request was empty.
TEST(MessageChannel, AnEmptyRequestStillWaitsForItsResponse) {
    loopback ch;
    IOVector rq, rs;
    char resp[4];
    rs.push_back(resp, sizeof(resp));
    EXPECT_EQ(0, ch.send_recv(rq, rs));
    EXPECT_TRUE(ch.q.empty()) << "the (empty) response was received";
}

TEST(MessageChannel, AFailedSendIsReturnedWithoutReceiving) {
    struct failing : loopback {
        ssize_t send(iovector&) override {
            errno = EPIPE;
            return -1;
        }
    } ch;
    ch.q.push_back("stale");
    IOVector rq, rs;
    char resp[8];
    rs.push_back(resp, sizeof(resp));
    errno = 0;
    EXPECT_EQ(-1, ch.send_recv(rq, rs));
    EXPECT_EQ(EPIPE, errno);
    EXPECT_EQ(1u, ch.q.size()) << "nothing received";
}

TEST(MessageChannel, SettingFlagsReportsTheUnsupportedOnes) {
    loopback ch;
    EXPECT_EQ(IMessageChannel::ROUND_TRIP, ch.flags());
    uint64_t ask = IMessageChannel::PIPELINING | IMessageChannel::LOSSY;
    EXPECT_EQ(IMessageChannel::LOSSY, ch.flags(ask));
    EXPECT_EQ(IMessageChannel::PIPELINING, ch.flags());
}

}  // namespace
