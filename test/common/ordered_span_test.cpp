// photon/common/ordered_span.h: lookups in sorted string sets and key-value
// tables, sorted insertion into the free tail, and the failures that leave the
// span unchanged (full, out of order), plus the DEFINE_* macros.
#include <photon/common/ordered_span.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>

namespace {

using photon::ordered_span;
using photon::ordered_string_kv;
using photon::ordered_strings;
using photon::SKV;

DEFINE_CONST_STATIC_ORDERED_STRINGS(g_methods, {"DELETE", "GET", "HEAD", "POST", "PUT"});
DEFINE_CONST_STATIC_ORDERED_STRING_KV(g_mime, {{"css", "text/css"},
                                               {"html", "text/html"},
                                               {"js", "text/javascript"},
                                               {"png", "image/png"}});

// Usable in constant expressions, and the order check works on any array.
constexpr int kSorted[] = {1, 3, 3, 8};
constexpr int kUnsorted[] = {1, 4, 2};
constexpr ordered_span<int> kSpan(kSorted);
static_assert(kSpan.size() == 4, "whole array used when nothing is free");
static_assert(kSpan.ordered(kSorted, 4) && !kSpan.ordered(kUnsorted, 3), "order check");
static_assert(ordered_span<int>(kSorted, 4, 1).size() == 3, "the last slot is free");

TEST(OrderedSpan, FindsStringsByBinarySearch) {
    EXPECT_EQ(g_methods.count("GET"), 1u);
    EXPECT_EQ(g_methods.count("PUT"), 1u);
    EXPECT_EQ(g_methods.count("DELETE"), 1u);
    EXPECT_EQ(g_methods.count("PATCH"), 0u);
    EXPECT_EQ(g_methods.count(""), 0u);
    EXPECT_EQ(g_methods.count("ZZZ"), 0u);
    auto it = g_methods.find("HEAD");
    ASSERT_NE(it, g_methods.end());
    EXPECT_EQ(it - g_methods.begin(), 2);
    EXPECT_EQ(g_methods.find("HEADX"), g_methods.end());
}

TEST(OrderedStringKV, LooksUpValuesByKey) {
    EXPECT_EQ(g_mime["html"], "text/html");
    EXPECT_EQ(g_mime["png"], "image/png");
    EXPECT_EQ(g_mime["gif"], "");       // absent
    EXPECT_EQ(g_mime[0].first, "css");  // positional access still works
    EXPECT_EQ(g_mime.find("js")->second, "text/javascript");
    EXPECT_EQ(g_mime.count("css"), 1u);
}

TEST(OrderedStringKV, AppendableTableTakesInsertsAndAppends) {
    DEFINE_ORDERED_STRING_KV(fixed, {{"asdf", "1"}, {"qwer", "2"}, {"xzyh", "3"}});
    DEFINE_APPENDABLE_ORDERED_STRING_KV(grow, 5, {{"asdf", "1"}, {"qwer", "2"}, {"xzyh", "3"}});
    EXPECT_EQ(grow.size(), fixed.size());
    EXPECT_EQ(grow.free_slots(), 5u);
    EXPECT_TRUE(std::equal(fixed.begin(), fixed.end(), grow.begin(), grow.end()));

    EXPECT_EQ(grow.insert({"bbq", "14ygrhe"}), 0);
    EXPECT_EQ(grow.append({"zzz", "..."}), 0);
    std::vector<SKV> got(grow.begin(), grow.end());
    std::vector<SKV> want = {
        {"asdf", "1"}, {"bbq", "14ygrhe"}, {"qwer", "2"}, {"xzyh", "3"}, {"zzz", "..."}};
    EXPECT_EQ(got, want);
    EXPECT_EQ(grow["bbq"], "14ygrhe");
    EXPECT_EQ(grow.free_slots(), 3u);
}

TEST(OrderedSpan, InsertKeepsOrderAndPutsEqualsLast) {
    using P = std::pair<int, char>;
    struct ByFirst {
        bool operator()(const P& a, const P& b) const { return a.first < b.first; }
    };
    P buf[6] = {{1, 'a'}, {5, 'a'}, {9, 'a'}};
    ordered_span<P, ByFirst> s(buf, 6, 3);
    EXPECT_EQ(s.insert({5, 'b'}), 0);
    EXPECT_EQ(s.insert({0, 'a'}), 0);
    EXPECT_EQ(s.insert({10, 'a'}), 0);
    std::vector<P> got(s.begin(), s.end());
    std::vector<P> want = {{0, 'a'}, {1, 'a'}, {5, 'a'}, {5, 'b'}, {9, 'a'}, {10, 'a'}};
    EXPECT_EQ(got, want);
    EXPECT_EQ(s.find(P{5, 'z'})->second, 'a');  // the first of the equal ones
}

TEST(OrderedSpan, FullSpanRefusesWithEnobufsAndChangesNothing) {
    int buf[3] = {1, 2, 0};
    ordered_span<int> s(buf, 3, 1);
    EXPECT_EQ(s.append(7), 0);
    errno = 0;
    EXPECT_EQ(s.append(8), -1);
    EXPECT_EQ(errno, ENOBUFS);
    errno = 0;
    EXPECT_EQ(s.insert(0), -1);
    EXPECT_EQ(errno, ENOBUFS);
    EXPECT_EQ(s.size(), 3u);
    EXPECT_EQ(std::vector<int>(s.begin(), s.end()), (std::vector<int>{1, 2, 7}));
}

// Photon asserted here; a release build appended anyway and find() stopped
// finding elements.
TEST(OrderedSpan, OutOfOrderAppendFailsWithEinvalAndChangesNothing) {
    int buf[4] = {10, 20, 0, 0};
    ordered_span<int> s(buf, 4, 2);
    errno = 0;
    EXPECT_EQ(s.append(15), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(s.size(), 2u);
    EXPECT_EQ(s.free_slots(), 2u);
    EXPECT_EQ(s.append(20), 0);  // equal to the last one is in order
    EXPECT_EQ(s.count(20), 1u);
}

TEST(OrderedSpan, InsertingOneOfItsOwnElementsDuplicatesIt) {
    std::string buf[4] = {"a", "m", "z"};
    ordered_span<std::string> s(buf, 4, 1);
    EXPECT_EQ(s.insert(s[1]), 0);  // "z" moves, the "m" val refers to does not
    EXPECT_EQ(std::vector<std::string>(s.begin(), s.end()),
              (std::vector<std::string>{"a", "m", "m", "z"}));
}

TEST(OrderedSpan, MoreFreeSlotsThanTheArrayMeansAllFreeNotAHugeSpan) {
    int buf[2] = {};
    ordered_span<int> s(buf, 2, 5);
    EXPECT_EQ(s.size(), 0u);
    EXPECT_EQ(s.free_slots(), 2u);
    EXPECT_EQ(s.append(1), 0);
    EXPECT_EQ(s.append(2), 0);
    EXPECT_EQ(s.append(3), -1);
    int* end = buf + 2;
    ordered_span<int> backwards(end, buf);  // end before begin: empty
    EXPECT_TRUE(backwards.empty());
}

TEST(OrderedSpan, EmptySpanFindsNothingAndAcceptsAnything) {
    ordered_strings none;
    EXPECT_EQ(none.count("x"), 0u);
    EXPECT_EQ(none.append("x"), -1);  // no free slots
    std::string_view buf[1];
    ordered_strings one(buf, 1, 1);
    EXPECT_EQ(one.insert("x"), 0);
    EXPECT_EQ(one.count("x"), 1u);
}

int g_evaluations = 0;
std::string_view counted(std::string_view s) {
    ++g_evaluations;
    return s;
}

// Photon wrote the initializer list twice into the macro, so its expressions
// ran twice.
TEST(OrderedSpan, AppendableMacrosEvaluateTheirInitializersOnce) {
    g_evaluations = 0;
    DEFINE_APPENDABLE_ORDERED_STRINGS(names, 2, {counted("a"), counted("b")});
    EXPECT_EQ(g_evaluations, 2);
    EXPECT_EQ(names.size(), 2u);
    EXPECT_EQ(names.insert("aa"), 0);
    EXPECT_EQ(names[1], "aa");

    g_evaluations = 0;
    DEFINE_APPENDABLE_ORDERED_STRING_KV(kv, 1, {{counted("k"), counted("v")}});
    EXPECT_EQ(g_evaluations, 2);
    EXPECT_EQ(kv["k"], "v");
}

TEST(OrderedSpan, PlainMacroDeclaresAMutableSet) {
    DEFINE_ORDERED_STRINGS(words, {"alpha", "beta", "gamma"});
    EXPECT_EQ(words.count("beta"), 1u);
    words[1] = "bet";  // the backing array is the caller's and writable
    EXPECT_EQ(words.count("bet"), 1u);
}

}  // namespace
