// The static-file handler's RFC 9110 helpers (net/http/rfc9110.h): path
// decoding, If-None-Match lists, Range and If-Range.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "../../net/http/rfc9110.h"

using namespace photon::net::http;

namespace {

// decode_path's result as a string, or "<status>" when it refuses.
std::string decoded(std::string_view in, size_t cap = 64, bool* dir = nullptr) {
    char out[256];
    size_t len = 0;
    bool d = false;
    int r = decode_path(in, out, cap, &len, &d);
    if (dir) *dir = d;
    return r ? "<" + std::to_string(r) + ">" : std::string(out, len);
}

TEST(Rfc9110DecodePath, DropsEmptyAndDotSegmentsAndStopsAtTheQuery) {
    EXPECT_EQ("/", decoded(""));
    EXPECT_EQ("/", decoded("/"));
    EXPECT_EQ("/a/b", decoded("//a/./b/"));
    EXPECT_EQ("/a/c", decoded("/a/b/../c?x=/../.."));
    EXPECT_EQ("/", decoded("/a/.."));
}

TEST(Rfc9110DecodePath, DecodesEscapesAndTreatsAnEncodedSlashAsASeparator) {
    EXPECT_EQ("/a b/c", decoded("/a%20b%2Fc"));
    EXPECT_EQ("/%", decoded("/%25"));      // decoded once: "%25" is a literal '%'
    EXPECT_EQ("/", decoded("/a/%2E%2E"));  // an encoded ".." is still ".."
}

TEST(Rfc9110DecodePath, RefusesBadEscapesNulsAndClimbingAboveTheRoot) {
    EXPECT_EQ("<400>", decoded("/a%2"));
    EXPECT_EQ("<400>", decoded("/a%zz"));
    EXPECT_EQ("<400>", decoded("/a%00b"));
    EXPECT_EQ("<400>", decoded("/.."));
    EXPECT_EQ("<400>", decoded("/a/../../etc/passwd"));
    EXPECT_EQ("<400>", decoded("/%2e%2E/x"));
}

TEST(Rfc9110DecodePath, AnswersNotFoundForAPathOverItsBuffer) {
    EXPECT_EQ("/abcdef", decoded("/abcdef", 9));
    EXPECT_EQ("<404>", decoded("/abcdefgh", 9));
}

TEST(Rfc9110DecodePath, SaysWhetherThePathEndsLikeADirectory) {
    bool dir = false;
    decoded("/a/b", 64, &dir);
    EXPECT_FALSE(dir);
    for (const char* d : {"/a/", "/a/.", "/a/b/..", ""}) {
        decoded(d, 64, &dir);
        EXPECT_TRUE(dir) << d;
    }
}

TEST(Rfc9110Etag, ListMatchesStarOrAWeaklyEqualTag) {
    EXPECT_TRUE(etag_list_matches("*", "\"x\""));
    EXPECT_TRUE(etag_list_matches("\"a\", W/\"x\"", "\"x\""));
    EXPECT_TRUE(etag_list_matches("\"a,b\",\"x\"", "\"x\""));  // a comma inside a tag
    EXPECT_FALSE(etag_list_matches("\"a,b\"", "\"b\""));
    EXPECT_FALSE(etag_list_matches("x, \"x\"", "\"x\""));  // malformed: no match
    EXPECT_FALSE(etag_list_matches("\"x", "\"x\""));
    EXPECT_FALSE(etag_list_matches("", "\"x\""));
}

TEST(Rfc9110Number, ParsesDigitsOnlyAndSaturates) {
    uint64_t v = 0;
    EXPECT_TRUE(parse_u64("0", &v));
    EXPECT_EQ(0u, v);
    EXPECT_TRUE(parse_u64("18446744073709551615", &v));
    EXPECT_EQ(UINT64_MAX, v);
    EXPECT_TRUE(parse_u64("99999999999999999999999", &v));
    EXPECT_EQ(UINT64_MAX, v);
    EXPECT_FALSE(parse_u64("", &v));
    EXPECT_FALSE(parse_u64("+1", &v));
    EXPECT_FALSE(parse_u64("1 ", &v));
}

struct range {
    range_result r;
    uint64_t first = 0, last = 0;
};

range ranged(std::string_view v, uint64_t size) {
    range x;
    x.r = parse_range(v, size, &x.first, &x.last);
    return x;
}

TEST(Rfc9110Range, OneRangeIsServedClampedToTheRepresentation) {
    auto x = ranged("bytes=0-99", 1000);
    EXPECT_EQ(range_result::partial, x.r);
    EXPECT_EQ(0u, x.first);
    EXPECT_EQ(99u, x.last);
    x = ranged(" BYTES=990-2000 ", 1000);  // unit is case-insensitive; last clamped
    EXPECT_EQ(range_result::partial, x.r);
    EXPECT_EQ(990u, x.first);
    EXPECT_EQ(999u, x.last);
    x = ranged("bytes=10-", 1000);
    EXPECT_EQ(range_result::partial, x.r);
    EXPECT_EQ(999u, x.last);
    x = ranged("bytes=, 5-5 ,", 1000);  // empty list elements are allowed
    EXPECT_EQ(range_result::partial, x.r);
    EXPECT_EQ(5u, x.first);
}

TEST(Rfc9110Range, ASuffixRangeTakesTheLastBytes) {
    auto x = ranged("bytes=-100", 1000);
    EXPECT_EQ(range_result::partial, x.r);
    EXPECT_EQ(900u, x.first);
    EXPECT_EQ(999u, x.last);
    x = ranged("bytes=-5000", 1000);  // more than there is: all of it
    EXPECT_EQ(0u, x.first);
    EXPECT_EQ(range_result::unsatisfiable, ranged("bytes=-0", 1000).r);
    EXPECT_EQ(range_result::unsatisfiable, ranged("bytes=-1", 0).r);
}

TEST(Rfc9110Range, PastTheEndIsUnsatisfiableAndTheRestIsIgnored) {
    EXPECT_EQ(range_result::unsatisfiable, ranged("bytes=1000-", 1000).r);
    EXPECT_EQ(range_result::unsatisfiable, ranged("bytes=0-0", 0).r);
    EXPECT_EQ(range_result::unsatisfiable, ranged("bytes=99999999999999999999-", 1000).r);
    for (const char* v : {"", "bytes", "bytes=", "items=0-1", "bytes=5", "bytes=9-1",
                          "bytes=0-1,3-4", "bytes=a-b", "bytes=1-2x"}) {
        EXPECT_EQ(range_result::ignore, ranged(v, 1000).r) << v;
    }
}

TEST(Rfc9110IfRange, HoldsForOurStrongTagOrExactDateOnly) {
    const time_t mtime = 784887151;  // Tue, 15 Nov 1994 08:12:31 GMT
    EXPECT_TRUE(if_range_holds("\"v1\"", "\"v1\"", mtime));
    EXPECT_FALSE(if_range_holds("\"v2\"", "\"v1\"", mtime));
    EXPECT_FALSE(if_range_holds("W/\"v1\"", "\"v1\"", mtime));  // weak: never
    EXPECT_TRUE(if_range_holds(" Tue, 15 Nov 1994 08:12:31 GMT ", "\"v1\"", mtime));
    EXPECT_FALSE(if_range_holds("Tue, 15 Nov 1994 08:12:32 GMT", "\"v1\"", mtime));
    EXPECT_FALSE(if_range_holds("yesterday", "\"v1\"", mtime));
}

TEST(Rfc9110Ows, TrimsSpacesAndTabsOnly) {
    EXPECT_EQ("a \t b", trim_ows(" \t a \t b\t "));
    EXPECT_EQ("", trim_ows(" \t"));
    EXPECT_EQ("\r", trim_ows("\r"));
}

}  // namespace
