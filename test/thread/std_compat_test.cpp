// photon/thread/std-compat.h as a drop-in for <thread>, <mutex> and
// <condition_variable>: one program (std_program.inc) compiled against ::std,
// ::photon::std and ::photon_std must give the same, correct results; plus
// the std-like error behaviour (terminate, system_error) and thread ids.
//
// Every other public photon header comes first and std-compat.h last, the
// opposite of std_compat_order_test.cpp.
#define PHOTON_STD_ALIAS  // the opt-in photon::std alias is under test too
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
#include <photon/thread/std-compat.h>

#include <gtest/gtest.h>

#include "test_util.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <system_error>
#include <thread>
#include <unordered_set>
#include <vector>

namespace on_std {
namespace STD = ::std;
#include "std_program.inc"
}  // namespace on_std

namespace on_photon_alias {
namespace STD = ::photon::std;
#include "std_program.inc"
}  // namespace on_photon_alias

namespace on_photon_std {
namespace STD = ::photon_std;
#include "std_program.inc"
}  // namespace on_photon_std

namespace {

using program_result = std::map<std::string, long>;

// What a correct run returns, whatever STD is.
program_result expected_result() {
    program_result r;
    for (auto k : {"pool.ids_distinct", "pool.ids_not_main", "pool.ids_not_empty",
                   "timed.try_lock_for_when_free", "timed.unique_lock_until_when_free",
                   "cv.wait_for_times_out", "cv.owns_after_timeout", "cv.wait_until_true_pred",
                   "cv.wait_for_pred_notified", "cv.unlocked", "recursive.other_locked_out",
                   "recursive.free_after", "life.detached_not_joinable", "life.detached_ran",
                   "life.moved_from_not_joinable", "life.swapped", "life.sleep_for_long_enough",
                   "life.sleep_until_long_enough", "life.hardware_concurrency"})
        r[k] = 1;
    for (auto k : {"timed.try_lock_for_while_held", "timed.try_lock_while_held",
                   "timed.unique_lock_for_while_held", "cv.wait_for_false_pred"})
        r[k] = 0;
    r["pool.sum"] = 1000L * 1001 * 2001 / 6;  // 1^2 + ... + 1000^2
    r["pool.items"] = 1000;
    r["pool.joined"] = 4;
    r["recursive.depth"] = 5;
    r["life.ref_result"] = 42;
    return r;
}

class StdCompat : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_EQ(0, photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE));
    }
    void TearDown() override { photon::fini(); }
};

TEST(StdProgram, GivesTheExpectedResultOnStdThreads) {
    EXPECT_EQ(expected_result(), on_std::run_program());
}

TEST_F(StdCompat, TheProgramGivesTheSameResultOnPhotonStdAsOnStd) {
    auto on_std_threads = on_std::run_program();
    EXPECT_EQ(on_std_threads, on_photon_alias::run_program()) << "STD = ::photon::std";
    EXPECT_EQ(on_std_threads, on_photon_std::run_program()) << "STD = ::photon_std";
    EXPECT_EQ(expected_result(), on_photon_std::run_program());
}

TEST_F(StdCompat, ThePhotonStdAliasNamesPhotonStd) {
    EXPECT_TRUE((std::is_same<photon::std::thread, photon_std::thread>::value));
    EXPECT_TRUE((std::is_same<photon::std::mutex, photon_std::mutex>::value));
    EXPECT_TRUE((std::is_same<photon::std::vector<int>, ::std::vector<int>>::value));
}

// Regression: an int-second duration overflowed the "100 years = forever"
// check, so every such wait lasted forever.
TEST_F(StdCompat, TimedWaitsWithIntSecondsDurationsTimeOut) {
    photon_std::timed_mutex m;
    m.lock();
    bool got = true;
    auto t0 = std::chrono::steady_clock::now();
    photon_std::thread t([&] { got = m.try_lock_for(std::chrono::duration<int>(1)); });
    t.join();
    auto waited = std::chrono::steady_clock::now() - t0;
    EXPECT_FALSE(got);
    EXPECT_GE(waited, std::chrono::milliseconds(990));
    EXPECT_LT(waited, std::chrono::seconds(30));
    m.unlock();
}

