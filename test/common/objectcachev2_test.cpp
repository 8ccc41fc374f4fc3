// photon/common/objectcachev2.h: one construction for concurrent borrowers
// (coroutines and vCPUs), recycle, the failure cooldown, update(), and the
// reclaimer dropping idle keys but not held ones.
#include <photon/common/objectcachev2.h>
#include <photon/photon.h>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "../thread/test_util.h"

namespace {

using namespace photon_test;

class ObjectCacheV2Test : public VcpuTest {};

struct counted {
    static std::atomic<int> alive, made;
    int id;
    explicit counted(int i = 0) : id(i) {
        alive++;
        made++;
    }
    ~counted() { alive--; }
};
std::atomic<int> counted::alive{0}, counted::made{0};

void reset_counts() {
    counted::alive = 0;
    counted::made = 0;
}

using Cache = ObjectCacheV2<int, counted*>;

TEST_F(ObjectCacheV2Test, ConcurrentBorrowersOfOneKeyShareOneConstruction) {
    reset_counts();
    Cache oc(kLongUs);
    std::vector<counted*> got(10, nullptr);
    std::vector<task> tasks;
    for (int i = 0; i < 10; i++) {
        tasks.push_back(spawn([&, i] {
            auto b = oc.borrow(3, [] {
                photon::thread_usleep(10 * 1000);  // the others arrive meanwhile
                return new counted(3);
            });
            ASSERT_TRUE(b);
            got[i] = &*b;
        }));
    }
    for (auto& t : tasks) t.join();
    EXPECT_EQ(1, counted::made);
    for (auto p : got) EXPECT_EQ(got[0], p);
    EXPECT_EQ(3, got[0]->id);
}

TEST_F(ObjectCacheV2Test, BorrowersOnManyVcpusShareOneConstruction) {
    reset_counts();
    Cache oc(kLongUs);
    std::atomic<int> failures{0}, mismatches{0};
    std::atomic<counted*> first{nullptr};
    std::vector<std::thread> ths;
    for (int t = 0; t < 4; t++) {
        ths.emplace_back([&] {
            if (photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE) != 0) {
                failures++;
                return;
            }
            std::vector<task> tasks;
            for (int i = 0; i < 20; i++) {
                tasks.push_back(spawn([&] {
                    for (int round = 0; round < 10; round++) {
                        auto b = oc.borrow(1, [] {
                            photon::thread_usleep(10 * 1000);
                            return new counted(1);
                        });
                        if (!b) {
                            failures++;
                            return;
                        }
                        counted* expected = nullptr;
                        if (!first.compare_exchange_strong(expected, &*b) && expected != &*b)
                            mismatches++;
                        photon::thread_yield();
                    }
                }));
            }
            for (auto& t : tasks) t.join();
            photon::fini();
        });
    }
    for (auto& t : ths) t.join();
    EXPECT_EQ(0, failures);
    EXPECT_EQ(0, mismatches);
    EXPECT_EQ(1, counted::made);
}

TEST_F(ObjectCacheV2Test, RecycleMakesTheNextBorrowConstructAnew) {
    reset_counts();
    Cache oc(kLongUs);
    {
        auto b = oc.borrow(1, [] { return new counted(1); });
        ASSERT_TRUE(b);
        EXPECT_FALSE(b.recycle());
        b.recycle(true);
    }
    EXPECT_EQ(0, counted::alive);  // its last reference went with the Borrow
    auto b = oc.borrow(1, [] { return new counted(2); });
    ASSERT_TRUE(b);
    EXPECT_EQ(2, b->id);
    EXPECT_EQ(2, counted::made);
}

TEST_F(ObjectCacheV2Test, AFailedConstructionIsNotRetriedWithinTheCooldown) {
    Cache oc(kLongUs);
    int calls = 0;
    auto failing = [&]() -> counted* {
        calls++;
        return nullptr;
    };
    EXPECT_FALSE(oc.borrow(1, failing, kLongUs));
    EXPECT_FALSE(oc.borrow(1, failing, kLongUs));
    EXPECT_EQ(1, calls);
    EXPECT_FALSE(oc.borrow(1, failing));  // no cooldown: tried again
    EXPECT_EQ(2, calls);
    auto b = oc.borrow(1, [] { return new counted(5); });  // no cooldown given
    ASSERT_TRUE(b);
    EXPECT_EQ(5, (*b).id);
}

TEST_F(ObjectCacheV2Test, UpdateReplacesTheObjectWhileHoldersKeepTheOldOne) {
    reset_counts();
    Cache oc(kLongUs);
    auto old_b = oc.borrow(1, [] { return new counted(1); });
    auto new_b = oc.update(1, [] { return new counted(2); });
    EXPECT_EQ(1, old_b->id);
    EXPECT_EQ(2, new_b->id);
    EXPECT_EQ(2, oc.borrow(1, [] { return new counted(3); })->id);
    EXPECT_EQ(2, counted::made);
    old_b = std::move(new_b);  // the old object's last holder lets go
    EXPECT_FALSE(new_b);
    EXPECT_EQ(2, old_b->id);
    EXPECT_EQ(1, counted::alive);
}

TEST_F(ObjectCacheV2Test, TheReclaimerDropsIdleKeysButNotHeldOnes) {
    reset_counts();
    Cache oc(20 * 1000);
    auto held = oc.borrow(1, [] { return new counted(1); });
    oc.borrow(2, [] { return new counted(2); });
    EXPECT_EQ(2, counted::alive);
    // The timer's default period is a second; allow several.
    EXPECT_TRUE(wait_for([] { return counted::alive == 1; }, 10000));
    photon::thread_usleep(50 * 1000);
    EXPECT_EQ(1, counted::alive);
    EXPECT_EQ(1, held->id);
}

TEST_F(ObjectCacheV2Test, TheDefaultConstructorIsUsedWithoutOne) {
    reset_counts();
    Cache oc(kLongUs);
    auto b = oc.borrow(9);
    ASSERT_TRUE(b);
    EXPECT_EQ(0, b->id);
    Cache::Borrow empty;
    EXPECT_FALSE(empty);
}

}  // namespace
