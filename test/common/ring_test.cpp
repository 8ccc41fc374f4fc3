// photon/common/ring.h: RingQueue capacity, order and wrap-around, blocking push/pop between
// coroutines, interrupts, non-trivial items; RingBuffer byte streams, iovecs and bad input.
#include <photon/common/ring.h>
#include <photon/photon.h>

#include <gtest/gtest.h>

#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include "../thread/test_util.h"

namespace {

using namespace photon_test;

class RingTest : public VcpuTest {};

// Yields until `th` sleeps (bounded); true if it does.
bool blocked(photon::thread* th) { return until_sleeping(th); }

TEST_F(RingTest, CapacityRoundsUpToAPowerOfTwoAndHoldsOneLess) {
    RingQueue<int> q(5);
    EXPECT_EQ(8u, q.capacity());
    EXPECT_TRUE(q.empty());
    for (int i = 0; i < 7; i++) q.push_back(i);
    EXPECT_TRUE(q.full());
    EXPECT_EQ(7u, q.size());
    EXPECT_EQ(0, q.front());
    EXPECT_EQ(6, q.back());
    EXPECT_EQ(3, q[3]);
    EXPECT_EQ(8u, RingQueue<int>(8).capacity());
    EXPECT_EQ(16u, RingQueue<int>(9).capacity());
}

// Photon's ring of 1 was full and empty at once, and push_back() blocked forever.
TEST_F(RingTest, CapacityZeroOrOneGivesARingThatHoldsOne) {
    for (uint32_t c : {0u, 1u}) {
        RingQueue<int> q(c);
        EXPECT_EQ(2u, q.capacity());
        EXPECT_TRUE(q.empty());
        EXPECT_FALSE(q.full());
        q.push_back(42);
        EXPECT_TRUE(q.full());
        int v = 0;
        q.pop_front(v);
        EXPECT_EQ(42, v);
        EXPECT_TRUE(q.empty());
    }
}

TEST_F(RingTest, WrapsAroundInFifoOrder) {
    RingQueue<int> q(8);
    int in = 0, out = 0;
    for (int round = 0; round < 200; round++) {
        int k = 1 + round % 7;
        for (int i = 0; i < k; i++) q.push_back(in++);
        ASSERT_EQ((uint32_t)k, q.size());
        ASSERT_EQ(in - 1, q.back());
        for (int i = 0; i < k; i++) ASSERT_EQ(out + i, q[i]);
        for (int i = 0; i < k; i++) {
            int v;
            q.pop_front(v);
            ASSERT_EQ(out++, v);
        }
    }
    EXPECT_TRUE(q.empty());
}

// Photon's own test: a pusher of 10 items blocks on the 8th until the reader pops.
TEST_F(RingTest, PushBackBlocksWhileFullAndPopFrontWhileEmpty) {
    RingQueue<int> q(8);
    int pushed = 0;
    auto pusher = spawn([&] {
        for (int i = 1; i <= 10; i++) {
            q.push_back(i);
            pushed = i;
        }
    });
    ASSERT_TRUE(blocked(pusher.th));
    EXPECT_EQ(7, pushed) << "holds capacity - 1";
    for (int i = 1; i <= 10; i++) {
        int v = 0;
        q.pop_front(v);
        EXPECT_EQ(i, v);
    }
    pusher.join();
    EXPECT_TRUE(q.empty());
    int got = 0;
    auto popper = spawn([&] { q.pop_front(got); });
    ASSERT_TRUE(blocked(popper.th));
    q.push_back(99);
    popper.join();
    EXPECT_EQ(99, got);
}

TEST_F(RingTest, AnInterruptedPopLeavesItsArgumentAndTheQueueAlone) {
    RingQueue<int> q(4);
    int v = -7, err = 0;
    auto popper = spawn([&] {
        q.pop_front(v);
        err = errno;
    });
    ASSERT_TRUE(blocked(popper.th));
    photon::thread_interrupt(popper.th, EINTR);
    popper.join();
    EXPECT_EQ(-7, v);
    EXPECT_EQ(EINTR, err);
    EXPECT_TRUE(q.empty());
}

TEST_F(RingTest, AnInterruptedPushStoresNothing) {
    RingQueue<int> q(2);
    q.push_back(1);
    int err = 0;
    auto pusher = spawn([&] {
        q.push_back(2);
        err = errno;
    });
    ASSERT_TRUE(blocked(pusher.th));
    photon::thread_interrupt(pusher.th, ECANCELED);
    pusher.join();
    EXPECT_EQ(ECANCELED, err);
    EXPECT_EQ(1u, q.size());
    EXPECT_EQ(1, q.front());
}

struct counted {
    static int alive;
    std::string s;
    explicit counted(std::string v) : s(std::move(v)) { alive++; }
    counted(const counted& o) : s(o.s) { alive++; }
    counted(counted&& o) : s(std::move(o.s)) { alive++; }
    counted& operator=(const counted&) = default;
    counted& operator=(counted&&) = default;
    ~counted() { alive--; }
};
int counted::alive = 0;

// Photon assigned onto raw malloc'ed memory; a std::string there is undefined behaviour.
TEST_F(RingTest, NonTrivialItemsAreConstructedInPlaceAndAllDestroyed) {
    counted::alive = 0;
    {
        RingQueue<counted> q(4);
        counted a(std::string(100, 'a'));
        q.push_back(a);
        q.push_back(counted(std::string(100, 'b')));
        q.push_back(counted("c"));
        EXPECT_EQ(4, counted::alive);
        counted out("");
        q.pop_front(out);
        EXPECT_EQ(std::string(100, 'a'), out.s);
        EXPECT_EQ(4, counted::alive);
        q.pop_front();
        EXPECT_EQ(3, counted::alive);
        q.push_back(counted("d"));
        q.push_back(counted("e"));  // wraps
        EXPECT_EQ("c", q.front().s);
        EXPECT_EQ("e", q.back().s);
    }
    EXPECT_EQ(0, counted::alive) << "the destructor destroys the items left";
}

TEST_F(RingTest, WaitForPushReturnsOnAPushOrTheTimeout) {
    RingQueue<int> q(4);
    auto t0 = Clock::now();
    q.wait_for_push(2000);
    EXPECT_GE(us_since(t0), 1500u);
    bool woke = false;
    auto waiter = spawn([&] {
        q.wait_for_push(kLongUs);
        woke = true;
    });
    ASSERT_TRUE(blocked(waiter.th));
    q.push_back(1);
    waiter.join();
    EXPECT_TRUE(woke);
    auto popwaiter = spawn([&] { q.wait_for_pop(kLongUs); });
    ASSERT_TRUE(blocked(popwaiter.th));
    q.pop_front();
    popwaiter.join();
}

// ---- RingBuffer ---------------------------------------------------------------------------

const char kText[] = "The quick brown fox jumps over the lazy dog, 0123456789!";

// Photon's own test: a writer of 10 texts and a reader in chunks that do not divide the text.
TEST_F(RingTest, BufferStreamsBytesThroughASmallRing) {
    RingBuffer buf(32);
    constexpr size_t kLen = sizeof(kText);
    ssize_t wrote_total = 0;
    auto writer = spawn([&] {
        for (int i = 0; i < 10; i++) wrote_total += buf.write(kText, kLen);
    });
    size_t total = kLen * 10, j = 0;
    char b[kLen / 4 + 11];
    static_assert(kLen % sizeof(b) != 0, "chunks must straddle the texts");
    while (total > 0) {
        size_t len = std::min(sizeof(b), total);
        ASSERT_EQ((ssize_t)len, buf.read(b, len));
        for (size_t i = 0; i < len; i++, j = (j + 1) % kLen) ASSERT_EQ(kText[j], b[i]);
        total -= len;
    }
    writer.join();
    EXPECT_EQ((ssize_t)kLen * 10, wrote_total);
    EXPECT_TRUE(buf.empty());
}

TEST_F(RingTest, BufferReadvAndWritevScatterAndGather) {
    RingBuffer buf(64);
    char a[] = "hello, ", c[] = "world";
    iovec out[3] = {{a, 7}, {nullptr, 0}, {c, 5}};
    EXPECT_EQ(12, buf.writev(out, 3));
    EXPECT_EQ(12u, buf.size());
    char x[5] = {}, y[7] = {};
    iovec in[2] = {{x, 5}, {y, 7}};
    EXPECT_EQ(12, buf.readv(in, 2));
    EXPECT_EQ(0, memcmp(x, "hello", 5));
    EXPECT_EQ(0, memcmp(y, ", world", 7));
    EXPECT_EQ(0, buf.readv(in, 0));
    EXPECT_EQ(0, buf.read(x, 0));
}

TEST_F(RingTest, BufferRefusesBadArguments) {
    RingBuffer buf(16);
    char x[4];
    iovec bad[1] = {{nullptr, 4}};
    errno = 0;
    EXPECT_EQ(-1, buf.readv(nullptr, 1));
    EXPECT_EQ(EINVAL, errno);
    errno = 0;
    EXPECT_EQ(-1, buf.writev(bad, 1));
    EXPECT_EQ(EINVAL, errno);
    iovec ok[1] = {{x, 4}};
    errno = 0;
    EXPECT_EQ(-1, buf.readv(ok, -1));
    EXPECT_EQ(EINVAL, errno);
    errno = 0;
    EXPECT_EQ(-1, buf.read(nullptr, 3));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, buf.write(x, (size_t)SSIZE_MAX + 1));
    EXPECT_TRUE(buf.empty()) << "nothing written by the refused calls";
}

