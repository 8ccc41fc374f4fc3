// photon/common/conststr.h: compile-time strings (TString operations checked
// with static_assert), string arrays and joins, DEFINE_ENUM_STR names and the
// compact string array, including the inputs Photon got wrong.
#include <photon/common/conststr.h>

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <type_traits>

#ifdef DELETE
#undef DELETE
#endif

namespace {

using ConstString::TString;

template <typename A, typename B>
constexpr bool same = std::is_same<std::remove_cv_t<A>, std::remove_cv_t<B>>::value;

// ---- sequences and sums ----------------------------------------------------

static_assert(
    same<ConstString::make_index_sequence<3, 5>::result, ConstString::index_sequence<5, 6, 7>>, "");
static_assert(same<ConstString::make_index_sequence<0, 9>::result, ConstString::index_sequence<>>,
              "");
static_assert(
    same<ConstString::index_sequence<0, 1>::append<10>, ConstString::index_sequence<0, 1, 12>>,
    "append adds size + Z");

using Sums = decltype(ConstString::accumulate_helper(ConstString::TList<int, 2, 3, 4>{}));
static_assert(same<Sums, ConstString::Accumulate<int, 0, 2, 5, 9>>, "prefix sums from 0");
static_assert(Sums::size() == 4 && Sums::arr[3] == 9, "");

// ---- TString ---------------------------------------------------------------

constexpr auto kHello = TSTRING("Hello");
static_assert(same<decltype(kHello), TString<'H', 'e', 'l', 'l', 'o'>>, "one type per text");
static_assert(kHello.len == 5 && kHello.chars[5] == '\0', "NUL-terminated");
static_assert(kHello.view() == "Hello", "");
constexpr auto kEmpty = TSTRING("");  // TSTRING is a lambda: not inside decltype before C++20
static_assert(same<decltype(kEmpty), TString<>>, "");

static_assert(kHello.reverse().view() == "olleH", "");
static_assert(kHello.substr<1, 3>().view() == "ell", "");
static_assert(kHello.substr<5, 0>().view().empty(), "substr at the end");
static_assert(kHello.prepend<'>'>().view() == ">Hello", "");
static_assert(kHello.append<'!'>().view() == "Hello!", "");
static_assert(kHello.concat(TSTRING(", you")).view() == "Hello, you", "");
static_assert((kHello + TSTRING("!!")).view() == "Hello!!", "operator+ (broken in Photon)");
static_assert(same<TString<'a'>::Append<'b'>, TString<'a', 'b'>>, "");
static_assert(same<TString<'a'>::Prepend<'b'>, TString<'b', 'a'>>, "");

constexpr auto kPadded = TSTRING("  x y  ");
static_assert(kPadded.lstrip<' '>().view() == "x y  ", "");
static_assert(kPadded.rstrip<' '>().view() == "  x y", "");
static_assert(kPadded.strip<' '>().view() == "x y", "");
static_assert(TSTRING("   ").strip<' '>().view().empty(), "all stripped");

// cut: before and after the first separator.
constexpr auto kPath = TSTRING("usr/local/bin");
static_assert(kPath.cut<'/'>().head.view() == "usr", "");
static_assert(kPath.cut<'/'>().tail.view() == "local/bin", "");
static_assert(kPath.cut<'#'>().head.view() == "usr/local/bin", "no separator: all head");
static_assert(kPath.cut<'#'>().tail.view().empty(), "");
static_assert(TSTRING("/x").cut<'/'>().head.view().empty(), "leading separator");
static_assert(TSTRING("x/").cut<'/'>().tail.view().empty(), "trailing separator");

// split: pieces stripped of the ignored character; a trailing separator adds
// no piece, an inner empty piece stays.
constexpr auto kList = TSTRING(" 1, 2 ,,3 , ");
using ListParts = decltype(kList.split<',', ' '>());
static_assert(ListParts::size == 5, "");
static_assert(ListParts::views[0] == "1" && ListParts::views[1] == "2", "");
static_assert(ListParts::views[2].empty() && ListParts::views[3] == "3", "");
static_assert(ListParts::views[4].empty(), "");
constexpr auto kTrailing = TSTRING("a,");
constexpr auto kOnePiece = TSTRING("abc");
static_assert(decltype(kTrailing.split<',', ' '>())::size == 1, "");
static_assert(decltype(kEmpty.split<',', ' '>())::size == 0, "");
static_assert(decltype(kOnePiece.split<',', ' '>())::size == 1, "");

// The file-name idiom alog builds on: the last path component.
constexpr auto kFileReversed = TSTRING("a/b/c.cpp").reverse();
constexpr auto kFile = ConstString::TSpliter<'/', ' ', decltype(kFileReversed)>::Current::reverse();
static_assert(kFile.view() == "c.cpp", "");

// ---- TStrArray -------------------------------------------------------------

constexpr auto kArr = ConstString::make_tstring_array(TSTRING("ab"), TSTRING(""), TSTRING("cde"));
using Arr = decltype(kArr);
static_assert(kArr.size == 3 && Arr::views[2] == "cde", "");
static_assert(Arr::join<'+'>().view() == "ab++cde", "");
static_assert(Arr::whole().len == 7, "ab, NUL, nothing, NUL, cde");
static_assert(Arr::offset.arr[0] == 0 && Arr::offset.arr[1] == 3 && Arr::offset.arr[2] == 4 &&
                  Arr::offset.arr[3] == 8,
              "each string starts after the previous one's NUL");
static_assert(same<Arr::Append<TString<'z'>>::Prepend<TString<>>,
                   ConstString::TStrArray<TString<>, TString<'a', 'b'>, TString<>,
                                          TString<'c', 'd', 'e'>, TString<'z'>>>,
              "");
static_assert(ConstString::TStrArray<TString<'q'>>::join<','>().view() == "q", "");
// Photon returned a TStrArray<> here, so whole() of an empty array did not compile.
static_assert(same<decltype(ConstString::TStrArray<>::whole()), TString<>>, "");

// ---- DEFINE_ENUM_STR -------------------------------------------------------

DEFINE_ENUM_STR(VERBS, verbs, UNKNOW, DELETE, GET, HEAD, POST, PUT, CONNECT, OPTIONS, TRACE, COPY,
                LOCK, MKCOL, MOV, PROPFIND, PROPPATCH, SEARCH, UNLOCK, BIND, REBIND, UNBIND, ACL,
                REPORT, MKACTIVITY, CHECKOUT, MERGE, MSEARCH, NOTIFY, SUBSCRIBE, UNSUBSCRIBE, PATCH,
                PURGE, MKCALENDAR, LINK, UNLINK);

TEST(EnumStr, NamesEveryValueOfALongEnum) {
    const char* expected[] = {
        "UNKNOW",      "DELETE",     "GET",      "HEAD",       "POST",    "PUT",    "CONNECT",
        "OPTIONS",     "TRACE",      "COPY",     "LOCK",       "MKCOL",   "MOV",    "PROPFIND",
        "PROPPATCH",   "SEARCH",     "UNLOCK",   "BIND",       "REBIND",  "UNBIND", "ACL",
        "REPORT",      "MKACTIVITY", "CHECKOUT", "MERGE",      "MSEARCH", "NOTIFY", "SUBSCRIBE",
        "UNSUBSCRIBE", "PATCH",      "PURGE",    "MKCALENDAR", "LINK",    "UNLINK"};
    ASSERT_EQ(verbs.size(), sizeof(expected) / sizeof(expected[0]));
    for (size_t i = 0; i < verbs.size(); i++) {
        auto name = verbs[VERBS(i)];
        EXPECT_EQ(name, expected[i]);
        EXPECT_EQ(name.data()[name.size()], '\0');  // usable as a C string
    }
    EXPECT_STREQ(verbs[VERBS::UNLINK].data(), "UNLINK");
}

TEST(EnumStr, WholeHoldsTheNamesNulSeparated) {
    DEFINE_ENUM_STR(A, a, AAA, bbb, CCC, ddd);
    EXPECT_STREQ(a.whole().chars, "AAA");
    EXPECT_STREQ(&a.whole().chars[4], "bbb");
    EXPECT_STREQ(&a.whole().chars[8], "CCC");
    EXPECT_STREQ(&a.whole().chars[12], "ddd");
    for (int i = 0; i < 4; i++) EXPECT_EQ(a.arr().offset.arr[i], 4 * i);
    EXPECT_EQ(a.size(), 4u);
    EXPECT_EQ(a.base(), a.whole().chars);
}

// Photon indexed its offset table with any value, reading past its end.
TEST(EnumStr, ValueOutsideTheEnumHasAnEmptyName) {
    DEFINE_ENUM_STR(Color, colors, red, green);
    EXPECT_EQ(colors[Color::green], "green");
    EXPECT_TRUE(colors[Color(2)].empty());
    EXPECT_TRUE(colors[Color(100)].empty());
    EXPECT_TRUE(colors[Color(-1)].empty());
}

// Photon cut and stripped with one template instantiation per character, so a
// string longer than the compiler's recursion limit (900) did not compile.
#define PHOTON_TEST_S10 "abcdefghij"
#define PHOTON_TEST_S100                                                            \
    PHOTON_TEST_S10 PHOTON_TEST_S10 PHOTON_TEST_S10 PHOTON_TEST_S10 PHOTON_TEST_S10 \
        PHOTON_TEST_S10 PHOTON_TEST_S10 PHOTON_TEST_S10 PHOTON_TEST_S10 PHOTON_TEST_S10
TEST(TString, SplitsAStringLongerThanTheRecursionLimit) {
    auto text = TSTRING(" " PHOTON_TEST_S100 PHOTON_TEST_S100 PHOTON_TEST_S100 PHOTON_TEST_S100
                            PHOTON_TEST_S100 PHOTON_TEST_S100 PHOTON_TEST_S100 PHOTON_TEST_S100
                                PHOTON_TEST_S100 PHOTON_TEST_S100 PHOTON_TEST_S100 " , end");
    static_assert(decltype(text)::len == 1107, "");
    using Parts = decltype(text.split<',', ' '>());
    static_assert(Parts::size == 2, "");
    EXPECT_EQ(Parts::views[0].size(), 1100u);
    EXPECT_EQ(Parts::views[0].substr(1090), "abcdefghij");
    EXPECT_EQ(Parts::views[1], "end");
    EXPECT_EQ(text.reverse().reverse().view(), text.view());
}

// ---- TString at run time ---------------------------------------------------

auto g_out_of_func = TSTRING("Hello");

TEST(TString, EqualTextsShareOneArray) {
    auto a = TSTRING("Hello");
    auto b = TSTRING("Hello");
    EXPECT_EQ(&a.chars, &b.chars);
    EXPECT_EQ(&g_out_of_func.chars, &a.chars);
    EXPECT_NE(static_cast<const void*>(TSTRING("Hellp").chars), static_cast<const void*>(a.chars));
}

TEST(TString, JoinAndSplit) {
    auto c = ConstString::make_tstring_array(TSTRING("Hello"), TSTRING(" world"));
    EXPECT_STREQ("Hello, world", c.join<','>().chars);
    auto sp = TSTRING("1,2, 3, 4, 5, 6").split<',', ' '>();
    EXPECT_EQ(6u, sp.size);
    for (int i = 0; i < 6; i++) EXPECT_EQ(sp.views[i], std::to_string(i + 1));
    EXPECT_STREQ("1|2|3|4|5|6", sp.join<'|'>().chars);
}

// ---- CompactStringArray ----------------------------------------------------

TEST(CompactStringArray, StoresStringsBackToBack) {
    auto p = ConstString::make_compact_str_array<size_t>(TSTRING("a"), TSTRING("bc"),
                                                         TSTRING("def"), TSTRING("ghij"));
    EXPECT_EQ(4u, p.size());
    EXPECT_STREQ("a", p[0].data());
    EXPECT_STREQ("bc", p[1].data());
    EXPECT_STREQ("def", p[2].data());
    EXPECT_EQ(p[3], "ghij");
    EXPECT_EQ(p.at(2), "def");
    EXPECT_EQ(p.whole().len, 1 + 1 + 2 + 1 + 3 + 1 + 4 + 1);  // a NUL after each
}

TEST(CompactStringArray, EmptyStringsKeepTheirPlace) {
    auto p =
        ConstString::make_compact_str_array<uint16_t>(TSTRING("x"), TSTRING(""), TSTRING("yz"));
    EXPECT_EQ(p.size(), 3u);
    EXPECT_EQ(p[0], "x");
    EXPECT_TRUE(p[1].empty());
    EXPECT_EQ(p[2], "yz");
    auto none = ConstString::make_compact_str_array<uint8_t>();
    EXPECT_EQ(none.size(), 0u);
}

TEST(CompactStringArray, IndexPastTheEndIsEmpty) {
    constexpr auto p = ConstString::make_compact_str_array<uint16_t>(TSTRING("a"), TSTRING("b"));
    static_assert(p[1] == "b" && p.at(1) == "b", "usable at compile time");
    static_assert(p[2].empty() && p.at(2).empty(), "operator[] is checked like at()");
    EXPECT_TRUE(p[1000].empty());
    EXPECT_TRUE(p.at(size_t(-1)).empty());
}

}  // namespace
