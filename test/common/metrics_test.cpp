// photon/common/metric-meter/metrics.h: plain counters, the sliding windows of
// AverageCounter / QPSCounter / IntervalMaxCounter and the latency meters.
// Window arithmetic runs on a hand-driven `photon::now` (no vCPU is alive in
// those tests, so nothing else writes it); latency on real sleeps is checked
// with lower bounds and generous upper ones only.
#include <photon/common/metric-meter/metrics.h>
#include <photon/photon.h>

#include <gtest/gtest.h>

#include <climits>
#include <cstdint>

#include "../thread/test_util.h"

namespace {

constexpr uint64_t kSec = 1000 * 1000;

// Drives photon::now by hand and restores it afterwards.
class FakeClock : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_EQ(nullptr, photon::CURRENT) << "a vCPU would move the clock";
        saved_ = photon::now;
        set(1000 * kSec * 1000);
    }
    void TearDown() override { photon::now = saved_; }
    static void set(uint64_t t) { photon::now = t; }
    static void advance(uint64_t us) { photon::now = photon::now + us; }

private:
    uint64_t saved_ = 0;
};

using Metrics = FakeClock;

TEST(MetricsPlain, ValueAddAndMaxCountersKeepWhatTheyAreGiven) {
    Metric::ValueCounter v;
    v.set(-7);
    EXPECT_EQ(-7, v.val());
    v.reset();
    EXPECT_EQ(0, v.val());

    Metric::AddCounter a;
    a.inc();
    a.inc();
    a.dec();
    a.add(10);
    a.sub(4);
    EXPECT_EQ(7, a.val());
    a.reset();
    EXPECT_EQ(0, a.val());

    Metric::MaxCounter m;
    EXPECT_EQ(0, m.val());
    m.put(3);
    m.put(11);
    m.put(-5);
    EXPECT_EQ(11, m.val());
    m.reset();
    EXPECT_EQ(0, m.val());
}

TEST_F(Metrics, AverageIsTheMeanOfTheWindowAndDecaysPastIt) {
    Metric::AverageCounter c;
    c.interval(kSec);
    EXPECT_EQ((int64_t)kSec, c.interval());
    EXPECT_EQ(0, c.val());  // nothing put
    for (int v : {10, 20, 30, 40}) c.put(v);
    EXPECT_EQ(25, c.val());
    advance(kSec);  // the window is exactly full: nothing leaves yet
    EXPECT_EQ(100, c.sum);
    EXPECT_EQ(4, c.cnt);
    advance(kSec / 2);  // half a window past it: half of the totals leave
    EXPECT_EQ(25, c.val());
    EXPECT_EQ(50, c.sum);
    EXPECT_EQ(2, c.cnt);
    c.put(125);  // (50 + 125) / 3
    EXPECT_EQ(58, c.val());
    advance(3 * kSec);  // two idle windows: empty
    EXPECT_EQ(0, c.val());
    EXPECT_EQ(0, c.cnt);
}

TEST_F(Metrics, AverageOfLargeTotalsDecaysWithoutOverflow) {
    Metric::AverageCounter c;
    c.interval(1000 * kSec);
    const int64_t big = INT64_MAX / 4;
    c.put(big);
    c.put(big);
    advance(1500 * kSec);  // 64-bit sum * elapsed would wrap here
    EXPECT_EQ(big, c.val());
    EXPECT_EQ(1, c.cnt);
    EXPECT_EQ(big, c.sum);
}

TEST_F(Metrics, AverageOfNegativeValuesDecaysTowardZero) {
    Metric::AverageCounter c;
    c.interval(kSec);
    c.put(-100);
    c.put(-300);
    EXPECT_EQ(-200, c.val());
    advance(kSec + kSec / 2);
    EXPECT_EQ(-200, c.val());
    EXPECT_EQ(-200, c.sum);
    EXPECT_EQ(1, c.cnt);
}

