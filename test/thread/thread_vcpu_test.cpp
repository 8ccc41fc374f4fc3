// Coroutines across OS threads (photon/thread/thread.h): interrupts from a
// plain OS thread and from another vCPU, and thread_migrate.
#include <photon/photon.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "test_util.h"

namespace {

using namespace photon_test;

class ThreadVcpu : public VcpuTest {};

// The same from a plain OS thread.
template <typename P>
bool os_wait_for(P pred, int max_ms = 5000) {
    for (int i = 0; i < max_ms && !pred(); i++)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return pred();
}

// A second vCPU on its own OS thread, idling until destroyed; its fini waits
// for the coroutines it got.
class OtherVcpu {
public:
    OtherVcpu() : os_([this] { run(); }) {
        os_wait_for([this] { return vcpu_.load() != nullptr || failed_.load(); });
    }
    ~OtherVcpu() {
        stop_ = true;
        os_.join();
    }
    photon::vcpu_base* vcpu() const { return vcpu_.load(); }

private:
    void run() {
        if (photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE) != 0) {
            failed_ = true;
            return;
        }
        vcpu_ = photon::get_vcpu();
        for (int i = 0; i < 60000 && !stop_; i++) photon::thread_usleep(1000);
        photon::fini();
    }
    std::atomic<photon::vcpu_base*> vcpu_{nullptr};
    std::atomic<bool> failed_{false}, stop_{false};
    std::thread os_;  // last: starts after the fields above exist
};

TEST_F(ThreadVcpu, InterruptFromAPlainOsThreadWakesASleepingCoroutine) {
    photon::thread* me = photon::CURRENT;
    std::atomic<int> iret{1};
    std::thread os([&] {
        os_wait_for([&] { return photon::thread_stat(me) == photon::SLEEPING; });
        iret = photon::thread_interrupt(me, ECANCELED);
    });
    auto t0 = Clock::now();
    errno = 0;
    int r = photon::thread_usleep(kLongUs);
    int e = errno;
    os.join();
    EXPECT_EQ(0, iret.load());
    EXPECT_EQ(-1, r);
    EXPECT_EQ(ECANCELED, e);
    EXPECT_LT(us_since(t0), kLongUs / 2);
}

TEST_F(ThreadVcpu, ResumeFromAPlainOsThreadMakesTheSleepReturnZero) {
    photon::thread* me = photon::CURRENT;
    std::thread os([&] {
        os_wait_for([&] { return photon::thread_stat(me) == photon::SLEEPING; });
        photon::thread_resume(me);
    });
    auto t0 = Clock::now();
    int r = photon::thread_usleep(kLongUs);
    os.join();
    EXPECT_EQ(0, r);
    EXPECT_LT(us_since(t0), kLongUs / 2);
}

TEST_F(ThreadVcpu, ACoroutineOnOneVcpuInterruptsASleeperOnAnother) {
    std::atomic<photon::thread*> target{nullptr};
    std::atomic<bool> done{false};
    int ret = 0, err = 0;  // published by `done`
    std::thread b([&] {
        ASSERT_EQ(0, photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE));
        photon::thread_create11([&] {
            target = photon::CURRENT;
            ret = photon::thread_usleep(kLongUs);
            err = errno;
            done = true;
        });
        photon::fini();  // waits for it
    });
    int iret = 1;
    auto interrupter = photon::thread_create11([&] {
        wait_for([&] {
            auto t = target.load();
            return t && photon::thread_stat(t) == photon::SLEEPING;
        });
        iret = photon::thread_interrupt(target.load(), ECANCELED);
    });
    EXPECT_NE(nullptr, interrupter);
    auto t0 = Clock::now();
    photon::wait_all();
    EXPECT_TRUE(wait_for([&] { return done.load(); }));
    b.join();
    EXPECT_EQ(0, iret);
    EXPECT_EQ(-1, ret);
    EXPECT_EQ(ECANCELED, err);
    EXPECT_LT(us_since(t0), kLongUs / 2);
}

TEST_F(ThreadVcpu, MigrateMovesAReadyCoroutineToAnotherVcpu) {
    OtherVcpu b;
    ASSERT_NE(nullptr, b.vcpu());
    EXPECT_EQ(2u, photon::get_vcpu_num());
    std::atomic<photon::vcpu_base*> ran_on{nullptr};
    auto th = photon::thread_create11([&] { ran_on = photon::get_vcpu(); });
    ASSERT_EQ(photon::READY, photon::thread_stat(th));
    EXPECT_EQ(0, photon::thread_migrate(th, b.vcpu()));
    EXPECT_EQ(1u, photon::get_info(photon::INFO_THREAD_NUM));
    EXPECT_TRUE(wait_for([&] { return ran_on.load() != nullptr; }));
    EXPECT_EQ(b.vcpu(), ran_on.load());
}

