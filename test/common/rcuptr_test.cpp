// photon/common/rcuptr.h: a grace period waits for every online reader that
// may hold the old object (including ones that quiesced at the current count,
// and read_lock sections), not for offline ones; rcu_call defers reclamation;
// writers may be plain threads; custom domains clean up; and readers on
// several vCPUs keep reading valid objects while writers swap and free them
// (run under ASan to catch a use after free).
#include <photon/common/rcuptr.h>
#include <photon/photon.h>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "../thread/test_util.h"

namespace {

using namespace photon_test;

constexpr uint64_t kMagic = 0x5eedf00dcafe1234ULL;

struct Obj {
    static std::atomic<int> alive;
    uint64_t magic = kMagic;
    int val;
    explicit Obj(int v) : val(v) { alive++; }
    ~Obj() {
        magic = 0;
        alive--;
    }
};
std::atomic<int> Obj::alive{0};

class RCUPtrTest : public VcpuTest {
protected:
    void SetUp() override {
        VcpuTest::SetUp();
        Obj::alive = 0;
    }
    // Empties ptr and frees what it held.
    static void drain(RCUPtr<Obj>& ptr, RCUDomain* domain = nullptr) {
        auto last = ptr.update(nullptr, domain);
        ptr.synchronize(domain);
        delete last;
    }
};

// A writer coroutine: update to a new object, synchronize, then free the old.
task start_writer(RCUPtr<Obj>& ptr, int val, std::atomic<bool>& synced,
                  RCUDomain* domain = nullptr) {
    return spawn([&ptr, &synced, val, domain] {
        auto old = ptr.update(new Obj(val), domain);
        ptr.synchronize(domain);
        synced = true;
        delete old;
    });
}

// Lets the writer run for a while (a window for a writer that should not
// finish: a short one, as a loaded machine cannot stretch it into a pass);
// true if it finished meanwhile.
bool finishes_soon(std::atomic<bool>& synced) {
    return photon_test::wait_for([&] { return synced.load(); }, 20);
}

// Waits for a writer that should finish, as long as a slow machine needs.
bool finishes(std::atomic<bool>& synced) {
    return photon_test::wait_for([&] { return synced.load(); });
}

TEST_F(RCUPtrTest, UpdateReturnsTheOldPointerAndReadersSeeTheNewOne) {
    RCUPtr<Obj> ptr;
    EXPECT_EQ(nullptr, ptr.dereference());
    auto a = new Obj(1);
    EXPECT_EQ(nullptr, ptr.update(a));
    EXPECT_EQ(a, ptr.dereference());
    EXPECT_EQ(1, ptr->val);
    EXPECT_EQ(1, (*ptr).val);
    auto old = ptr.update(new Obj(2));
    EXPECT_EQ(a, old);
    EXPECT_EQ(2, ptr->val);
    ptr.synchronize();  // no reader: returns at once
    delete old;
    drain(ptr);
    EXPECT_EQ(0, Obj::alive.load());
}

// Photon treated a reader that quiesced before any writer (count 0) as
// offline and freed the object under it.
TEST_F(RCUPtrTest, SynchronizeWaitsForAReaderThatQuiescedBeforeAnyWriter) {
    RCUDomain domain;  // fresh: nobody has advanced its count
    RCUPtr<Obj> ptr;
    ptr.update(new Obj(1), &domain);
    photon::semaphore hold(0);
    int seen = 0;
    auto reader = spawn([&] {
        ptr.quiescent(&domain);  // online
        Obj* p = ptr.dereference();
        hold.wait(1);
        seen = (p->magic == kMagic) ? p->val : -1;
        ptr.quiescent(&domain);  // done with p
        domain.offline_current();
    });
    ASSERT_TRUE(until_sleeping(reader.th));
    std::atomic<bool> synced{false};
    auto writer = start_writer(ptr, 2, synced, &domain);
    EXPECT_FALSE(finishes_soon(synced));
    hold.signal(1);
    reader.join();
    writer.join();
    EXPECT_TRUE(synced);
    EXPECT_EQ(1, seen);
    drain(ptr, &domain);
}

// Photon skipped readers whose count equalled the writer's starting count.
TEST_F(RCUPtrTest, SynchronizeWaitsForAReaderThatQuiescedAtTheCurrentCount) {
    RCUPtr<Obj> ptr;
    ptr.update(new Obj(1));
    ptr.synchronize();  // advance the global count first
    photon::semaphore hold(0);
    int seen = 0;
    auto reader = spawn([&] {
        ptr.quiescent();
        Obj* p = ptr.dereference();
        hold.wait(1);
        seen = (p->magic == kMagic) ? p->val : -1;
        ptr.quiescent();
        global_rcu_domain()->offline_current();
    });
    ASSERT_TRUE(until_sleeping(reader.th));
    std::atomic<bool> synced{false};
    auto writer = start_writer(ptr, 2, synced);
    EXPECT_FALSE(finishes_soon(synced));
    hold.signal(1);
    reader.join();
    writer.join();
    EXPECT_EQ(1, seen);
    drain(ptr);
}

TEST_F(RCUPtrTest, AnOfflineReaderDoesNotDelaySynchronize) {
    RCUPtr<Obj> ptr;
    ptr.update(new Obj(1));
    photon::semaphore hold(0);
    auto reader = spawn([&] {
        ptr.quiescent();
        EXPECT_EQ(1, ptr->val);
        global_rcu_domain()->offline_current();
        hold.wait(1);  // a long sleep, offline
    });
    ASSERT_TRUE(until_sleeping(reader.th));
    std::atomic<bool> synced{false};
    auto writer = start_writer(ptr, 2, synced);
    EXPECT_TRUE(finishes(synced));
    hold.signal(1);
    reader.join();
    writer.join();
    drain(ptr);
}

TEST_F(RCUPtrTest, AReadLockSectionDelaysSynchronizeUntilReadUnlock) {
    RCUPtr<Obj> ptr;
    ptr.update(new Obj(1));
    photon::semaphore hold(0), after(0);
    int seen = 0;
    auto reader = spawn([&] {
        ptr.read_lock();  // never quiesced: read_lock makes it a reader
        ptr.read_lock();  // nested
        Obj* p = ptr.dereference();
        ptr.read_unlock();  // inner: still inside the section
        hold.wait(1);
        seen = (p->magic == kMagic) ? p->val : -1;
        ptr.read_unlock();
        after.wait(1);  // offline again: must not hold later writers
    });
    ASSERT_TRUE(until_sleeping(reader.th));
    std::atomic<bool> synced{false};
    auto writer = start_writer(ptr, 2, synced);
    EXPECT_FALSE(finishes_soon(synced));
    hold.signal(1);
    writer.join();
    EXPECT_EQ(1, seen);
    ASSERT_TRUE(until_sleeping(reader.th));
    std::atomic<bool> synced2{false};
    auto writer2 = start_writer(ptr, 3, synced2);
    EXPECT_TRUE(finishes(synced2));
    after.signal(1);
    reader.join();
    writer2.join();
    drain(ptr);
}

TEST_F(RCUPtrTest, ReadLockOfAnOnlineReaderLeavesItOnline) {
    RCUPtr<Obj> ptr;
    ptr.update(new Obj(1));
    photon::semaphore hold(0);
    auto reader = spawn([&] {
        ptr.quiescent();  // QSBR style: online until offline()
        Obj* p = ptr.dereference();
        ptr.read_lock();
        ptr.read_unlock();  // must not take us offline: we still hold p
        hold.wait(1);
        EXPECT_EQ(kMagic, p->magic);
        ptr.quiescent();
        global_rcu_domain()->offline_current();
    });
    ASSERT_TRUE(until_sleeping(reader.th));
    std::atomic<bool> synced{false};
    auto writer = start_writer(ptr, 2, synced);
    EXPECT_FALSE(finishes_soon(synced));
    hold.signal(1);
    reader.join();
    writer.join();
    drain(ptr);
}

struct reclaimer {
    std::atomic<int> calls{0};
    void reclaim(Obj* o) {
        calls++;
        delete o;
    }
};

TEST_F(RCUPtrTest, RcuCallReclaimsAfterTheGracePeriodWithoutWaiting) {
    RCUPtr<Obj> ptr;
    ptr.update(new Obj(1));
    photon::semaphore hold(0);
    auto reader = spawn([&] {
        ptr.quiescent();
        Obj* p = ptr.dereference();
        hold.wait(1);
        EXPECT_EQ(kMagic, p->magic);
        ptr.quiescent();
        global_rcu_domain()->offline_current();
    });
    ASSERT_TRUE(until_sleeping(reader.th));
    reclaimer r;
    ptr.rcu_call(ptr.update(new Obj(2)), nullptr, {&r, &reclaimer::reclaim});  // returns at once
    ptr.rcu_call(ptr.update(new Obj(3)));                                      // default: delete
    photon::thread_usleep(10 * 1000);
    EXPECT_EQ(0, r.calls.load());
    EXPECT_EQ(3, Obj::alive.load());
    hold.signal(1);
    reader.join();
    EXPECT_TRUE(wait_for([&] { return r.calls == 1 && Obj::alive == 1; }));
    drain(ptr);
    EXPECT_EQ(0, Obj::alive.load());
}

TEST_F(RCUPtrTest, APlainThreadCanBeTheWriter) {
    RCUPtr<Obj> ptr;
    ptr.update(new Obj(1));
    photon::semaphore hold(0);
    auto reader = spawn([&] {
        ptr.quiescent();
        Obj* p = ptr.dereference();
        hold.wait(1);
        EXPECT_EQ(kMagic, p->magic);
        ptr.quiescent();
        global_rcu_domain()->offline_current();
    });
    ASSERT_TRUE(until_sleeping(reader.th));
    std::atomic<bool> synced{false};
    std::thread writer([&] {
        auto old = ptr.update(new Obj(2));
        ptr.synchronize();  // sleeps the OS thread between scans
        synced = true;
        delete old;
    });
    EXPECT_FALSE(finishes_soon(synced));
    hold.signal(1);
    reader.join();
    EXPECT_TRUE(wait_for([&] { return synced.load(); }));
    writer.join();
    drain(ptr);
}

TEST_F(RCUPtrTest, ADomainFreesTheReadersStillRegisteredWhenDestroyed) {
    {
        RCUDomain domain;
        RCUPtr<Obj> ptr;
        ptr.update(new Obj(1), &domain);
        ptr.quiescent(&domain);  // the main coroutine registers, and stays
        auto t = spawn([&] {
            ptr.quiescent(&domain);
            ptr.quiescent(&domain);
        });  // registers and leaves at its end
        t.join();
        int n = 0;
        for (auto r : domain.tlist) n += (r != nullptr);
        EXPECT_EQ(1, n);
        domain.offline_current();
        drain(ptr, &domain);
    }  // LeakSanitizer / ASan would report a lost or twice-freed reader
    EXPECT_EQ(0, Obj::alive.load());
}

// Readers on three vCPUs check every object they reach; two writers (one per
// vCPU) swap objects and free the old ones, by synchronize() and by rcu_call().
// About 300 ms: the main writer stops everyone at its deadline.
TEST_F(RCUPtrTest, ReadersOnSeveralVcpusNeverSeeAFreedObject) {
    constexpr int kReaderThreads = 3, kReadersEach = 4, kMaxReads = 5000000;
    constexpr int kMaxUpdates = 20000;
    RCUPtr<Obj> ptr;
    ptr.update(new Obj(0));
    std::atomic<bool> stop{false};
    std::atomic<long> reads{0}, bad{0}, updates{0};
    std::atomic<int> started{0};

    std::vector<std::thread> threads;
    for (int t = 0; t < kReaderThreads; t++) {
        threads.emplace_back([&] {
            if (photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE) != 0)
                return bad++, void();
            std::vector<task> readers;
            for (int i = 0; i < kReadersEach; i++) {
                readers.push_back(spawn([&] {
                    started++;
                    ptr.quiescent();  // online before the first read (the contract)
                    for (int j = 0; j < kMaxReads && !stop; j++) {
                        Obj* p = ptr.dereference();
                        if (p->magic != kMagic || p->val < 0) bad++;
                        if (j % 8 == 0) photon::thread_yield();  // hold p across a switch
                        if (p->magic != kMagic) bad++;
                        ptr.quiescent();
                        reads++;
                    }
                    global_rcu_domain()->offline_current();
                }));
            }
            for (auto& r : readers) r.join();
            photon::fini();
        });
    }
    // A second writer on its own vCPU reclaims through rcu_call.
    threads.emplace_back([&] {
        if (photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE) != 0) return bad++, void();
        for (int i = 1; i <= kMaxUpdates && !stop; i++) {
            ptr.rcu_call(ptr.update(new Obj(i)));
            updates++;
            photon::thread_usleep(50);
        }
        photon::fini();  // waits for its pending rcu_calls
    });
    // Swap only while the readers read.
    EXPECT_TRUE(wait_for([&] { return started == kReaderThreads * kReadersEach; }, 20000));
    const auto deadline = Clock::now() + std::chrono::milliseconds(300);
    for (int i = 1; i <= kMaxUpdates && Clock::now() < deadline; i++) {
        auto old = ptr.update(new Obj(i));
        ptr.synchronize();
        delete old;
        updates++;
        photon::thread_yield();
    }
    stop = true;
    for (auto& t : threads) t.join();
    drain(ptr);
    EXPECT_EQ(0, bad.load());
    EXPECT_GT(reads.load(), 0);
    EXPECT_GT(updates.load(), 0);
    EXPECT_EQ(0, Obj::alive.load());  // every replaced object was reclaimed once
}

}  // namespace
