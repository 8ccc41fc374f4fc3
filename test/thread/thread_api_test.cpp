// The parts of photon/thread/thread.h added to match PhotonLibOS's: qspinlock,
// qrwlock, waitq's own interface, locker's do_lock = 1, the predicated
// condition-variable waits, stackful_malloc/free, the default event engine
// queries and the small compatibility names.
#include <photon/photon.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "test_util.h"

namespace {

using namespace photon_test;

class ThreadApi : public VcpuTest {};

// ---- qspinlock -------------------------------------------------------------

TEST(QSpinlock, TryLockFailsWhileHeldAndLockedReportsIt) {
    photon::qspinlock l;
    EXPECT_FALSE(l.locked());
    EXPECT_EQ(0, l.try_lock());
    EXPECT_TRUE(l.locked());
    EXPECT_EQ(-1, l.try_lock());
    l.unlock();
    EXPECT_FALSE(l.locked());
    EXPECT_EQ(0, l.lock());
    EXPECT_EQ(-1, l.try_lock());
    l.unlock();
}

// Photon kept one queue node per OS thread: a second qspinlock taken while
// holding one corrupted both queues.
TEST(QSpinlock, OneThreadMayHoldManyAtOnce) {
    constexpr int n = 20;  // past the per-thread node array
    photon::qspinlock locks[n];
    for (auto& l : locks) EXPECT_EQ(0, l.lock());
    for (auto& l : locks) EXPECT_TRUE(l.locked());
    for (int i = n - 1; i >= 0; i -= 2) locks[i].unlock();  // out of order
    for (int i = n - 2; i >= 0; i -= 2) locks[i].unlock();
    for (auto& l : locks) EXPECT_FALSE(l.locked());
}

TEST(QSpinlock, MayBeUnlockedOnAnotherThread) {
    photon::qspinlock l;
    ASSERT_EQ(0, l.lock());
    std::thread([&] { l.unlock(); }).join();
    EXPECT_FALSE(l.locked());
    EXPECT_EQ(0, l.try_lock());
    l.unlock();
}

TEST(QSpinlock, ExcludesAcrossOsThreads) {
    photon::qspinlock l;
    photon::qspinlock other;  // nested inside, to mix node use
    uint64_t counter = 0;     // guarded by l
    constexpr int kThreads = 4, kRounds = 20000;
    std::vector<std::thread> ts;
    for (int t = 0; t < kThreads; t++)
        ts.emplace_back([&] {
            for (int i = 0; i < kRounds; i++) {
                l.lock();
                if (i % 7 == 0) {
                    other.lock();
                    other.unlock();
                }
                counter++;
                l.unlock();
            }
        });
    for (auto& t : ts) t.join();
    EXPECT_EQ(uint64_t(kThreads) * kRounds, counter);
    EXPECT_FALSE(l.locked());
}

// ---- waitq's interface --------------------------------------------------------

// A Photon-style primitive built on waitq, as a derived class would.
struct event : photon::waitq {
    int wait_for(uint64_t us) { return wait(us); }
};

TEST_F(ThreadApi, WaitqResumeOneWakesTheFirstWaiterWithZero) {
    event q;
    std::vector<int> order, rets(2, -2);
    std::vector<task> ts;
    for (int i = 0; i < 2; i++)
        ts.push_back(spawn([&, i] {
            rets[i] = q.wait();
            order.push_back(i);
        }));
    ASSERT_TRUE(until_sleeping(ts[0].th));
    ASSERT_TRUE(until_sleeping(ts[1].th));
    EXPECT_EQ(ts[0].th, q.resume_one());
    run_others();
    EXPECT_EQ((std::vector<int>{0}), order);
    EXPECT_EQ(ts[1].th, q.resume_one());
    for (auto& t : ts) t.join();
    EXPECT_EQ((std::vector<int>{0, 1}), order);
    EXPECT_EQ((std::vector<int>{0, 0}), rets);
    EXPECT_EQ(nullptr, q.resume_one());
}

TEST_F(ThreadApi, WaitqResumeWithAnErrorFailsTheWaitWithThatErrno) {
    event q;
    int ret = -2, err = 0;
    auto t = spawn([&] {
        ret = q.wait();
        err = errno;
    });
    ASSERT_TRUE(until_sleeping(t.th));
    q.resume(t.th, ECANCELED);
    t.join();
    EXPECT_EQ(-1, ret);
    EXPECT_EQ(ECANCELED, err);
    EXPECT_EQ(nullptr, q.resume_one()) << "the failed waiter left the queue";
}

TEST_F(ThreadApi, WaitqResumeAllCountsAndResumeOfANonWaiterDoesNothing) {
    event q, other;
    int ok = 0, failed = 0;
    std::vector<task> ts;
    for (int i = 0; i < 3; i++) ts.push_back(spawn([&] { (q.wait() == 0 ? ok : failed)++; }));
    for (auto& t : ts) ASSERT_TRUE(until_sleeping(t.th));
    other.resume(ts[0].th);  // waits in q, not other
    run_others();
    EXPECT_EQ(photon::SLEEPING, photon::thread_stat(ts[0].th));
    EXPECT_EQ(3, q.resume_all(EALREADY));
    for (auto& t : ts) t.join();
    EXPECT_EQ(0, ok);
    EXPECT_EQ(3, failed);
    EXPECT_EQ(0, q.resume_all());
}

TEST_F(ThreadApi, WaitqWaitTimesOutAndWaitDeferRunsTheDeferOnceAsleep) {
    event q;
    photon::__update_now();
    EXPECT_EQ(-1, q.wait_for(2000));
    EXPECT_EQ(ETIMEDOUT, errno);
    photon::spinlock s;
    s.lock();
    bool deferred = false;
    auto t = spawn([&] {
        q.resume_one();
        EXPECT_FALSE(s.locked()) << "the defer ran before anyone else";
    });
    struct arg_t {
        photon::spinlock* s;
        bool* deferred;
    } arg{&s, &deferred};
    int ret = q.wait_defer(
        {},
        [](void* p) {
            auto a = static_cast<arg_t*>(p);
            *a->deferred = true;
            a->s->unlock();
        },
        &arg);
    EXPECT_EQ(0, ret);
    EXPECT_TRUE(deferred);
    t.join();
}

// ---- mutex and locker ----------------------------------------------------------

TEST_F(ThreadApi, MutexIsCopyListInitializable) {
    photon::mutex m = {};  // Photon's constructor is not explicit
    photon::mutex n = {0, true};
    EXPECT_EQ(0, m.lock());
    EXPECT_EQ(0, n.try_lock());
    m.unlock();
    n.unlock();
}

// Photon's do_lock 1 is one lock() call: it waits for a holder, unlike a try.
TEST_F(ThreadApi, LockerWithDoLockOneWaitsForTheHolder) {
    photon::mutex m;
    ASSERT_EQ(0, m.lock());
    bool got = false;
    auto t = spawn([&] {
        photon::locker<photon::mutex> l(&m, 1);
        got = l.locked();
    });
    ASSERT_TRUE(until_sleeping(t.th));
    m.unlock();
    t.join();
    EXPECT_TRUE(got);
    EXPECT_FALSE(m.locked());
}

TEST_F(ThreadApi, LockerWithDoLockOneStaysUnlockedWhenInterrupted) {
    photon::mutex m(0);
    ASSERT_EQ(0, m.lock());
    bool got = true;
    int err = 0;
    auto t = spawn([&] {
        photon::locker<photon::mutex> l(m, 1);
        err = errno;
        got = l.locked();
    });
    ASSERT_TRUE(until_sleeping(t.th));
    photon::thread_interrupt(t.th, ECANCELED);
    t.join();
    EXPECT_FALSE(got);
    EXPECT_EQ(ECANCELED, err);
    EXPECT_TRUE(m.locked()) << "a failed locker must not unlock the holder's mutex";
    m.unlock();
}

// ---- predicated waits -----------------------------------------------------------

TEST_F(ThreadApi, PredicatedWaitIgnoresInterruptsAsPhotons) {
    photon::mutex m;
    photon::condition_variable cv;
    bool ready = false;
    int ret = -2;
    auto t = spawn([&] {
        SCOPED_LOCK(m);
        ret = cv.wait(m, [&] { return ready; });
    });
    ASSERT_TRUE(until_sleeping(t.th));
    photon::thread_interrupt(t.th, EINTR);
    run_others();
    EXPECT_TRUE(until_sleeping(t.th)) << "it went back to sleep";
    EXPECT_EQ(-2, ret);
    WITH_LOCK(m) { ready = true; }
    cv.notify_all();
    t.join();
    EXPECT_EQ(0, ret);
}

TEST_F(ThreadApi, PredicatedWaitWithAnExpiredTimeoutFailsWhileThePredicateIsFalse) {
    photon::condition_variable cv;
    errno = 0;
    // Photon returned 0 here (with errno ETIMEDOUT) though the predicate was false.
    EXPECT_EQ(-1, cv.wait_no_lock([] { return false; }, 0));
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_EQ(0, cv.wait_no_lock([] { return true; }, 0));
    photon::__update_now();
    EXPECT_EQ(-1, cv.wait_no_lock([] { return false; }, 3000));
    EXPECT_EQ(ETIMEDOUT, errno);
}

TEST_F(ThreadApi, PredicatedWaitEndsWhenTheCoroutineIsShutDown) {
    photon::condition_variable cv;
    int ret = -2, err = 0;
    auto t = spawn([&] {
        ret = cv.wait_no_lock([] { return false; });
        err = errno;
    });
    ASSERT_TRUE(until_sleeping(t.th));
    photon::thread_shutdown(t.th);
    t.join();
    EXPECT_EQ(-1, ret);
    EXPECT_EQ(EPERM, err);
}

// ---- qrwlock ---------------------------------------------------------------------

TEST_F(ThreadApi, QrwlockReadersShareAndAWriterExcludes) {
    photon::qrwlock l;
    EXPECT_EQ(0, l.lock(photon::RLOCK));
    EXPECT_EQ(0, l.try_lock(photon::RLOCK));
    EXPECT_EQ(-1, l.try_lock(photon::WLOCK));
    EXPECT_EQ(EBUSY, errno);
    EXPECT_EQ(0, l.unlock());
    EXPECT_EQ(0, l.unlock());
    EXPECT_EQ(0, l.try_lock(photon::WLOCK));
    EXPECT_EQ(-1, l.try_lock(photon::RLOCK));
    EXPECT_EQ(-1, l.try_lock(photon::WLOCK));
    EXPECT_EQ(0, l.unlock());
    EXPECT_EQ(-1, l.unlock());
    EXPECT_EQ(ENOLCK, errno);
}

TEST_F(ThreadApi, QrwlockRejectsABadModeWithEinval) {
    photon::qrwlock l;
    EXPECT_EQ(-1, l.lock(0));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, l.try_lock(photon::RLOCK | photon::WLOCK));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(0, l.try_lock(photon::WLOCK)) << "nothing was taken";
    EXPECT_EQ(0, l.unlock());
}

