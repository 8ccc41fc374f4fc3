// The sleeping locks of photon/thread/thread.h on one vCPU: mutex,
// recursive_mutex, seq_mutex, locker/SCOPED_LOCK/WITH_LOCK,
// condition_variable and rwlock: exclusion, FIFO order, timeouts, interrupts
// and misuse errors. Semaphores are in semaphore_test.cpp, sharing between
// vCPUs and OS threads in sync_cross_vcpu_test.cpp.
#include <photon/thread/thread.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "test_util.h"

namespace {

using namespace photon_test;

class Mutex : public VcpuTest {};
class RecursiveMutex : public VcpuTest {};
class SeqMutex : public VcpuTest {};
class Locker : public VcpuTest {};
class ConditionVariable : public VcpuTest {};
class Rwlock : public VcpuTest {};

// N coroutines x M rounds of a read-yield-write increment under `m`.
template <typename M>
void increment_with_yields(M& m, int n, int rounds, int* counter, int* overlaps) {
    std::vector<task> ts;
    int inside = 0;
    for (int i = 0; i < n; i++) {
        ts.push_back(spawn([&] {
            for (int r = 0; r < rounds; r++) {
                ASSERT_EQ(0, m.lock());
                if (inside++ != 0) ++*overlaps;
                int v = *counter;
                photon::thread_yield();
                *counter = v + 1;
                inside--;
                m.unlock();
                if (r % 3 == 0) photon::thread_yield();
            }
        }));
    }
    for (auto& t : ts) t.join();
}

TEST_F(Mutex, ExcludesCoroutinesThatYieldInsideTheCriticalSection) {
    for (uint16_t retries : {uint16_t(0), uint16_t(3), uint16_t(100)}) {
        photon::mutex m(retries);
        int counter = 0, overlaps = 0;
        increment_with_yields(m, 8, 200, &counter, &overlaps);
        EXPECT_EQ(8 * 200, counter) << "max_retries " << retries;
        EXPECT_EQ(0, overlaps);
        EXPECT_FALSE(m.locked());
    }
}

// Regression: SCOPED_LOCK / locker retried EDEADLK forever, hanging the vCPU.
TEST_F(Locker, RelockingAMutexItOwnsFailsWithEdeadlkInsteadOfSpinning) {
    photon::mutex m;
    ASSERT_EQ(0, m.lock());
    {
        errno = 0;
        photon::scoped_lock l(m);
        EXPECT_FALSE(l.locked());
        EXPECT_EQ(EDEADLK, errno);
    }
    EXPECT_TRUE(m.locked());  // still ours: the failed relock must not unlock it
    m.unlock();
    EXPECT_FALSE(m.locked());
}

TEST_F(Mutex, HandsOwnershipToSleepingWaitersInFifoOrder) {
    photon::mutex m(0);
    ASSERT_EQ(0, m.lock());
    std::vector<int> order;
    std::vector<task> ts;
    for (int i = 0; i < 5; i++) {
        ts.push_back(spawn([&, i] {
            EXPECT_EQ(0, m.lock());
            order.push_back(i);
            m.unlock();
        }));
        ASSERT_TRUE(until_sleeping(ts.back().th));
    }
    m.unlock();
    // Handed over, not released: a newcomer cannot barge in.
    EXPECT_TRUE(m.locked());
    EXPECT_EQ(-1, m.try_lock());
    for (auto& t : ts) t.join();
    EXPECT_EQ((std::vector<int>{0, 1, 2, 3, 4}), order);
    EXPECT_FALSE(m.locked());
}

TEST_F(Mutex, LockTimesOutWithEtimedout) {
    photon::mutex m;
    ASSERT_EQ(0, m.lock());
    int ret = 0, err = 0;
    double waited = 0;
    auto t = spawn([&] {
        auto t0 = Clock::now();
        photon::__update_now();
        ret = m.lock(20 * 1000);
        err = errno;
        waited = ms_since(t0);
    });
    t.join();
    EXPECT_EQ(-1, ret);
    EXPECT_EQ(ETIMEDOUT, err);
    EXPECT_GE(waited, 19.0);
    m.unlock();
    EXPECT_FALSE(m.locked()) << "the timed-out waiter must have left the queue";
}

TEST_F(Mutex, LockInterruptedFailsWithTheInterruptersErrnoAndTheMutexStaysUsable) {
    photon::mutex m(0);
    ASSERT_EQ(0, m.lock());
    int ret = 0, err = 0;
    auto t = spawn([&] {
        ret = m.lock();
        err = errno;
    });
    ASSERT_TRUE(until_sleeping(t.th));
    photon::thread_interrupt(t.th, ECANCELED);
    t.join();
    EXPECT_EQ(-1, ret);
    EXPECT_EQ(ECANCELED, err);
    EXPECT_TRUE(m.locked());
    m.unlock();
    EXPECT_FALSE(m.locked());
    auto t2 = spawn([&] {
        EXPECT_EQ(0, m.lock());
        m.unlock();
    });
    t2.join();
    EXPECT_EQ(0, m.try_lock());
    m.unlock();
}

TEST_F(Mutex, UnlockByANonOwnerFailsWithEinvalAndHasNoEffect) {
    photon::mutex m;
    errno = 0;
    m.unlock();  // nobody owns it
    EXPECT_EQ(EINVAL, errno);
    EXPECT_FALSE(m.locked());
    ASSERT_EQ(0, m.lock());
    int err = 0;
    auto t = spawn([&] {
        errno = 0;
        m.unlock();
        err = errno;
    });
    t.join();
    EXPECT_EQ(EINVAL, err);
    EXPECT_TRUE(m.locked());
    errno = 0;
    m.unlock();
    EXPECT_EQ(0, errno);
    EXPECT_FALSE(m.locked());
}

TEST_F(Mutex, TryLockSucceedsOnlyWhenTheMutexIsFree) {
    photon::mutex m;
    EXPECT_EQ(0, m.try_lock());
    EXPECT_TRUE(m.locked());
    EXPECT_EQ(-1, m.try_lock()) << "even for the owner";
    int other = 0;
    auto t = spawn([&] { other = m.try_lock(); });
    t.join();
    EXPECT_EQ(-1, other);
    m.unlock();
    auto t2 = spawn([&] {
        other = m.try_lock();
        if (other == 0) m.unlock();
    });
    t2.join();
    EXPECT_EQ(0, other);
}

TEST_F(Mutex, ContendingModeReleasesInsteadOfHandingOver) {
    photon::mutex m(0, true);
    ASSERT_EQ(0, m.lock());
    int ret = -2;
    auto t = spawn([&] {
        ret = m.lock();
        if (ret == 0) m.unlock();
    });
    ASSERT_TRUE(until_sleeping(t.th));
    m.unlock();
    EXPECT_FALSE(m.locked()) << "the woken waiter must compete, not be handed the lock";
    EXPECT_EQ(0, m.try_lock()) << "a newcomer may win";
    run_others();
    EXPECT_EQ(-2, ret) << "the waiter lost the race and must wait again";
    m.unlock();
    t.join();
    EXPECT_EQ(0, ret);
    int counter = 0, overlaps = 0;
    increment_with_yields(m, 6, 100, &counter, &overlaps);
    EXPECT_EQ(600, counter);
    EXPECT_EQ(0, overlaps);
}

TEST_F(Mutex, RelockByTheOwnerFailsWithEdeadlk) {
    photon::mutex m;
    ASSERT_EQ(0, m.lock());
    errno = 0;
    EXPECT_EQ(-1, m.lock());
    EXPECT_EQ(EDEADLK, errno);
    EXPECT_TRUE(m.locked());
    m.unlock();
    EXPECT_FALSE(m.locked());
}

TEST_F(RecursiveMutex, NestsAndReleasesOnlyOnTheLastUnlock) {
    photon::recursive_mutex m;
    ASSERT_EQ(0, m.lock());
    ASSERT_EQ(0, m.lock());
    ASSERT_EQ(0, m.try_lock());
    bool got = false;
    auto t = spawn([&] {
        EXPECT_EQ(-1, m.try_lock());
        errno = 0;
        m.unlock();
        EXPECT_EQ(EINVAL, errno);
        EXPECT_EQ(0, m.lock());
        got = true;
        m.unlock();
    });
    run_others();
    m.unlock();
    m.unlock();
    run_others();
    EXPECT_FALSE(got);
    EXPECT_TRUE(m.locked());
    m.unlock();
    t.join();
    EXPECT_TRUE(got);
    EXPECT_FALSE(m.locked());
}

// seq_mutex keeps lock/unlock protected, as Photon's snapshot does.
struct open_seq_mutex : photon::seq_mutex {
    using photon::mutex::lock;
    using photon::mutex::locked;
    using photon::mutex::unlock;
};

TEST_F(SeqMutex, WaitersSleepAtOnceAndAreServedInArrivalOrder) {
    open_seq_mutex m;
    ASSERT_EQ(0, m.lock());
    std::vector<int> order;
    std::vector<task> ts;
    for (int i = 0; i < 4; i++) {
        ts.push_back(spawn([&, i] {
            EXPECT_EQ(0, m.lock());
            order.push_back(i);
            photon::thread_yield();
            m.unlock();
        }));
        photon::thread_yield();  // one switch: no retries, so it sleeps at once
        EXPECT_EQ(photon::SLEEPING, photon::thread_stat(ts.back().th));
    }
    m.unlock();
    for (auto& t : ts) t.join();
    EXPECT_EQ((std::vector<int>{0, 1, 2, 3}), order);
    EXPECT_FALSE(m.locked());
}

TEST_F(Locker, ScopedLockHoldsTheMutexUntilTheEndOfTheScope) {
    photon::mutex m;
    {
        SCOPED_LOCK(m);
        EXPECT_TRUE(m.locked());
        {
            SCOPED_LOCK(&m, 1);  // one try, fails: not held by this locker
            EXPECT_TRUE(m.locked());
        }
        EXPECT_TRUE(m.locked()) << "a failed try must not unlock on scope exit";
    }
    EXPECT_FALSE(m.locked());
    {
        SCOPED_LOCK(m, 0);
        EXPECT_FALSE(m.locked());
    }
    photon::spinlock s;
    {
        SCOPED_LOCK(s);
        EXPECT_TRUE(s.locked());
    }
    EXPECT_FALSE(s.locked());
}

TEST_F(Locker, WithLockRunsTheBodyHoldingTheMutex) {
    photon::mutex m;
    int runs = 0;
    WITH_LOCK(m) {
        EXPECT_TRUE(m.locked());
        runs++;
    }
    EXPECT_EQ(1, runs);
    EXPECT_FALSE(m.locked());
}

TEST_F(Locker, DoLockZeroOneTwoMeanNoneOneTryAndLock) {
    photon::mutex m;
    photon::locker<photon::mutex> none(m, 0);
    EXPECT_FALSE(none.locked());
    EXPECT_FALSE(m.locked());
    {
        photon::locker<photon::mutex> one(&m, 1);
        EXPECT_TRUE(one.locked());
        photon::locker<photon::mutex> again(&m, 1);
        EXPECT_FALSE(bool(again));
        EXPECT_EQ(-1, again.try_lock());
        photon::locker<photon::mutex> moved(std::move(one));
        EXPECT_TRUE(moved.locked());
        EXPECT_FALSE(one.locked());
        moved.unlock();
        EXPECT_FALSE(m.locked());
        moved.unlock();  // no-op once released
        EXPECT_FALSE(m.locked());
    }
    ASSERT_EQ(0, m.lock());
    bool held_in_waiter = false;
    auto t = spawn([&] {
        photon::scoped_lock l(m);  // do_lock 2: waits
        held_in_waiter = l.locked();
    });
    ASSERT_TRUE(until_sleeping(t.th));
    m.unlock();
    t.join();
    EXPECT_TRUE(held_in_waiter);
    EXPECT_FALSE(m.locked());
}

TEST_F(ConditionVariable, NotifyOneWakesExactlyOneWaiterInFifoOrder) {
    photon::mutex m;
    photon::condition_variable cv;
    std::vector<int> woken;
    std::vector<task> ts;
    for (int i = 0; i < 3; i++) {
        ts.push_back(spawn([&, i] {
            SCOPED_LOCK(m);
            EXPECT_EQ(0, cv.wait(m));
            woken.push_back(i);
        }));
        ASSERT_TRUE(until_sleeping(ts.back().th));
    }
    std::vector<int> expected;
    for (int i = 0; i < 3; i++) {
        EXPECT_EQ(ts[i].th, cv.notify_one());
        run_others();
        expected.push_back(i);
        EXPECT_EQ(expected, woken);
    }
    EXPECT_EQ(nullptr, cv.notify_one());
    for (auto& t : ts) t.join();
}

TEST_F(ConditionVariable, NotifyAllWakesEveryWaiterAndReturnsTheCount) {
    photon::mutex m;
    photon::condition_variable cv;
    int woken = 0;
    std::vector<task> ts;
    for (int i = 0; i < 4; i++) {
        ts.push_back(spawn([&] {
            SCOPED_LOCK(m);
            if (cv.wait(m) == 0) woken++;
        }));
        ASSERT_TRUE(until_sleeping(ts.back().th));
    }
    EXPECT_EQ(4, cv.notify_all());
    for (auto& t : ts) t.join();
    EXPECT_EQ(4, woken);
    EXPECT_EQ(0, cv.broadcast());
}

TEST_F(ConditionVariable, WaitWithAPredicateReturnsOnlyOnceItHolds) {
    photon::mutex m;
    photon::condition_variable cv;
    bool ready = false;
    int ret = -2;
    auto t = spawn([&] {
        SCOPED_LOCK(m);
        ret = cv.wait(m, [&] { return ready; });
        EXPECT_TRUE(ready);
        EXPECT_TRUE(m.locked());
    });
    ASSERT_TRUE(until_sleeping(t.th));
    EXPECT_EQ(t.th, cv.notify_one());  // spurious for the predicate
    run_others();
    EXPECT_TRUE(until_sleeping(t.th));
    EXPECT_EQ(-2, ret);
    WITH_LOCK(m) { ready = true; }
    EXPECT_EQ(t.th, cv.notify_one());
    t.join();
    EXPECT_EQ(0, ret);
    SCOPED_LOCK(m);
    EXPECT_EQ(0, cv.wait(m, [&] { return ready; })) << "holds on entry: no sleep";
}

TEST_F(ConditionVariable, WaitTimesOutWithEtimedoutAndHoldsTheMutexAgain) {
    photon::mutex m;
    photon::condition_variable cv;
    ASSERT_EQ(0, m.lock());
    auto t0 = Clock::now();
    photon::__update_now();
    int ret = cv.wait(m, 10 * 1000);
    int err = errno;
    EXPECT_GE(ms_since(t0), 9.0);
    EXPECT_EQ(-1, ret);
    EXPECT_EQ(ETIMEDOUT, err);
    EXPECT_TRUE(m.locked());
    EXPECT_EQ(ETIMEDOUT, errno) << "retaking the mutex must not clobber errno";

    ret = cv.wait(
        m, [] { return false; }, 5 * 1000);
    EXPECT_EQ(-1, ret);
    EXPECT_EQ(ETIMEDOUT, errno);
    errno = 0;
    m.unlock();
    EXPECT_EQ(0, errno) << "the waiter must own the mutex after the wait";
    EXPECT_FALSE(m.locked());

    photon::scoped_lock l(m);
    EXPECT_EQ(-1, cv.wait(l, 2000));
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_TRUE(l.locked());
    EXPECT_TRUE(m.locked());
    EXPECT_EQ(-1, cv.wait_no_lock(2000));
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_EQ(nullptr, cv.notify_one()) << "timed-out waiters leave the queue";
}

TEST_F(ConditionVariable, WaitInterruptedReturnsTheErrnoOnlyAfterRetakingTheMutex) {
    photon::mutex m;
    photon::condition_variable cv;
    int ret = -2, err = 0;
    bool held = false;
    auto t = spawn([&] {
        ASSERT_EQ(0, m.lock());
        ret = cv.wait(m);
        err = errno;
        held = m.locked();
        errno = 0;
        m.unlock();
        EXPECT_EQ(0, errno);
    });
    ASSERT_TRUE(until_sleeping(t.th));
    ASSERT_EQ(0, m.lock());
    photon::thread_interrupt(t.th, EALREADY);
    run_others();
    EXPECT_EQ(-2, ret) << "returned without the mutex";
    m.unlock();
    t.join();
    EXPECT_EQ(-1, ret);
    EXPECT_EQ(EALREADY, err);
    EXPECT_TRUE(held);
    EXPECT_FALSE(m.locked());
    EXPECT_EQ(nullptr, cv.notify_one());
}

TEST_F(ConditionVariable, WaitOnASpinlockReleasesItWhileAsleep) {
    photon::spinlock s;
    photon::condition_variable cv;
    int ret = -2;
    auto t = spawn([&] {
        s.lock();
        ret = cv.wait(s);
        EXPECT_TRUE(s.locked());
        s.unlock();
    });
    ASSERT_TRUE(until_sleeping(t.th));
    EXPECT_FALSE(s.locked());
    s.lock();
    EXPECT_EQ(t.th, cv.notify_one());
    s.unlock();  // before the waiter runs: it would spin forever on this vCPU
    t.join();
    EXPECT_EQ(0, ret);
    EXPECT_FALSE(s.locked());
}

TEST_F(Rwlock, AdmitsManyReadersAtOnce) {
    photon::rwlock l;
    int readers = 0, most = 0;
    std::vector<task> ts;
    for (int i = 0; i < 5; i++) {
        ts.push_back(spawn([&] {
            ASSERT_EQ(0, l.lock(photon::RLOCK));
            most = std::max(most, ++readers);
            run_others(5);
            readers--;
            EXPECT_EQ(0, l.unlock());
        }));
    }
    for (auto& t : ts) t.join();
    EXPECT_EQ(5, most);
}

TEST_F(Rwlock, WriterExcludesReadersAndWriters) {
    photon::rwlock l;
    ASSERT_EQ(0, l.lock(photon::WLOCK));
    int entered = 0;
    std::vector<task> ts;
    for (int i = 0; i < 3; i++) {
        ts.push_back(spawn([&] {
            EXPECT_EQ(0, l.lock(photon::RLOCK));
            entered++;
            run_others(2);
            EXPECT_EQ(0, l.unlock());
        }));
        ASSERT_TRUE(until_sleeping(ts.back().th));
    }
    EXPECT_EQ(0, entered);
    errno = 0;
    EXPECT_EQ(-1, l.try_lock(photon::WLOCK));
    EXPECT_EQ(EBUSY, errno);
    EXPECT_EQ(0, l.unlock());
    for (auto& t : ts) t.join();
    EXPECT_EQ(3, entered);
    EXPECT_EQ(0, l.try_lock(photon::WLOCK));
    EXPECT_EQ(0, l.unlock());
}

TEST_F(Rwlock, AWaitingWriterBlocksNewReaders) {
    photon::rwlock l;
    ASSERT_EQ(0, l.lock(photon::RLOCK));
    std::string order;
    auto w = spawn([&] {
        EXPECT_EQ(0, l.lock(photon::WLOCK));
        order += 'W';
        run_others(3);
        EXPECT_EQ(0, l.unlock());
    });
    ASSERT_TRUE(until_sleeping(w.th));
    auto r = spawn([&] {
        EXPECT_EQ(0, l.lock(photon::RLOCK));
        order += 'R';
        EXPECT_EQ(0, l.unlock());
    });
    EXPECT_TRUE(until_sleeping(r.th)) << "a new reader must queue behind the writer";
    errno = 0;
    EXPECT_EQ(-1, l.try_lock(photon::RLOCK));
    EXPECT_EQ(EBUSY, errno);
    EXPECT_EQ(0, l.unlock());
    w.join();
    r.join();
    EXPECT_EQ("WR", order);
}

TEST_F(Rwlock, LockTimesOutWithEtimedout) {
    photon::rwlock l;
    ASSERT_EQ(0, l.lock(photon::WLOCK));
    int ret = 0, err = 0;
    double waited = 0;
    auto t = spawn([&] {
        auto t0 = Clock::now();
        photon::__update_now();
        ret = l.lock(photon::RLOCK, 10 * 1000);
        err = errno;
        waited = ms_since(t0);
    });
    t.join();
    EXPECT_EQ(-1, ret);
    EXPECT_EQ(ETIMEDOUT, err);
    EXPECT_GE(waited, 9.0);
    EXPECT_EQ(0, l.unlock());
    EXPECT_EQ(0, l.try_lock(photon::WLOCK)) << "the timed-out reader left no trace";
    EXPECT_EQ(0, l.unlock());
}

TEST_F(Rwlock, ATimedOutWriterLetsTheReadersQueuedBehindItIn) {
    photon::rwlock l;
    ASSERT_EQ(0, l.lock(photon::RLOCK));
    int wret = 0, werr = 0, rret = -2;
    auto w = spawn([&] {
        wret = l.lock(photon::WLOCK, 10 * 1000);
        werr = errno;
    });
    ASSERT_TRUE(until_sleeping(w.th));
    auto r = spawn([&] {
        rret = l.lock(photon::RLOCK, kLongUs);
        if (rret == 0) l.unlock();
    });
    w.join();
    EXPECT_EQ(-1, wret);
    EXPECT_EQ(ETIMEDOUT, werr);
    r.join();
    EXPECT_EQ(0, rret) << "readers behind a writer that gave up must be admitted";
    EXPECT_EQ(0, l.unlock());
}

TEST_F(Rwlock, RejectsAnUnknownModeWithEinval) {
    photon::rwlock l;
    for (int mode : {0, photon::RLOCK | photon::WLOCK, 12345}) {
        errno = 0;
        EXPECT_EQ(-1, l.lock(mode));
        EXPECT_EQ(EINVAL, errno);
        errno = 0;
        EXPECT_EQ(-1, l.try_lock(mode));
        EXPECT_EQ(EINVAL, errno);
    }
    photon::scoped_rwlock g(l, 0);  // must give up rather than retry forever
    EXPECT_FALSE(g.locked());
    EXPECT_EQ(0, l.try_lock(photon::WLOCK));
    EXPECT_EQ(0, l.unlock());
}

TEST_F(Rwlock, UnlockOfAnUnlockedRwlockFailsWithEnolck) {
    photon::rwlock l;
    errno = 0;
    EXPECT_EQ(-1, l.unlock());
    EXPECT_EQ(ENOLCK, errno);
    ASSERT_EQ(0, l.lock(photon::RLOCK));
    EXPECT_EQ(0, l.unlock());
    errno = 0;
    EXPECT_EQ(-1, l.unlock());
    EXPECT_EQ(ENOLCK, errno);
}

TEST_F(Rwlock, ScopedRwlockHoldsItUntilTheEndOfTheScope) {
    photon::rwlock l;
    {
        photon::scoped_rwlock g(l, photon::WLOCK);
        EXPECT_TRUE(g.locked());
        EXPECT_EQ(-1, l.try_lock(photon::RLOCK));
    }
    {
        photon::scoped_rwlock r1(l, photon::RLOCK);
        photon::scoped_rwlock r2(l, photon::RLOCK);
        EXPECT_TRUE(r1 && r2);
        EXPECT_EQ(-1, l.try_lock(photon::WLOCK));
    }
    EXPECT_EQ(0, l.try_lock(photon::WLOCK));
    EXPECT_EQ(0, l.unlock());
}

}  // namespace