// Photon returned 0 (an end of file to most callers) for a read interrupted before any byte.
TEST_F(RingTest, BufferReadInterruptedBeforeAnyByteFailsWithTheErrno) {
    RingBuffer buf(16);
    ssize_t ret = 0;
    int err = 0;
    char x[8];
    auto reader = spawn([&] {
        ret = buf.read(x, sizeof(x));
        err = errno;
    });
    ASSERT_TRUE(blocked(reader.th));
    photon::thread_interrupt(reader.th, EINTR);
    reader.join();
    EXPECT_EQ(-1, ret);
    EXPECT_EQ(EINTR, err);
}

TEST_F(RingTest, BufferReadInterruptedAfterSomeBytesReturnsThem) {
    RingBuffer buf(16);
    ssize_t ret = 0;
    char x[8] = {};
    auto reader = spawn([&] { ret = buf.read(x, sizeof(x)); });
    ASSERT_TRUE(blocked(reader.th));
    ASSERT_EQ(3, buf.write("abc", 3));
    // The reader takes the 3 bytes when it runs, then blocks for the rest.
    ASSERT_TRUE(blocked(reader.th));
    photon::thread_interrupt(reader.th, EINTR);
    reader.join();
    EXPECT_EQ(3, ret);
    EXPECT_EQ(0, memcmp(x, "abc", 3));
}

