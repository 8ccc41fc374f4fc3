// photon/common/estring.h: charset search and trim, lazy split, case folding and comparison,
// number parsing (overflow and garbage fail), snprintf/appends, rstring_view.
#include <photon/common/estring.h>

#include <gtest/gtest.h>

#include <clocale>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

namespace {

std::vector<std::string> parts_of(const estring_view::_split<charset>& sp) {
    return std::vector<std::string>(sp.begin(), sp.end());
}

TEST(Charset, HoldsBytesAboveAsciiAndCanBeEdited) {
    charset cs(std::string_view("\xff,"));
    EXPECT_TRUE(cs.test('\xff'));
    EXPECT_TRUE(cs.test(','));
    EXPECT_FALSE(cs.test('a'));
    EXPECT_FALSE(cs.test('\x7f'));
    cs.set('a');
    EXPECT_TRUE(cs.test('a'));
    cs.set('a', false);
    EXPECT_FALSE(cs.test('a'));
    EXPECT_EQ(2u, cs.count());
    EXPECT_EQ(0u, charset(std::string_view()).count());
    EXPECT_TRUE(charset('\0').test('\0'));
}

TEST(EstringView, FindsByCharsetFromBothEnds) {
    estring_view s = "  ab, c;";
    charset sep(",; ");
    EXPECT_EQ(2u, s.find_first_not_of(sep));
    EXPECT_EQ(0u, s.find_first_of(sep));
    EXPECT_EQ(7u, s.find_last_of(sep));
    EXPECT_EQ(6u, s.find_last_not_of(sep));
    EXPECT_EQ(estring_view::npos, estring_view("abc").find_first_of(sep));
    EXPECT_EQ(estring_view::npos, estring_view(",;").find_last_not_of(sep));
    EXPECT_EQ(estring_view::npos, estring_view().find_first_of(sep));
    EXPECT_EQ(estring_view::npos, estring_view().find_last_of(sep));
    // std::string_view's own overloads are still reachable
    EXPECT_EQ(3u, s.find_first_of("b"));
    EXPECT_EQ(4u, s.find_first_of(','));
}

TEST(EstringView, TrimsSpacesOrAGivenSetAndMayLeaveNothing) {
    estring as = "   \tasdf中文  \t\r\n";
    EXPECT_EQ("asdf中文", as.trim());
    EXPECT_EQ("x", estring_view("x").trim());
    EXPECT_TRUE(estring_view(" \t\r\n ").trim().empty());
    EXPECT_TRUE(estring_view().trim().empty());
    EXPECT_EQ("b", estring_view("aaba").trim(charset('a')));
    EXPECT_EQ("a b", estring_view("--a b--").trim(charset("-")));
}

TEST(EstringView, ComparesPrefixesSuffixesAndCharsWithOrWithoutCase) {
    estring_view s1 = "sdfsf234sdfji2ljk34";
    EXPECT_TRUE(s1.starts_with("sdfsf"));
    EXPECT_FALSE(s1.starts_with("SDFSF"));
    EXPECT_TRUE(s1.istarts_with("SDFSF"));
    EXPECT_FALSE(s1.istarts_with("sdfsf3"));
    EXPECT_FALSE(estring_view("sdf").istarts_with(s1));
    EXPECT_TRUE(s1.ends_with("jk34"));
    EXPECT_TRUE(s1.iends_with("LJK34"));
    EXPECT_FALSE(s1.iends_with("x34"));
    EXPECT_TRUE(s1.starts_with(""));
    EXPECT_TRUE(estring_view().ends_with(""));
    EXPECT_FALSE(estring_view().starts_with("a"));
    EXPECT_EQ(0, estring_view("HeLLo").icmp("hello"));
    EXPECT_LT(estring_view("abc").icmp("ABD"), 0);
    EXPECT_TRUE(estring_view("x") == 'x');
    EXPECT_TRUE(estring_view("xx") != 'x');
    EXPECT_TRUE(estring_view() != 'x');
}

TEST(EstringView, ChecksAllDigitsOnEveryCharacter) {
    EXPECT_TRUE(estring_view("0123456789").all_digits());
    EXPECT_TRUE(estring(1000, '9').all_digits());  // too big for a number, still all digits
    EXPECT_FALSE(estring_view("12a").all_digits());
    EXPECT_FALSE(estring_view("a12").all_digits());
    EXPECT_FALSE(estring_view("-1").all_digits());
    EXPECT_FALSE(estring_view("").all_digits());
    EXPECT_FALSE(estring_view().all_digits());
}

TEST(EstringView, ExtractsACStringWithoutReadingPastTheView) {
    // An exactly-sized heap buffer: reading data()[size()] would be a heap overflow.
    char* raw = static_cast<char*>(malloc(5));
    memcpy(raw, "hello", 5);
    estring_view v(raw, 5);
    {
        auto c = v.extract_c_str();
        EXPECT_STREQ("hello", c);
        auto c2 = v.substr(1, 3).extract_c_str<2>();  // longer than N: on the heap
        EXPECT_STREQ("ell", c2);
    }
    free(raw);
    EXPECT_STREQ("", estring_view().extract_c_str());
    std::string big(100000, 'q');
    auto c = estring_view(big).extract_c_str<16>();
    EXPECT_EQ(big.size(), strlen(c));
}

TEST(EstringView, ConvertsToStdStringAndSubstrKeepsItsType) {
    estring_view v = "abcdef";
    std::string s = v;
    EXPECT_EQ("abcdef", s);
    EXPECT_EQ("cd", v.substr(2, 2).to_string());
    estring_view sub = v.substr(4);
    EXPECT_EQ("ef", sub);
    EXPECT_TRUE(v.substr(6).empty());
}

TEST(Split, MergesRunsOfSeparatorsByDefault) {
    estring s = "alskdjf,;;,q3r1234;poiu";
    charset cs(";,");
    auto sp = s.split(cs);
    auto it = sp.begin();
    EXPECT_EQ("alskdjf", *it);
    EXPECT_EQ("q3r1234;poiu", it.remainder());
    EXPECT_EQ(7u, it->size());
    EXPECT_EQ((std::vector<std::string>{"alskdjf", "q3r1234", "poiu"}),
              std::vector<std::string>(sp.begin(), sp.end()));
    EXPECT_EQ(3, std::distance(sp.begin(), sp.end()));
    EXPECT_EQ("alskdjf", sp.front());
    EXPECT_EQ("poiu", sp[2]);
    EXPECT_TRUE(sp[3].empty());
    EXPECT_TRUE(sp[1000].empty());
}

TEST(Split, WithoutMergingYieldsEmptyPartsBetweenSeparators) {
    estring s = "alskdjf,;;,q3r1234;poiu";
    auto sp = s.split(charset(";,"), false);
    auto it = sp.begin();
    EXPECT_EQ(";;,q3r1234;poiu", it.remainder());
    ++it;
    EXPECT_EQ("", *it);
    EXPECT_EQ(";,q3r1234;poiu", it.remainder());
    it++;
    it++;
    EXPECT_EQ("", *it);
    EXPECT_EQ("q3r1234;poiu", it.remainder());
    ++it;
    EXPECT_EQ("q3r1234", *it);
    EXPECT_EQ((std::vector<std::string>{"alskdjf", "", "", "", "q3r1234", "poiu"}), parts_of(sp));
}

TEST(Split, HandlesSeparatorsAtTheEndsAndEmptyInput) {
    using V = std::vector<std::string>;
    EXPECT_EQ((V{"a", "b"}), parts_of(estring_view(",a,,b,").split(",")));
    // A leading separator opens an empty part; a trailing one opens none.
    EXPECT_EQ((V{"", "a", "", "b"}), parts_of(estring_view(",a,,b,").split(",", false)));
    EXPECT_EQ((V{"", ""}), parts_of(estring_view(",,").split(",", false)));
    EXPECT_EQ((V{""}), parts_of(estring_view(",").split(",", false)));
    EXPECT_EQ(V{}, parts_of(estring_view(",,,").split(",")));
    EXPECT_EQ(V{}, parts_of(estring_view("").split(",")));
    EXPECT_EQ(V{}, parts_of(estring_view().split(",", false)));
    EXPECT_EQ((V{"abc"}), parts_of(estring_view("abc").split(",")));
    auto sp = estring_view("a,b").split(',');
    auto last = std::next(sp.begin());
    EXPECT_EQ("b", *last);
    EXPECT_TRUE(last.remainder().empty());  // after the last part: empty, not garbage
    EXPECT_EQ(sp.end(), std::next(last));
    auto e = sp.end();
    EXPECT_EQ(sp.end(), ++e);  // incrementing the end stays at the end
}

TEST(Split, AcceptsEverySeparatorForm) {
    using V = std::vector<std::string>;
    estring_view s = "a-b+c";
    std::vector<std::string> got;
    for (auto p : s.split('-')) got.push_back(std::string(p));
    EXPECT_EQ((V{"a", "b+c"}), got);
    const charset seps("-+");
    got.clear();
    for (auto p : s.split(seps)) got.push_back(std::string(p));
    EXPECT_EQ((V{"a", "b", "c"}), got);
    const std::string str_seps = "+-";  // a std::string's characters form a set
    got.clear();
    for (auto p : s.split(str_seps)) got.push_back(std::string(p));
    EXPECT_EQ((V{"a", "b", "c"}), got);
    got.clear();
    for (auto p : s.split(std::string("+"))) got.push_back(std::string(p));
    EXPECT_EQ((V{"a-b", "c"}), got);
    got.clear();
    estring xy = "x y";
    for (auto p : xy.split(charset(' '))) got.push_back(std::string(p));
    EXPECT_EQ((V{"x", "y"}), got);
}

TEST(Split, EstringSplitKeepsATemporaryCharsetAlive) {
    estring s = "k1=v1;k2=v2";
    std::vector<std::string> got;
    for (auto p : s.split(charset(";="))) got.push_back(std::string(p));
    EXPECT_EQ((std::vector<std::string>{"k1", "v1", "k2", "v2"}), got);
}

TEST(Split, SplitsLines) {
    using V = std::vector<std::string>;
    estring s = "a\r\nb\n\nc\n";
    EXPECT_EQ((V{"a", "b", "c"}), parts_of(s.split_lines()));
    EXPECT_EQ((V{"a", "", "b", "", "c"}), parts_of(s.split_lines(false)));
}

TEST(Split, WalksAHugeInputInOnePass) {
    estring s;
    for (int i = 0; i < 200000; i++) s.appends(i % 1000, ',');
    size_t n = 0;
    uint64_t sum = 0;
    for (auto p : s.split(',')) {
        n++;
        sum += p.to_uint64();
    }
    EXPECT_EQ(200000u, n);
    EXPECT_EQ(200u * (999u * 1000u / 2), sum);
}

TEST(ParseUint64, ReadsTheLeadingDigits) {
    uint64_t v = 0;
    EXPECT_EQ(6u, estring_view("234423").to_uint64_check(&v));
    EXPECT_EQ(234423u, v);
    EXPECT_EQ(234423u, estring_view("234423").to_uint64());
    EXPECT_EQ(7u, estring_view("1234567jkl").to_uint64_check(&v));
    EXPECT_EQ(1234567u, v);
    EXPECT_EQ(1u, estring_view("0").to_uint64_check(&v));
    EXPECT_EQ(0u, v);
    EXPECT_EQ(UINT64_MAX, estring_view("18446744073709551615").to_uint64(7));
    EXPECT_EQ(1u, estring_view("0000000000000000000000000000001").to_uint64());
    std::string with_nul(
        "12\0"
        "34",
        5);
    EXPECT_EQ(2u, estring_view(with_nul).to_uint64_check());
}

TEST(ParseUint64, FailsOnGarbageAndOverflowAndLeavesTheOutputAlone) {
    uint64_t v = 77;
    for (const char* bad : {"", "abc", " 1", "+1", "-1", "18446744073709551616",
                            "99999999999999999999999", "184467440737095516150"}) {
        EXPECT_EQ(0u, estring_view(bad).to_uint64_check(&v)) << bad;
        EXPECT_EQ(77u, v) << bad;
        EXPECT_EQ(32u, estring_view(bad).to_uint64(32)) << bad;
    }
    EXPECT_EQ(0u, estring_view().to_uint64_check(&v));
    EXPECT_EQ(0u, estring(1 << 20, '9').view().to_uint64_check(&v));  // huge: overflows early
    EXPECT_EQ(size_t(1) << 20, estring(1 << 20, '0').view().to_uint64_check(&v));  // huge but zero
    EXPECT_EQ(0u, v);
}

TEST(ParseInt64, HandlesTheSignAndBothLimits) {
    int64_t v = 0;
    EXPECT_EQ(-234423, estring_view("-234423").to_int64());
    EXPECT_EQ(7u, estring_view("-234423").to_int64_check());
    EXPECT_EQ(INT64_MAX, estring_view("9223372036854775807").to_int64());
    EXPECT_EQ(20u, estring_view("-9223372036854775808").to_int64_check(&v));
    EXPECT_EQ(INT64_MIN, v);
    EXPECT_EQ(2u, estring_view("-0").to_int64_check(&v));
    EXPECT_EQ(0, v);
    EXPECT_EQ(3u, estring_view("-12ab").to_int64_check(&v));
    EXPECT_EQ(-12, v);
    v = 55;
    for (const char* bad : {"", "-", "--1", "+5", "x1", "9223372036854775808",
                            "-9223372036854775809", "-99999999999999999999"}) {
        EXPECT_EQ(0u, estring_view(bad).to_int64_check(&v)) << bad;
        EXPECT_EQ(55, v) << bad;
        EXPECT_EQ(-3, estring_view(bad).to_int64(-3)) << bad;
    }
}

TEST(ParseHex, ReadsEitherCaseAndFailsPastSixtyFourBits) {
    uint64_t v = 0;
    EXPECT_EQ(0x1u, estring_view("1").hex_to_uint64());
    EXPECT_EQ(0x1a2b3d4e5fu, estring_view("1a2b3d4e5f").hex_to_uint64());
    EXPECT_EQ(0xABCDEFu, estring_view("AbCdEf").hex_to_uint64());
    EXPECT_EQ(10u, estring_view("1a2b3d4e5fq").hex_to_uint64_check());
    EXPECT_EQ(UINT64_MAX, estring_view("ffffffffffffffff").hex_to_uint64());
    EXPECT_EQ(0xffu, estring_view("00000000000000000000ff").hex_to_uint64());
    EXPECT_EQ(1u, estring_view("0x1f").hex_to_uint64_check(&v));  // no prefix support
    EXPECT_EQ(0u, v);
    v = 9;
    EXPECT_EQ(0u, estring_view("10000000000000000").hex_to_uint64_check(&v));
    EXPECT_EQ(0u, estring_view("g").hex_to_uint64_check(&v));
    EXPECT_EQ(0u, estring_view("").hex_to_uint64_check(&v));
    EXPECT_EQ(9u, v);
    EXPECT_EQ(5u, estring_view("zz").hex_to_uint64(5));
}

TEST(ParseDouble, ParsesTheLongestPrefixOfTheWholeView) {
    double v = 0;
    EXPECT_NEAR(-3.14, estring_view("-3.14").to_double(), 1e-12);
    EXPECT_DOUBLE_EQ(1e10, estring_view("1e10").to_double());
    EXPECT_EQ(7u, estring_view("-3.14e0asdf").to_double_check());
    // Longer than Photon's 32-character window.
    std::string tiny = "0." + std::string(39, '0') + "1";
    EXPECT_EQ(tiny.size(), estring_view(tiny).to_double_check(&v));
    EXPECT_DOUBLE_EQ(1e-40, v);
    std::string huge_zero(1 << 20, '0');
    EXPECT_EQ(huge_zero.size(), estring_view(huge_zero).to_double_check(&v));
    EXPECT_EQ(0.0, v);
    EXPECT_TRUE(std::isinf(estring_view("inf").to_double()));  // spelled out: not an overflow
    EXPECT_EQ(0.0, estring_view("1e-400").to_double(5));       // underflow rounds to zero
    // Only the view counts, not what follows it in memory.
    EXPECT_EQ(1.5, estring_view("1.53", 3).to_double());
}

TEST(ParseDouble, FailsOnGarbageAndOverflowAndKeepsErrno) {
    double v = 42;
    errno = EBADF;
    for (const char* bad : {"", "abc", ".", "-", "e5", "1e400", "-1e400"}) {
        EXPECT_EQ(0u, estring_view(bad).to_double_check(&v)) << bad;
        EXPECT_EQ(42, v) << bad;
        EXPECT_TRUE(std::isnan(estring_view(bad).to_double())) << bad;
    }
    EXPECT_EQ(0u, estring_view().to_double_check(&v));
    EXPECT_EQ(EBADF, errno);
    EXPECT_EQ(0u, estring_view("1" + std::string(400, '0')).to_double_check(&v));
}

TEST(ParseDouble, IgnoresTheProcessLocale) {
    const char* comma_locales[] = {"de_DE.UTF-8", "fr_FR.UTF-8", "de_DE", "fr_FR"};
    const char* set = nullptr;
    for (auto l : comma_locales)
        if ((set = setlocale(LC_NUMERIC, l))) break;
    if (!set) GTEST_SKIP() << "no locale with a decimal comma installed";
    double v = estring_view("3.5").to_double();
    setlocale(LC_NUMERIC, "C");
    EXPECT_EQ(3.5, v);
}

TEST(Estring, SnprintfReturnsTheWholeOutputWhateverN) {
    EXPECT_EQ("234", estring::snprintf("%d%d%d", 2, 3, 4));
    EXPECT_EQ("1234567", estring::snprintf<8>("%s", "1234567"));    // fits with its NUL
    EXPECT_EQ("12345678", estring::snprintf<8>("%s", "12345678"));  // Photon kept the NUL
    auto s = estring::snprintf<8>("%s", "123456789");
    EXPECT_EQ(9u, s.size());
    EXPECT_EQ("123456789", s);
    std::string big(10000, 'z');
    auto b = estring::snprintf("<%s>", big.c_str());
    EXPECT_EQ(big.size() + 2, b.size());
    EXPECT_EQ('>', b.back());
    EXPECT_EQ("", estring::snprintf("%s", ""));
}

enum class Color : int8_t { red = -2, blue = 7 };

TEST(Estring, AppendsFormatsEachKindOfPart) {
    estring s;
    const char* null_cstr = nullptr;
    std::string str = "str";
    s.appends("a", 1, -2, 'c', str, estring_view("ev"), null_cstr, true, Color::red, 0.1,
              uint8_t(200), INT64_MIN, UINT64_MAX);
    EXPECT_EQ("a1-2cstrev1-20.1200-922337203685477580818446744073709551615", s);
    EXPECT_EQ("x", estring().appends("x"));
    EXPECT_EQ("", estring().appends());
    EXPECT_EQ("1.5e+300", estring().appends(1.5e300));
}

TEST(Estring, AppendsConditionalAndNestedLists) {
    auto q = [](bool has_query) {
        return estring().appends("/path", estring::make_conditional_cat_list(has_query, "?", 7),
                                 "#");
    };
    EXPECT_EQ("/path?7#", q(true));
    EXPECT_EQ("/path#", q(false));
    auto pick = [](bool c) {
        return estring().appends(estring::make_conditional_cat_list2(
            c, estring::make_cat_list("yes", 1), estring::make_cat_list("no", 2)));
    };
    EXPECT_EQ("yes1", pick(true));
    EXPECT_EQ("no2", pick(false));
    auto inner = estring::make_cat_list("[", -1, "]");  // lists hold their parts by value
    EXPECT_EQ("<[-1]>", estring().appends("<", inner, ">"));
}

TEST(Estring, AppendsMayTakeViewsOfItself) {
    estring s = "abc";
    s.appends(s.view(), "-", s);
    EXPECT_EQ("abcabc-abc", s);
    estring t(100, 'x');
    t.shrink_to_fit();
    t.appends(std::string(1000, 'y'), t.view());  // the first part forces a reallocation
    EXPECT_EQ(1200u, t.size());
    EXPECT_EQ(estring(100, 'x'), t.substr(1100));
}

TEST(Estring, AppendPrintsIntegersAndCharsAndStaysAnEstring) {
    estring s;
    s.append(-5).append('c').append(0ULL).append(uint64_t(42)).append(std::string("s"));
    s.append("lit").append("abcdef", 2).append(3, 'x').append(std::string_view("v"));
    EXPECT_EQ("-5c042slitabxxxv", s);
    estring t;
    t += 'a';
    t += "bc";
    t += std::string_view("d");
    t += std::string("e");
    EXPECT_EQ("abcde", t);
    estring u = t + "f";
    estring w = "z" + t;
    estring x = t + estring_view("g");
    EXPECT_EQ("abcdef", u);
    EXPECT_EQ("zabcde", w);
    EXPECT_EQ("abcdeg", x);
    static_assert(std::is_same<estring, decltype(t + "f")>::value, "");
}

TEST(Estring, ViewsTrimsAndHashesLikeItsString) {
    estring s = "  12  ";
    EXPECT_EQ("12", s.trim());
    EXPECT_TRUE(s.trim().all_digits());
    EXPECT_FALSE(s.all_digits());
    EXPECT_TRUE(s.starts_with("  1"));
    EXPECT_TRUE(s.ends_with("2  "));
    EXPECT_TRUE(estring("q") == 'q');
    EXPECT_EQ(s.data(), s.view().data());
    EXPECT_EQ(std::hash<std::string_view>()("abc"), std::hash<estring_view>()("abc"));
    EXPECT_EQ(std::hash<std::string>()("abc"), std::hash<estring>()(estring("abc")));
    std::unordered_set<estring> set{"a", "b"};
    EXPECT_EQ(1u, set.count("a"));
}

TEST(CaseFolding, MatchesTheCLocaleForEveryByteAndEveryLength) {
    std::string all;
    for (int c = 0; c < 256; c++) all.push_back((char)c);
    all += "XYZxyzYZYZYZYZ";  // 'Y' and 'Z' inside 8-byte blocks: Photon's SWAR missed them
    std::string lower = all, upper = all;
    for (auto& c : lower)
        if (c >= 'A' && c <= 'Z') c += 32;
    for (auto& c : upper)
        if (c >= 'a' && c <= 'z') c -= 32;
    for (size_t len = 1; len <= all.size(); len += 7) {
        std::string_view in(all.data() + all.size() - len, len);
        EXPECT_EQ(lower.substr(all.size() - len), photon::tolower_fast(in)) << len;
        EXPECT_EQ(upper.substr(all.size() - len), photon::toupper_fast(in)) << len;
    }
    EXPECT_EQ("hello world", estring_view("HeLLo WORLD").tolower_fast());  // Photon upper-cased
    EXPECT_EQ("HELLO WORLD", estring_view("HeLLo world").toupper_fast());
}

TEST(CaseFolding, ConvertsInPlaceAndHandlesEmptyInput) {
    char buf[] = "MiXeD CaSe StRiNg!";
    photon::tolower_fast(buf, buf, strlen(buf));
    EXPECT_STREQ("mixed case string!", buf);
    photon::toupper_fast(buf, buf, 0);  // 0: strlen
    EXPECT_STREQ("MIXED CASE STRING!", buf);
    char out[4] = "zzz";
    photon::tolower_fast(out, std::string_view("ABC").substr(3));  // empty, not a C string
    EXPECT_EQ('\0', out[0]);
    EXPECT_EQ('z', out[1]);
    photon::toupper_fast(out, std::string_view());
    EXPECT_EQ("", photon::tolower_fast(std::string_view()));
    EXPECT_EQ('a', photon::tolower_fast('A'));
    EXPECT_EQ('[', photon::tolower_fast('['));
    EXPECT_EQ('\xc1', photon::tolower_fast('\xc1'));
}

int sign(int x) { return (x > 0) - (x < 0); }

int reference_icmp(std::string_view a, std::string_view b) {
    for (size_t i = 0; i < a.size() && i < b.size(); i++) {
        int ca = (unsigned char)photon::tolower_fast(a[i]);
        int cb = (unsigned char)photon::tolower_fast(b[i]);
        if (ca != cb) return ca - cb;
    }
    return (a.size() > b.size()) - (a.size() < b.size());
}

TEST(Stricmp, OrdersLikeABytewiseCaseFoldedCompare) {
    EXPECT_EQ(0, photon::stricmp_fast("", ""));
    EXPECT_EQ(0, photon::stricmp_fast("Content-Length", "content-length"));
    EXPECT_LT(photon::stricmp_fast("abc", "abcd"), 0);
    EXPECT_GT(photon::stricmp_fast("abcd", "ABC"), 0);
    EXPECT_GT(photon::stricmp_fast("\xe0", "a"), 0);  // bytes compare unsigned
    EXPECT_LT(photon::stricmp_fast("0123456789abcdeF", "0123456789ABCDEG"), 0);
    std::mt19937 rng(12345);
    const char alphabet[] = "aAbB[`\xc1\xe1";
    for (int i = 0; i < 20000; i++) {
        std::string a, b;
        size_t la = rng() % 20, lb = rng() % 20;
        for (size_t j = 0; j < la; j++) a.push_back(alphabet[rng() % 8]);
        b = a.substr(0, std::min(la, lb));
        for (size_t j = b.size(); j < lb; j++) b.push_back(alphabet[rng() % 8]);
        if (!b.empty() && rng() % 2) b[rng() % b.size()] ^= 0x20;
        ASSERT_EQ(sign(reference_icmp(a, b)), sign(photon::stricmp_fast(a, b))) << a << "|" << b;
        ASSERT_EQ(-sign(photon::stricmp_fast(a, b)), sign(photon::stricmp_fast(b, a)));
    }
}

TEST(RstringView, ResolvesAgainstABaseWithBoundsChecks) {
    std::string base = "abcdef";
    rstring_view16 r(2, 3);
    EXPECT_EQ("cde", r | std::string_view(base));
    EXPECT_EQ("cde", std::string_view(base) | r);
    EXPECT_EQ("cde", r | base.c_str());
    EXPECT_EQ(2u, r.offset());
    EXPECT_EQ(3u, r.size());
    EXPECT_EQ(3u, r.length());
    r += 1;
    EXPECT_EQ("def", r | std::string_view(base));
    r.length() = 4;  // now past the end of base
    EXPECT_TRUE((r | std::string_view(base)).empty());
    EXPECT_EQ(rstring_view16(3, 4), r);
    EXPECT_NE(rstring_view16(3, 3), r);
    EXPECT_TRUE((rstring_view8(6, 0) | std::string_view(base)).empty());
    EXPECT_TRUE((rstring_view8(7, 0) | std::string_view(base)).empty());
}

TEST(RstringView, ValuesTooBigForTheTypesGiveAnEmptyView) {
    rstring_view8 r(300, 1);  // Photon kept offset 300 % 256
    EXPECT_EQ(0u, r.offset());
    EXPECT_EQ(0u, r.size());
    rstring_view8 q(1, 256);
    EXPECT_EQ(0u, q.size());
    // offset + length would wrap: the check must not
    rstring_view<uint64_t> w(UINT64_MAX, 2);
    EXPECT_TRUE((w | std::string_view("abc")).empty());
    constexpr rstring_view32 c(1, 2);
    static_assert(sizeof(c) == 8, "");
}

TEST(EstringOperators, CompareStringViewsWithStdStrings) {
    std::string s = "abc";
    std::string_view sv = "abc";
    EXPECT_TRUE(sv == s);
    EXPECT_TRUE(s == sv);
    EXPECT_TRUE(estring_view("abc") == s);
    EXPECT_FALSE(estring_view("abd") == s);
}

}  // namespace
