// The photon_std work pool (photon/thread/std-compat.h): work_pool_init and
// work_pool_fini, photon_std::thread spread over the pool vCPUs, and
// this_thread::migrate().
#include <photon/thread/std-compat.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <system_error>

#include "test_util.h"

namespace {

using namespace photon_test;

class StdWorkPool : public VcpuTest {
protected:
    void TearDown() override {
        photon_std::work_pool_fini();  // after a failed test; -1 otherwise
        VcpuTest::TearDown();
    }
};

int error_of(void (*f)()) {
    try {
        f();
    } catch (const std::system_error& e) {
        return e.code().value();
    }
    return 0;
}

TEST_F(StdWorkPool, InitOnceAndFiniOnce) {
    errno = 0;
    EXPECT_EQ(-1, photon_std::work_pool_init(0));
    EXPECT_EQ(EINVAL, errno);
    ASSERT_EQ(0, photon_std::work_pool_init(2, photon::INIT_EVENT_NONE));
    EXPECT_EQ(3u, photon::get_vcpu_num());
    errno = 0;
    EXPECT_EQ(-1, photon_std::work_pool_init(1, photon::INIT_EVENT_NONE));
    EXPECT_EQ(EALREADY, errno);
    EXPECT_EQ(0, photon_std::work_pool_fini());
    EXPECT_EQ(1u, photon::get_vcpu_num());
    errno = 0;
    EXPECT_EQ(-1, photon_std::work_pool_fini());
    EXPECT_EQ(EALREADY, errno);
}

TEST_F(StdWorkPool, ThreadsLandOnPoolVcpusRoundRobin) {
    ASSERT_EQ(0, photon_std::work_pool_init(2, photon::INIT_EVENT_NONE));
    photon::vcpu_base* ran_on[2] = {};
    for (auto& v : ran_on) {
        photon_std::thread t([&v] { v = photon::get_vcpu(current_uncached()); });
        t.join();
    }
    EXPECT_NE(nullptr, ran_on[0]);
    EXPECT_NE(photon::get_vcpu(), ran_on[0]);
    EXPECT_NE(photon::get_vcpu(), ran_on[1]);
    EXPECT_NE(ran_on[0], ran_on[1]);
    EXPECT_EQ(0, photon_std::work_pool_fini());
}

TEST_F(StdWorkPool, ThreadsStayOnTheCallersVcpuWithoutAPool) {
    photon::vcpu_base* ran_on = nullptr;
    photon_std::thread t([&] { ran_on = photon::get_vcpu(current_uncached()); });
    t.join();
    EXPECT_EQ(photon::get_vcpu(), ran_on);
}

TEST_F(StdWorkPool, ThisThreadMigrateMovesTheCallerIntoThePool) {
    ASSERT_EQ(0, photon_std::work_pool_init(1, photon::INIT_EVENT_NONE));
    photon::vcpu_base *before = nullptr, *after = nullptr;
    int err = -1;
    auto t = spawn([&] {
        before = photon::get_vcpu(photon::CURRENT);
        err = error_of([] { photon_std::this_thread::migrate(); });
        after = photon::get_vcpu(current_uncached());
    });
    t.join();
    EXPECT_EQ(0, err);
    EXPECT_EQ(photon::get_vcpu(), before);
    EXPECT_NE(before, after);
    EXPECT_NE(nullptr, after);
    EXPECT_EQ(EINVAL, error_of([] { photon_std::this_thread::migrate(); }))
        << "the main coroutine cannot move";
    EXPECT_EQ(0, photon_std::work_pool_fini());
}

TEST_F(StdWorkPool, ThisThreadMigrateWithoutAPoolThrowsEperm) {
    EXPECT_EQ(EPERM, error_of([] { photon_std::this_thread::migrate(); }));
}

}  // namespace
