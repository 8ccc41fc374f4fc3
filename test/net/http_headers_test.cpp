// Headers: case-insensitive, ordered, duplicates, limits, injection refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <vector>

#include <photon/net/http/headers.h>

using namespace photon::net::http;

TEST(Headers, LookupIgnoresCase) {
    Headers h;
    ASSERT_EQ(0, h.insert("Content-Type", "text/plain"));
    EXPECT_EQ("text/plain", h["content-type"]);
    EXPECT_EQ("text/plain", h["CONTENT-TYPE"]);
    EXPECT_TRUE(h.has("cOnTeNt-TyPe"));
    EXPECT_EQ("", h["Missing"]);
}

TEST(Headers, DuplicatesNeedAllowDupAndKeepOrder) {
    Headers h;
    ASSERT_EQ(0, h.insert("Set-Cookie", "a=1"));
    errno = 0;
    EXPECT_EQ(-1, h.insert("set-cookie", "b=2"));
    EXPECT_EQ(EEXIST, errno);
    ASSERT_EQ(0, h.insert("set-cookie", "b=2", 1));
    ASSERT_EQ(0, h.insert("X", "y"));
    EXPECT_EQ(2u, h.count("SET-COOKIE"));
    auto all = h.get_all("Set-Cookie");
    ASSERT_EQ(2u, all.size());
    EXPECT_EQ("a=1", all[0]);
    EXPECT_EQ("b=2", all[1]);
    std::string names;
    for (auto f : h) names.append(f.first).append(";");
    EXPECT_EQ("Set-Cookie;set-cookie;X;", names);
    EXPECT_EQ(2u, h.erase("set-COOKIE"));
    EXPECT_EQ(1u, h.field_count());
}

TEST(Headers, SetReplacesEveryValue) {
    Headers h;
    ASSERT_EQ(0, h.insert("A", "1"));
    ASSERT_EQ(0, h.insert("a", "2", 1));
    ASSERT_EQ(0, h.set("A", "3"));
    EXPECT_EQ(1u, h.count("a"));
    EXPECT_EQ("3", h["a"]);
}

TEST(Headers, RefusesCrlfInjectionWithEinval) {
    Headers h;
    for (auto bad : {std::pair<const char*, const char*>{"X", "a\r\nEvil: 1"},
                     {"X", "a\nb"},
                     {"X Y", "v"},
                     {"X:", "v"},
                     {"", "v"},
                     {"X", " padded"}}) {
        errno = 0;
        EXPECT_EQ(-1, h.insert(bad.first, bad.second)) << bad.first;
        EXPECT_EQ(EINVAL, errno);
    }
    EXPECT_EQ(-1, h.insert("X", std::string_view("a\0b", 3)));
    EXPECT_TRUE(h.empty());
}

TEST(Headers, LimitsCountAndBytesWithEnobufs) {
    Headers h(2, 1000);
    ASSERT_EQ(0, h.insert("A", "1"));
    ASSERT_EQ(0, h.insert("B", "2"));
    errno = 0;
    EXPECT_EQ(-1, h.insert("C", "3"));
    EXPECT_EQ(ENOBUFS, errno);
    Headers small(10, 20);
    ASSERT_EQ(0, small.insert("A", "1234567890"));  // 15 bytes with ": " and CRLF
    EXPECT_EQ(-1, small.insert("B", "1"));
    EXPECT_EQ(15u, small.bytes());
}

TEST(Headers, ContentLengthGetsAndSets) {
    Headers h;
    EXPECT_EQ(0u, h.content_length());
    ASSERT_EQ(0, h.content_length(12345678901234ULL));
    EXPECT_EQ("12345678901234", h["content-length"]);
    EXPECT_EQ(12345678901234ULL, h.content_length());
    ASSERT_EQ(0, h.content_length(7));
    EXPECT_EQ(1u, h.count("Content-Length"));
    std::string text;
    h.serialize(&text);
    EXPECT_EQ("Content-Length: 7\r\n", text);
}

TEST(Headers, ListHasTokenTrimsAndIgnoresCase) {
    EXPECT_TRUE(list_has_token("keep-alive, Upgrade", "upgrade"));
    EXPECT_TRUE(list_has_token(" close ", "CLOSE"));
    EXPECT_FALSE(list_has_token("closed", "close"));
    EXPECT_FALSE(list_has_token("", "close"));
}

