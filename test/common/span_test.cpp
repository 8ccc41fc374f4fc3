// photon/common/span.h (tcb::span): layout, constructors and their constraints,
// deduction guides, subviews, byte views, tuple access, and the contract checks
// that stay on in release builds for calls that make a new view.
#include <photon/common/span.h>

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "../thread/test_util.h"

// Deduction guides (unevaluated: the referenced objects need not exist).
extern int g_arr[5];
extern std::array<int, 3> g_std_arr;
extern const std::array<int, 3> g_const_std_arr;
extern std::vector<int> g_vec;
extern const std::string g_const_str;

namespace {

using tcb::dynamic_extent;
using tcb::span;

// ---- compile time ----------------------------------------------------------

static_assert(dynamic_extent == SIZE_MAX, "tcb's dynamic_extent");
static_assert(sizeof(span<int, 4>) == sizeof(int*), "a fixed extent stores no size");
static_assert(sizeof(span<int>) == sizeof(int*) + sizeof(size_t), "pointer and size");
static_assert(std::is_trivially_copyable<span<int>>::value, "spans are cheap to pass");
static_assert(std::is_same<tcb::byte, std::byte>::value, "byte is std::byte in C++17");

static_assert(span<int, 3>::extent == 3 && span<int>::extent == dynamic_extent, "extent");
static_assert(std::is_same<span<const int>::value_type, int>::value, "value_type drops const");
static_assert(std::is_same<span<int>::iterator, int*>::value, "pointer iterators");

// Default construction only where an empty span has the right extent.
static_assert(std::is_default_constructible<span<int>>::value, "");
static_assert(std::is_default_constructible<span<int, 0>>::value, "");
static_assert(!std::is_default_constructible<span<int, 2>>::value, "");

// Only qualification conversions; sizes must agree for fixed extents.
struct Base {
    int b;
};
struct Derived : Base {
    int d;
};
static_assert(std::is_constructible<span<const int>, std::vector<int>&>::value, "");
static_assert(std::is_constructible<span<const int>, const std::vector<int>&>::value, "");
static_assert(!std::is_constructible<span<int>, const std::vector<int>&>::value, "");
static_assert(!std::is_constructible<span<int>, span<const int>>::value, "");
static_assert(std::is_constructible<span<const int>, span<int>>::value, "");
static_assert(!std::is_constructible<span<Base>, Derived (&)[2]>::value, "wrong stride");
static_assert(!std::is_constructible<span<int, 3>, int (&)[4]>::value, "");
static_assert(std::is_constructible<span<int, 4>, int (&)[4]>::value, "");
static_assert(!std::is_constructible<span<int, 3>, std::array<int, 4>&>::value, "");
static_assert(!std::is_constructible<span<int, 3>, std::vector<int>&>::value, "");
static_assert(!std::is_constructible<span<int>, std::vector<bool>&>::value, "no data()");

// Deduction guides.
static_assert(std::is_same<decltype(span(g_arr)), span<int, 5>>::value, "");
static_assert(std::is_same<decltype(span(g_std_arr)), span<int, 3>>::value, "");
static_assert(std::is_same<decltype(span(g_const_std_arr)), span<const int, 3>>::value, "");
static_assert(std::is_same<decltype(span(g_vec)), span<int>>::value, "");
static_assert(std::is_same<decltype(span(g_const_str)), span<const char>>::value, "");

// make_span mirrors the guides.
static_assert(std::is_same<decltype(tcb::make_span(g_arr)), span<int, 5>>::value, "");
static_assert(std::is_same<decltype(tcb::make_span(g_const_std_arr)), span<const int, 3>>::value,
              "");
static_assert(std::is_same<decltype(tcb::make_span(g_const_str)), span<const char>>::value, "");

// Byte views keep a fixed extent when there is one.
static_assert(std::is_same<decltype(tcb::as_bytes(span<int, 3>(g_std_arr))),
                           span<const std::byte, 3 * sizeof(int)>>::value,
              "");
static_assert(
    std::is_same<decltype(tcb::as_writable_bytes(span<int>(g_vec))), span<std::byte>>::value, "");

// Subviews of fixed spans have computed extents.
static_assert(std::is_same<decltype(span<int, 5>(g_arr).subspan<1>()), span<int, 4>>::value, "");
static_assert(std::is_same<decltype(span<int, 5>(g_arr).subspan<1, 2>()), span<int, 2>>::value, "");
static_assert(std::is_same<decltype(span<int>(g_arr).subspan<1>()), span<int>>::value, "");
static_assert(std::is_same<decltype(span<int, 5>(g_arr).first<2>()), span<int, 2>>::value, "");

// Fixed spans are tuple-like; dynamic ones are not.
static_assert(std::tuple_size<span<int, 3>>::value == 3, "");
static_assert(std::is_same<std::tuple_element_t<1, span<const int, 3>>, const int>::value, "");

// Everything but the byte views works in constant expressions.
constexpr int kPrimes[] = {2, 3, 5, 7, 11};
constexpr span<const int, 5> kSpan(kPrimes);
static_assert(kSpan.size() == 5 && kSpan.size_bytes() == 5 * sizeof(int), "");
static_assert(kSpan[2] == 5 && kSpan.front() == 2 && kSpan.back() == 11, "");
static_assert(kSpan.subspan(1, 2)[1] == 5 && kSpan.last<2>()[0] == 7, "");
static_assert(kSpan.first(0).empty() && !kSpan.empty(), "");
static_assert(tcb::get<4>(kSpan) == 11, "");
static_assert(*(kSpan.end() - 1) == 11 && kSpan.begin() == kPrimes, "");

// ---- run time --------------------------------------------------------------

TEST(Span, ViewsTheContainersItWasMadeFrom) {
    std::vector<int> v{1, 2, 3, 4};
    span<int> s(v);
    EXPECT_EQ(s.data(), v.data());
    EXPECT_EQ(s.size(), 4u);
    s[1] = 20;  // writes through
    EXPECT_EQ(v[1], 20);

    std::string str = "hello";
    span<const char> cs(str);
    EXPECT_EQ(std::string(cs.begin(), cs.end()), "hello");

    std::array<int, 3> a{7, 8, 9};
    span<int, 3> fixed(a);
    EXPECT_EQ(fixed.back(), 9);

    int raw[2] = {5, 6};
    span<int> from_ptrs(raw, raw + 2);
    span<int> from_count(raw, 2);
    EXPECT_EQ(from_ptrs.size(), 2u);
    EXPECT_EQ(from_count.data(), from_ptrs.data());
}

TEST(Span, SubviewsCoverTheRightElements) {
    std::vector<int> v(10);
    std::iota(v.begin(), v.end(), 0);
    span<int> s(v);
    EXPECT_EQ(s.first(3).back(), 2);
    EXPECT_EQ(s.last(3).front(), 7);
    EXPECT_EQ(s.subspan(4).front(), 4);
    EXPECT_EQ(s.subspan(4).size(), 6u);
    EXPECT_EQ(s.subspan(4, 2).back(), 5);
    EXPECT_EQ(s.subspan(10).size(), 0u);  // the end is a valid offset
    EXPECT_EQ(s.first<4>().last<1>()[0], 3);
    EXPECT_TRUE(s.subspan(3, 0).empty());
}

TEST(Span, ReverseIterationVisitsBackToFront) {
    int a[] = {1, 2, 3};
    std::vector<int> seen(span<int>(a).rbegin(), span<int>(a).rend());
    EXPECT_EQ(seen, (std::vector<int>{3, 2, 1}));
}

TEST(Span, ByteViewsAliasTheElements) {
    uint32_t words[2] = {0x01020304u, 0xA0B0C0D0u};
    auto bytes = tcb::as_bytes(span<uint32_t, 2>(words));
    ASSERT_EQ(bytes.size(), 8u);
    uint32_t first;
    std::memcpy(&first, bytes.data(), 4);
    EXPECT_EQ(first, 0x01020304u);

    auto wbytes = tcb::as_writable_bytes(span<uint32_t>(words));
    for (auto& b : wbytes.subspan(4)) b = std::byte{0};
    EXPECT_EQ(words[1], 0u);
    EXPECT_EQ(words[0], 0x01020304u);
}

TEST(Span, FixedSpansDestructureLikeTuples) {
    int a[3] = {1, 2, 3};
    span<int, 3> s(a);
    auto [x, y, z] = s;
    EXPECT_EQ(x + y + z, 6);
    y = 20;  // structured bindings of a span refer to its elements
    EXPECT_EQ(a[1], 20);
    EXPECT_EQ(&tcb::get<2>(s), &a[2]);
}

TEST(Span, ConvertsBetweenExtentsAndConstness) {
    int a[4] = {1, 2, 3, 4};
    span<int, 4> fixed(a);
    span<int> dyn = fixed;
    span<const int> cdyn = dyn;
    span<const int, 4> back_to_fixed = cdyn;  // checked: sizes agree
    EXPECT_EQ(back_to_fixed.data(), a);
    span<int> assigned;
    EXPECT_TRUE(assigned.empty());
    assigned = dyn.subspan(1);
    EXPECT_EQ(assigned.front(), 2);
}

// ---- contract checks -------------------------------------------------------

TEST(SpanDeathTest, OutOfRangeSubviewsTerminateEvenInReleaseBuilds) {
    GTEST_FLAG_SET(death_test_style, photon_test::death_test_style());
    int a[4] = {};
    span<int> s(a);
    EXPECT_DEATH((void)s.first(5), "span: expected");
    EXPECT_DEATH((void)s.last(5), "span: expected");
    EXPECT_DEATH((void)s.subspan(5), "span: expected");
    EXPECT_DEATH((void)s.subspan(2, 3), "span: expected");
    EXPECT_DEATH((void)s.first<5>(), "span: expected");
    EXPECT_DEATH(((void)span<int, 3>(a, 4)), "span: expected");
    EXPECT_DEATH(((void)span<int, 3>(s)), "span: expected");
}

// tcb checked offset + count <= size(), which wraps for a huge count and let
// the span run past the array.
TEST(SpanDeathTest, SubspanWithAWrappingCountIsRejected) {
    GTEST_FLAG_SET(death_test_style, photon_test::death_test_style());
    int a[4] = {};
    span<int> s(a);
    EXPECT_DEATH((void)s.subspan(2, SIZE_MAX - 1), "span: expected");
}

TEST(SpanDeathTest, ElementAccessIsCheckedInDebugBuilds) {
#ifdef NDEBUG
    GTEST_SKIP() << "element access is unchecked under NDEBUG, as in tcb";
#else
    GTEST_FLAG_SET(death_test_style, photon_test::death_test_style());
    int a[2] = {};
    span<int> s(a);
    EXPECT_DEATH((void)s[2], "span: expected");
    EXPECT_DEATH((void)s.first(0).front(), "span: expected");
    EXPECT_DEATH((void)s.first(0).back(), "span: expected");
#endif
}

}  // namespace