TEST_F(ThreadApi, QrwlockWaitersWakeWhenTheHolderLeavesAndTimeOutOtherwise) {
    photon::qrwlock l;
    ASSERT_EQ(0, l.lock(photon::WLOCK));
    photon::__update_now();
    EXPECT_EQ(-1, l.lock(photon::RLOCK, 2000));
    EXPECT_EQ(ETIMEDOUT, errno);
    int readers = 0, inside = 0;
    bool writer_inside = false;
    std::vector<task> ts;
    for (int i = 0; i < 3; i++)
        ts.push_back(spawn([&] {
            ASSERT_EQ(0, l.lock(photon::RLOCK));
            EXPECT_FALSE(writer_inside);
            readers++;
            inside++;
            photon::thread_yield();
            inside--;
            l.unlock();
        }));
    bool wrote = false;
    ts.push_back(spawn([&] {
        ASSERT_EQ(0, l.lock(photon::WLOCK));
        EXPECT_EQ(0, inside) << "the writer runs alone";
        writer_inside = true;
        photon::thread_yield();
        writer_inside = false;
        wrote = true;
        l.unlock();
    }));
    for (auto& t : ts) ASSERT_TRUE(until_sleeping(t.th));
    EXPECT_EQ(0, l.unlock());
    for (auto& t : ts) t.join();
    EXPECT_EQ(3, readers);
    EXPECT_TRUE(wrote);
    EXPECT_EQ(0, l.try_lock(photon::WLOCK));
    EXPECT_EQ(0, l.unlock());
}

