// photon/common/consistent-hash-map.h: lookups on the ring (first point not
// less than the key, wrapping), sorting and de-duplication, the comparator,
// iteration, and the consistent-hashing properties a ring built on it has:
// even spread with virtual nodes, and only the affected arc moving when a node
// joins or leaves.
#include <photon/common/consistent-hash-map.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "../thread/test_util.h"

namespace {

using Ring = consistent_hash_map<uint64_t, int>;

// splitmix64: a well-mixed, deterministic hash for points and keys.
uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

constexpr int kVnodes = 160;

void add_node(Ring& ring, int node) {
    for (int v = 0; v < kVnodes; v++) ring.push_back(mix(((uint64_t)node << 32) | v), node);
}

Ring make_ring(const std::vector<int>& nodes) {
    Ring ring;
    for (int n : nodes) add_node(ring, n);
    ring.sort();
    return ring;
}

std::vector<int> owners(const Ring& ring, int nkeys) {
    std::vector<int> out(nkeys);
    for (int k = 0; k < nkeys; k++) out[k] = ring.find(mix(1000000 + k))->second;
    return out;
}

TEST(ConsistentHashMap, EmptyMapFindsNothingAndCountsZero) {
    Ring ring;
    EXPECT_TRUE(ring.empty());
    EXPECT_EQ(0u, ring.size());
    EXPECT_EQ(ring.end(), ring.find(42));
    EXPECT_EQ(0u, ring.count(42));
    const Ring& c = ring;
    EXPECT_EQ(c.end(), c.find(42));
}

TEST(ConsistentHashMap, FindReturnsFirstPointNotLessThanKeyAndWrapsPastTheLast) {
    Ring ring;
    ring.assign({{300, 3}, {100, 1}, {200, 2}});
    ASSERT_EQ(3u, ring.size());
    EXPECT_EQ(1, ring.find(0)->second);
    EXPECT_EQ(1, ring.find(100)->second);  // a key on a point belongs to it
    EXPECT_EQ(2, ring.find(101)->second);
    EXPECT_EQ(3, ring.find(300)->second);
    EXPECT_EQ(1, ring.find(301)->second);  // past the last point: wraps
    EXPECT_EQ(1, ring.find(UINT64_MAX)->second);
    EXPECT_EQ(1u, ring.count(12345));
    EXPECT_EQ(200u, ring.at(150).first);  // at() and [] return the whole entry
    EXPECT_EQ(2, ring[150].second);
    const Ring& c = ring;
    EXPECT_EQ(3, c.find(250)->second);
    EXPECT_EQ(3, c.at(250).second);
    EXPECT_EQ(1, c[999].second);
}

TEST(ConsistentHashMap, NextWalksTheRingAndWrapsToTheFront) {
    Ring ring;
    ring.assign({{10, 1}, {20, 2}, {30, 3}});
    auto it = ring.find(15);
    EXPECT_EQ(2, it->second);
    it = ring.next(it);
    EXPECT_EQ(3, it->second);
    it = ring.next(it);
    EXPECT_EQ(1, it->second);
    const Ring& c = ring;
    EXPECT_EQ(3, c.next(c.find(15))->second);
    EXPECT_EQ(1, c.next(c.find(30))->second);
}

TEST(ConsistentHashMap, SortDropsExactDuplicatesAndKeepsTiesInInsertionOrder) {
    consistent_hash_map<int, std::string> m;
    m.push_back(5, "b");
    m.push_back(1, "a");
    m.push_back(5, "c");
    m.push_back(5, "b");  // same point and value as an earlier, non-adjacent entry
    m.push_back(1, "a");
    m.push_back(9, "z");
    m.sort();
    std::vector<std::pair<int, std::string>> got(m.begin(), m.end());
    std::vector<std::pair<int, std::string>> want{{1, "a"}, {5, "b"}, {5, "c"}, {9, "z"}};
    EXPECT_EQ(want, got);
    EXPECT_EQ("b", m.find(5)->second);  // the tie's first-inserted entry wins, every time
}

TEST(ConsistentHashMap, AssignSortedTrustsTheCallersOrder) {
    std::vector<std::pair<uint64_t, int>> v{{1, 1}, {2, 2}, {3, 3}};
    Ring ring;
    ring.assign(v.begin(), v.end(), true);
    EXPECT_EQ(3u, ring.size());
    EXPECT_EQ(2, ring.find(2)->second);
    ring.assign(v.rbegin(), v.rend());  // unsorted input is sorted
    EXPECT_EQ(1u, ring.begin()->first);
    ring.clear();
    EXPECT_TRUE(ring.empty());
}

struct by_direction {
    bool descending = false;
    bool operator()(int a, int b) const { return descending ? a > b : a < b; }
};

TEST(ConsistentHashMap, TheComparatorGivenIsUsedNotADefaultOne) {
    consistent_hash_map<int, int, by_direction> m(by_direction{true});
    m.assign({{10, 1}, {30, 3}, {20, 2}});
    std::vector<int> order;
    for (auto& e : m) order.push_back(e.first);
    EXPECT_EQ((std::vector<int>{30, 20, 10}), order);
    EXPECT_EQ(2, m.find(25)->second);  // first point "not less" in descending order
    EXPECT_EQ(3, m.find(5)->second);   // past the last (10): wraps to 30
}

TEST(ConsistentHashMap, ReverseIteratorsWalkBackwards) {
    Ring ring;
    ring.assign({{1, 1}, {2, 2}, {3, 3}});
    std::vector<int> rev;
    for (auto it = ring.rbegin(); it != ring.rend(); ++it) rev.push_back(it->second);
    EXPECT_EQ((std::vector<int>{3, 2, 1}), rev);
    const Ring& c = ring;
    EXPECT_EQ(3, c.crbegin()->second);
    EXPECT_EQ(3, std::distance(c.crbegin(), c.crend()));
    EXPECT_EQ(3, std::distance(c.cbegin(), c.cend()));
    EXPECT_GE(c.max_size(), c.size());
}

TEST(ConsistentHashMap, AtOnAnEmptyMapAbortsWithAMessage) {
    GTEST_FLAG_SET(death_test_style, photon_test::death_test_style());
    Ring ring;
    EXPECT_DEATH(ring.at(1), "empty");
    const Ring& c = ring;
    EXPECT_DEATH(c[1], "empty");
}

TEST(ConsistentHashMap, VirtualNodesSpreadKeysEvenly) {
    std::vector<int> nodes{0, 1, 2, 3, 4, 5, 6, 7};
    auto ring = make_ring(nodes);
    ASSERT_EQ(nodes.size() * kVnodes, ring.size());
    constexpr int kKeys = 80000;
    std::map<int, int> load;
    for (int owner : owners(ring, kKeys)) load[owner]++;
    ASSERT_EQ(nodes.size(), load.size());
    const double mean = (double)kKeys / nodes.size();
    for (auto& nl : load) {
        EXPECT_GT(nl.second, mean * 0.7) << "node " << nl.first;
        EXPECT_LT(nl.second, mean * 1.3) << "node " << nl.first;
    }
}

TEST(ConsistentHashMap, AddingANodeMovesOnlyKeysToItAboutItsShare) {
    constexpr int kKeys = 50000;
    auto before = owners(make_ring({0, 1, 2, 3, 4}), kKeys);
    auto after = owners(make_ring({0, 1, 2, 3, 4, 5}), kKeys);
    int moved = 0;
    for (int k = 0; k < kKeys; k++) {
        if (before[k] == after[k]) continue;
        moved++;
        ASSERT_EQ(5, after[k]) << "key " << k << " moved between old nodes";
    }
    const double share = (double)kKeys / 6;
    EXPECT_GT(moved, share * 0.6);
    EXPECT_LT(moved, share * 1.4);
}

TEST(ConsistentHashMap, RemovingANodeMovesOnlyItsKeys) {
    constexpr int kKeys = 50000;
    auto before = owners(make_ring({0, 1, 2, 3, 4, 5}), kKeys);
    auto after = owners(make_ring({0, 1, 2, 4, 5}), kKeys);  // node 3 leaves
    int moved = 0;
    for (int k = 0; k < kKeys; k++) {
        EXPECT_NE(3, after[k]);
        if (before[k] == after[k]) continue;
        moved++;
        ASSERT_EQ(3, before[k]) << "key " << k << " of a remaining node moved";
    }
    EXPECT_GT(moved, 0);
}

TEST(ConsistentHashMap, RebuildingInAnotherOrderGivesTheSameOwners) {
    constexpr int kKeys = 5000;
    auto a = owners(make_ring({0, 1, 2, 3}), kKeys);
    auto b = owners(make_ring({3, 1, 0, 2}), kKeys);
    EXPECT_EQ(a, b);
}

}  // namespace
