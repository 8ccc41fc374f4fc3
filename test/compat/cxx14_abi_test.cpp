// Built as C++14 (test/CMakeLists.txt) against photon, which is C++17: a C++14 program calls
// photon's functions that take and return std::string_view (the class of
// <photon/common/string_view.h> under C++14 on libstdc++), so they must link and see the bytes
// passed. Failing to link here is the bug this guards against.
#include <photon/common/conststr.h>
#include <photon/common/estring.h>
#include <photon/common/string_view.h>
#include <photon/common/utility.h>
#include <photon/net/http/headers.h>
#include <photon/net/http/url.h>
#include <photon/net/http/verb.h>

#include <gtest/gtest.h>

#include <functional>
#include <sstream>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

using namespace photon::net::http;
using namespace std::literals;

#if __cplusplus >= 201703L
#error "this test must be built as C++14 (CXX_STANDARD 14 in test/CMakeLists.txt)"
#endif

TEST(Cxx14Abi, StringViewIsPassedInTwoRegistersLikeCxx17s) {
    static_assert(sizeof(std::string_view) == 2 * sizeof(void*), "{length, pointer}");
    static_assert(std::is_trivially_copyable<std::string_view>::value, "passed in registers");
    static_assert(std::is_same<std::string_view, std::basic_string_view<char>>::value, "");
}

TEST(Cxx14Abi, FreeFunctionsTakingStringViewsLink) {
    EXPECT_EQ(string_to_verb("PATCH"), Verb::PATCH);
    EXPECT_EQ(string_to_verb(std::string("GET")), Verb::GET);
    EXPECT_EQ(string_to_verb("get"sv), Verb::UNKNOWN);
    EXPECT_TRUE(is_token("X-Custom"));
    EXPECT_FALSE(is_token("bad token"));
    EXPECT_TRUE(iequals("Content-Length", "content-length"));
    EXPECT_EQ(url_unescape("a%20b"), "a b");
}

TEST(Cxx14Abi, MembersTakingAndReturningStringViewsLink) {
    URL url;
    ASSERT_TRUE(url.from_string("http://example.com:8080/p%20q?x=1"));
    EXPECT_EQ(url.host(), "example.com");
    EXPECT_EQ(url.port(), 8080);

    Headers h;
    ASSERT_EQ(h.insert("Accept", "a/b"), 0);
    ASSERT_EQ(h.insert("Accept", "c/d", 1), 0);
    std::string_view v = h.get("accept");
    EXPECT_EQ(v, "a/b");
    std::vector<std::string_view> all = h.get_all("ACCEPT");
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(all[1], "c/d");

    EXPECT_EQ(estring_view("Hello").icmp("hELLO"), 0);
    EXPECT_EQ(verbstr[Verb::DELETE], "DELETE");
}

TEST(Cxx14Abi, StringViewHasCxx17sInterfaceAndExperimentalExtras) {
    std::string s = "key=value";
    std::string_view sv = s;
    EXPECT_EQ(sv.substr(sv.find('=') + 1), "value");
    EXPECT_TRUE(sv == s && s == sv && sv < "kez");
    EXPECT_EQ(sv.to_string(), s);  // std::experimental's, as PhotonLibOS gave C++14 code
    EXPECT_EQ(std::string(sv), s);
    EXPECT_EQ(std::hash<std::string_view>()(sv), std::hash<std::string>()(s));
    std::unordered_map<std::string_view, int> m{{"a"sv, 1}};
    EXPECT_EQ(m.count("a"), 1u);
    std::ostringstream os;
    os << "[" << sv.substr(0, 3) << "]";
    EXPECT_EQ(os.str(), "[key]");
    const size_t& npos = std::string_view::npos;  // odr-used: has a definition
    EXPECT_EQ(npos, size_t(-1));
}

namespace {
DEFINE_ENUM_STR(Shade, shade_names, light, dark);
}

// Static constexpr arrays of class templates indexed at run time are odr-used: before C++17
// they need the out-of-line definitions conststr.h gives them, or this fails to link.
TEST(Cxx14Abi, ConstStringsIndexedAtRunTimeLink) {
    volatile int i = 1;
    EXPECT_EQ(shade_names[Shade(i)], "dark");
    auto t = TSTRING("abc");
    const char* p = t.chars;
    EXPECT_EQ(std::string(p), "abc");
}

TEST(Cxx14Abi, DeferRunsOnceWithoutCxx17Elision) {
    int n = 0;
    { DEFER(n++); }
    EXPECT_EQ(n, 1);
}