TEST_F(ThreadApi, QrwlockInterruptedWaiterFailsWithTheErrno) {
    photon::qrwlock l;
    ASSERT_EQ(0, l.lock(photon::RLOCK));
    int ret = -2, err = 0;
    auto t = spawn([&] {
        ret = l.lock(photon::WLOCK);
        err = errno;
    });
    ASSERT_TRUE(until_sleeping(t.th));
    photon::thread_interrupt(t.th, ECANCELED);
    t.join();
    EXPECT_EQ(-1, ret);
    EXPECT_EQ(ECANCELED, err);
    EXPECT_EQ(0, l.unlock());
}

TEST(Qrwlock, KeepsWritersExclusiveAcrossVcpus) {
    photon::qrwlock l;
    std::atomic<int> inside{0};
    std::atomic<bool> overlap{false};
    uint64_t writes = 0;  // guarded by l as a writer
    constexpr int kVcpus = 3, kRounds = 3000;
    std::vector<std::thread> ts;
    for (int v = 0; v < kVcpus; v++)
        ts.emplace_back([&, v] {
            ASSERT_EQ(0, photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE));
            for (int i = 0; i < kRounds; i++) {
                bool w = (i + v) % 4 == 0;
                ASSERT_EQ(0, l.lock(w ? photon::WLOCK : photon::RLOCK));
                int n = inside.fetch_add(w ? 1000 : 1) + (w ? 1000 : 1);
                if (w && n != 1000) overlap = true;
                if (!w && n >= 1000) overlap = true;
                if (w) writes++;
                if (i % 16 == 0) photon::thread_yield();
                inside.fetch_sub(w ? 1000 : 1);
                ASSERT_EQ(0, l.unlock());
            }
            photon::fini();
        });
    for (auto& t : ts) t.join();
    EXPECT_FALSE(overlap);
    EXPECT_EQ(uint64_t(kVcpus) * kRounds / 4, writes);
}