TEST_F(StdCompat, DestroyingAJoinableThreadCallsTerminate) {
    GTEST_FLAG_SET(death_test_style, photon_test::death_test_style());
    EXPECT_DEATH({ photon_std::thread t([] {}); }, "terminate called");
    EXPECT_DEATH(
        {
            photon_std::thread a([] {});
            photon_std::thread b([] {});
            a = std::move(b);  // terminates here, not in a destructor:
            a.detach();        // both are empty after this line
        },
        "terminate called");
}

template <typename F>
int error_code_of(F f) {
    try {
        f();
    } catch (const std::system_error& e) {
        return e.code().value();
    }
    return 0;
}

TEST_F(StdCompat, DetachOrJoinOfANonJoinableThreadThrowsSystemError) {
    photon_std::thread t;
    EXPECT_THROW(t.detach(), std::system_error);
    EXPECT_EQ(EPERM, error_code_of([&] { t.detach(); }));
    EXPECT_EQ(EINVAL, error_code_of([&] { t.join(); }));
    photon_std::thread u([] {});
    u.join();
    EXPECT_EQ(EPERM, error_code_of([&] { u.detach(); }));
}

TEST_F(StdCompat, UniqueLockMisuseThrowsSystemErrorWithEpermOrEdeadlk) {
    photon_std::unique_lock<photon_std::mutex> none;
    EXPECT_THROW(none.lock(), std::system_error);
    EXPECT_EQ(EPERM, error_code_of([&] { none.lock(); }));
    EXPECT_EQ(EPERM, error_code_of([&] { none.try_lock(); }));
    EXPECT_EQ(EPERM, error_code_of([&] { none.unlock(); }));

    photon_std::mutex m;
    photon_std::unique_lock<photon_std::mutex> l(m);
    EXPECT_TRUE(l.owns_lock());
    EXPECT_EQ(EDEADLK, error_code_of([&] { l.lock(); }));
    EXPECT_EQ(EDEADLK, error_code_of([&] { l.try_lock(); }));
    l.unlock();
    EXPECT_EQ(EPERM, error_code_of([&] { l.unlock(); }));
    EXPECT_FALSE(m.locked());

    photon_std::unique_lock<photon_std::mutex> d(m, std::defer_lock);
    EXPECT_FALSE(d.owns_lock());
    d.lock();
    EXPECT_TRUE(bool(d));
    EXPECT_EQ(EDEADLK, error_code_of([&] { m.lock(); })) << "relock by the owner";
    EXPECT_EQ(&m, d.release());
    EXPECT_TRUE(m.locked()) << "release() keeps the mutex locked";
    m.unlock();
}

TEST_F(StdCompat, ThreadIdsHashIntoAnUnorderedSet) {
    std::unordered_set<photon_std::thread::id> ids;
    std::vector<photon_std::thread> ts;
    std::vector<photon_std::thread::id> seen(3);
    for (int i = 0; i < 3; i++)
        ts.emplace_back([&seen, i] { seen[i] = photon_std::this_thread::get_id(); });
    for (auto& t : ts) ids.insert(t.get_id());
    ids.insert(photon_std::this_thread::get_id());
    ids.insert(photon_std::thread::id());
    EXPECT_EQ(5u, ids.size());
    for (int i = 0; i < 3; i++) {
        auto id = ts[i].get_id();
        ts[i].join();
        EXPECT_EQ(id, seen[i]) << "this_thread::get_id() inside equals thread::get_id()";
        EXPECT_EQ(1u, ids.count(seen[i]));
    }
    EXPECT_EQ(std::hash<photon_std::thread::id>()(photon_std::this_thread::get_id()),
              std::hash<photon_std::thread::id>()(photon_std::this_thread::get_id()));
}

TEST_F(StdCompat, HardwareConcurrencyIsAtLeastOne) {
    EXPECT_GE(photon_std::thread::hardware_concurrency(), 1u);
}

TEST_F(StdCompat, ConditionVariableWaitWithoutTheLockThrowsEperm) {
    photon_std::mutex m;
    photon_std::condition_variable cv;
    photon_std::unique_lock<photon_std::mutex> l(m, std::defer_lock);
    EXPECT_EQ(EPERM, error_code_of([&] { cv.wait(l); }));
}

}  // namespace
