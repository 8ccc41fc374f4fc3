#include <photon/common/utility.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

TEST(Defer, RunsAtScopeExitInReverseOrder) {
    std::string trace;
    {
        DEFER(trace += 'a');
        DEFER(trace += 'b');
        trace += '-';
    }
    EXPECT_EQ(trace, "-ba");
}

TEST(Defer, CapturesByReferenceAndRunsOnEarlyReturn) {
    int x = 0;
    auto f = [&](bool early) {
        DEFER(x += 10);
        if (early) return 1;
        x += 1;
        return 2;
    };
    EXPECT_EQ(f(true), 1);
    EXPECT_EQ(x, 10);
    EXPECT_EQ(f(false), 2);
    EXPECT_EQ(x, 21);
}

TEST(With, ScopesTheVariableAndWithReleaseRunsTheRelease) {
    int released = 0;
    WITH(int n = 5) { EXPECT_EQ(n, 5); }
    WITH_Release(int* p = &released, ++*p) { EXPECT_EQ(released, 0); }
    EXPECT_EQ(released, 1);
}

TEST(SatAdd, ClampsAtUint64Max) {
    EXPECT_EQ(photon::sat_add(1, 2), 3u);
    EXPECT_EQ(photon::sat_add(UINT64_MAX - 1, 1), UINT64_MAX);
    EXPECT_EQ(photon::sat_add(UINT64_MAX, UINT64_MAX), UINT64_MAX);
}

TEST(SatSub, ClampsAtZero) {
    EXPECT_EQ(photon::sat_sub(5, 3), 2u);
    EXPECT_EQ(photon::sat_sub(3, 5), 0u);
    EXPECT_EQ(photon::sat_sub(0, UINT64_MAX), 0u);
}

TEST(Align, RoundsToPowerOfTwoBoundaries) {
    EXPECT_EQ(align_up(0u, 4096u), 0u);
    EXPECT_EQ(align_up(1u, 4096u), 4096u);
    EXPECT_EQ(align_up(uint64_t(4096), 4096), 4096u);
    EXPECT_EQ(align_down(uint64_t(8191), 4096), 4096u);
    EXPECT_EQ(align_down(7, 8), 0);
    static_assert(align_up(13, 8) == 16, "constexpr");
}

TEST(Xrange, IteratesHalfOpenRangesWithSteps) {
    std::vector<int> v;
    for (auto i : xrange(4)) v.push_back(i);
    EXPECT_EQ(v, (std::vector<int>{0, 1, 2, 3}));
    v.clear();
    for (auto i : xrange(2, 9, 3)) v.push_back(i);
    EXPECT_EQ(v, (std::vector<int>{2, 5, 8}));
    v.clear();
    for (auto i : xrange(5, 0, -2)) v.push_back(i);
    EXPECT_EQ(v, (std::vector<int>{5, 3, 1}));
    v.clear();
    for (auto i : xrange(0)) v.push_back(i);
    EXPECT_TRUE(v.empty());
    uint64_t sum = 0;
    for (auto i : xrange(uint64_t(1), uint64_t(4))) sum += i;
    EXPECT_EQ(sum, 6u);
}

TEST(SafeDelete, DeletesAndNullsThePointer) {
    int* p = new int(3);
    safe_delete(p);
    EXPECT_EQ(p, nullptr);
    safe_delete(p);  // deleting nullptr is fine
}

TEST(Len, CountsArrayElements) {
    int a[7];
    static_assert(LEN(a) == 7, "LEN");
    EXPECT_EQ(LEN("abc"), 4u);
}

}  // namespace