// ---- stackful_malloc ------------------------------------------------------------

TEST_F(ThreadApi, StackfulMallocGivesAlignedLifoBlocksOnTheCoroutineStack) {
    char* first = nullptr;
    auto t = spawn([&] {
        auto a = static_cast<char*>(photon::stackful_malloc(10));
        auto b = static_cast<char*>(photon::stackful_malloc(100));
        ASSERT_NE(nullptr, a);
        ASSERT_NE(nullptr, b);
        EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(a) % 16);
        EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(b) % 16);
        EXPECT_GT(b, a);
        char local;
        EXPECT_LT(b + 100, &local) << "blocks sit below the frames";
        memset(a, 1, 10);
        memset(b, 2, 100);
        photon::stackful_free(b);
        auto c = static_cast<char*>(photon::stackful_malloc(100));
        EXPECT_EQ(b, c) << "a LIFO free gives the room back";
        photon::stackful_free(c);
        photon::stackful_free(a);
        first = static_cast<char*>(photon::stackful_malloc(1));
        EXPECT_EQ(a, first);
        photon::stackful_free(first);
    });
    t.join();
    EXPECT_NE(nullptr, first);
}

TEST_F(ThreadApi, StackfulFreeOutOfOrderIsReclaimedWithTheBlocksAbove) {
    auto t = spawn([&] {
        void* a = photon::stackful_malloc(32);
        void* b = photon::stackful_malloc(32);
        photon::stackful_free(a);  // early: held until b goes
        void* c = photon::stackful_malloc(32);
        EXPECT_GT(c, b);
        photon::stackful_free(c);
        photon::stackful_free(b);
        EXPECT_EQ(a, photon::stackful_malloc(32)) << "a and b were both reclaimed";
        int x;
        photon::stackful_free(&x);  // not a block: logged, ignored
        photon::stackful_free(a);
        photon::stackful_free(a);  // twice: logged, ignored
    });
    t.join();
}

