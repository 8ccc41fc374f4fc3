// URL parsing, percent-encoding and verbs.
#include <gtest/gtest.h>

#include <random>

#include <photon/net/http/url.h>
#include <photon/net/http/verb.h>

using namespace photon::net::http;

TEST(Url, SplitsEveryPart) {
    URL u("HTTP://example.com:8080/a/b?x=1&y=%20#frag");
    ASSERT_FALSE(u.empty());
    EXPECT_EQ("http", u.scheme());
    EXPECT_FALSE(u.secure());
    EXPECT_EQ("example.com", u.host());
    EXPECT_EQ("example.com:8080", u.host_port());
    EXPECT_EQ(8080, u.port());
    EXPECT_EQ("/a/b", u.path());
    EXPECT_EQ("x=1&y=%20", u.query());
    EXPECT_EQ("frag", u.fragment());
    EXPECT_EQ("/a/b?x=1&y=%20", u.target());
}

TEST(Url, DefaultsPortAndPath) {
    URL u("https://example.com");
    EXPECT_TRUE(u.secure());
    EXPECT_EQ(443, u.port());
    EXPECT_EQ("/", u.path());
    EXPECT_EQ("/", u.target());
    EXPECT_EQ("", u.query());
    URL q("http://h?k=v");
    EXPECT_EQ(80, q.port());
    EXPECT_EQ("/?k=v", q.target());
    EXPECT_EQ("k=v", q.query());
}

TEST(Url, ParsesIpv6Literals) {
    URL u("http://[::1]:81/p");
    ASSERT_FALSE(u.empty());
    EXPECT_EQ("::1", u.host());
    EXPECT_EQ("[::1]:81", u.host_port());
    EXPECT_EQ(81, u.port());
    URL v("http://[2001:db8::a]/");
    EXPECT_EQ("2001:db8::a", v.host());
    EXPECT_EQ(80, v.port());
}

TEST(Url, RejectsMalformedWithEinval) {
    for (const char* bad : {"",
                            "ftp://h/",
                            "http://",
                            "http:///p",
                            "http://user:pw@/",
                            "http://a@b@c/",
                            "http://us er@h/",
                            "http://h:0/",
                            "http://h:65536/",
                            "http://h:8x/",
                            "h:/",
                            "http://[::1/",
                            "http://[zz::1]/",
                            "http://[::1]x/",
                            "http://h/a b",
                            "http://h/%zz",
                            "http://h/%4",
                            "http://h/\x7f",
                            "http://h/\xc3\xa9",
                            "http://h\r\n/"}) {
        URL u("http://before/");
        errno = 0;
        EXPECT_FALSE(u.from_string(bad)) << bad;
        EXPECT_EQ(EINVAL, errno) << bad;
        EXPECT_TRUE(u.empty());
        EXPECT_EQ("", u.host());
    }
}

TEST(Url, EscapeKeepsOnlyUnreserved) {
    EXPECT_EQ("a-b_c.d~e%20%2F%3F%25", url_escape("a-b_c.d~e /?%"));
    EXPECT_EQ("a/b%20c", url_escape("a/b c", false));
    EXPECT_EQ("%00%FF", url_escape(std::string_view("\0\xff", 2)));
}

TEST(Url, EscapeUnescapeRoundTripsAllBytes) {
    std::mt19937 rng(7);
    for (int round = 0; round < 200; round++) {
        std::string s(rng() % 64, 0);
        for (auto& c : s) c = (char)rng();
        std::string back;
        ASSERT_EQ(0, url_unescape(url_escape(s), &back));
        EXPECT_EQ(s, back);
    }
}

TEST(Url, UnescapeRejectsBadEscapes) {
    std::string out;
    for (const char* bad : {"%", "%4", "%G0", "%0G", "a%2", "%%41"}) {
        errno = 0;
        EXPECT_EQ(-1, url_unescape(bad, &out)) << bad;
        EXPECT_EQ(EINVAL, errno);
        EXPECT_EQ("", url_unescape(bad));
    }
    EXPECT_EQ("A+b c", url_unescape("%41+b%20c"));
    EXPECT_EQ("\xab", url_unescape("%aB"));
}

TEST(Verb, MapsNamesBothWays) {
    EXPECT_EQ(Verb::GET, string_to_verb("GET"));
    EXPECT_EQ(Verb::MSEARCH, string_to_verb("M-SEARCH"));
    EXPECT_EQ(Verb::MOV, string_to_verb("MOVE"));
    EXPECT_EQ(Verb::UNKNOWN, string_to_verb("get"));  // methods are case-sensitive
    EXPECT_EQ(Verb::UNKNOWN, string_to_verb("BREW"));
    for (int v = 1; v <= (int)Verb::UNLINK; v++) EXPECT_EQ((Verb)v, string_to_verb(verbstr[v]));
}
