// photon::Timer (photon/thread/timer.h): when it fires, repetition, the next
// timeout from on_timer, reset / cancel / stop, and sleep accuracy.
#include <photon/photon.h>
#include <photon/thread/thread.h>
#include <photon/thread/timer.h>

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "test_util.h"

namespace {

using namespace photon_test;

class TimerTest : public VcpuTest {};

// Records when on_timer runs, relative to t0, and returns `next`.
struct Recorder {
    Clock::time_point t0 = Clock::now();
    std::vector<uint64_t> fired;  // us since t0
    uint64_t next = 0;
    uint64_t operator()() {
        fired.push_back(us_since(t0));
        return next;
    }
    size_t count() const { return fired.size(); }
};

constexpr uint64_t kMs = 1000;

TEST_F(TimerTest, FiresAfterAtLeastTheDefaultTimeout) {
    Recorder rec;
    photon::Timer t(20 * kMs, {&rec, &Recorder::operator()}, false);
    EXPECT_TRUE(wait_for([&] { return rec.count() >= 1; }));
    ASSERT_EQ(1u, rec.count());
    EXPECT_GE(rec.fired[0], 20 * kMs);
}

TEST_F(TimerTest, RepeatingTimerFiresRepeatedly) {
    constexpr uint64_t kPeriod = 5 * kMs;
    constexpr size_t k = 5;
    Recorder rec;
    photon::Timer t(kPeriod, {&rec, &Recorder::operator()});
    photon::thread_usleep(k * kPeriod);
    EXPECT_TRUE(wait_for([&] { return rec.count() >= k; }, 2000));
    ASSERT_GE(rec.count(), k);
    for (size_t i = 0; i < k; i++) EXPECT_GE(rec.fired[i], (i + 1) * kPeriod);
}

TEST_F(TimerTest, OnTimerReturnValueSetsTheNextTimeout) {
    Recorder rec;
    rec.next = 40 * kMs;  // then the default 2 ms once `next` is 0 again
    photon::Timer t(2 * kMs, {&rec, &Recorder::operator()});
    EXPECT_TRUE(wait_for([&] { return rec.count() >= 3; }));
    rec.next = 0;
    EXPECT_TRUE(wait_for([&] { return rec.count() >= 6; }));
    t.stop();
    ASSERT_GE(rec.count(), 6u);
    EXPECT_GE(rec.fired[1] - rec.fired[0], 40 * kMs);
    EXPECT_GE(rec.fired[2] - rec.fired[1], 40 * kMs);
    EXPECT_GE(rec.fired[5] - rec.fired[4], 2 * kMs);
}

TEST_F(TimerTest, NonRepeatingTimerFiresOnce) {
    Recorder rec;
    rec.next = 1 * kMs;  // ignored: not repeating
    photon::Timer t(2 * kMs, {&rec, &Recorder::operator()}, false);
    EXPECT_TRUE(wait_for([&] { return rec.count() >= 1; }));
    photon::thread_usleep(50 * kMs);
    EXPECT_EQ(1u, rec.count());
    EXPECT_EQ(0, t.reset(2 * kMs));  // re-armed once more
    EXPECT_TRUE(wait_for([&] { return rec.count() >= 2; }));
    photon::thread_usleep(20 * kMs);
    EXPECT_EQ(2u, rec.count());
}

TEST_F(TimerTest, ResetRestartsTheWaitSoItFiresLater) {
    Recorder rec;
    photon::Timer t(30 * kMs, {&rec, &Recorder::operator()}, false);
    photon::thread_usleep(15 * kMs);
    ASSERT_EQ(0u, rec.count());
    auto reset_at = us_since(rec.t0);
    EXPECT_EQ(0, t.reset());
    EXPECT_TRUE(wait_for([&] { return rec.count() >= 1; }));
    ASSERT_EQ(1u, rec.count());
    EXPECT_GE(rec.fired[0], reset_at + 30 * kMs);
}

TEST_F(TimerTest, ResetWithANewTimeoutUsesIt) {
    Recorder rec;
    photon::Timer t(10 * 1000 * kMs, {&rec, &Recorder::operator()}, false);
    photon::thread_yield();
    auto reset_at = us_since(rec.t0);
    EXPECT_EQ(0, t.reset(5 * kMs));
    EXPECT_TRUE(wait_for([&] { return rec.count() >= 1; }));
    ASSERT_EQ(1u, rec.count());
    EXPECT_GE(rec.fired[0], reset_at + 5 * kMs);
}

TEST_F(TimerTest, CancelDisarmsTheTimerUntilReset) {
    Recorder rec;
    photon::Timer t(20 * kMs, {&rec, &Recorder::operator()});
    photon::thread_yield();
    EXPECT_EQ(0, t.cancel());
    photon::thread_usleep(80 * kMs);
    EXPECT_EQ(0u, rec.count());
    EXPECT_EQ(0, t.reset());
    EXPECT_TRUE(wait_for([&] { return rec.count() >= 1; }));
}

// The timer has not run yet: nothing but "created" distinguishes it from a
// waiting one, and the header names only on_timer and stop as busy states.
TEST_F(TimerTest, CancelRightAfterConstructionDisarmsTheTimer) {
    Recorder rec;
    photon::Timer t(20 * kMs, {&rec, &Recorder::operator()});
    EXPECT_EQ(0, t.cancel());
    photon::thread_usleep(80 * kMs);
    EXPECT_EQ(0u, rec.count());
}

// As Photon's: stop() disarms (the coroutine stays, reset() re-arms it).
TEST_F(TimerTest, StopDisarmsTheTimerUntilReset) {
    Recorder rec;
    photon::Timer t(2 * kMs, {&rec, &Recorder::operator()});
    EXPECT_TRUE(wait_for([&] { return rec.count() >= 2; }));
    EXPECT_EQ(0, t.stop());
    auto n = rec.count();
    photon::thread_usleep(30 * kMs);
    EXPECT_EQ(n, rec.count());
    EXPECT_EQ(2u, photon::get_info(photon::INFO_THREAD_NUM));  // its coroutine waits
    EXPECT_EQ(0, t.stop());                                    // again: still 0
    EXPECT_EQ(0, t.reset());
    EXPECT_TRUE(wait_for([&] { return rec.count() >= n + 2; })) << "repeating again";
}

TEST_F(TimerTest, StopWaitsForARunningOnTimerToReturn) {
    struct Slow {
        int calls = 0;
        bool inside = false;
        uint64_t fire() {
            calls++;
            inside = true;
            photon::thread_usleep(20 * kMs);  // on_timer may sleep
            inside = false;
            return 0;
        }
    } slow;
    photon::Timer t(1 * kMs, {&slow, &Slow::fire});
    EXPECT_TRUE(wait_for([&] { return slow.inside; }));
    EXPECT_EQ(-1, t.reset(1 * kMs)) << "not waiting while on_timer runs";
    EXPECT_EQ(0, t.stop());
    EXPECT_FALSE(slow.inside) << "stop() returned while on_timer was still running";
    int calls = slow.calls;
    photon::thread_usleep(20 * kMs);
    EXPECT_EQ(calls, slow.calls) << "disarmed after the running call";
}

// Photon's stop() from on_timer deadlocked; here it takes effect on return.
TEST_F(TimerTest, StopFromOnTimerDisarmsItAfterTheCallback) {
    struct Self {
        photon::Timer* t = nullptr;
        int calls = 0;
        int stop_ret = -1, reset_ret = 0;
        uint64_t fire() {
            calls++;
            reset_ret = t->reset();  // not waiting now
            stop_ret = t->stop();
            return 0;
        }
    } self;
    photon::Timer t(2 * kMs, {&self, &Self::fire});
    self.t = &t;
    EXPECT_TRUE(wait_for([&] { return self.calls >= 1; }));
    photon::thread_usleep(20 * kMs);
    EXPECT_EQ(1, self.calls);
    EXPECT_EQ(0, self.stop_ret);
    EXPECT_EQ(-1, self.reset_ret);
    EXPECT_EQ(2u, photon::get_info(photon::INFO_THREAD_NUM));
}

TEST_F(TimerTest, OnTimerReturningMinusOneDisarmsIt) {
    Recorder rec;
    rec.next = (uint64_t)-1;
    photon::Timer t(2 * kMs, {&rec, &Recorder::operator()});
    EXPECT_TRUE(wait_for([&] { return rec.count() >= 1; }));
    photon::thread_usleep(20 * kMs);
    EXPECT_EQ(1u, rec.count());
    rec.next = 0;
    EXPECT_EQ(0, t.reset(1 * kMs));
    EXPECT_TRUE(wait_for([&] { return rec.count() >= 3; }));
}

TEST_F(TimerTest, ATimerCreatedDisarmedFiresOnceReset) {
    Recorder rec;
    photon::Timer t((uint64_t)-1, {&rec, &Recorder::operator()}, false);  // Photon's idiom
    photon::thread_usleep(10 * kMs);
    EXPECT_EQ(0u, rec.count());
    EXPECT_EQ(0, t.reset(2 * kMs));
    EXPECT_TRUE(wait_for([&] { return rec.count() >= 1; }));
}

TEST_F(TimerTest, DestructorJoinsTheTimerCoroutine) {
    Recorder rec;
    {
        photon::Timer t(2 * kMs, {&rec, &Recorder::operator()});
        EXPECT_EQ(2u, photon::get_info(photon::INFO_THREAD_NUM));
        EXPECT_TRUE(wait_for([&] { return rec.count() >= 1; }));
    }
    EXPECT_EQ(1u, photon::get_info(photon::INFO_THREAD_NUM));
    { photon::Timer never_ran(2 * kMs, {&rec, &Recorder::operator()}); }
    EXPECT_EQ(1u, photon::get_info(photon::INFO_THREAD_NUM));
}

TEST_F(TimerTest, ShortSleepsOvershootByLessThanFiftyMilliseconds) {
    for (uint64_t d : {1 * kMs, 5 * kMs, 20 * kMs}) {
        auto t0 = Clock::now();
        EXPECT_EQ(0, photon::thread_usleep(d));
        auto took = us_since(t0);
        EXPECT_GE(took, d);
        EXPECT_LT(took - d, 50 * kMs) << "sleep of " << d << " us";
    }
}

TEST_F(TimerTest, ShortTimersOvershootByLessThanFiftyMilliseconds) {
    for (uint64_t d : {1 * kMs, 5 * kMs, 20 * kMs}) {
        Recorder rec;
        photon::Timer t(d, {&rec, &Recorder::operator()}, false);
        EXPECT_TRUE(wait_for([&] { return rec.count() >= 1; }));
        ASSERT_EQ(1u, rec.count());
        EXPECT_GE(rec.fired[0], d);
        EXPECT_LT(rec.fired[0] - d, 50 * kMs) << "timer of " << d << " us";
    }
}

}  // namespace
