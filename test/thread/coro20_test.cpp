// photon/thread/coro20.h: C++20 coroutines on photon coroutines. Built with
// -std=c++20; under an older standard the test only reports itself skipped.
#if __cplusplus >= 202002L && defined(__cpp_impl_coroutine)

#include <photon/thread/coro20.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <ranges>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_util.h"

namespace {

using namespace photon_test;
using photon::coro::Coro;
using photon::coro::FixedGenerator;
using photon::coro::Generator;

class Coro20 : public VcpuTest {};

Coro<int> add(int a, int b) { co_return a + b; }

Coro<int> add_three(int a, int b, int c) {
    int ab = co_await add(a, b);
    co_return co_await add(ab, c);
}

TEST_F(Coro20, RunDrivesATaskAndItsAwaitedTasksToTheEnd) {
    EXPECT_EQ(3, photon::coro::run(add, 1, 2));
    EXPECT_EQ(6, photon::coro::run(add_three, 1, 2, 3));
    int r = 0;
    auto t = spawn([&] { r = photon::coro::run(add_three, 10, 20, 30); });  // frames on its stack
    t.join();
    EXPECT_EQ(60, r);
}

// Generators that finish end with co_return: their promise, as Photon's, has return_value and
// no return_void, so flowing off the end would be undefined. What they return is not yielded.
Generator<int> count_to(int n) {
    for (int i = 1; i <= n; i++) co_yield i;
    co_return 0;
}

TEST_F(Coro20, AGeneratorIsAnInputRange) {
    std::vector<int> got;
    for (int v : count_to(5)) got.push_back(v);
    EXPECT_EQ((std::vector<int>{1, 2, 3, 4, 5}), got);

    auto g = count_to(100);
    got.clear();
    static_assert(std::ranges::input_range<Generator<int>>);
#if defined(__clang__) && __clang_major__ < 16 && defined(__GLIBCXX__)
    // Older clang cannot instantiate libstdc++'s range adaptors (llvm-project#52696):
    // the same walk through ranges::begin and end.
    for (auto it = std::ranges::begin(g); it != std::ranges::end(g) && *it < 4; ++it)
        got.push_back(*it);
#else
    std::ranges::for_each(g | std::views::take_while([](int v) { return v < 4; }),
                          [&](int v) { got.push_back(v); });
#endif
    EXPECT_EQ((std::vector<int>{1, 2, 3}), got);

    auto h = count_to(3);
    EXPECT_EQ(1, h());
    EXPECT_EQ(2, h());
    Generator<int> moved = std::move(h);
    EXPECT_EQ(3, moved());
}

Generator<std::string> words() {
    co_yield std::string("alpha");
    co_yield std::string("be");
    co_return std::string();
}

TEST_F(Coro20, IteratorArrowPointsAtTheGeneratorsValue) {
    auto g = words();
    auto it = g.begin();
    ASSERT_TRUE(it != g.end());
    EXPECT_EQ(5u, it->size());
    ++it;
    EXPECT_EQ(2u, it->size());
    ++it;
    EXPECT_TRUE(it == g.end());
}

FixedGenerator<int> squares(int n) {
    for (int i = 0; i < n; i++) co_yield i* i;
    co_return 0;
}

TEST_F(Coro20, AFixedGeneratorWorksOnAPhotonStackAndOnTheMainOne) {
    std::vector<int> here, there;
    for (int v : squares(4)) here.push_back(v);  // main coroutine: heap frame
    auto t = spawn([&] {
        for (int v : squares(4)) there.push_back(v);  // stackful_malloc frame
    });
    t.join();
    EXPECT_EQ((std::vector<int>{0, 1, 4, 9}), here);
    EXPECT_EQ(here, there);
}

Coro<void> step(std::vector<int>* log, int n) {
    for (int i = 0; i < n; i++) {
        log->push_back(i);
        co_await photon::coro::usleep(500);
    }
    co_return;
}

// Photon's async_run resumed the task once; one with co_awaits that suspend
// nothing still ran whole, so this checks the end is reached.
TEST_F(Coro20, AsyncRunRunsTheTaskToItsEndInANewPhotonCoroutine) {
    std::vector<int> log;
    photon::coro::async_run(step, &log, 3);
    EXPECT_EQ(2u, photon::get_info(photon::INFO_THREAD_NUM)) << "it runs on its own";
    photon::wait_all();
    EXPECT_EQ((std::vector<int>{0, 1, 2}), log);
}

Coro<int> yielding() {
    co_yield 1;
    co_yield 2;
    co_return 3;
}

TEST_F(Coro20, AsyncRunDoesNotStopAtTheFirstYield) {
    static int last = 0;
    photon::coro::async_run([]() -> Coro<void> {
        last = co_await yielding();
        co_return;
    });
    photon::wait_all();
    EXPECT_EQ(3, last);
}

Coro<int> sleeper() {
    auto t0 = Clock::now();
    int r = co_await photon::coro::usleep(3000);
    int s = co_await photon::coro::sleep(0);
    co_return (r == 0 && s == 0 && us_since(t0) >= 3000) ? 1 : 0;
}

TEST_F(Coro20, UsleepAndSleepAreAwaitable) { EXPECT_EQ(1, photon::coro::run(sleeper)); }

TEST_F(Coro20, TimerYieldsTheClockAtTheInterval) {
    auto t = photon::coro::timer(2000);
    uint64_t a = t(), b = t(), c = t();
    EXPECT_LE(a, b);
    EXPECT_GE(c - b, 2000u);
}

Coro<int> thrower() {
    throw std::runtime_error("boom");
    co_return 0;
}

TEST_F(Coro20, AnExceptionReachesTheCallerOfRun) {
    EXPECT_THROW(photon::coro::run(thrower), std::runtime_error);
}

TEST_F(Coro20, AMovedFromCoroIsSafeToDestroy) {
    auto a = add(1, 1);
    auto b = std::move(a);
    while (!b.handle.done()) b.handle.resume();
    EXPECT_EQ(2, b.await_resume());
}

TEST_F(Coro20, FramesGoToTheHeapWhenTheStackHasNoRoom) {
    int r = 0;
    auto t = spawn([&] {
        // Leave the stack almost full, so stackful_malloc refuses.
        void* p = photon::stackful_malloc(kStack - 24 * 1024);
        ASSERT_NE(nullptr, p);
        r = photon::coro::run(add_three, 1, 1, 1);
        photon::stackful_free(p);
    });
    t.join();
    EXPECT_EQ(3, r);
}

}  // namespace

#else

#include <gtest/gtest.h>

TEST(Coro20, NeedsCxx20) { GTEST_SKIP() << "built without C++20 coroutines"; }

#endif
