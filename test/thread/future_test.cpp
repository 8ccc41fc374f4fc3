// photon/thread/future.h and Awaiter's timeout: a value set by another
// coroutine, another vCPU or a plain OS thread reaches its waiter; a timed
// wait gives up with ETIMEDOUT and a later wait still gets the value.
#include <photon/thread/future.h>
#include <photon/thread/workerpool.h>

#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "test_util.h"

namespace {

using namespace photon_test;

class FutureTest : public VcpuTest {};

TEST_F(FutureTest, AValueSetByAnotherCoroutineReachesTheWaiter) {
    photon::Future<std::string> f;
    auto p = f.get_promise();
    photon::thread_create11([p]() mutable {
        photon::thread_usleep(2000);
        p.set_value(std::string("photon"));
    });
    EXPECT_EQ("photon", f.get());
    EXPECT_EQ(0, f.wait());  // already got
    photon::wait_all();
}

TEST_F(FutureTest, AValueSetBeforeTheWaitIsThereAtOnce) {
    photon::Future<int> f;
    f.get_promise().set_value(42);
    EXPECT_EQ(0, f.wait(photon::Timeout(0)));
    EXPECT_EQ(42, f.get_value());
}

TEST_F(FutureTest, ATimedWaitGivesUpWithEtimedoutAndALaterWaitGetsTheValue) {
    photon::Future<int> f;
    auto p = f.get_promise();
    errno = 0;
    EXPECT_EQ(-1, f.wait(5000));
    EXPECT_EQ(ETIMEDOUT, errno);
    photon::thread_create11([p]() mutable {
        photon::thread_usleep(2000);
        p.set_value(7);
    });
    EXPECT_EQ(0, f.wait_for(kLongUs));
    EXPECT_EQ(7, f.get());
    photon::wait_all();
}

TEST_F(FutureTest, AValueFromAPlainThreadOrAnotherVcpuWakesACoroutine) {
    photon::Future<int> f;
    auto p = f.get_promise();
    std::thread t([p]() mutable {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        p.set_value(1);
    });
    EXPECT_EQ(1, f.get());
    t.join();
    photon::WorkPool other(1);
    photon::Future<int> g;
    auto q = g.get_promise();
    other.async_call(new auto([q]() mutable { q.set_value(2); }));
    EXPECT_EQ(2, g.get());
}

TEST(FutureStd, APlainThreadWaitsWithStdContextAndTimesOut) {
    photon::Future<int, photon::StdContext> f;
    auto p = f.get_promise();
    errno = 0;
    EXPECT_EQ(-1, f.wait(3000));
    EXPECT_EQ(ETIMEDOUT, errno);
    std::thread t([p]() mutable { p.set_value(9); });
    EXPECT_EQ(9, f.get());
    t.join();
}

}  // namespace