// Photon went on into the next iovec after a short one, leaving a gap in the data.
TEST_F(RingTest, BufferReadvStopsAtAShortIovec) {
    RingBuffer buf(16);
    ssize_t ret = 0;
    char x[4] = {}, y[4] = {};
    auto reader = spawn([&] {
        iovec in[2] = {{x, 4}, {y, 4}};
        ret = buf.readv(in, 2);
    });
    ASSERT_TRUE(blocked(reader.th));
    ASSERT_EQ(2, buf.write("ab", 2));
    ASSERT_TRUE(blocked(reader.th));
    photon::thread_interrupt(reader.th, EINTR);
    reader.join();
    EXPECT_EQ(2, ret);
    EXPECT_EQ(0, memcmp(x, "ab", 2));
    ASSERT_EQ(2, buf.write("cd", 2));
    char z[2];
    EXPECT_EQ(2, buf.read(z, 2));
    EXPECT_EQ(0, memcmp(z, "cd", 2)) << "the next bytes stayed in the ring for the next read";
}

TEST_F(RingTest, BufferWriteInterruptedWhenFullKeepsWhatFit) {
    RingBuffer buf(8);  // holds 7 bytes
    ssize_t ret = 0;
    auto writer = spawn([&] { ret = buf.write("0123456789", 10); });
    ASSERT_TRUE(blocked(writer.th));
    EXPECT_TRUE(buf.full());
    photon::thread_interrupt(writer.th, EINTR);
    writer.join();
    EXPECT_EQ(7, ret);
    char x[7];
    EXPECT_EQ(7, buf.read(x, 7));
    EXPECT_EQ(0, memcmp(x, "0123456", 7));
}

}  // namespace