// clear() keeps the strings for the next message; what a reader sees must
// not change: no field of an earlier message shows through.
TEST(Headers, AClearedSetIsEmptyAndEraseKeepsTheOrderOfTheRest) {
    Headers h;
    ASSERT_EQ(0, h.insert("A", "1"));
    ASSERT_EQ(0, h.insert("B", "a value longer than the small-string buffer"));
    ASSERT_EQ(0, h.insert("C", "3"));
    h.clear();
    EXPECT_TRUE(h.empty());
    EXPECT_EQ(0u, h.bytes());
    EXPECT_EQ(h.begin(), h.end());
    EXPECT_FALSE(h.has("B"));
    ASSERT_EQ(0, h.insert("D", "4"));
    ASSERT_EQ(0, h.append_valid("E", "5"));
    ASSERT_EQ(0, h.insert("d", "6", 1));
    ASSERT_EQ(0, h.insert("F", "7"));
    EXPECT_EQ(2u, h.erase("D"));
    ASSERT_EQ(2u, h.field_count());
    EXPECT_EQ("E", h.begin()->first);
    EXPECT_EQ("F", (h.begin() + 1)->first);
    EXPECT_EQ("", h["B"]);
    EXPECT_EQ(h.bytes(), std::string("E: 5\r\nF: 7\r\n").size());
    std::string out;
    h.serialize(&out);
    EXPECT_EQ("E: 5\r\nF: 7\r\n", out);
    ASSERT_EQ(0, h.content_length(1234567890123ULL));
    EXPECT_EQ(1234567890123ULL, h.content_length());
    ASSERT_EQ(0, h.content_length(0));
    EXPECT_EQ("0", h["Content-Length"]);
    EXPECT_EQ(1u, h.count("content-length"));
}

TEST(Headers, IteratesAsPhotonDoes) {
    Headers h;
    ASSERT_EQ(0, h.insert("A", "1"));
    ASSERT_EQ(0, h.insert("Bb", "22"));
    auto it = h.find("bb");
    ASSERT_NE(h.end(), it);
    EXPECT_EQ("Bb", it.first());  // Photon's iterator methods
    EXPECT_EQ("22", it.second());
    EXPECT_EQ("22", it->second);
    EXPECT_EQ("Bb", (*it).first);
    EXPECT_EQ(2, h.end() - h.begin());
    EXPECT_EQ("22", h.begin()[1].second);
    EXPECT_EQ(h.begin(), h.end() - 2);
    EXPECT_TRUE(h.begin() < h.end() && h.end() > h.begin() && h.begin() <= h.begin());
    EXPECT_EQ(h.find("bb"),
              std::find_if(h.begin(), h.end(), [](Headers::Field f) { return f.second == "22"; }));
    std::vector<Headers::Field> rev(std::make_reverse_iterator(h.end()),
                                    std::make_reverse_iterator(h.begin()));
    ASSERT_EQ(2u, rev.size());
    EXPECT_EQ("A", rev[1].first);
    std::string all;
    for (auto kv : h) all.append(kv.first).append("=").append(kv.second).append(";");
    EXPECT_EQ("A=1;Bb=22;", all);
}

TEST(Headers, CopiesItsOwnFieldsSafelyWhileGrowing) {
    Headers h;
    std::string big(300, 'v');
    ASSERT_EQ(0, h.insert("Src", big));
    // Each insert may move the storage the value points into.
    for (int i = 0; i < 40; i++) ASSERT_EQ(0, h.insert("Copy", h["Src"], 1)) << i;
    for (auto v : h.get_all("copy")) ASSERT_EQ(big, v);
    ASSERT_EQ(0, h.set("Src", h["Src"]));  // set() erases what its value points at
    EXPECT_EQ(big, h["src"]);
    Headers lone;  // its one field erased, the storage is reclaimed at once
    ASSERT_EQ(0, lone.insert("Src", big));
    ASSERT_EQ(0, lone.set("Src", lone["Src"]));
    EXPECT_EQ(big, lone["src"]);
    ASSERT_EQ(0, h.insert(h.begin().first(), "x", 1));  // a name from the set itself
    EXPECT_EQ(41u, h.count("Copy"));
}

TEST(Headers, KeepsEveryFieldRightThroughManyReplacements) {
    Headers h;
    ASSERT_EQ(0, h.insert("Keep-First", "first"));
    for (int i = 0; i < 5000; i++) {
        std::string v = std::to_string(i) + std::string(i % 97, 'x');
        ASSERT_EQ(0, h.set("Counter", v));
        ASSERT_EQ(0, h.content_length((uint64_t)i * 7));
        if (i % 3 == 0) {
            ASSERT_EQ(0, h.insert("Extra", v, 1));
        }
        if (i % 3 == 2) {
            ASSERT_EQ(1u, h.erase("extra"));
        }
        ASSERT_EQ(v, h["counter"]) << i;
        ASSERT_EQ((uint64_t)i * 7, h.content_length()) << i;
        ASSERT_EQ("first", h["keep-first"]) << i;
    }
    std::string out;
    h.serialize(&out);
    EXPECT_EQ(h.bytes(), out.size());
    EXPECT_EQ(0u, out.find("Keep-First: first\r\n"));
}
