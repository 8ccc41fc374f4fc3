// sync_signal: handlers run in a coroutine of the vCPU, may sleep, and the
// default disposition comes back when asked for.
#include <photon/io/signal.h>

#include <signal.h>
#include <unistd.h>

#include <atomic>

#include <photon/io/fd-events.h>

#include "../thread/test_util.h"
#include "../util/engine_fixture.h"

using namespace photon;
using namespace photon_test;

namespace {

std::atomic<int> g_hits{0};
std::atomic<int> g_last_sig{0};
std::atomic<bool> g_in_coroutine{false};
std::atomic<pid_t> g_sender{0};

void plain_handler(int sig) {
    g_in_coroutine = CURRENT != nullptr;
    // A coroutine may sleep: the vCPU goes on meanwhile.
    if (thread_usleep(1000) == 0) {
        g_last_sig = sig;
        g_hits++;
    }
}

void info_handler(int sig, siginfo_t* info, void*) {
    g_sender = info->si_pid;
    g_last_sig = sig;
    g_hits++;
}

class SyncSignal : public EngineTest {
protected:
    void SetUp() override {
        g_hits = 0;
        g_last_sig = 0;
        g_in_coroutine = false;
        // The fixture's init has no INIT_EVENT_SIGNAL: start it here.
        EngineTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        ASSERT_EQ(0, sync_signal_init());
    }
    void TearDown() override {
        if (CURRENT) {
            EXPECT_EQ(0, sync_signal_fini());
        }
        EngineTest::TearDown();
    }
};

TEST_P(SyncSignal, HandlerRunsInACoroutineAndMaySleep) {
    ASSERT_NE(SIG_ERR, sync_signal(SIGUSR1, &plain_handler));
    ASSERT_EQ(0, kill(getpid(), SIGUSR1));
    EXPECT_TRUE(wait_for([] { return g_hits.load() == 1; }));
    EXPECT_EQ(SIGUSR1, g_last_sig.load());
    EXPECT_TRUE(g_in_coroutine.load());
}

TEST_P(SyncSignal, SigactionHandlerGetsTheSender) {
    struct sigaction act = {};
    act.sa_sigaction = &info_handler;
    act.sa_flags = SA_SIGINFO;
    ASSERT_EQ(0, sync_sigaction(SIGUSR2, &act, nullptr));
    ASSERT_EQ(0, kill(getpid(), SIGUSR2));
    EXPECT_TRUE(wait_for([] { return g_hits.load() == 1; }));
    EXPECT_EQ(getpid(), g_sender.load());
}

TEST_P(SyncSignal, EverySignalSentIsHandledWhileBusy) {
    ASSERT_NE(SIG_ERR, sync_signal(SIGUSR1, &plain_handler));
    // Standard signals coalesce while pending: send one at a time.
    for (int i = 1; i <= 5; i++) {
        ASSERT_EQ(0, kill(getpid(), SIGUSR1));
        ASSERT_TRUE(wait_for([&] { return g_hits.load() == i; })) << "signal " << i;
    }
}

TEST_P(SyncSignal, PreviousHandlerIsReturnedAndIgnoreStops) {
    EXPECT_EQ(SIG_DFL, sync_signal(SIGUSR1, &plain_handler));
    EXPECT_EQ(&plain_handler, sync_signal(SIGUSR1, SIG_IGN));
    ASSERT_EQ(0, kill(getpid(), SIGUSR1));  // ignored: no handler, no death
    thread_usleep(5000);
    EXPECT_EQ(0, g_hits.load());
    EXPECT_EQ(SIG_IGN, sync_signal(SIGUSR1, SIG_DFL));
}

TEST_P(SyncSignal, BadSignalsFailWithEinval) {
    EXPECT_EQ(SIG_ERR, sync_signal(SIGKILL, &plain_handler));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(SIG_ERR, sync_signal(0, &plain_handler));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, sync_signal_init());
    EXPECT_EQ(EALREADY, errno);
}

PHOTON_INSTANTIATE_ENGINE_TESTS(SyncSignal);

TEST(SyncSignalInit, InitWithSignalFlagStartsItOnce) {
    ASSERT_EQ(0, photon::init(INIT_EVENT_EPOLL | INIT_EVENT_SIGNAL, INIT_IO_NONE));
    EXPECT_EQ(-1, sync_signal_init());
    EXPECT_EQ(EALREADY, errno);
    g_hits = 0;
    ASSERT_NE(SIG_ERR, sync_signal(SIGUSR1, &plain_handler));
    ASSERT_EQ(0, kill(getpid(), SIGUSR1));
    EXPECT_TRUE(wait_for([] { return g_hits.load() == 1; }));
    EXPECT_EQ(0, photon::fini());  // stops it: a new init may start it again
    ASSERT_EQ(0, photon::init(INIT_EVENT_EPOLL | INIT_EVENT_SIGNAL, INIT_IO_NONE));
    EXPECT_EQ(-1, sync_signal_init());
    EXPECT_EQ(EALREADY, errno);
    EXPECT_EQ(0, photon::fini());
}

}  // namespace
