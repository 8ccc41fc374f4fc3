// photon::Timeout: deadlines on photon::now, as PhotonLibOS defines them.
#include <photon/common/timeout.h>

#include <gtest/gtest.h>

#include <chrono>
#include <type_traits>

using photon::Timeout;

namespace {

TEST(Timeout, DefaultNeverExpiresAndZeroIsExpiredAtExpirationZero) {
    Timeout never;
    EXPECT_FALSE(never.expired());
    EXPECT_EQ(never.expiration(), UINT64_MAX);
    Timeout zero(0);
    EXPECT_TRUE(zero.expired());
    EXPECT_EQ(zero.expiration(), 0u);  // as in Photon
    EXPECT_EQ(zero.timeout(), 0u);
    Timeout minus_one(-1);
    EXPECT_EQ(minus_one.expiration(), UINT64_MAX);
}

TEST(Timeout, TimeLeftIsBoundedByWhatWasAsked) {
    Timeout t(5 * 1000 * 1000);
    EXPECT_FALSE(t.expired());
    EXPECT_LE(t.timeout(), 5u * 1000 * 1000);
    EXPECT_GT(t.timeout(), 4u * 1000 * 1000);  // generous: the clock barely moved
    EXPECT_EQ(t.timeout_us(), t.timeout());
    uint64_t left = t;  // converts to the microseconds left
    EXPECT_LE(left, 5u * 1000 * 1000);
}

TEST(Timeout, CoarseUnitsRoundToTheNearest) {
    // expiration() is settable, so the time left is exact against a refreshed clock.
    auto left_of = [](uint64_t us) {
        Timeout t;
        t.expiration(photon::__update_now() + us);
        return t;
    };
    // The clock may advance a little between the two reads; choose values far from halves.
    EXPECT_EQ(left_of(1400000).timeout_ms(), 1400u);
    EXPECT_EQ(left_of(1400600).timeout_ms(), 1401u);  // rounds up past a half
    EXPECT_EQ(left_of(2900000).timeout_s(), 3u);
    EXPECT_EQ(left_of(2200000).timeout_s(), 2u);
    EXPECT_EQ(left_of(1024 * 10 + 700).timeout_MS(), 11u);
    EXPECT_EQ(left_of(1024 * 1024 * 3 + 100).timeout_S(), 3u);
}

TEST(Timeout, ANeverExpiringTimeoutHasAMaximalStdDuration) {
    Timeout never;
    EXPECT_EQ(never.std_duration(), std::chrono::microseconds::max());
    EXPECT_EQ(never.timeout_ms(),
              (UINT64_MAX - photon::now) / 1000 + ((UINT64_MAX - photon::now) % 1000 >= 500));
    Timeout soon(2 * 1000 * 1000);
    EXPECT_GT(soon.std_duration().count(), 0);
    EXPECT_LE(soon.std_duration(), std::chrono::seconds(2));
    static_assert(std::is_same<decltype(soon.std_duration()), std::chrono::microseconds>::value,
                  "microseconds");
}

TEST(Timeout, AtMostOnlyShortens) {
    Timeout t(10 * 1000 * 1000);
    uint64_t e = t.expiration();
    t.timeout_at_most(20 * 1000 * 1000);
    EXPECT_EQ(t.expiration(), e);
    t.timeout_at_most(1000);
    EXPECT_LT(t.expiration(), e);
    Timeout never;
    never.timeout_at_most(0);
    EXPECT_TRUE(never.expired());
}

TEST(Timeout, ComparisonsFollowPhotonIncludingItsStrictLessOrEqual) {
    Timeout a, b;
    a.expiration(100);
    b.expiration(200);
    EXPECT_TRUE(a < b);
    EXPECT_TRUE(b > a);
    EXPECT_TRUE(a <= b);
    EXPECT_FALSE(a <= a);  // Photon's <= is <
    EXPECT_TRUE(a >= a);
    EXPECT_TRUE(a == a);
    a = 0;  // re-arm: expires now
    EXPECT_TRUE(a.expired());
}

// A subclass reaches the deadline, as Photon's protected m_expiration allows.
struct Deadline : Timeout {
    using Timeout::Timeout;
    uint64_t raw() const { return m_expiration; }
};

TEST(Timeout, SubclassesSeeTheExpiration) {
    Deadline d(0);
    EXPECT_EQ(d.raw(), 0u);
    static_assert(!std::is_constructible<bool, Timeout>::value, "not a condition");
}

}  // namespace
