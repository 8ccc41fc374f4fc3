// thread_migrate of sleeping coroutines: a sleeper moved to another vCPU
// keeps sleeping there with its deadline, and whatever wakes it (timeout,
// interrupt, semaphore, mutex, condition variable) resumes it there. The
// other vCPUs are WorkPool vCPUs whose worker sleeps without a deadline, so
// a migrated deadline is honoured only if the hand-over reaches their timers.
#include <photon/common/alog.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>
#include <photon/thread/workerpool.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <memory>
#include <thread>
#include <vector>

#include "test_util.h"

namespace {

using namespace photon_test;

class Migrate : public VcpuTest {};

// A vCPU of its own, `pool` to run code on it.
struct other_vcpu {
    photon::WorkPool pool{1};
    photon::vcpu_base* vcpu = nullptr;
    other_vcpu() {
        pool.call([this] { vcpu = photon::get_vcpu(); });
    }
};

// What a sleeper saw when it woke.
struct wake_report {
    std::atomic<bool> done{false};
    int ret = 0, err = 0;
    photon::vcpu_base* vcpu = nullptr;
    uint64_t slept_us = 0;
};

// Spawns a sleeper running sleep() (returning its result, errno set), waits
// until it sleeps and migrates it to `to`.
template <typename F>
task spawn_and_migrate(wake_report* r, photon::vcpu_base* to, F sleep) {
    auto t = spawn([r, sleep] {
        auto t0 = Clock::now();
        r->ret = sleep();
        r->err = errno;
        r->slept_us = us_since(t0);
        r->vcpu = photon::get_vcpu(current_uncached());
        r->done = true;
    });
    EXPECT_TRUE(until_sleeping(t.th));
    EXPECT_EQ(0, photon::thread_migrate(t.th, to));
    return t;
}

TEST_F(Migrate, ASleeperMovedToAnotherVcpuWakesThereAfterItsDeadline) {
    other_vcpu b;
    wake_report r;
    auto t = spawn_and_migrate(&r, b.vcpu, [] { return photon::thread_usleep(200 * 1000); });
    EXPECT_EQ(1u, photon::get_info(photon::INFO_THREAD_NUM)) << "no longer counted here";
    t.join();
    EXPECT_EQ(0, r.ret);
    EXPECT_EQ(b.vcpu, r.vcpu);
    EXPECT_GE(r.slept_us, 200u * 1000);
    EXPECT_LT(r.slept_us, (uint64_t)kLongUs);
}

TEST_F(Migrate, ASleeperWithoutDeadlineMovedAndResumedWakesOnTheNewVcpu) {
    other_vcpu b;
    wake_report r;
    auto t = spawn_and_migrate(&r, b.vcpu, [] { return photon::thread_usleep(-1); });
    photon::thread_usleep(20 * 1000);
    EXPECT_FALSE(r.done.load()) << "woke without a wakeup";
    EXPECT_EQ(0, photon::thread_resume(t.th));
    t.join();
    EXPECT_EQ(0, r.ret);
    EXPECT_EQ(b.vcpu, r.vcpu);
}

TEST_F(Migrate, ASleeperInterruptedAfterMigrationResumesOnTheNewVcpuWithTheErrno) {
    other_vcpu b;
    wake_report r;
    auto t = spawn_and_migrate(&r, b.vcpu, [] { return photon::thread_usleep(kLongUs); });
    EXPECT_EQ(0, photon::thread_interrupt(t.th, ECANCELED));
    t.join();
    EXPECT_EQ(-1, r.ret);
    EXPECT_EQ(ECANCELED, r.err);
    EXPECT_EQ(b.vcpu, r.vcpu);
    EXPECT_LT(r.slept_us, (uint64_t)kLongUs / 2);
}

TEST_F(Migrate, ASemaphoreWaiterMigratedThenSignalledTakesTheUnitOnTheNewVcpu) {
    other_vcpu b;
    photon::semaphore sem(0);
    wake_report r;
    auto t = spawn_and_migrate(&r, b.vcpu, [&] { return sem.wait(1, kLongUs); });
    sem.signal(1);
    t.join();
    EXPECT_EQ(0, r.ret);
    EXPECT_EQ(b.vcpu, r.vcpu);
    EXPECT_EQ(0u, sem.count());
}

TEST_F(Migrate, ASemaphoreWaiterMigratedTimesOutOnTheNewVcpu) {
    other_vcpu b;
    photon::semaphore sem(0);
    wake_report r;
    auto t = spawn_and_migrate(&r, b.vcpu, [&] {
        photon::__update_now();  // a Timeout counts from `now`, which may lag
        return sem.wait(1, 100 * 1000);
    });
    t.join();
    EXPECT_EQ(-1, r.ret);
    EXPECT_EQ(ETIMEDOUT, r.err);
    EXPECT_EQ(b.vcpu, r.vcpu);
    EXPECT_GE(r.slept_us, 100u * 1000);
}

TEST_F(Migrate, AMutexWaiterMigratedGetsTheMutexOnTheNewVcpu) {
    other_vcpu b;
    photon::mutex m;
    ASSERT_EQ(0, m.lock());
    wake_report r;
    auto t = spawn_and_migrate(&r, b.vcpu, [&] {
        int ret = m.lock(kLongUs);
        if (ret == 0) m.unlock();  // the owner is this coroutine, now on b
        return ret;
    });
    m.unlock();
    t.join();
    EXPECT_EQ(0, r.ret);
    EXPECT_EQ(b.vcpu, r.vcpu);
    EXPECT_FALSE(m.locked());
}

TEST_F(Migrate, AConditionWaiterMigratedIsNotifiedOnTheNewVcpu) {
    other_vcpu b;
    photon::mutex m;
    photon::condition_variable cv;
    bool ready = false;
    wake_report r;
    auto t = spawn_and_migrate(&r, b.vcpu, [&] {
        photon::scoped_lock l(m);
        return cv.wait(
            l, [&] { return ready; }, kLongUs);
    });
    {
        photon::scoped_lock l(m);
        ready = true;
        cv.notify_one();
    }
    t.join();
    EXPECT_EQ(0, r.ret);
    EXPECT_EQ(b.vcpu, r.vcpu);
    EXPECT_LT(r.slept_us, (uint64_t)kLongUs / 2);
}

TEST_F(Migrate, ASleeperCanMoveOnFromTheVcpuItWasMigratedTo) {
    other_vcpu b, c;
    wake_report r;
    auto t = spawn_and_migrate(&r, b.vcpu, [] { return photon::thread_usleep(300 * 1000); });
    // From b, at once: the sleeper may still wait in b's standby list.
    int ret = -1;
    b.pool.call([&] { ret = photon::thread_migrate(t.th, c.vcpu); });
    EXPECT_EQ(0, ret);
    t.join();
    EXPECT_EQ(0, r.ret);
    EXPECT_EQ(c.vcpu, r.vcpu);
    EXPECT_GE(r.slept_us, 300u * 1000);
}

TEST_F(Migrate, MigratingAnEndedCoroutineFailsWithEinval) {
    other_vcpu b;
    auto t = spawn([] {});
    photon::thread_yield();
    ASSERT_EQ(photon::DONE, photon::thread_stat(t.th));
    errno = 0;
    EXPECT_EQ(-1, photon::thread_migrate(t.th, b.vcpu));
    EXPECT_EQ(EINVAL, errno);
    t.join();
}

TEST_F(Migrate, MigratingACoroutineOfAnotherVcpuFailsWithEinval) {
    other_vcpu b;
    photon::thread* remote = nullptr;
    b.pool.call([&] { remote = photon::CURRENT; });  // b's worker, alive until b ends
    errno = 0;
    EXPECT_EQ(-1, photon::thread_migrate(remote, photon::get_vcpu()));
    EXPECT_EQ(EINVAL, errno);
}

// Sleepers bounce between two vCPUs, each vCPU's migrator moving whatever it
// finds (a failed move of a coroutine that is not its own is expected),
// while a plain OS thread interrupts them all. Every sleeper must see all of
// its wakeups and end; queues must stay intact.
TEST_F(Migrate, SleepersMovedWhileAnotherThreadInterruptsThemLoseNoWakeup) {
    constexpr int kSleepers = 16, kWakeups = 200;
    other_vcpu b;
    photon::vcpu_base* a = photon::get_vcpu();
    std::atomic<int> finished{0}, moved{0};
    std::vector<task> sleepers;
    for (int i = 0; i < kSleepers; i++)
        sleepers.push_back(spawn([&] {
            auto t0 = Clock::now();
            int n = 0;
            while (n < kWakeups && us_since(t0) < kLongUs)
                if (photon::thread_usleep(kLongUs) < 0) n++;
            if (n == kWakeups) finished++;
        }));
    std::vector<photon::thread*> ths;
    for (auto& s : sleepers) ths.push_back(s.th);
    auto all_done = [&] { return finished.load() == kSleepers; };
    // Scans the sleepers from vCPU `from` until they are done.
    auto migrator = [&](photon::vcpu_base* to) {
        auto t0 = Clock::now();
        while (!all_done() && us_since(t0) < kLongUs) {
            for (auto th : ths)
                if (photon::thread_migrate(th, to) == 0) moved++;
            photon::thread_usleep(100);
        }
    };
    set_log_output_level(ALOG_FATAL);  // the expected EINVALs
    std::atomic<bool> b_done{false};
    std::thread b_side([&] {
        b.pool.call([&] { migrator(a); });
        b_done = true;
    });
    std::thread interrupter([&] {
        auto t0 = Clock::now();
        while (!all_done() && us_since(t0) < kLongUs) {
            for (auto th : ths) photon::thread_interrupt(th, EINTR);
            std::this_thread::sleep_for(std::chrono::microseconds(50));
        }
    });
    migrator(b.vcpu);
    interrupter.join();
    b_side.join();
    set_log_output_level(ALOG_DEBUG);
    for (auto& s : sleepers) s.join();
    EXPECT_TRUE(b_done.load());
    EXPECT_EQ(kSleepers, finished.load());
    EXPECT_GT(moved.load(), kSleepers);
    EXPECT_EQ(1u, photon::get_info(photon::INFO_THREAD_NUM));
    EXPECT_EQ(1u, photon::get_info(photon::INFO_RUNNABLE_THREAD_NUM));
}

}  // namespace
