// photon/common/expirecontainer.h: entries expire on photon time (by hand and
// by the timer), refresh and keep_alive extend them, the count limit drops
// the oldest, and ObjectCache's reference counts (borrow/acquire/release,
// recycle, moveout, failures) across coroutines and vCPUs.
#include <photon/common/expirecontainer.h>
#include <photon/photon.h>

#include <gtest/gtest.h>

#include "../util/wait.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "../thread/test_util.h"

namespace {

using namespace photon_test;

class ExpireContainerTest : public VcpuTest {};

// Sleeps until photon::now has passed `deadline` (bounded); true if it has.
bool wait_past(uint64_t deadline) {
    return wait_for([&] { return photon::now > deadline; }, 10000);
}

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

TEST_F(ExpireContainerTest, InsertedPayloadIsFoundByKeyAndADuplicateIsRefused) {
    ExpireContainer<std::string, int, bool> c(kLongUs);
    char key[] = "hello";
    auto it = c.insert(key, -1, false);
    ASSERT_NE(c.end(), it);
    key[0] = 'j';  // the container keeps its own copy of the key
    auto found = c.find("hello");
    ASSERT_NE(c.end(), found);
    EXPECT_EQ("hello", (*found)->key());
    EXPECT_EQ("hello", found->get_payload<0>());
    EXPECT_EQ(-1, (*found)->get_payload<1>());
    (*found)->get_payload<2>() = true;
    EXPECT_TRUE(c.find("hello")->get_payload<2>());
    EXPECT_EQ(c.end(), c.insert("hello", 5, true));
    EXPECT_EQ(-1, c.find("hello")->get_payload<1>());  // unchanged
    EXPECT_EQ(c.end(), c.find("jello"));
    EXPECT_EQ(1u, c.size());
    EXPECT_EQ(kLongUs, c.lifespan());
}

TEST_F(ExpireContainerTest, AnEntryLivesItsLifespanThenExpire_DropsIt) {
    const uint64_t lifespan = 1000 * 1000;
    ExpireContainer<int, int> c(lifespan, kLongUs);  // no timer in the way
    auto it = c.insert(1, 10);
    ASSERT_NE(c.end(), it);
    const uint64_t deadline = (*it)->_timeout.expiration();
    c.expire();
    // A stall longer than the lifespan would excuse it.
    EXPECT_TRUE(c.find(1) != c.end() || photon::now > deadline);
    ASSERT_TRUE(wait_past(deadline));
    c.expire();
    EXPECT_EQ(c.end(), c.find(1));
    EXPECT_EQ(0u, c.size());
}

TEST_F(ExpireContainerTest, TheTimerExpiresEntriesWithoutHelp) {
    ExpireContainer<int, int> c(20 * 1000, 5 * 1000);
    for (int i = 0; i < 5; i++) c.insert(i, i);
    EXPECT_TRUE(wait_for([&] { return c.size() == 0; }, 10000));
}

TEST_F(ExpireContainerTest, RefreshRestartsTheLifespan) {
    const uint64_t lifespan = 1000 * 1000;
    ExpireContainer<std::string, int> c(lifespan, kLongUs);
    auto a = c.insert("a", 0);
    auto b = c.insert("b", 1);
    ASSERT_NE(c.end(), a);
    ASSERT_NE(c.end(), b);
    const uint64_t b_deadline = (*b)->_timeout.expiration();
    photon::thread_usleep(300 * 1000);
    c.refresh(*a);
    const uint64_t a_deadline = (*a)->_timeout.expiration();
    EXPECT_GE(a_deadline, b_deadline + 300 * 1000);
    ASSERT_TRUE(wait_past(b_deadline));
    c.expire();
    EXPECT_EQ(c.end(), c.find("b"));
    EXPECT_TRUE(c.find("a") != c.end() || photon::now > a_deadline);
}

TEST_F(ExpireContainerTest, ANumberLimitDropsTheOldestFirst) {
    ExpireContainer<int, int> c(-1ULL, -1ULL, 3);
    for (int i = 0; i < 5; i++) ASSERT_NE(c.end(), c.insert(i, i));
    c.expire();
    EXPECT_EQ(3u, c.size());
    for (int i = 0; i < 2; i++) EXPECT_EQ(c.end(), c.find(i));
    for (int i = 2; i < 5; i++) EXPECT_NE(c.end(), c.find(i));
    int seen = 0;
    for (auto it = c.begin(); it != c.end(); ++it) {
        EXPECT_GE(it->key(), 2);
        seen++;
    }
    EXPECT_EQ(3, seen);
    c.clear();
    EXPECT_EQ(0u, c.size());
    EXPECT_EQ(c.end(), c.begin());
}

TEST_F(ExpireContainerTest, DestroyingAContainerFreesItsPayloads) {
    reset_counts();
    {
        ExpireContainer<int, std::shared_ptr<counted>> c(kLongUs);
        c.insert(1, std::make_shared<counted>());
        c.insert(2, std::make_shared<counted>());
        EXPECT_EQ(2, counted::alive);
    }
    EXPECT_EQ(0, counted::alive);
}

TEST_F(ExpireContainerTest, ExpireListKeepsAliveOnlyWhatIsThereUnlessAskedToInsert) {
    const uint64_t lifespan = 1000 * 1000;
    ExpireList<std::string> l(lifespan, kLongUs);
    EXPECT_FALSE(l.keep_alive("k", false));
    EXPECT_EQ(0u, l.size());
    EXPECT_TRUE(l.keep_alive("k", true));
    auto it = l.find("k");
    ASSERT_NE(l.end(), it);
    EXPECT_EQ("k", (*it)->key());
    const uint64_t first = (*it)->_timeout.expiration();
    photon::thread_usleep(300 * 1000);
    EXPECT_TRUE(l.keep_alive("k", false));  // refreshed
    const uint64_t second = l.find("k")->_timeout.expiration();
    EXPECT_GE(second, first + 300 * 1000);
    ASSERT_TRUE(wait_past(first));
    l.expire();
    EXPECT_TRUE(l.find("k") != l.end() || photon::now > second);
    ASSERT_TRUE(wait_past(second));
    // Expired, though not yet collected: not kept alive, and collected on the way out.
    EXPECT_FALSE(l.keep_alive("k", false));
    EXPECT_EQ(l.end(), l.find("k"));
    EXPECT_TRUE(l.keep_alive("k", true));  // back as a new entry
    EXPECT_NE(l.end(), l.find("k"));
}

// ---- ObjectCache ------------------------------------------------------------

using Cache = ObjectCache<int, counted*>;

TEST_F(ExpireContainerTest, ConcurrentBorrowsOfOneKeyConstructItOnce) {
    reset_counts();
    Cache oc(kLongUs);
    std::vector<counted*> got(10, nullptr);
    std::vector<task> tasks;
    for (int i = 0; i < 10; i++) {
        tasks.push_back(spawn([&, i] {
            auto b = oc.borrow(7, [] {
                photon::thread_usleep(10 * 1000);  // the others arrive meanwhile
                return new counted(7);
            });
            ASSERT_TRUE(b);
            got[i] = &*b;
            photon::thread_usleep(1000);
        }));
    }
    for (auto& t : tasks) t.join();
    EXPECT_EQ(1, counted::made);
    for (auto p : got) EXPECT_EQ(got[0], p);
    EXPECT_EQ(7, got[0]->id);
    EXPECT_EQ(1, counted::alive);  // idle, not expired yet
}

TEST_F(ExpireContainerTest, ConcurrentBorrowsFromManyVcpusConstructOnce) {
    reset_counts();
    Cache oc(kLongUs);
    std::atomic<int> mismatches{0}, failures{0};
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
                    auto b = oc.borrow(1, [] {
                        photon::thread_usleep(20 * 1000);
                        return new counted(1);
                    });
                    if (!b) {
                        failures++;
                        return;
                    }
                    counted* expected = nullptr;
                    if (!first.compare_exchange_strong(expected, &*b) && expected != &*b)
                        mismatches++;
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

TEST_F(ExpireContainerTest, AcquireCountsReferencesAndAnExtraReleaseIsRefused) {
    reset_counts();
    Cache oc(kLongUs);
    auto a = oc.acquire(1, [] { return new counted(1); });
    auto b = oc.acquire(1, [] { return new counted(2); });
    ASSERT_NE(nullptr, a);
    EXPECT_EQ(a, b);
    EXPECT_EQ(1, counted::made);
    EXPECT_EQ(nullptr, oc.release(1));
    EXPECT_EQ(nullptr, oc.release(1));
    errno = 0;
    EXPECT_EQ(nullptr, oc.release(1));  // nobody holds it
    EXPECT_EQ(EINVAL, errno);
    errno = 0;
    EXPECT_EQ(nullptr, oc.release(42));  // no such key
    EXPECT_EQ(1, counted::alive);
    // Still usable: the count did not wrap.
    EXPECT_EQ(a, oc.acquire(1, [] { return new counted(3); }));
    EXPECT_EQ(nullptr, oc.release(1));
    errno = 0;
    EXPECT_EQ(nullptr, oc.ref_release(nullptr));
    EXPECT_EQ(EINVAL, errno);
}

TEST_F(ExpireContainerTest, AnIdleObjectExpiresButAHeldOneDoesNot) {
    reset_counts();
    const uint64_t lifespan = 20 * 1000;
    Cache oc(lifespan, kLongUs);
    auto held = oc.ref_acquire(1, [] { return new counted(1); });
    ASSERT_NE(nullptr, held);
    ASSERT_NE(nullptr, oc.acquire(2, [] { return new counted(2); }));
    oc.release(2);
    auto idle = oc.find(2);
    ASSERT_NE(oc.end(), idle);
    ASSERT_TRUE(wait_past((*idle)->_timeout.expiration()));
    photon::thread_usleep(lifespan);
    oc.expire();
    EXPECT_EQ(oc.end(), oc.find(2));
    EXPECT_NE(oc.end(), oc.find(1));
    EXPECT_EQ(1, counted::alive);
    const uint64_t released_at = photon::now;
    oc.ref_release(held);
    ASSERT_TRUE(wait_past(released_at + lifespan));
    // Its expiry counts from the release's own clock reading, which a slow
    // (emulated) machine may take later than released_at: expire until due.
    EXPECT_TRUE(photon_test::wait_for([&] {
        oc.expire();
        return counted::alive == 0;
    }));
    EXPECT_EQ(0, counted::alive);
    EXPECT_EQ(0u, oc.size());
}

TEST_F(ExpireContainerTest, RecycleWaitsForTheOtherHoldersThenDestroys) {
    reset_counts();
    Cache oc(kLongUs);
    ASSERT_NE(nullptr, oc.acquire(1, [] { return new counted(1); }));
    ASSERT_NE(nullptr, oc.acquire(1, [] { return new counted(1); }));
    bool recycled = false;
    auto recycler = spawn([&] {
        oc.release(1, true);
        recycled = true;
    });
    ASSERT_TRUE(until_sleeping(recycler.th));
    EXPECT_FALSE(recycled);
    // A new taker waits for the recycle to finish, then makes a fresh object.
    counted* fresh = nullptr;
    auto taker = spawn([&] { fresh = oc.acquire(1, [] { return new counted(2); }); });
    ASSERT_TRUE(until_sleeping(taker.th));
    EXPECT_EQ(1, counted::alive);
    oc.release(1);  // the last other holder
    recycler.join();
    taker.join();
    EXPECT_TRUE(recycled);
    ASSERT_NE(nullptr, fresh);
    EXPECT_EQ(2, fresh->id);
    EXPECT_EQ(1, counted::alive);
    oc.release(1);
}

TEST_F(ExpireContainerTest, RecycleWithoutDestroyHandsTheObjectOver) {
    reset_counts();
    Cache oc(kLongUs);
    auto a = oc.acquire(1, [] { return new counted(1); });
    counted* mine = oc.release(1, true, false);
    EXPECT_EQ(a, mine);
    EXPECT_EQ(0u, oc.size());
    EXPECT_EQ(1, counted::alive);
    delete mine;
}

TEST_F(ExpireContainerTest, AFailedConstructionCoolsDownItsConcurrentWaitersOnly) {
    Cache oc(kLongUs);
    int calls = 0;
    auto failing = [&]() -> counted* {
        calls++;
        photon::thread_usleep(10 * 1000);
        return nullptr;
    };
    std::vector<task> tasks;
    int empties = 0;
    for (int i = 0; i < 5; i++) {
        tasks.push_back(spawn([&] {
            auto b = oc.borrow(1, failing, kLongUs);
            if (!b) empties++;
        }));
    }
    for (auto& t : tasks) t.join();
    EXPECT_EQ(1, calls);
    EXPECT_EQ(5, empties);
    // As Photon: once nobody holds the entry, the next taker tries again.
    EXPECT_EQ(nullptr, oc.acquire(1, failing, kLongUs));
    EXPECT_EQ(2, calls);
}

TEST_F(ExpireContainerTest, BorrowsMoveAndAMoveAssignmentReleasesTheOldOne) {
    reset_counts();
    Cache oc(kLongUs);
    auto b1 = oc.borrow(1, [] { return new counted(1); });
    auto b2 = oc.borrow(2, [] { return new counted(2); });
    ASSERT_TRUE(b1);
    ASSERT_TRUE(b2);
    Cache::Borrow b3(std::move(b2));
    EXPECT_FALSE(b2);
    ASSERT_TRUE(b3);
    b1 = std::move(b3);  // key 1 is released here
    EXPECT_FALSE(b3);
    errno = 0;
    EXPECT_EQ(nullptr, oc.release(1));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(2, b1->id);
    EXPECT_EQ(2, counted::alive);
}

TEST_F(ExpireContainerTest, AMovedOutBorrowLeavesTheObjectToItsTaker) {
    reset_counts();
    Cache oc(kLongUs);
    counted* taken = nullptr;
    {
        auto b = oc.borrow(1, [] { return new counted(1); });
        ASSERT_TRUE(b);
        taken = &*b;
        b.recycle(true);
        b.moveout(true);
        EXPECT_TRUE(b.moved());
    }
    EXPECT_EQ(0u, oc.size());
    EXPECT_EQ(1, counted::alive);
    delete taken;
}

TEST_F(ExpireContainerTest, ACacheOverItsLimitDropsIdleObjectsOnly) {
    reset_counts();
    Cache oc(-1ULL, -1ULL, 10);
    for (int i = 0; i < 20; i++) EXPECT_NE(nullptr, oc.acquire(i, [i] { return new counted(i); }));
    EXPECT_EQ(20u, oc.size());  // all held
    for (int i = 0; i < 10; i++) oc.release(i);
    EXPECT_EQ(10u, oc.size());
    for (int i = 10; i < 20; i++) EXPECT_NE(oc.end(), oc.find(i));
    for (int i = 10; i < 20; i++) oc.release(i);
    EXPECT_EQ(10u, oc.size());
    EXPECT_EQ(10, counted::alive);
}

TEST_F(ExpireContainerTest, ClearKeepsBorrowedObjects) {
    reset_counts();
    Cache oc(kLongUs);
    auto held = oc.borrow(1);
    { auto idle = oc.borrow(2); }
    oc.clear();
    EXPECT_EQ(1u, oc.size());
    EXPECT_EQ(1, counted::alive);
    EXPECT_EQ(0, held->id);
}

TEST_F(ExpireContainerTest, DestroyingACacheFreesEveryObject) {
    reset_counts();
    {
        Cache oc(kLongUs);
        oc.borrow(1);
        oc.borrow(2);
        EXPECT_EQ(2, counted::alive);
    }
    EXPECT_EQ(0, counted::alive);
}

struct node : intrusive_list_node<node> {
    int id;
    explicit node(int i) : id(i) { counted::alive++; }
    ~node() { counted::alive--; }
};

TEST_F(ExpireContainerTest, AListCacheKeepsAListPerKey) {
    reset_counts();
    using ListCache = ObjectCache<int, intrusive_list<node>>;
    ListCache oc(kLongUs);
    for (int i = 0; i < 3; i++) {
        auto& l = oc.acquire(0, []() -> intrusive_list<node> { return {}; });
        l.push_back(new node(i));
    }
    for (int i = 0; i < 3; i++) oc.release(0);
    {
        auto b = oc.borrow(0);
        ASSERT_TRUE(b);
        EXPECT_EQ(0, b->front()->id);
        EXPECT_EQ(2, (*b).back()->id);
    }
    ASSERT_NE(nullptr, oc.ref_acquire(0, []() -> intrusive_list<node> { return {}; }));
    node* front = oc.release(0, true, false);  // the nodes are handed over
    ASSERT_NE(nullptr, front);
    EXPECT_EQ(3, counted::alive);
    intrusive_list<node> mine;
    mine.node = front;
    int n = 0;
    while (auto x = mine.pop_front()) {
        EXPECT_EQ(n++, x->id);
        delete x;
    }
    EXPECT_EQ(3, n);
    EXPECT_EQ(0u, oc.size());
    // Destruction frees the nodes of a list still cached.
    oc.acquire(5, [] {
        intrusive_list<node> l;
        l.push_back(new node(9));
        return l;
    });
    oc.release(5);
}

}  // namespace