TEST_F(Metrics, QpsCountsTheWindowAndForgetsItAfterTwoIdleOnes) {
    Metric::QPSCounter q;
    EXPECT_EQ(Metric::QPSCounter::SEC, q.interval());
    for (int i = 0; i < 40; i++) q.put();
    q.put(60);
    EXPECT_EQ(100, q.val());
    advance(kSec + kSec / 4);  // a quarter window past: a quarter leaves
    EXPECT_EQ(75, q.val());
    advance(kSec / 4);  // the window keeps sliding: another quarter leaves
    EXPECT_EQ(57, q.val());
    advance(2 * kSec);
    EXPECT_EQ(0, q.val());
    q.put(5);
    q.reset();
    EXPECT_EQ(0, q.val());
}

TEST_F(Metrics, AHugeIntervalNeverEmptiesTheWindow) {
    Metric::QPSCounter q;
    q.interval((1ULL << 63) + 1000);  // doubling it would wrap to 2000 us
    q.put(9);
    advance(5000);
    EXPECT_EQ(9, q.val());
    Metric::IntervalMaxCounter m;
    m.interval(UINT64_MAX);
    m.put(4);
    advance(10 * kSec);
    EXPECT_EQ(4, m.val());
}

TEST_F(Metrics, IntervalMaxKeepsThePreviousWindowsMaxForOneWindow) {
    Metric::IntervalMaxCounter m;
    m.interval(kSec);
    EXPECT_EQ(kSec, m.interval());
    m.put(5);
    m.put(9);
    m.put(3);
    EXPECT_EQ(9, m.val());
    advance(kSec + kSec / 2);  // next window: 9 is last window's max
    m.put(4);
    EXPECT_EQ(9, m.val());
    EXPECT_EQ(4, m.maxv);
    advance(kSec + kSec / 2);  // and the next: 4 is the last max
    EXPECT_EQ(4, m.val());
    advance(2 * kSec);  // two idle windows
    EXPECT_EQ(0, m.val());
}

TEST_F(Metrics, ScopeLatencyPutsTheTimeTheScopeTook) {
    Metric::AverageLatencyCounter avg;
    Metric::MaxLatencyCounter mx;
    avg.interval(100 * kSec);
    mx.interval(100 * kSec);
    for (uint64_t us : {300, 500, 700}) {
        SCOPE_LATENCY(avg);
        SCOPE_LATENCY(mx);
        advance(us);
    }
    EXPECT_EQ(500, avg.val());
    EXPECT_EQ(3, avg.cnt);
    EXPECT_EQ(700, mx.val());
    Metric::MaxCounter plain;  // any counter with put() can be metered
    {
        Metric::LatencyMetric<Metric::MaxCounter> lm(plain);
        EXPECT_EQ(photon::now, lm.start);
        advance(42);
    }
    EXPECT_EQ(42, plain.val());
}

class MetricsOnVcpu : public photon_test::VcpuTest {};

TEST_F(MetricsOnVcpu, ScopeLatencyOfRealSleepsIsAtLeastTheirLength) {
    constexpr uint64_t kSleep = 20 * 1000;
    Metric::AverageLatencyCounter avg;
    Metric::MaxLatencyCounter mx;
    avg.interval(600 * kSec);
    mx.interval(600 * kSec);
    for (int i = 0; i < 3; i++) {
        SCOPE_LATENCY(avg);
        SCOPE_LATENCY(mx);
        photon::thread_usleep(kSleep);
    }
    EXPECT_EQ(3, avg.cnt);
    EXPECT_GE(avg.val(), (int64_t)kSleep);
    EXPECT_LT(avg.val(), (int64_t)(kSleep + 10 * kSec));  // a loaded machine may be slow
    EXPECT_GE(mx.val(), avg.val());
}

TEST_F(MetricsOnVcpu, QpsCountsPutsFromSeveralCoroutines) {
    Metric::QPSCounter q;
    q.interval(600 * kSec);  // the test cannot outlast the window
    std::vector<photon_test::task> tasks;
    for (int i = 0; i < 4; i++) {
        tasks.push_back(photon_test::spawn([&] {
            for (int j = 0; j < 25; j++) {
                q.put();
                photon::thread_yield();
            }
        }));
    }
    for (auto& t : tasks) t.join();
    EXPECT_EQ(100, q.val());
}

}  // namespace
