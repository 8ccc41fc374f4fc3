// photon::throttle (photon/common/throttle.h): pacing beyond the initial
// bucket, the measured rate over a short window, try_consume and restore,
// amounts beyond the limit, the zero and unlimited limits, update(),
// degenerate windows, priorities and interruption. The machine may be
// loaded: a wait is checked by a lower bound on time, "does not wait" by the
// turns other coroutines got meanwhile, and an upper bound on time is only a
// hang guard, 10x or more past the expected time.
#include <photon/common/throttle.h>

#include <photon/thread/thread.h>

#include <gtest/gtest.h>

#include <thread>

#include "../thread/test_util.h"

namespace {

using namespace photon_test;
using Priority = photon::throttle::Priority;

class Throttle : public VcpuTest {};

constexpr uint64_t kMs = 1000;

TEST_F(Throttle, ConsumingBeyondTheFullBucketIsPacedToTheLimit) {
    // 100k units per 100 ms: the first 100k are there, 200k more take 200 ms.
    photon::throttle t(100000, 100 * kMs, 10);
    auto t0 = Clock::now();
    for (int i = 0; i < 60; i++) ASSERT_EQ(0, t.consume(5000));
    auto us = us_since(t0);
    EXPECT_GE(us, 150 * kMs);
    EXPECT_LT(us, 5000 * kMs);  // hang guard: 25x the expected 200 ms
}

TEST_F(Throttle, MeasuredRateStaysWithinTheLimitOverAShortWindow) {
    // 20k units per 100 ms (200k/s); consume in 1k steps for ~300 ms.
    const uint64_t limit = 20000, window = 100 * kMs;
    photon::throttle t(limit, window, 20);
    uint64_t consumed = 0;
    auto t0 = Clock::now();
    for (int i = 0; i < 100000 && us_since(t0) < 300 * kMs; i++) {
        ASSERT_EQ(0, t.consume(1000));
        consumed += 1000;
    }
    const double elapsed = (double)us_since(t0);
    const double allowed = limit + limit * elapsed / window;  // the bucket, then the rate
    EXPECT_LE((double)consumed, allowed + 1000) << "never faster than the limit";
    // A floor on the rate is a bound on wall time, so it is a loose one: it
    // catches a throttle paced an order of magnitude too slow.
    EXPECT_GE((double)consumed, 0.1 * allowed) << "nor far slower, even on a loaded machine";
}

TEST_F(Throttle, TryConsumeTakesOnlyWhatIsThereAndNeverWaits) {
    photon::throttle t(100, 10 * 1000 * kMs);  // refills 1 unit per 100 ms
    EXPECT_EQ(0, t.try_consume(0));
    EXPECT_EQ(0, t.try_consume(60));
    errno = 0;
    // Waiting for the one missing unit would sleep the coroutine ~100 ms.
    EXPECT_LE(turns_of_others_during([&] { EXPECT_EQ(-1, t.try_consume(41)); }), kTurnsOfAYield);
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_EQ(0, t.try_consume(40));
    EXPECT_EQ(-1, t.try_consume(10));
}

TEST_F(Throttle, RestoreGivesUnitsBackButNeverOverfills) {
    photon::throttle t(100, 10 * 1000 * kMs);
    ASSERT_EQ(0, t.try_consume(100));
    t.restore(30);
    EXPECT_EQ(-1, t.try_consume(31));
    EXPECT_EQ(0, t.try_consume(30));
    t.restore(1000);  // more than the bucket holds
    EXPECT_EQ(-1, t.try_consume(101));
    EXPECT_EQ(0, t.try_consume(100));
}

// Photon asserted amount < limit (and hung without asserts).
TEST_F(Throttle, AnAmountLargerThanTheLimitIsTakenABucketfulAtATime) {
    photon::throttle t(1000, 100 * kMs, 10);  // 10 units per ms
    auto t0 = Clock::now();
    EXPECT_EQ(0, t.consume(2500));  // 1000 there, 1500 more: ~150 ms
    auto us = us_since(t0);
    EXPECT_GE(us, 100 * kMs);
    EXPECT_LT(us, 5000 * kMs);  // hang guard (Photon hung here): 33x the expected 150 ms
}

TEST_F(Throttle, ASmallLimitIsNotRoundedUpToTheSliceCount) {
    // Photon made 150 per window with 100 slices into 200.
    photon::throttle t(150, 100 * kMs, 100);
    ASSERT_EQ(0, t.try_consume(150));
    EXPECT_EQ(-1, t.try_consume(1));
    auto t0 = Clock::now();
    ASSERT_EQ(0, t.consume(150));  // one more window's worth
    EXPECT_GE(us_since(t0), 80 * kMs);
}

TEST_F(Throttle, AZeroLimitWaitsUntilInterrupted) {
    photon::throttle t(0);
    int ret = 0, err = 0;
    auto consumer = spawn([&] {
        ret = t.consume(1);
        err = errno;
    });
    ASSERT_TRUE(until_sleeping(consumer.th));
    photon::thread_interrupt(consumer.th, EINTR);
    consumer.join();
    EXPECT_EQ(-1, ret);
    EXPECT_EQ(EINTR, err);
    EXPECT_EQ(-1, t.try_consume(1));
}

TEST_F(Throttle, UnlimitedNeverWaitsAtAnyPriority) {
    photon::throttle t(-1ULL);
    auto calls = [&] {
        for (int i = 0; i < 1000; i++) {
            ASSERT_EQ(0, t.consume(1ULL << 40, Priority::High));
            ASSERT_EQ(0, t.consume(1ULL << 40, Priority::Low));  // no overflow in the 60% check
            ASSERT_EQ(0, t.consume(1ULL << 40, Priority::Medium));
        }
    };
    EXPECT_EQ(0, turns_of_others_during(calls));  // never left this coroutine
}

// Photon kept the practically infinite bucket of the unlimited throttle.
TEST_F(Throttle, UpdateToALowerLimitTrimsTheBucket) {
    photon::throttle t(-1ULL, 10 * 1000 * kMs);
    t.update(100);
    EXPECT_EQ(-1, t.try_consume(101));
    EXPECT_EQ(0, t.try_consume(100));
    EXPECT_EQ(-1, t.try_consume(1));
}

TEST_F(Throttle, ZeroSlicesAndAZeroWindowAreUsable) {
    photon::throttle a(1000, 100 * kMs, 0);
    EXPECT_EQ(0, a.consume(1500));
    photon::throttle b(1000, 0, 0);
    EXPECT_EQ(0, b.consume(3000));
    photon::throttle c(1000, 5, 100);  // more slices than microseconds
    EXPECT_EQ(0, c.consume(3000));
}

TEST_F(Throttle, LowPriorityWaitsForAFullerBucketWhileHighDoesNot) {
    photon::throttle t(1000, 1000 * kMs, 100);  // 1 unit per ms, 10 ms slices
    ASSERT_EQ(0, t.consume(500));               // half full: below Low's 60%
    EXPECT_EQ(0, turns_of_others_during([&] { ASSERT_EQ(0, t.consume(1, Priority::High)); }))
        << "High takes any unit there is";
    auto t0 = Clock::now();
    ASSERT_EQ(0, t.consume(1, Priority::Low));
    auto us = us_since(t0);
    EXPECT_GE(us, 10 * kMs) << "Low waited at least a slice";
    // A hang guard, 50x the expected 100 ms (until the bucket is 60% full).
    EXPECT_LT(us, 5000 * kMs) << "and not forever (the starving guard)";
}

TEST_F(Throttle, AnInvalidPriorityIsRefused) {
    photon::throttle t(1000);
    errno = 0;
    EXPECT_EQ(-1, t.consume(1, Priority::NumPriorities));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(0, t.try_consume(1000)) << "nothing taken";
}

// Photon counted the first refill from time 0: a throttle made before the
// clock first ran refilled its bucket at once.
TEST(ThrottleOutsideAVcpu, AStaleClockAtConstructionGivesNoExtraUnits) {
    photon::now = 0;  // as in a process where no vCPU ran yet
    photon::throttle t(10, 10 * 1000 * kMs);
    EXPECT_EQ(0, t.try_consume(10));
    photon::__update_now();
    EXPECT_EQ(-1, t.try_consume(1));
}

TEST(ThrottleOutsideAVcpu, ConsumeFailsInsteadOfHanging) {
    int ret = 0, err = 0;
    std::thread os([&] {
        photon::throttle t(10, 10 * 1000 * kMs);
        ASSERT_EQ(0, t.consume(10));  // there: no wait needed
        ret = t.consume(1);           // would have to wait: no vCPU
        err = errno;
    });
    os.join();
    EXPECT_EQ(-1, ret);
    EXPECT_EQ(ENOSYS, err);
}

}  // namespace
