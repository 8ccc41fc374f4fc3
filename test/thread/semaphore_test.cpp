// photon::semaphore and photon::disposable_semaphore: counting, FIFO and
// out-of-order resume, timeouts that leave the count alone, interrupts
// (wait_interruptible returns, wait keeps waiting), signals from plain OS
// threads, and a timeout racing with a signal never losing a unit.
#include <photon/thread/thread.h>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "test_util.h"

namespace {

using namespace photon_test;

class Semaphore : public VcpuTest {};
class DisposableSemaphore : public VcpuTest {};

TEST_F(Semaphore, WaitTakesAndSignalAddsUnits) {
    photon::semaphore sem(3);
    EXPECT_EQ(3u, sem.count());
    EXPECT_EQ(0, sem.wait(2));
    EXPECT_EQ(1u, sem.count());
    EXPECT_EQ(0, sem.wait(0));
    int ret = -2;
    auto t = spawn([&] { ret = sem.wait(2); });
    ASSERT_TRUE(until_sleeping(t.th));
    EXPECT_EQ(1u, sem.count()) << "a waiter that does not fit takes nothing";
    EXPECT_EQ(0, sem.signal(1));
    t.join();
    EXPECT_EQ(0, ret);
    EXPECT_EQ(0u, sem.count());
    EXPECT_EQ(0, sem.signal(5));
    EXPECT_EQ(0, sem.signal(0));
    EXPECT_EQ(5u, sem.count());
}

TEST_F(Semaphore, WakesWaitersWithEqualRequestsInArrivalOrder) {
    photon::semaphore sem(0);
    std::vector<int> order;
    std::vector<task> ts;
    for (int i = 0; i < 4; i++) {
        ts.push_back(spawn([&, i] {
            EXPECT_EQ(0, sem.wait(1));
            order.push_back(i);
        }));
        ASSERT_TRUE(until_sleeping(ts.back().th));
    }
    for (int i = 0; i < 4; i++) {
        sem.signal(1);
        run_others();
        EXPECT_EQ(size_t(i + 1), order.size());
    }
    for (auto& t : ts) t.join();
    EXPECT_EQ((std::vector<int>{0, 1, 2, 3}), order);
}

// Queues a wait(5) and then a wait(1) on `sem`; returns them.
std::vector<task> big_then_small(photon::semaphore& sem, int* big, int* small) {
    std::vector<task> ts;
    ts.push_back(spawn([&sem, big] { *big = sem.wait(5); }));
    until_sleeping(ts.back().th);
    ts.push_back(spawn([&sem, small] { *small = sem.wait(1); }));
    until_sleeping(ts.back().th);
    return ts;
}

TEST_F(Semaphore, InOrderResumeHoldsBackSmallerRequestsBehindABigOne) {
    photon::semaphore sem(0, true);
    int big = -2, small = -2;
    auto ts = big_then_small(sem, &big, &small);
    sem.signal(1);
    run_others();
    EXPECT_EQ(-2, small) << "the wait(1) behind the wait(5) must not pass it";
    EXPECT_EQ(1u, sem.count());
    sem.signal(4);
    run_others();
    EXPECT_EQ(0, big);
    EXPECT_EQ(-2, small);
    EXPECT_EQ(0u, sem.count());
    sem.signal(1);
    for (auto& t : ts) t.join();
    EXPECT_EQ(0, small);
    EXPECT_EQ(0u, sem.count());
}

TEST_F(Semaphore, OutOfOrderResumeLetsSmallerRequestsPassABigOne) {
    photon::semaphore sem(0, false);
    int big = -2, small = -2;
    auto ts = big_then_small(sem, &big, &small);
    sem.signal(1);
    run_others();
    EXPECT_EQ(0, small);
    EXPECT_EQ(-2, big);
    EXPECT_EQ(0u, sem.count());
    sem.signal(5);
    for (auto& t : ts) t.join();
    EXPECT_EQ(0, big);
    EXPECT_EQ(0u, sem.count());
}

TEST_F(Semaphore, WaitTimesOutWithEtimedoutAndLeavesTheCountUnchanged) {
    photon::semaphore sem(1);
    auto t0 = Clock::now();
    photon::__update_now();
    EXPECT_EQ(-1, sem.wait(2, 10 * 1000));
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_GE(ms_since(t0), 9.0);
    EXPECT_EQ(1u, sem.count());
    EXPECT_EQ(-1, sem.wait_interruptible(2, 1000));
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_EQ(1u, sem.count());
    EXPECT_EQ(0, sem.wait(1, 0)) << "an expired timeout still takes what is there";
    EXPECT_EQ(0u, sem.count());
}

TEST_F(Semaphore, ATimedOutBigRequestReleasesTheSmallerOnesBehindIt) {
    photon::semaphore sem(0, true);
    int big = -2, big_err = 0, small = -2;
    auto b = spawn([&] {
        big = sem.wait(5, 10 * 1000);
        big_err = errno;
    });
    ASSERT_TRUE(until_sleeping(b.th));
    auto s = spawn([&] { small = sem.wait(1, kLongUs); });
    ASSERT_TRUE(until_sleeping(s.th));
    sem.signal(1);
    run_others();
    EXPECT_EQ(-2, small);
    b.join();
    EXPECT_EQ(-1, big);
    EXPECT_EQ(ETIMEDOUT, big_err);
    s.join();
    EXPECT_EQ(0, small) << "the unit held back for the front waiter must go to the next";
    EXPECT_EQ(0u, sem.count());
}

TEST_F(Semaphore, WaitInterruptibleReturnsOnAnInterrupt) {
    photon::semaphore sem(0);
    int ret = -2, err = 0;
    auto t = spawn([&] {
        ret = sem.wait_interruptible(1);
        err = errno;
    });
    ASSERT_TRUE(until_sleeping(t.th));
    photon::thread_interrupt(t.th, EINTR);
    t.join();
    EXPECT_EQ(-1, ret);
    EXPECT_EQ(EINTR, err);
    sem.signal(1);
    EXPECT_EQ(1u, sem.count()) << "the interrupted waiter took nothing";
}

TEST_F(Semaphore, WaitIgnoresEintrAndSucceedsOnTheNextSignal) {
    photon::semaphore sem(0);
    int ret = -2, err = 0;
    auto t = spawn([&] { ret = sem.wait(1); });
    ASSERT_TRUE(until_sleeping(t.th));
    for (int e : {EINTR, ECANCELED}) {
        photon::thread_interrupt(t.th, e);
        run_others();
        EXPECT_TRUE(until_sleeping(t.th)) << "wait() must go back to sleep after errno " << e;
        EXPECT_EQ(-2, ret);
    }
    sem.signal(1);
    t.join();
    EXPECT_EQ(0, ret);
    EXPECT_EQ(0u, sem.count());

    auto t2 = spawn([&] {
        ret = sem.wait(1);
        err = errno;
    });
    ASSERT_TRUE(until_sleeping(t2.th));
    photon::thread_interrupt(t2.th, ESHUTDOWN);
    t2.join();
    EXPECT_EQ(-1, ret) << "ESHUTDOWN does end a wait()";
    EXPECT_EQ(ESHUTDOWN, err);
}

TEST_F(Semaphore, SignalFromAPlainOsThreadWakesASleepingCoroutine) {
    photon::semaphore sem(0);
    photon::thread* self = photon::CURRENT;
    bool saw_sleep = false;
    std::thread os([&] {
        auto deadline = Clock::now() + std::chrono::seconds(10);
        while (photon::thread_stat(self) != photon::SLEEPING && Clock::now() < deadline)
            std::this_thread::yield();
        saw_sleep = photon::thread_stat(self) == photon::SLEEPING;
        sem.signal(1);
    });
    int ret = sem.wait(1, kLongUs);
    os.join();
    EXPECT_TRUE(saw_sleep);
    EXPECT_EQ(0, ret);
    EXPECT_EQ(0u, sem.count());
}

TEST_F(Semaphore, SignalsFromSeveralOsThreadsAreAllDelivered) {
    constexpr int kThreads = 4, kUnits = 200;
    photon::semaphore sem(0);
    int taken = 0;
    std::vector<task> ts;
    for (int i = 0; i < kThreads; i++)
        ts.push_back(spawn([&] {
            for (int n = 0; n < kUnits; n++) {
                if (sem.wait(1, kLongUs) != 0) return;
                taken++;
            }
        }));
    std::vector<std::thread> os;
    for (int i = 0; i < kThreads; i++)
        os.emplace_back([&] {
            for (int n = 0; n < kUnits; n++) {
                sem.signal(1);
                if (n % 16 == 0) std::this_thread::yield();
            }
        });
    for (auto& t : ts) t.join();
    for (auto& t : os) t.join();
    EXPECT_EQ(kThreads * kUnits, taken);
    EXPECT_EQ(0u, sem.count());
}

// A's timeout fires (A becomes READY, still queued); B signals before A runs.
// A must then return 0 with the unit, or -1 with the unit left in the count.
TEST_F(Semaphore, AWaiterWhoseTimeoutFiredIsStillGrantedByASignalBeforeItRuns) {
    photon::semaphore sem(0);
    int ret = -2, err = 0;
    auto a = spawn([&] {
        ret = sem.wait(1, 1000);
        err = errno;
    });
    ASSERT_TRUE(until_sleeping(a.th));
    auto spin_until = Clock::now() + std::chrono::milliseconds(3);
    while (Clock::now() < spin_until) {
    }  // A's deadline passes while this vCPU does not look at timers
    bool raced = false, b_done = false;
    auto b = spawn([&] {
        for (int i = 0; i < 10000 && photon::thread_stat(a.th) == photon::SLEEPING; i++)
            photon::thread_yield();
        raced = photon::thread_stat(a.th) == photon::READY;
        sem.signal(1);
        b_done = true;
    });
    for (int i = 0; i < 20000 && !b_done; i++) photon::thread_yield();
    a.join();
    b.join();
    RecordProperty("raced", raced);
    EXPECT_EQ(1u, (ret == 0 ? 1u : 0u) + sem.count()) << "a unit was lost or duplicated";
    if (raced)
        EXPECT_EQ(0, ret) << "popped by the signal: the wait must succeed";
    else
        EXPECT_EQ(ETIMEDOUT, err);
}

TEST_F(DisposableSemaphore, ASignalBeforeTheWaitIsNotLost) {
    photon::disposable_semaphore ds;
    ds.signal();
    EXPECT_EQ(0, ds.wait(0));
    EXPECT_EQ(-1, ds.wait(1000));
    EXPECT_EQ(ETIMEDOUT, errno);
    int ret = -2;
    auto t = spawn([&] { ret = ds.wait(kLongUs); });
    ASSERT_TRUE(until_sleeping(t.th));
    ds.signal();
    t.join();
    EXPECT_EQ(0, ret);
}

}  // namespace
