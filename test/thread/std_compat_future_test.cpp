// photon_std::future / promise and the smaller names of std-compat.h that
// PhotonLibOS declares: __throw_system_error, __duration_to_microseconds,
// thread::id made from a photon::thread*.
#include <photon/thread/std-compat.h>

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "test_util.h"

namespace {

using namespace photon_test;
using namespace std::chrono_literals;

class StdFuture : public VcpuTest {};

TEST_F(StdFuture, GetWaitsForTheValueSetByAnotherCoroutine) {
    photon_std::promise<int> p;
    auto f = p.get_future();
    EXPECT_TRUE(f.valid());
    photon::thread_create11([&] {
        photon::thread_usleep(2000);
        p.set_value(42);
    });
    EXPECT_EQ(42, f.get());
    EXPECT_EQ(42, f.get()) << "a value can be read again";
    photon::wait_all();
}

TEST_F(StdFuture, WaitTimesOutThenSeesTheValue) {
    photon_std::promise<std::string> p;
    auto f = p.get_future();
    photon::__update_now();
    EXPECT_EQ(std::future_status::timeout, f.wait(2000));
    EXPECT_EQ(std::future_status::timeout, f.wait_for(1ms));
    EXPECT_EQ(std::future_status::timeout, f.wait_until(std::chrono::steady_clock::now() + 1ms));
    p.set_value("ready");
    EXPECT_EQ(std::future_status::ready, f.wait(0));
    EXPECT_EQ(std::future_status::ready, f.wait_for(0s));
    EXPECT_EQ("ready", f.get());
}

TEST_F(StdFuture, AValueFromAPlainOsThreadWakesTheWaitingCoroutine) {
    photon_std::promise<int> p;
    auto f = p.get_future();
    std::thread os([&] {
        std::this_thread::sleep_for(5ms);
        p.set_value(7);
    });
    EXPECT_EQ(7, f.get());
    os.join();
}

TEST_F(StdFuture, VoidFuturesWaitForSetValue) {
    photon_std::promise<void> p;
    photon_std::future<void> f = p.get_future();
    bool done = false;
    photon::thread_create11([&] {
        done = true;
        p.set_value();
    });
    f.get();
    EXPECT_TRUE(done);
    photon::wait_all();
}

TEST_F(StdFuture, ASecondValueThrowsPromiseAlreadySatisfied) {
    photon_std::promise<int> p;
    p.set_value(1);
    try {
        p.set_value(2);
        ADD_FAILURE() << "no exception";
    } catch (const std::future_error& e) {
        EXPECT_EQ(std::future_errc::promise_already_satisfied, e.code());
    }
    EXPECT_EQ(1, p.get_future().get());
}

// Photon's get() waited for ever once the promise was gone without a value.
TEST_F(StdFuture, APromiseDestroyedWithoutAValueBreaksTheFuture) {
    photon_std::future<int> f;
    EXPECT_FALSE(f.valid());
    {
        photon_std::promise<int> p;
        f = p.get_future();
        auto copy = p;  // Photon's promises are copyable: the last copy decides
        { auto gone = copy; }
        EXPECT_EQ(std::future_status::timeout, f.wait(0));
    }
    try {
        f.get();
        ADD_FAILURE() << "no exception";
    } catch (const std::future_error& e) {
        EXPECT_EQ(std::future_errc::broken_promise, e.code());
    }
}

TEST_F(StdFuture, ACopiedPromiseSetsTheValueForAll) {
    photon_std::promise<int> p;
    auto f = p.get_future();
    photon::thread_create11([q = p]() mutable { q.set_value(5); });
    photon_std::promise<int> moved = std::move(p);
    EXPECT_EQ(5, f.get());
    photon::wait_all();
}

TEST(StdCompatNames, DurationToMicrosecondsClampsAndRoundsUp) {
    EXPECT_EQ(0u, photon_std::__duration_to_microseconds(0s));
    EXPECT_EQ(0u, photon_std::__duration_to_microseconds(-5ms));
    EXPECT_EQ(1u, photon_std::__duration_to_microseconds(1ns));
    EXPECT_EQ(1500u, photon_std::__duration_to_microseconds(1500us));
    EXPECT_EQ(2u, photon_std::__duration_to_microseconds(1001ns));
    EXPECT_EQ(uint64_t(-1),
              photon_std::__duration_to_microseconds(std::chrono::hours(24 * 365 * 101)));
}

TEST(StdCompatNames, ThrowSystemErrorCarriesTheErrno) {
    try {
        photon_std::__throw_system_error(EPERM, "test");
        ADD_FAILURE() << "no exception";
    } catch (const std::system_error& e) {
        EXPECT_EQ(EPERM, e.code().value());
        EXPECT_EQ(std::generic_category(), e.code().category());
    }
}

TEST_F(StdFuture, ThreadIdConvertsFromAPhotonThread) {
    photon_std::thread::id id = photon::CURRENT;  // implicit, as in Photon
    EXPECT_EQ(photon_std::this_thread::get_id(), id);
    EXPECT_EQ((uint64_t)(uintptr_t)photon::CURRENT, id.value());
    EXPECT_NE(photon_std::thread::id(), id);
}

}  // namespace
