// photon/common/identity-pool.h: idle objects are reused up to the capacity,
// a failing constructor, scaling down idle objects, and destruction waiting
// for objects still out.
#include <photon/common/identity-pool.h>
#include <photon/photon.h>

#include <gtest/gtest.h>

#include <vector>

#include "../thread/test_util.h"

namespace {

using namespace photon_test;

class IdentityPoolTest : public VcpuTest {};

struct counted {
    static int alive;
    counted() { alive++; }
    ~counted() { alive--; }
};
int counted::alive = 0;

TEST_F(IdentityPoolTest, PutObjectsAreReusedAndThoseBeyondCapacityDestroyed) {
    counted::alive = 0;
    {
        IdentityPool<counted, 2> pool;
        counted* a = pool.get();
        counted* b = pool.get();
        counted* c = pool.get();
        ASSERT_TRUE(a && b && c);
        EXPECT_EQ(3, counted::alive);
        pool.put(a);
        pool.put(b);
        pool.put(c);  // 2 idle already: destroyed
        EXPECT_EQ(2, counted::alive);
        counted* again = pool.get();
        EXPECT_TRUE(again == a || again == b);
        pool.put(again);
        pool.put(nullptr);  // ignored
    }
    EXPECT_EQ(0, counted::alive);
}

int fail_ctor(void*, counted** out) {
    *out = nullptr;
    return -1;
}
int plain_dtor(void*, counted* p) {
    delete p;
    return 0;
}

// PhotonLibOS counted a failed get as out, and its destruction then waited forever.
TEST_F(IdentityPoolTest, AFailingConstructorGivesNullAndCountsNothingOut) {
    auto pool = new_identity_pool<counted>(4, {nullptr, &fail_ctor}, {nullptr, &plain_dtor});
    ASSERT_NE(nullptr, pool);
    EXPECT_EQ(nullptr, pool->get());
    delete_identity_pool(pool);  // returns: nothing is out
}

TEST_F(IdentityPoolTest, ScalingDestroysHalfOfWhatStayedIdle) {
    counted::alive = 0;
    auto pool = new_identity_pool<counted>(8);
    std::vector<counted*> v;
    for (int i = 0; i < 8; i++) v.push_back(pool->get());
    for (auto p : v) pool->put(p);
    EXPECT_EQ(8, counted::alive);
    pool->do_scale();  // the minimum idle since creation was 0
    EXPECT_EQ(8, counted::alive);
    pool->do_scale();  // 8 stayed idle the whole interval: 4 go
    EXPECT_EQ(4, counted::alive);
    pool->do_scale();
    EXPECT_EQ(2, counted::alive);
    EXPECT_EQ(0, pool->enable_autoscale());
    EXPECT_EQ(-1, pool->enable_autoscale());
    EXPECT_EQ(0, pool->disable_autoscale());
    EXPECT_EQ(-1, pool->disable_autoscale());
    EXPECT_EQ(0, pool->enable_autoscale());  // left on: destruction turns it off
    delete_identity_pool(pool);
    EXPECT_EQ(0, counted::alive);
}

TEST_F(IdentityPoolTest, DestructionWaitsForObjectsStillOut) {
    counted::alive = 0;
    auto pool = new_identity_pool<counted>(4);
    counted* out = pool->get();
    bool returned = false;
    photon::thread_create11([&] {
        photon::thread_usleep(20 * 1000);
        returned = true;
        pool->put(out);
    });
    delete_identity_pool(pool);
    EXPECT_TRUE(returned);
    EXPECT_EQ(0, counted::alive);
}

}  // namespace
