// The fault injector itself: the spec parser, determinism per seed and
// vCPU, rates within tolerance, and "off" meaning never.
#include <photon/common/fault_injection.h>

#include <gtest/gtest.h>

#include <cmath>
#include <thread>
#include <vector>

#include <photon/photon.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

using namespace photon;

namespace {

class Injector : public ::testing::Test {
protected:
    void SetUp() override { ASSERT_EQ(0, photon::init(INIT_EVENT_NONE, INIT_IO_NONE)); }
    void TearDown() override {
        fault::disable();
        fault::reset_counts();
        photon::fini();
    }
};

std::vector<uint32_t> decisions(uint32_t candidates, int n) {
    std::vector<uint32_t> v;
    for (int i = 0; i < n; i++) v.push_back(fault::draw(candidates));
    return v;
}

TEST_F(Injector, ParsesTheEnvironmentSyntax) {
    ASSERT_EQ(0, fault::configure("seed=7,p=0.01,kinds=short,eagain,delay"));
    fault::Config c = fault::current();
    EXPECT_EQ(7u, c.seed);
    EXPECT_DOUBLE_EQ(0.01, c.p);
    EXPECT_EQ(fault::SHORT_IO | fault::EAGAIN_STORM | fault::DELAY, c.kinds);
    EXPECT_TRUE(fault::armed(fault::SHORT_IO));
    EXPECT_FALSE(fault::armed(fault::RESET));

    ASSERT_EQ(0, fault::configure("kinds=hard,p=1,seed=0x10,delay_us=50"));
    c = fault::current();
    EXPECT_EQ(fault::kHard, c.kinds);
    EXPECT_EQ(16u, c.seed);
    EXPECT_EQ(50u, c.max_delay_us);
    ASSERT_EQ(0, fault::configure("kinds=transparent,econnreset,p=0.5"));
    EXPECT_EQ(fault::kTransparent | fault::RESET, fault::current().kinds);
}

TEST_F(Injector, RejectsMalformedSpecs) {
    for (const char* bad : {"p=2", "p=-0.1", "p=x", "kinds=bogus", "seed=-1", "seed=7,frob=1",
                            "kinds=short,bogus", "delay_us=0"}) {
        errno = 0;
        EXPECT_EQ(-1, fault::configure(bad)) << bad;
        EXPECT_EQ(EINVAL, errno) << bad;
    }
    EXPECT_EQ(-1, fault::configure(nullptr));
}

TEST_F(Injector, OffMeansNever) {
    EXPECT_FALSE(fault::armed(fault::kAll));
    for (int i = 0; i < 100000; i++) ASSERT_EQ(0u, fault::draw(fault::kAll));
    // Kinds armed, probability 0: still off, and nothing drawn.
    ASSERT_EQ(0, fault::configure("seed=1,p=0,kinds=all"));
    EXPECT_FALSE(fault::armed(fault::kAll));
    for (int i = 0; i < 100000; i++) ASSERT_EQ(0u, fault::draw(fault::kAll));
    // Armed kinds never hit a hook that asks for others.
    ASSERT_EQ(0, fault::configure("seed=1,p=1,kinds=eio"));
    for (int i = 0; i < 100000; i++) ASSERT_EQ(0u, fault::draw(fault::RESET | fault::SHORT_IO));
    EXPECT_EQ(0u, fault::counts().draws);
}

TEST_F(Injector, SameSeedSameDecisions) {
    ASSERT_EQ(0, fault::configure("seed=7,p=0.2,kinds=all"));
    auto a = decisions(fault::kAll, 5000);
    ASSERT_EQ(0, fault::configure("seed=7,p=0.2,kinds=all"));
    auto b = decisions(fault::kAll, 5000);
    EXPECT_EQ(a, b);
    ASSERT_EQ(0, fault::configure("seed=8,p=0.2,kinds=all"));
    auto c = decisions(fault::kAll, 5000);
    EXPECT_NE(a, c);
    // The numbers that size short transfers and delays follow the seed too.
    ASSERT_EQ(0, fault::configure("seed=7,p=0.2,kinds=all"));
    std::vector<uint64_t> x, y;
    for (int i = 0; i < 100; i++) x.push_back(fault::short_length(1000));
    ASSERT_EQ(0, fault::configure("seed=7,p=0.2,kinds=all"));
    for (int i = 0; i < 100; i++) y.push_back(fault::short_length(1000));
    EXPECT_EQ(x, y);
    for (auto n : x) EXPECT_TRUE(n >= 1 && n < 1000) << n;
}

// Each vCPU has its own stream: what one draws does not move another's.
TEST_F(Injector, EachVcpuDrawsItsOwnStream) {
    auto other_vcpu = [](std::vector<uint32_t>* out, int n) {
        std::thread t([&] {
            ASSERT_EQ(0, photon::init(INIT_EVENT_NONE, INIT_IO_NONE));
            *out = decisions(fault::kAll, n);
            photon::fini();
        });
        t.join();
    };
    ASSERT_EQ(0, fault::configure("seed=3,p=0.3,kinds=all"));
    auto mine = decisions(fault::kAll, 2000);
    std::vector<uint32_t> theirs;
    other_vcpu(&theirs, 2000);
    EXPECT_NE(mine, theirs);  // another vCPU index, another stream

    ASSERT_EQ(0, fault::configure("seed=3,p=0.3,kinds=all"));
    auto first_half = decisions(fault::kAll, 1000);
    std::vector<uint32_t> ignored;
    other_vcpu(&ignored, 5000);  // interleaved draws elsewhere
    auto second_half = decisions(fault::kAll, 1000);
    first_half.insert(first_half.end(), second_half.begin(), second_half.end());
    EXPECT_EQ(mine, first_half);
}

TEST_F(Injector, RatesWithinTolerance) {
    const int n = 200000;
    for (double p : {0.01, 0.1, 0.5}) {
        fault::reset_counts();
        ASSERT_EQ(0, fault::configure(
                         ("seed=11,kinds=short,eagain,reset,p=" + std::to_string(p)).c_str()));
        int hits = 0, per_kind[3] = {0, 0, 0};
        for (int i = 0; i < n; i++) {
            uint32_t k = fault::draw(fault::SHORT_IO | fault::EAGAIN_STORM | fault::RESET);
            if (!k) continue;
            hits++;
            per_kind[k == fault::SHORT_IO ? 0 : k == fault::EAGAIN_STORM ? 1 : 2]++;
        }
        // 5 standard deviations of a binomial(n, p).
        double sd = std::sqrt(n * p * (1 - p));
        EXPECT_NEAR(n * p, hits, 5 * sd) << p;
        for (int c : per_kind) EXPECT_NEAR(hits / 3.0, c, 5 * std::sqrt(hits / 3.0) + 1) << p;
        fault::Counts counts = fault::counts();
        EXPECT_EQ((uint64_t)n, counts.draws);
        EXPECT_EQ((uint64_t)per_kind[0], counts.hits[2]);  // short is bit 2
        EXPECT_EQ((uint64_t)per_kind[2], counts.hits[7]);  // reset is bit 7
    }
    // p=1: every call.
    ASSERT_EQ(0, fault::configure("seed=1,p=1,kinds=eio"));
    for (int i = 0; i < 1000; i++) ASSERT_TRUE(fault::hit(fault::IO_ERROR));
}

// An injected delay sleeps, within delay_us, and an interrupt during it is
// the caller's to see.
TEST_F(Injector, LateWakeupSleepsAndKeepsInterrupts) {
    ASSERT_EQ(0, fault::configure("seed=5,p=1,kinds=delay,delay_us=20000"));
    uint64_t t0 = photon::__update_now();
    EXPECT_EQ(0, fault::late_wakeup());
    EXPECT_LE(photon::__update_now() - t0, 1000000u);
    EXPECT_EQ(1u, fault::counts().hits[3]);

    ASSERT_EQ(0, fault::configure("seed=5,p=1,kinds=delay,delay_us=1000000"));
    photon::thread* self = photon::CURRENT;
    photon::thread_create11([self] { photon::thread_interrupt(self, ECANCELED); });
    errno = 0;
    EXPECT_EQ(-1, fault::late_wakeup());  // the interrupter ran as soon as this one slept
    EXPECT_EQ(ECANCELED, errno);
}

TEST(InjectorNames, KindNames) {
    EXPECT_STREQ("eagain", fault::kind_name(fault::EAGAIN_STORM));
    EXPECT_STREQ("reset", fault::kind_name(fault::RESET));
    EXPECT_STREQ("enomem", fault::kind_name(fault::NOMEM));
    EXPECT_STREQ("?", fault::kind_name((fault::Kind)3));
}

}  // namespace
