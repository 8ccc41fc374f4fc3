// RangeLock (photon/common/range-lock.h): disjoint ranges held at once,
// overlapping ones waiting, the range reported by try_lock_wait, timeouts,
// unlock by range, adjust_range, empty and saturating ranges, the scoped
// guard, and mutual exclusion under load on one and on several vCPUs.
#include <photon/common/range-lock.h>

#include <photon/thread/thread.h>

#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include "../thread/test_util.h"

namespace {

using namespace photon_test;

class RangeLockTest : public VcpuTest {};

// A try: a Timeout of 0 never sleeps.
bool is_free(RangeLock& m, uint64_t offset, uint64_t length) {
    auto h = m.try_lock_wait2(offset, length, 0);
    if (!h) return false;
    m.unlock(h);
    return true;
}

TEST_F(RangeLockTest, DisjointRangesAreHeldAtOnce) {
    RangeLock m;
    auto a = m.lock(0, 4096);
    auto b = m.lock(4096, 4096);  // touches a: the end is exclusive
    auto c = m.lock(12288, 4096);
    ASSERT_TRUE(a && b && c);
    EXPECT_TRUE(is_free(m, 8192, 4096)) << "the gap";
    EXPECT_FALSE(is_free(m, 8191, 2));
    m.unlock(a);
    m.unlock(b);
    m.unlock(c);
    EXPECT_TRUE(is_free(m, 0, 1 << 20));
}

TEST_F(RangeLockTest, AnOverlappingLockWaitsUntilTheRangeIsReleased) {
    RangeLock m;
    auto h = m.lock(0, 4096);
    bool got = false;
    auto waiter = spawn([&] {
        auto w = m.lock(100, 8192);
        got = w != nullptr;
        m.unlock(w);
    });
    ASSERT_TRUE(until_sleeping(waiter.th));
    EXPECT_FALSE(got);
    m.unlock(h);
    waiter.join();
    EXPECT_TRUE(got);
}

TEST_F(RangeLockTest, TryLockWaitReportsTheRangeInTheWayAndAsksForARetry) {
    RangeLock m;
    auto h = m.lock(100, 100);
    uint64_t off = 50, len = 100;
    errno = 0;
    EXPECT_EQ(-1, m.try_lock_wait(off, len, 0));
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_EQ(100u, off) << "where the lock in the way starts";
    EXPECT_EQ(50u, len) << "up to the end asked for";

    int ret = 0, err = 0;
    auto waiter = spawn([&] {
        uint64_t o = 150, l = 10;
        ret = m.try_lock_wait(o, l);
        err = errno;
    });
    ASSERT_TRUE(until_sleeping(waiter.th));
    m.unlock(h);
    waiter.join();
    EXPECT_EQ(-1, ret) << "woken, not locked";
    EXPECT_EQ(EAGAIN, err);
    off = 150, len = 10;
    EXPECT_EQ(0, m.try_lock_wait(off, len));
    m.unlock(150, 10);
}

TEST_F(RangeLockTest, WaitsTimeOutWithEtimedout) {
    RangeLock m;
    auto h = m.lock(0, 10);
    errno = 0;
    EXPECT_EQ(nullptr, m.try_lock_wait2(5, 10, 0));
    EXPECT_EQ(ETIMEDOUT, errno);
    auto t0 = Clock::now();
    errno = 0;
    EXPECT_EQ(nullptr, m.lock(9, 1, 20 * 1000));
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_GE(us_since(t0), 15 * 1000u);
    m.unlock(h);
    EXPECT_NE(nullptr, h = m.lock(9, 1, 20 * 1000)) << "free now: no wait";
    m.unlock(h);
}

TEST_F(RangeLockTest, AnInterruptEndsTryLockWaitButNotLock) {
    RangeLock m;
    auto h = m.lock(0, 10);
    int ret = 0, err = 0;
    auto trier = spawn([&] {
        uint64_t o = 0, l = 10;
        ret = m.try_lock_wait(o, l);
        err = errno;
    });
    RangeLock::LockHandle* got = nullptr;
    auto locker = spawn([&] { got = m.lock(5, 1); });
    ASSERT_TRUE(until_sleeping(trier.th));
    ASSERT_TRUE(until_sleeping(locker.th));
    photon::thread_interrupt(trier.th, EINTR);
    photon::thread_interrupt(locker.th, EINTR);
    trier.join();
    EXPECT_EQ(-1, ret);
    EXPECT_EQ(EINTR, err);
    run_others();
    EXPECT_EQ(nullptr, got) << "lock() went back to waiting";
    m.unlock(h);
    locker.join();
    EXPECT_NE(nullptr, got);
    m.unlock(got);
}

TEST_F(RangeLockTest, UnlockByRangeReleasesOnlyTheLocksWhollyWithinIt) {
    RangeLock m;
    uint64_t o, l;
    o = 0, l = 10;
    ASSERT_EQ(0, m.try_lock_wait(o, l));
    o = 10, l = 10;
    ASSERT_EQ(0, m.try_lock_wait(o, l));
    o = 30, l = 10;
    ASSERT_EQ(0, m.try_lock_wait(o, l));
    m.unlock(5, 30);  // [5, 35): holds [10, 20) only
    EXPECT_FALSE(is_free(m, 0, 10));
    EXPECT_TRUE(is_free(m, 10, 10));
    EXPECT_FALSE(is_free(m, 30, 10));
    m.unlock(0, 100);
    EXPECT_TRUE(is_free(m, 0, 100));
}

// Photon's own test: a range unlock from elsewhere frees a lock() waiter; here
// the handle can still be unlocked afterwards (Photon freed it twice).
// Handles are never reused.
TEST_F(RangeLockTest, ARangeUnlockReleasesAHandleLockThatIsStillUnlockable) {
    RangeLock m;
    auto first = m.lock(0, 4096);
    auto unlocker = spawn([&] {
        photon::thread_usleep(1000);
        m.unlock(0, 8192);
    });
    auto second = m.lock(0, 8192);
    ASSERT_NE(nullptr, second);
    unlocker.join();
    errno = 0;
    EXPECT_EQ(-1, m.adjust_range(first, 0, 10));
    EXPECT_EQ(EINVAL, errno) << "released";
    m.unlock(first);  // a stale handle: harmless
    EXPECT_FALSE(is_free(m, 0, 1)) << "second still holds";
    m.unlock(second);
    EXPECT_TRUE(is_free(m, 0, 8192));
    m.unlock(second);  // twice: harmless too
    auto third = m.lock(0, 10);
    m.unlock(second);
    EXPECT_FALSE(is_free(m, 0, 10)) << "a stale handle never releases a newer lock";
    m.unlock(third);
}

// Photon's own test drops lock()'s handle and unlocks by range: nothing leaks
// (the sanitizer build checks).
TEST_F(RangeLockTest, AHandleDroppedAndUnlockedByRangeIsFreed) {
    RangeLock m;
    m.lock(0, 4096);
    m.lock(8192, 0);  // empty, never unlocked: freed with the RangeLock
    m.unlock(0, 4096);
    EXPECT_TRUE(is_free(m, 0, 4096));
}

TEST_F(RangeLockTest, AdjustRangeGrowsShrinksMovesAndRefusesOverlap) {
    RangeLock m;
    auto h = m.lock(100, 100);
    auto other = m.lock(300, 100);
    errno = 0;
    EXPECT_EQ(-1, m.adjust_range(h, 100, 250));
    EXPECT_EQ(EBUSY, errno);
    EXPECT_TRUE(is_free(m, 200, 100)) << "a refused adjust changes nothing";
    EXPECT_EQ(0, m.adjust_range(h, 50, 200));  // [50, 250)
    EXPECT_FALSE(is_free(m, 50, 1));
    EXPECT_FALSE(is_free(m, 249, 1));
    EXPECT_EQ(0, m.adjust_range(h, 500, 100)) << "past the neighbour: Photon refused";
    EXPECT_TRUE(is_free(m, 0, 300));
    EXPECT_FALSE(is_free(m, 550, 1));
    errno = 0;
    EXPECT_EQ(-1, m.adjust_range(nullptr, 0, 1));
    EXPECT_EQ(EINVAL, errno);
    m.unlock(h);
    m.unlock(other);
    EXPECT_TRUE(is_free(m, 0, 1000));
}

TEST_F(RangeLockTest, ShrinkingALockWakesTheWaiterItNoLongerBlocks) {
    RangeLock m;
    auto h = m.lock(0, 100);
    RangeLock::LockHandle* got = nullptr;
    auto waiter = spawn([&] { got = m.lock(80, 10); });
    ASSERT_TRUE(until_sleeping(waiter.th));
    ASSERT_EQ(0, m.adjust_range(h, 0, 50));
    waiter.join();
    EXPECT_NE(nullptr, got);
    m.unlock(got);
    m.unlock(h);
}

TEST_F(RangeLockTest, EmptyRangesLockNothingAndBlockNoOne) {
    RangeLock m;
    auto held = m.lock(0, 10);
    auto e = m.lock(5, 0);
    ASSERT_NE(nullptr, e) << "inside a held range, yet granted";
    uint64_t o = 5, l = 0;
    EXPECT_EQ(0, m.try_lock_wait(o, l));
    m.unlock(5, 0);
    EXPECT_TRUE(is_free(m, 20, 10));
    ASSERT_EQ(0, m.adjust_range(e, 20, 10)) << "an empty lock can grow";
    EXPECT_FALSE(is_free(m, 25, 1));
    ASSERT_EQ(0, m.adjust_range(e, 20, 0)) << "and shrink to nothing again";
    EXPECT_TRUE(is_free(m, 20, 10));
    m.unlock(e);
    m.unlock(held);
}

TEST_F(RangeLockTest, RangesEndingPastTheTopSaturate) {
    RangeLock m;
    auto top = m.lock(UINT64_MAX - 10, 100);
    ASSERT_NE(nullptr, top);
    EXPECT_FALSE(is_free(m, UINT64_MAX - 5, 1));
    EXPECT_TRUE(is_free(m, UINT64_MAX - 20, 10));
    m.unlock(top);
    EXPECT_TRUE(is_free(m, UINT64_MAX - 10, 10));
}

TEST_F(RangeLockTest, ScopedRangeLockHoldsForItsScope) {
    RangeLock m;
    {
        ScopedRangeLock g(m, 0, 100);
        EXPECT_FALSE(is_free(m, 50, 1));
    }
    EXPECT_TRUE(is_free(m, 0, 100));
}

// Each lock holder marks its bytes; two holders of one byte would collide.
struct byte_owners {
    std::vector<std::atomic<int>> owner;
    explicit byte_owners(size_t n) : owner(n) {}
    bool take(uint64_t off, uint64_t len, int who) {
        bool ok = true;
        for (uint64_t i = off; i < off + len; i++)
            if (owner[i].exchange(who) != 0) ok = false;
        return ok;
    }
    void give(uint64_t off, uint64_t len) {
        for (uint64_t i = off; i < off + len; i++) owner[i] = 0;
    }
};

// Runs `n` coroutines of random lock / hold / unlock rounds; returns collisions.
int hammer(RangeLock& m, byte_owners& bytes, int n, int rounds, int seed) {
    std::atomic<int> collisions{0};
    std::vector<task> tasks;
    for (int c = 0; c < n; c++) {
        tasks.push_back(spawn([&, c] {
            std::mt19937 rng(seed * 100 + c);
            for (int i = 0; i < rounds; i++) {
                uint64_t off = rng() % 200, len = 1 + rng() % 40;
                auto h = m.lock(off, len);
                if (!bytes.take(off, len, seed * 100 + c + 1)) collisions++;
                photon::thread_yield();
                bytes.give(off, len);
                m.unlock(h);
            }
        }));
    }
    for (auto& t : tasks) t.join();
    return collisions.load();
}

TEST_F(RangeLockTest, ManyCoroutinesNeverHoldTheSameByteAtOnce) {
    RangeLock m;
    byte_owners bytes(256);
    EXPECT_EQ(0, hammer(m, bytes, 16, 300, 1));
    EXPECT_TRUE(is_free(m, 0, 256));
}

TEST(RangeLockAcrossVcpus, CoroutinesOfSeveralVcpusExcludeEachOther) {
    RangeLock m;
    byte_owners bytes(256);
    std::atomic<int> collisions{0};
    std::vector<std::thread> vcpus;
    for (int v = 0; v < 3; v++) {
        vcpus.emplace_back([&, v] {
            if (photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE) != 0) {
                collisions += 1000;  // reported as a failure below
                return;
            }
            collisions += hammer(m, bytes, 4, 200, v + 1);
            photon::fini();
        });
    }
    for (auto& t : vcpus) t.join();
    EXPECT_EQ(0, collisions.load());
}

}  // namespace
