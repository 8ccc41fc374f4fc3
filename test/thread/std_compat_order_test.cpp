// std-compat.h included FIRST, before every other public photon header: the
// later headers, and user code inside namespace photon, then see the alias
// `photon::std` = photon_std, and must still find the ordinary ::std names
// through it. std_compat_test.cpp covers the opposite order.
#define PHOTON_STD_ALIAS  // the opt-in photon::std alias is under test too
#include <photon/thread/std-compat.h>

#include <photon/common/alog-stdstring.h>
#include <photon/common/alog.h>
#include <photon/common/callback.h>
#include <photon/common/list.h>
#include <photon/common/object.h>
#include <photon/common/timeout.h>
#include <photon/common/utility.h>
#include <photon/photon.h>
#include <photon/thread/stack-allocator.h>
#include <photon/thread/thread-key.h>
#include <photon/thread/thread-local.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>
#include <photon/thread/timer.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace photon {
namespace {

// True if `std::swap(a, b)`, written inside namespace photon, compiles for T.
template <typename T, typename = void>
struct std_swap_resolves : ::std::false_type {};
template <typename T>
struct std_swap_resolves<T, decltype(std::swap(::std::declval<T&>(), ::std::declval<T&>()))>
    : ::std::true_type {};

class StdCompatOrder : public ::testing::Test {
protected:
    void SetUp() override { ASSERT_EQ(0, init(INIT_EVENT_NONE, INIT_IO_NONE)); }
    void TearDown() override { fini(); }
};

TEST_F(StdCompatOrder, StdNamesInsideNamespacePhotonStillResolveToTheStandardOnes) {
    std::vector<std::string> words{"b", "a"};
    std::sort(words.begin(), words.end());
    std::atomic<int> n{0};
    n.fetch_add(int(words.size()));
    EXPECT_EQ((std::vector<std::string>{"a", "b"}), words);
    EXPECT_EQ(2, n.load());
    EXPECT_TRUE((std::is_same<std::vector<int>, ::std::vector<int>>::value));
    EXPECT_TRUE((std::is_same<std::string, ::std::string>::value));
    EXPECT_TRUE((std::is_same<std::atomic<int>, ::std::atomic<int>>::value));
    EXPECT_TRUE((std::is_same<std::thread, ::photon_std::thread>::value));
}

TEST_F(StdCompatOrder, StdSwapInsideNamespacePhotonStillSwapsAnyType) {
    EXPECT_TRUE(std_swap_resolves<int>::value)
        << "photon_std::swap(thread&, thread&) hides ::std::swap from `std::swap` in photon";
    EXPECT_TRUE(std_swap_resolves<std::string>::value);
    EXPECT_TRUE(std_swap_resolves<std::thread>::value);
}

TEST_F(StdCompatOrder, ThreadsCreatedThroughTheAliasRunAsCoroutines) {
    int ran = 0;
    std::thread t([&] { ran++; });
    t.join();
    EXPECT_EQ(1, ran);
    EXPECT_NE(nullptr, CURRENT);
}

}  // namespace
}  // namespace photon