TEST_F(ThreadApi, StackfulMallocFailsWithEnomemRatherThanReachTheFrames) {
    auto t = spawn([&] {
        errno = 0;
        EXPECT_EQ(nullptr, photon::stackful_malloc(kStack));
        EXPECT_EQ(ENOMEM, errno);
        EXPECT_EQ(nullptr, photon::stackful_malloc(SIZE_MAX - 4));
        EXPECT_EQ(ENOMEM, errno);
        void* p = photon::stackful_malloc(kStack / 2);
        EXPECT_NE(nullptr, p);
        photon::stackful_free(p);
    });
    t.join();
}

TEST_F(ThreadApi, StackfulMallocIsRefusedOnTheMainCoroutineAndOffAVcpu) {
    EXPECT_EQ(nullptr, photon::stackful_malloc(16));
    EXPECT_EQ(ENOTSUP, errno);
    std::thread([] {
        EXPECT_EQ(nullptr, photon::stackful_malloc(16));
        EXPECT_EQ(ENOSYS, errno);
        photon::stackful_free(nullptr);
    }).join();
}

TEST_F(ThreadApi, StackPagesGcKeepsTheStackfulBlocks) {
    auto t = spawn([&] {
        auto p = static_cast<char*>(photon::stackful_malloc(3 * 4096));
        ASSERT_NE(nullptr, p);
        memset(p, 0x5a, 3 * 4096);
        EXPECT_EQ(0, photon::stack_pages_gc());
        for (int i = 0; i < 3 * 4096; i++)
            if (p[i] != 0x5a) {
                ADD_FAILURE() << "byte " << i << " was discarded";
                break;
            }
        photon::stackful_free(p);
    });
    t.join();
}

// ---- small names ----------------------------------------------------------------

TEST(MasterEventEngineDefault, TracksWhetherTheVcpuHasAnEngine) {
    EXPECT_TRUE(photon::is_master_event_engine_default()) << "off a vCPU";
    ASSERT_EQ(0, photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE));
    EXPECT_TRUE(photon::is_master_event_engine_default());
    photon::reset_master_event_engine_default();  // nothing to destroy
    EXPECT_EQ(0, photon::fini());
    ASSERT_EQ(0, photon::init(photon::INIT_EVENT_EPOLL, photon::INIT_IO_NONE));
    EXPECT_FALSE(photon::is_master_event_engine_default());
    photon::reset_master_event_engine_default();
    EXPECT_TRUE(photon::is_master_event_engine_default());
    EXPECT_EQ(0, photon::thread_usleep(1000)) << "sleeps work without an engine";
    EXPECT_EQ(0, photon::fini());
}

TEST(ThreadHeader, CompatibilityNamesCompile) {
    photon::spill_additional_fp_simd_regs();
    int _TOKEN_CONCAT(x, 1) = 1;
    int _TOKEN_CONCAT_(y, 7) = x1;
    EXPECT_EQ(1, y7);
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();  // <emmintrin.h> comes with thread.h, as with Photon's
#endif
    EXPECT_EQ(1, x1);
}

}  // namespace
