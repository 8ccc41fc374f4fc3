// Built as C++14 (test/CMakeLists.txt): the header templates PhotonLibOS programs instantiate,
// used the way overlaybd uses them, so that a C++17-only construct inside a template body (the
// header check compiles declarations, not instantiations) fails here instead of in their build.
#include <photon/common/string-keyed.h>

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#if __cplusplus >= 201703L
#error "this test must be built as C++14 (CXX_STANDARD 14 in test/CMakeLists.txt)"
#endif

namespace {

struct Entry {
    explicit Entry(int v) : value(v) {}
    int value;
};

// overlaybd's FileCachePool keeps map_string_key<unique_ptr<LruEntry>> and emplaces into it.
TEST(Cxx14Templates, MapStringKeyEmplaceConstructsOnlyWhenAbsent) {
    map_string_key<std::unique_ptr<Entry>> m;
    std::string key = "/dir/file";
    auto r = m.emplace(key, std::unique_ptr<Entry>(new Entry(1)));
    EXPECT_TRUE(r.second);
    key[1] = 'X';  // the map owns its copy of the key
    auto again = m.emplace("/dir/file", std::unique_ptr<Entry>(new Entry(2)));
    EXPECT_FALSE(again.second);
    EXPECT_EQ(1, again.first->second->value);
    auto hinted = m.emplace_hint(m.end(), "/a", std::unique_ptr<Entry>(new Entry(3)));
    EXPECT_EQ(3, hinted->second->value);
    EXPECT_EQ(hinted, m.emplace_hint(m.begin(), "/a", std::unique_ptr<Entry>(new Entry(4))));
    EXPECT_EQ(2u, m.size());
    EXPECT_EQ(1u, m.count("/dir/file"));
}

TEST(Cxx14Templates, UnorderedMapStringKeyInsertAndEmplace) {
    unordered_map_string_key<int> m;
    EXPECT_TRUE(m.insert({"k1", 1}).second);
    EXPECT_FALSE(m.emplace("k1", 9).second);
    EXPECT_TRUE(m.emplace("k2", 2).second);
    EXPECT_EQ(1, m["k1"]);
    EXPECT_EQ(2, m.at("k2"));
    m.erase("k1");
    EXPECT_EQ(0u, m.count("k1"));
}

}  // namespace