// (Sleeping coroutines move too: migrate_test.cpp.)
TEST_F(ThreadVcpu, MigrateRejectsTheMainCoroutineButAcceptsTheSameVcpu) {
    OtherVcpu b;
    ASSERT_NE(nullptr, b.vcpu());
    auto sleeper = photon::thread_create11([] { photon::thread_usleep(kLongUs); });
    photon::thread_yield();
    errno = 0;
    EXPECT_EQ(-1, photon::thread_migrate(photon::CURRENT, b.vcpu()));  // the main one
    EXPECT_EQ(EINVAL, errno);
    auto ready = photon::thread_create11([] {});
    EXPECT_EQ(0, photon::thread_migrate(ready, photon::get_vcpu()));
    EXPECT_EQ(photon::get_vcpu(), photon::get_vcpu(ready));
    EXPECT_EQ(0, photon::thread_migrate(sleeper, photon::get_vcpu()));
    EXPECT_EQ(photon::SLEEPING, photon::thread_stat(sleeper)) << "a no-op move does not wake it";
    photon::thread_interrupt(sleeper);
    photon::wait_all();
}

TEST_F(ThreadVcpu, MigrateMovesTheCurrentCoroutineToAnotherVcpu) {
    OtherVcpu b;
    ASSERT_NE(nullptr, b.vcpu());
    photon::vcpu_base *before = nullptr, *after = nullptr;
    int ret = -1;
    std::atomic<bool> done{false};
    photon::thread_create11([&] {
        before = photon::get_vcpu(photon::CURRENT);
        ret = photon::thread_migrate(photon::CURRENT, b.vcpu());
        after = photon::get_vcpu(current_uncached());
        photon::thread_usleep(1000);  // sleeps and wakes on the new vCPU
        done = true;
    });
    EXPECT_TRUE(wait_for([&] { return done.load(); }));
    EXPECT_EQ(0, ret);
    EXPECT_EQ(photon::get_vcpu(), before);
    EXPECT_EQ(b.vcpu(), after);
    EXPECT_EQ(1u, photon::get_info(photon::INFO_THREAD_NUM));
}

// The old vCPU's main coroutine sleeps long: nothing else there is runnable
// while the coroutine hands itself over.
TEST_F(ThreadVcpu, MigratingTheCurrentCoroutineDoesNotWaitForTheOldVcpuToHaveWork) {
    OtherVcpu b;
    ASSERT_NE(nullptr, b.vcpu());
    photon::thread* me = photon::CURRENT;
    std::atomic<bool> done{false};
    photon::thread_create11([&] {
        photon::thread_migrate(photon::CURRENT, b.vcpu());
        wait_for([&] { return photon::thread_stat(me) == photon::SLEEPING; });
        photon::thread_interrupt(me, ECANCELED);
        done = true;
    });
    errno = 0;
    int r = photon::thread_usleep(3 * 1000 * 1000);
    int e = errno;
    EXPECT_EQ(-1, r) << "the migration only happened when this sleep ended";
    EXPECT_EQ(ECANCELED, e);
    EXPECT_TRUE(wait_for([&] { return done.load(); }));
}

TEST_F(ThreadVcpu, JoinOfACoroutineThatMigratedItselfReturnsItsResult) {
    OtherVcpu b;
    ASSERT_NE(nullptr, b.vcpu());
    static photon::vcpu_base* target;
    target = b.vcpu();
    auto entry = [](void*) -> void* {
        photon::thread_migrate(photon::CURRENT, target);
        return photon::get_vcpu(current_uncached());
    };
    // A timer coroutine keeps this vCPU busy enough to hand the coroutine
    // over even if the migration waits for work here.
    std::atomic<bool> joined{false};
    photon::thread_create11([&] {
        for (int i = 0; i < 5000 && !joined; i++) photon::thread_usleep(1000);
    });
    auto th = photon::thread_create(entry, nullptr, photon::DEFAULT_STACK_SIZE, 0,
                                    photon::THREAD_JOINABLE);
    void* ret = photon::thread_join(photon::thread_enable_join(th));
    joined = true;
    EXPECT_EQ(static_cast<void*>(b.vcpu()), ret);
    photon::wait_all();
}

