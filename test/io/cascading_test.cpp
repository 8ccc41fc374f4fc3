// The epoll cascading engine, under either master engine.
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <thread>
#include <vector>

#include <photon/io/fd-events.h>

#include "../thread/test_util.h"
#include "../util/engine_fixture.h"
#include "../util/fds.h"

using namespace photon;
using namespace photon_test;

namespace {

void* tag(int i) { return reinterpret_cast<void*>((uintptr_t)(i + 1) * 16); }

class Cascading : public EngineTest {
protected:
    void SetUp() override {
        EngineTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        ce.reset(new_epoll_cascading_engine());
        ASSERT_NE(nullptr, ce);
    }
    void TearDown() override {
        ce.reset();
        EngineTest::TearDown();
    }
    std::unique_ptr<CascadingEventEngine> ce;
};

TEST_P(Cascading, ReportsTheDataOfEachReadyFd) {
    pipe_fds p[4];
    for (int i = 0; i < 4; i++) ASSERT_EQ(0, ce->add_interest({p[i].r, EVENT_READ, tag(i)}));
    p[1].put();
    p[3].put();
    void* data[8];
    ASSERT_EQ(2, ce->wait_for_events(data, 8, kLongUs));
    std::vector<void*> got(data, data + 2);
    std::sort(got.begin(), got.end());
    EXPECT_EQ(tag(1), got[0]);
    EXPECT_EQ(tag(3), got[1]);
}

TEST_P(Cascading, WaitBlocksOnlyTheCallingCoroutine) {
    pipe_fds p;
    ASSERT_EQ(0, ce->add_interest({p.r, EVENT_READ, tag(7)}));
    ssize_t n = -2;
    void* data[1] = {};
    auto t = spawn([&] { n = ce->wait_for_events(data, 1, kLongUs); });
    ASSERT_TRUE(until_sleeping(t.th));
    // This coroutine still runs while the other waits.
    EXPECT_EQ(0, thread_usleep(1000));
    EXPECT_EQ(-2, n);
    p.put();
    t.join();
    EXPECT_EQ(1, n);
    EXPECT_EQ(tag(7), data[0]);
}

TEST_P(Cascading, ReadAndWriteInterestsKeepTheirOwnData) {
    int sv[2];
    ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv));
    DEFER(close(sv[0]));
    DEFER(close(sv[1]));
    ASSERT_EQ(0, ce->add_interest({sv[0], EVENT_WRITE, tag(1)}));
    void* data[4];
    ASSERT_EQ(1, ce->wait_for_events(data, 4, kLongUs));
    EXPECT_EQ(tag(1), data[0]);
    ASSERT_EQ(0, ce->add_interest({sv[0], EVENT_READ, tag(2)}));
    ASSERT_EQ(1, write(sv[1], "x", 1));
    ASSERT_EQ(2, ce->wait_for_events(data, 4, kLongUs));
    std::vector<void*> got(data, data + 2);
    std::sort(got.begin(), got.end());
    EXPECT_EQ(tag(1), got[0]);
    EXPECT_EQ(tag(2), got[1]);
    // Same data for both kinds: reported once.
    ASSERT_EQ(0, ce->add_interest({sv[0], EVENT_READ | EVENT_WRITE, tag(3)}));
    ASSERT_EQ(1, ce->wait_for_events(data, 4, kLongUs));
    EXPECT_EQ(tag(3), data[0]);
}

TEST_P(Cascading, RemovedInterestIsNoLongerReported) {
    pipe_fds a, b;
    ASSERT_EQ(0, ce->add_interest({a.r, EVENT_READ, tag(1)}));
    ASSERT_EQ(0, ce->add_interest({b.r, EVENT_READ, tag(2)}));
    a.put();
    b.put();
    ASSERT_EQ(0, ce->rm_interest({a.r, EVENT_READ, tag(1)}));
    void* data[4];
    ASSERT_EQ(1, ce->wait_for_events(data, 4, kLongUs));
    EXPECT_EQ(tag(2), data[0]);
    EXPECT_EQ(-1, ce->rm_interest({a.r, EVENT_READ, tag(1)}));
    EXPECT_EQ(ENOENT, errno);
}

TEST_P(Cascading, TimeoutsReturnZero) {
    pipe_fds p;
    ASSERT_EQ(0, ce->add_interest({p.r, EVENT_READ, tag(1)}));
    void* data[1];
    EXPECT_EQ(0, ce->wait_for_events(data, 1, 0));
    auto t0 = Clock::now();
    EXPECT_EQ(0, ce->wait_for_events(data, 1, 10 * 1000));
    EXPECT_GE(us_since(t0), 9900u);
}

TEST_P(Cascading, InterruptedWaitFailsWithInterruptersErrno) {
    pipe_fds p;
    ASSERT_EQ(0, ce->add_interest({p.r, EVENT_READ, tag(1)}));
    ssize_t n = 0;
    int err = 0;
    auto t = spawn([&] {
        void* data[1];
        n = ce->wait_for_events(data, 1, kLongUs);
        err = errno;
    });
    ASSERT_TRUE(until_sleeping(t.th));
    thread_interrupt(t.th, ECANCELED);
    t.join();
    EXPECT_EQ(-1, n);
    EXPECT_EQ(ECANCELED, err);
}

TEST_P(Cascading, OneShotFiresOnceUntilAddedAgain) {
    pipe_fds p;
    ASSERT_EQ(0, ce->add_interest({p.r, EVENT_READ | ONE_SHOT, tag(1)}));
    p.put();
    void* data[2];
    ASSERT_EQ(1, ce->wait_for_events(data, 2, kLongUs));
    EXPECT_EQ(0, ce->wait_for_events(data, 2, 0));  // still readable, but disarmed
    ASSERT_EQ(0, ce->add_interest({p.r, EVENT_READ | ONE_SHOT, tag(2)}));
    ASSERT_EQ(1, ce->wait_for_events(data, 2, kLongUs));
    EXPECT_EQ(tag(2), data[0]);
}

TEST_P(Cascading, BadArgumentsFailWithEinval) {
    EXPECT_EQ(-1, ce->add_interest({-1, EVENT_READ, nullptr}));
    EXPECT_EQ(EINVAL, errno);
    void* data[1];
    EXPECT_EQ(-1, ce->wait_for_events(data, 0, 0));
    EXPECT_EQ(EINVAL, errno);
}

PHOTON_INSTANTIATE_ENGINE_TESTS(Cascading);

}  // namespace
