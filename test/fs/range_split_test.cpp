// range_split, range_split_power2 and range_split_vi: the pieces of a range
// against a brute-force reference, PhotonLibOS's own examples, and the edges
// (empty ranges, ranges ending at 2^64, interval 0, bad key points).
#include <photon/fs/range-split-vi.h>
#include <photon/fs/range-split.h>

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "../thread/test_util.h"

using namespace photon::fs;

namespace {

struct piece {
    uint64_t i, offset, length;
    bool operator==(const piece& r) const {
        return i == r.i && offset == r.offset && length == r.length;
    }
};

template <typename Split>
std::vector<piece> all(const Split& s) {
    std::vector<piece> v;
    for (auto& x : s.all_parts()) v.push_back({x.i, x.offset, x.length});
    return v;
}

// The pieces of [off, off+len) over blocks starting at bounds[k] (block k).
std::vector<piece> reference(uint64_t off, uint64_t len, const std::vector<uint64_t>& bounds) {
    std::vector<piece> v;
    uint64_t end = off + len;
    for (size_t k = 0; k + 1 < bounds.size(); k++) {
        uint64_t a = std::max(off, bounds[k]), b = std::min(end, bounds[k + 1]);
        if (a < b) v.push_back({k, a - bounds[k], b - a});
    }
    return v;
}

std::vector<uint64_t> fixed_bounds(uint64_t interval, uint64_t upto) {
    std::vector<uint64_t> b;
    for (uint64_t x = 0; x <= upto + interval; x += interval) b.push_back(x);
    return b;
}

}  // namespace

TEST(RangeSplit, SubRangeBasics) {
    sub_range sr(0, 0, 0);
    EXPECT_FALSE(sr);
    sr.assign(3, 233, 1024);
    EXPECT_TRUE(sr);
    EXPECT_EQ(233u, sr.begin());
    EXPECT_EQ(233u + 1024u, sr.end());
    sr.clear();
    EXPECT_FALSE(sr);
}

TEST(RangeSplit, PhotonsExampleSplitsAsDocumented) {
    range_split split(42, 321, 32);  // [42, 363) over 32-byte blocks
    EXPECT_FALSE(split.small_note);
    EXPECT_EQ(42u, split.begin);
    EXPECT_EQ(363u, split.end);
    EXPECT_EQ(1u, split.abegin);
    EXPECT_EQ(12u, split.aend);
    EXPECT_EQ(2u, split.apbegin);
    EXPECT_EQ(11u, split.apend);
    EXPECT_EQ(32u, split.aligned_begin_offset());
    EXPECT_EQ(384u, split.aligned_end_offset());
    EXPECT_EQ(352u, split.aligned_length());
    EXPECT_EQ((piece{1, 10, 22}),
              (piece{split.preface.i, split.preface.offset, split.preface.length}));
    EXPECT_EQ((piece{11, 0, 11}),
              (piece{split.postface.i, split.postface.offset, split.postface.length}));
    EXPECT_EQ(reference(42, 321, fixed_bounds(32, 363)), all(split));
    int n = 0;
    for (auto& x : split.aligned_parts()) {
        EXPECT_EQ(2u + n++, x.i);
        EXPECT_EQ(0u, x.offset);
        EXPECT_EQ(32u, x.length);
    }
    EXPECT_EQ(9, n);

    EXPECT_TRUE(range_split(2, 12, 24).small_note);
    EXPECT_TRUE(range_split(0, 23, 24).postface);
    EXPECT_TRUE(range_split(1, 23, 24).preface);
    range_split whole(0, 24, 24);
    EXPECT_FALSE(whole.preface || whole.postface || whole.small_note);
    EXPECT_TRUE(whole.is_aligned());
    EXPECT_EQ(1u, all(whole).size());
    EXPECT_TRUE(whole.is_aligned(48));
    EXPECT_FALSE(whole.is_aligned(47));
    EXPECT_TRUE(whole.is_aligned_ptr((const void*)(uintptr_t)4800));
}

TEST(RangeSplit, RandomRangesMatchTheReference) {
    std::mt19937_64 rng(1);
    for (int k = 0; k < 2000; k++) {
        uint64_t interval = 1 + rng() % 100, off = rng() % 1000, len = rng() % 500;
        range_split s(off, len, interval);
        auto want = reference(off, len, fixed_bounds(interval, off + len));
        ASSERT_EQ(want, all(s)) << off << "+" << len << " / " << interval;
        uint64_t p2 = 1ull << (rng() % 8);
        ASSERT_EQ(reference(off, len, fixed_bounds(p2, off + len)),
                  all(range_split_power2(off, len, p2)));
        // The parts by kind add up to the same pieces.
        std::vector<piece> kinds;
        if (s.small_note) {
            kinds.push_back({s.small_note.i, s.small_note.offset, s.small_note.length});
        } else {
            if (s.preface) kinds.push_back({s.preface.i, s.preface.offset, s.preface.length});
            for (auto& x : s.aligned_parts()) kinds.push_back({x.i, x.offset, x.length});
            if (s.postface) kinds.push_back({s.postface.i, s.postface.offset, s.postface.length});
        }
        ASSERT_EQ(want, kinds) << off << "+" << len << " / " << interval;
    }
}