// A vCPU whose main coroutine spins without switching, so that a coroutine
// migrated to it stays in its standby list; then it reports its counts and
// finishes.
struct SpinningVcpu {
    std::atomic<photon::vcpu_base*> vcpu{nullptr};
    std::atomic<bool> migrated{false};
    uint64_t standby = 0, sleeping = 0;  // published by join()
    ~SpinningVcpu() {
        migrated = true;
        if (os.joinable()) os.join();
    }
    std::thread os{[this] {
        if (photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE) != 0) return;
        vcpu = photon::get_vcpu();
        auto t0 = Clock::now();
        while (!migrated && us_since(t0) < 5 * 1000 * 1000) photon::spin_wait();
        standby = photon::get_info(photon::INFO_STANDBY_THREAD_NUM);
        sleeping = photon::get_info(photon::INFO_SLEEPING_THREAD_NUM);
        photon::fini();
    }};
};

TEST_F(ThreadVcpu, SleepingCountDoesNotUnderflowWhileACoroutineMigratesIn) {
    SpinningVcpu b;
    ASSERT_TRUE(os_wait_for([&] { return b.vcpu.load() != nullptr; }));
    std::atomic<bool> ran{false};
    auto th = photon::thread_create11([&] { ran = true; });
    EXPECT_EQ(0, photon::thread_migrate(th, b.vcpu.load()));
    b.migrated = true;
    b.os.join();
    EXPECT_EQ(1u, b.standby);
    EXPECT_EQ(0u, b.sleeping);
}

TEST_F(ThreadVcpu, FiniWaitsForACoroutineMigratedInBeforeItWasAdopted) {
    SpinningVcpu b;
    ASSERT_TRUE(os_wait_for([&] { return b.vcpu.load() != nullptr; }));
    std::atomic<bool> ran{false};
    auto th = photon::thread_create11([&] { ran = true; });
    EXPECT_EQ(0, photon::thread_migrate(th, b.vcpu.load()));
    b.migrated = true;
    b.os.join();
    EXPECT_TRUE(ran.load()) << "the other vCPU was destroyed with the coroutine in its standby";
}

TEST_F(ThreadVcpu, VcpuCountFollowsInitAndFiniOfOtherOsThreads) {
    EXPECT_EQ(1u, photon::get_vcpu_num());
    {
        OtherVcpu b;
        ASSERT_NE(nullptr, b.vcpu());
        EXPECT_EQ(2u, photon::get_vcpu_num());
        EXPECT_NE(photon::get_vcpu(), b.vcpu());
    }
    EXPECT_EQ(1u, photon::get_vcpu_num());
}

TEST_F(ThreadVcpu, TimestampUpdaterRefreshesNowWithoutAnySwitch) {
    ASSERT_EQ(0, photon::timestamp_updater_init());
    errno = 0;
    EXPECT_EQ(-1, photon::timestamp_updater_init());
    EXPECT_EQ(EALREADY, errno);
    // `now` is written by the updater thread: read it atomically.
    auto read_now = [] { return __atomic_load_n(&photon::now, __ATOMIC_RELAXED); };
    const uint64_t before = read_now();
    auto t0 = Clock::now();
    while (read_now() == before && us_since(t0) < 2 * 1000 * 1000) photon::spin_wait();
    EXPECT_GT(read_now(), before);
    EXPECT_EQ(0, photon::timestamp_updater_fini());
    EXPECT_EQ(-1, photon::timestamp_updater_fini());
}

}  // namespace

// Regression: a remote interrupt that caught a coroutine between "SLEEPING"
// and leaving the run queue linked it into the standby list while it was still
// in the run queue, corrupting both (the vCPU then hung or lost coroutines).
TEST_F(ThreadVcpu, RemoteInterruptsOfCoroutinesGoingToSleepKeepTheRunQueueIntact) {
    constexpr int kSleepers = 16;
    std::atomic<bool> stop{false};
    std::atomic<int> finished{0};
    photon::thread* sleepers[kSleepers];
    photon::join_handle* handles[kSleepers];
    for (int i = 0; i < kSleepers; i++) {
        sleepers[i] = photon::thread_create11([&] {
            auto t0 = Clock::now();
            while (!stop && us_since(t0) < 3 * 1000 * 1000) photon::thread_usleep(2000);
            finished++;
        });
        handles[i] = photon::thread_enable_join(sleepers[i]);
    }
    std::thread interrupter([&] {
        auto t0 = Clock::now();
        while (us_since(t0) < 1500 * 1000)
            for (auto th : sleepers) photon::thread_interrupt(th, EINTR);
        stop = true;
    });
    for (auto h : handles) photon::thread_join(h);
    interrupter.join();
    EXPECT_EQ(kSleepers, finished.load());
    EXPECT_EQ(1u, photon::get_info(photon::INFO_RUNNABLE_THREAD_NUM));  // only this one
    EXPECT_EQ(1u, photon::get_info(photon::INFO_THREAD_NUM));
}
