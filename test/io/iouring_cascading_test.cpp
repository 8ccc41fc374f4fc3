// The io_uring cascading engine, under either master engine.
#include <photon/io/iouring-wrapper.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <thread>

#include "iouring_test_util.h"

using namespace photon;
using namespace photon_test;

namespace {

void* tag(int i) { return reinterpret_cast<void*>((uintptr_t)(i + 1) * 16); }

class IouringCascading : public IouringEngineTest {
protected:
    void SetUp() override {
        IouringEngineTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        ce.reset(new_iouring_cascading_engine());
        ASSERT_NE(nullptr, ce) << strerror(errno);
    }
    void TearDown() override {
        ce.reset();
        IouringEngineTest::TearDown();
    }
    std::unique_ptr<CascadingEventEngine> ce;
};

TEST_P(IouringCascading, ReportsEachReadyPipeWithItsData) {
    pipe_fds p[4] = {pipe_fds(O_CLOEXEC), pipe_fds(O_CLOEXEC), pipe_fds(O_CLOEXEC),
                     pipe_fds(O_CLOEXEC)};
    for (int i = 0; i < 4; i++) {
        ASSERT_TRUE(p[i].ok());
        ASSERT_EQ(0, ce->add_interest({p[i].r, EVENT_READ, tag(i)}));
    }
    p[0].put();
    p[2].put();
    void* data[8];
    ssize_t n = ce->wait_for_events(data, 8, kLongUs);
    ASSERT_EQ(2, n);
    std::sort(data, data + 2);
    EXPECT_EQ(tag(0), data[0]);
    EXPECT_EQ(tag(2), data[1]);
}

TEST_P(IouringCascading, WaitParksOnlyTheCallerUntilAnotherThreadWrites) {
    pipe_fds p(O_CLOEXEC);
    ASSERT_TRUE(p.ok());
    ASSERT_EQ(0, ce->add_interest({p.r, EVENT_READ, tag(5)}));
    ssize_t n = -2;
    void* data[1] = {};
    auto t = spawn([&] { n = ce->wait_for_events(data, 1, kLongUs); });
    ASSERT_TRUE(until_sleeping(t.th));
    EXPECT_EQ(0, thread_usleep(1000));  // this coroutine still runs
    EXPECT_EQ(-2, n);
    std::thread writer([&] { p.put(); });
    t.join();
    writer.join();
    EXPECT_EQ(1, n);
    EXPECT_EQ(tag(5), data[0]);
}

TEST_P(IouringCascading, LevelTriggeredReportsAgainUntilDrained) {
    pipe_fds p(O_CLOEXEC);
    ASSERT_TRUE(p.ok());
    ASSERT_EQ(0, ce->add_interest({p.r, EVENT_READ, tag(1)}));
    p.put();
    void* data[2];
    ASSERT_EQ(1, ce->wait_for_events(data, 2, kLongUs));
    ASSERT_EQ(1, ce->wait_for_events(data, 2, kLongUs));  // not drained yet
    p.take();
    EXPECT_EQ(0, ce->wait_for_events(data, 2, 10 * 1000));
}

TEST_P(IouringCascading, EdgeTriggeredReportsOncePerChange) {
    pipe_fds p(O_CLOEXEC);
    ASSERT_TRUE(p.ok());
    ASSERT_EQ(0, ce->add_interest({p.r, EVENT_READ | EDGE_TRIGGERED, tag(1)}));
    p.put();
    void* data[2];
    ASSERT_EQ(1, ce->wait_for_events(data, 2, kLongUs));
    EXPECT_EQ(0, ce->wait_for_events(data, 2, 10 * 1000));  // no new edge
    p.put();
    ASSERT_EQ(1, ce->wait_for_events(data, 2, kLongUs));
    EXPECT_EQ(tag(1), data[0]);
}

TEST_P(IouringCascading, ReadableAndWritableFdIsReportedOnce) {
    socket_pair s;
    ASSERT_TRUE(s.ok());
    ASSERT_EQ(0, ce->add_interest({s.a, EVENT_READ | EVENT_WRITE, tag(3)}));
    ASSERT_EQ(1, write(s.b, "x", 1));
    void* data[4];
    ASSERT_EQ(1, ce->wait_for_events(data, 4, kLongUs));
    EXPECT_EQ(tag(3), data[0]);
    // Another data on the same fd is another interest.
    ASSERT_EQ(0, ce->add_interest({s.a, EVENT_WRITE, tag(4)}));
    ssize_t n = ce->wait_for_events(data, 4, kLongUs);
    ASSERT_EQ(2, n);
    std::sort(data, data + 2);
    EXPECT_EQ(tag(3), data[0]);
    EXPECT_EQ(tag(4), data[1]);
}

TEST_P(IouringCascading, RmInterestStopsReports) {
    pipe_fds a(O_CLOEXEC), b(O_CLOEXEC);
    ASSERT_TRUE(a.ok() && b.ok());
    ASSERT_EQ(0, ce->add_interest({a.r, EVENT_READ, tag(1)}));
    ASSERT_EQ(0, ce->add_interest({b.r, EVENT_READ | EDGE_TRIGGERED, tag(2)}));
    a.put();
    void* data[4];
    ASSERT_EQ(1, ce->wait_for_events(data, 4, kLongUs));
    ASSERT_EQ(0, ce->rm_interest({a.r, EVENT_READ, tag(1)}));  // while awaiting re-arm
    ASSERT_EQ(0, ce->rm_interest({b.r, EVENT_READ, tag(2)}));  // while armed
    b.put();
    EXPECT_EQ(0, ce->wait_for_events(data, 4, 10 * 1000));
    EXPECT_EQ(-1, ce->rm_interest({a.r, EVENT_READ, tag(1)}));
    EXPECT_EQ(ENOENT, errno);
    // Removing one of two events keeps the other.
    ASSERT_EQ(0, ce->add_interest({b.r, EVENT_READ | EVENT_ERROR, tag(3)}));
    ASSERT_EQ(0, ce->rm_interest({b.r, EVENT_ERROR, tag(3)}));
    ASSERT_EQ(1, ce->wait_for_events(data, 4, kLongUs));
    EXPECT_EQ(tag(3), data[0]);
}

TEST_P(IouringCascading, TimeoutZeroAndFiniteReturnZero) {
    pipe_fds p(O_CLOEXEC);
    ASSERT_TRUE(p.ok());
    ASSERT_EQ(0, ce->add_interest({p.r, EVENT_READ, tag(1)}));
    void* data[1];
    EXPECT_EQ(0, ce->wait_for_events(data, 1, 0));
    auto t0 = Clock::now();
    EXPECT_EQ(0, ce->wait_for_events(data, 1, 20 * 1000));
    EXPECT_GE(us_since(t0), 15u * 1000);
}

TEST_P(IouringCascading, OneShotFiresOnceUntilAddedAgain) {
    pipe_fds p(O_CLOEXEC);
    ASSERT_TRUE(p.ok());
    ASSERT_EQ(0, ce->add_interest({p.r, EVENT_READ | ONE_SHOT, tag(1)}));
    p.put();
    void* data[2];
    ASSERT_EQ(1, ce->wait_for_events(data, 2, kLongUs));
    EXPECT_EQ(0, ce->wait_for_events(data, 2, 10 * 1000));  // still readable, disarmed
    ASSERT_EQ(0, ce->add_interest({p.r, EVENT_READ | ONE_SHOT, tag(1)}));
    ASSERT_EQ(1, ce->wait_for_events(data, 2, kLongUs));
    EXPECT_EQ(tag(1), data[0]);
}

TEST_P(IouringCascading, InterruptedWaitFailsWithInterruptersErrno) {
    pipe_fds p(O_CLOEXEC);
    ASSERT_TRUE(p.ok());
    ASSERT_EQ(0, ce->add_interest({p.r, EVENT_READ, tag(1)}));
    ssize_t n = 0;
    int err = 0;
    auto t = spawn([&] {
        void* data[1];
        n = ce->wait_for_events(data, 1, kLongUs);
        err = errno;
    });
    ASSERT_TRUE(until_sleeping(t.th));
    std::thread other([&] { thread_interrupt(t.th, ECANCELED); });
    t.join();
    other.join();
    EXPECT_EQ(-1, n);
    EXPECT_EQ(ECANCELED, err);
}

TEST_P(IouringCascading, BadArgumentsFail) {
    EXPECT_EQ(-1, ce->add_interest({-1, EVENT_READ, nullptr}));
    EXPECT_EQ(EINVAL, errno);
    pipe_fds p(O_CLOEXEC);
    ASSERT_TRUE(p.ok());
    int closed = dup(p.r);
    ASSERT_EQ(0, close(closed));
    EXPECT_EQ(-1, ce->add_interest({closed, EVENT_READ, nullptr}));
    EXPECT_EQ(EBADF, errno);
    EXPECT_EQ(-1, ce->add_interest({p.r, 0, nullptr}));
    EXPECT_EQ(EINVAL, errno);
    void* data[1];
    EXPECT_EQ(-1, ce->wait_for_events(data, 0, 0));
    EXPECT_EQ(EINVAL, errno);
}

TEST_P(IouringCascading, IouringCallsRunOnItsRing) {
    socket_pair s;
    ASSERT_TRUE(s.ok());
    ssize_t got = -2;
    char buf[8] = {};
    auto t = spawn([&] { got = iouring_recv(s.a, buf, sizeof(buf), 0, kLongUs, ce.get()); });
    ASSERT_TRUE(until_sleeping(t.th));
    EXPECT_EQ(3, iouring_send(s.b, "abc", 3, 0, kLongUs, ce.get()));
    t.join();
    EXPECT_EQ(3, got);
    EXPECT_EQ(0, memcmp(buf, "abc", 3));
    EXPECT_EQ(-1, iouring_recv(s.a, buf, sizeof(buf), 0, 10 * 1000, ce.get()));
    EXPECT_EQ(ETIMEDOUT, errno);
}

TEST_P(IouringCascading, FiniWithALiveEngineDoesNotHang) {
    pipe_fds p(O_CLOEXEC);
    ASSERT_TRUE(p.ok());
    ASSERT_EQ(0, ce->add_interest({p.r, EVENT_READ, tag(1)}));
    EXPECT_EQ(0, fini());  // stops the engine's reaper
    ce.reset();            // and the engine still goes away cleanly
}

PHOTON_INSTANTIATE_ENGINE_TESTS(IouringCascading);

}  // namespace