// Photon's aligned_parts() of an empty unaligned range never ended.
TEST(RangeSplit, AnEmptyRangeHasNoParts) {
    for (uint64_t off : {0u, 96u, 100u}) {
        range_split s(off, 0, 32);
        EXPECT_TRUE(all(s).empty()) << off;
        int n = 0;
        for (auto& x : s.aligned_parts()) (void)x, n++;
        EXPECT_EQ(0, n) << off;
        EXPECT_FALSE(s.small_note || s.preface || s.postface || s.first);
    }
}

TEST(RangeSplit, RangesNearTwoToThe64DoNotOverflow) {
    range_split s(UINT64_MAX - 100, 1000, 64);  // cut at 2^64 - 1
    EXPECT_EQ(UINT64_MAX, s.end);
    uint64_t sum = 0;
    for (auto& x : s.all_parts()) sum += x.length;
    EXPECT_EQ(100u, sum);
    range_split_power2 p(UINT64_MAX - 10, 10, 4096);
    EXPECT_EQ(UINT64_MAX / 4096, p.abegin);
    EXPECT_EQ(1u, all(p).size());
}

TEST(RangeSplit, IntervalZeroIsOneBlockAndPower2FallsBackToDivision) {
    EXPECT_EQ((std::vector<piece>{{0, 5, 10}}), all(range_split(5, 10, 0)));
    EXPECT_EQ(reference(10, 100, fixed_bounds(24, 110)), all(range_split_power2(10, 100, 24)));
    EXPECT_EQ((std::vector<piece>{{0, 5, 10}}), all(range_split_power2(5, 10, 0)));
}

TEST(RangeSplitVi, SplitsAtTheKeyPoints) {
    uint64_t kp[] = {0, 32, 64, 128, 256, 512, UINT64_MAX};
    range_split_vi s(12, 321, kp, 7);
    EXPECT_EQ(12u, s.begin);
    EXPECT_EQ(333u, s.end);
    EXPECT_TRUE(s.is_aligned(0));
    EXPECT_FALSE(s.is_aligned(1));
    EXPECT_TRUE(s.is_aligned(128));
    EXPECT_EQ((std::vector<piece>{{0, 12, 20}, {1, 0, 32}, {2, 0, 64}, {3, 0, 128}, {4, 0, 77}}),
              all(s));
    EXPECT_EQ((std::vector<piece>{{0, 0, 32}, {1, 0, 32}, {2, 0, 64}, {3, 0, 128}}),
              all(range_split_vi(0, 256, kp, 7)));
    uint64_t unsorted[] = {0, 32, 796, 128, UINT64_MAX};
    EXPECT_FALSE(s.ascending(unsorted, 5));
    EXPECT_TRUE(s.ascending(kp, 7));
}

TEST(RangeSplitVi, RandomRangesMatchTheReference) {
    std::mt19937_64 rng(2);
    for (int k = 0; k < 500; k++) {
        std::vector<uint64_t> kp = {0};
        for (int j = 0; j < 8; j++) kp.push_back(kp.back() + 1 + rng() % 50);
        kp.push_back(UINT64_MAX);
        uint64_t off = rng() % 300, len = rng() % 300;
        ASSERT_EQ(reference(off, len, kp), all(range_split_vi(off, len, kp.data(), kp.size())));
    }
}

TEST(RangeSplitVi, TwoKeyPointsAndTheLastBlockWork) {
    uint64_t one[] = {0, UINT64_MAX};
    EXPECT_EQ((std::vector<piece>{{0, 7, 9}}), all(range_split_vi(7, 9, one, 2)));
    uint64_t kp[] = {0, 100, UINT64_MAX};
    auto v = all(range_split_vi(50, UINT64_MAX - 50, kp, 3));  // up to the very end
    ASSERT_EQ(2u, v.size());
    EXPECT_EQ((piece{1, 0, UINT64_MAX - 100}), v[1]);
}

TEST(RangeSplitVi, BadKeyPointsAssertInDebugAndSplitNothingInRelease) {
    uint64_t unsorted[] = {0, 32, 796, 128, UINT64_MAX};
#ifndef NDEBUG
    testing::FLAGS_gtest_death_test_style = photon_test::death_test_style();
    EXPECT_DEATH(range_split_vi(0, 100, unsorted, 5), "valid");
#else
    EXPECT_TRUE(all(range_split_vi(0, 100, unsorted, 5)).empty());
#endif
}
