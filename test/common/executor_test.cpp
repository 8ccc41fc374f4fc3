// photon::Executor (photon/common/executor/executor.h): perform() from many
// plain threads and from coroutines, results, errno and exceptions carried
// back, async_perform(), destruction with work pending or from a task of its
// own, export_as_executor(), a failed engine init; and stdlock.h's StdCond.
#include <photon/common/executor/executor.h>
#include <photon/common/executor/stdlock.h>

#include <photon/thread/thread.h>

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "../thread/test_util.h"

namespace {

using namespace photon_test;

// Waits on a plain thread (not a vCPU) until pred() holds, at most ~5 s.
template <typename P>
bool os_wait_for(P pred) {
    for (int i = 0; i < 5000 && !pred(); i++)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return pred();
}

TEST(Executor, PerformRunsOnTheExecutorsVcpuAndReturnsTheResult) {
    photon::Executor ex(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE);
    ASSERT_EQ(nullptr, photon::CURRENT) << "the test thread is a plain thread";
    auto vcpu = ex.perform([] { return photon::get_vcpu(); });
    EXPECT_NE(nullptr, vcpu);
    EXPECT_EQ(vcpu, ex.perform([] { return photon::get_vcpu(); })) << "one vCPU serves them all";
    EXPECT_EQ(42, ex.perform([] { return 42; }));
    int side = 0;
    ex.perform([&] { side = 7; });
    EXPECT_EQ(7, side);
}

TEST(Executor, ManyThreadsPerformingConcurrentlyAllGetTheirOwnResults) {
    photon::Executor ex(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE);
    constexpr int kThreads = 8, kCalls = 500;
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; t++) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < kCalls; i++) {
                int expect = t * 100000 + i;
                int got = ex.perform([=] { return expect; });
                if (got != expect) wrong++;
            }
        });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(0, wrong.load());
}

TEST(Executor, TasksRunInCoroutinesOfTheirOwnAndOverlap) {
    photon::Executor ex(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE);
    constexpr int kThreads = 6;
    int arrived = 0;  // only touched on the executor's vCPU
    std::atomic<int> saw_all{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; t++) {
        threads.emplace_back([&] {
            // Each task waits until all have started: serialized tasks would
            // time out here.
            bool ok = ex.perform([&] {
                arrived++;
                return photon_test::wait_for([&] { return arrived == kThreads; });
            });
            if (ok) saw_all++;
        });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(kThreads, saw_all.load());
}

TEST(Executor, ErrnoOfTheTaskIsTheCallersAfterwards) {
    photon::Executor ex(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE);
    errno = 0;
    int r = ex.perform([] {
        errno = ENOENT;
        return -1;
    });
    EXPECT_EQ(-1, r);
    EXPECT_EQ(ENOENT, errno);
    errno = 0;
    ex.perform([] { errno = EAGAIN; });
    EXPECT_EQ(EAGAIN, errno) << "also for a void task";
}

TEST(Executor, AnExceptionThrownByATaskIsRethrownInTheCaller) {
    photon::Executor ex(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE);
    EXPECT_THROW(ex.perform([]() -> int { throw std::runtime_error("boom"); }), std::runtime_error);
    EXPECT_THROW(ex.perform([] { throw std::logic_error("void"); }), std::logic_error);
    EXPECT_EQ(3, ex.perform([] { return 3; })) << "the executor goes on";
}

TEST(Executor, ResultsNeedNotBeDefaultConstructibleOrCopyable) {
    struct no_default {
        explicit no_default(int v) : v(v) {}
        int v;
    };
    photon::Executor ex(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE);
    EXPECT_EQ(5, ex.perform([] { return no_default(5); }).v);
    auto p = ex.perform([] { return std::make_unique<int>(9); });
    ASSERT_NE(nullptr, p);
    EXPECT_EQ(9, *p);
}

TEST(Executor, EachContextWaitsCorrectlyFromAPlainThread) {
    photon::Executor ex(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE);
    EXPECT_EQ(1, ex.perform<photon::StdContext>([] { return 1; }));
    EXPECT_EQ(2, ex.perform<photon::AutoContext>([] { return 2; }));
}

TEST(Executor, PerformFromACoroutineParksOnlyThatCoroutine) {
    ASSERT_EQ(0, photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE));
    {
        photon::Executor ex(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE);
        std::atomic<int> ticks{0};
        bool stop = false;
        auto ticker = spawn([&] {
            while (!stop) {
                ticks++;
                photon::thread_usleep(1000);
            }
        });
        // The task waits for a tick of this vCPU: only possible if perform()
        // left the vCPU free to run the ticker.
        int seen = ex.perform([&] {
            photon_test::wait_for([&] { return ticks.load() >= 3; });
            return ticks.load();
        });
        stop = true;
        ticker.join();
        EXPECT_GE(seen, 3);
        EXPECT_EQ(6, ex.perform<photon::PhotonContext>([] { return 6; }));
    }
    EXPECT_EQ(0, photon::fini());
}

TEST(Executor, ATaskMayPerformOnItsOwnExecutor) {
    photon::Executor ex(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE);
    int r = ex.perform([&] { return ex.perform([] { return 4; }) + 1; });
    EXPECT_EQ(5, r);
}

struct counted_task {
    std::atomic<int>* ran;
    std::atomic<int>* destroyed;
    void operator()() {
        photon::thread_usleep(1000);
        (*ran)++;
    }
    ~counted_task() { (*destroyed)++; }
};

TEST(Executor, AsyncPerformRunsTheTaskAndDeletesIt) {
    std::atomic<int> ran{0}, destroyed{0};
    {
        photon::Executor ex(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE);
        for (int i = 0; i < 50; i++) ex.async_perform(new counted_task{&ran, &destroyed});
        EXPECT_TRUE(os_wait_for([&] { return destroyed.load() == 50; }));
        errno = 0;
        ex.async_perform<photon::AutoContext, counted_task>(nullptr);
        EXPECT_EQ(EINVAL, errno);
    }
    EXPECT_EQ(50, ran.load());
}

TEST(Executor, DestructionRunsEveryQueuedTaskAndWaitsForRunningOnes) {
    std::atomic<int> ran{0}, destroyed{0};
    std::atomic<bool> started{false}, finished{false};
    int result = 0;
    std::thread caller;
    {
        photon::Executor ex(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE);
        caller = std::thread([&] {
            result = ex.perform([&] {
                started = true;
                photon::thread_usleep(50 * 1000);
                finished = true;
                return 7;
            });
        });
        EXPECT_TRUE(os_wait_for([&] { return started.load(); }));
        for (int i = 0; i < 200; i++) ex.async_perform(new counted_task{&ran, &destroyed});
    }  // ~Executor with a perform() sleeping and async tasks queued
    EXPECT_TRUE(finished.load()) << "the destructor waited for the running task";
    EXPECT_EQ(200, ran.load());
    EXPECT_EQ(200, destroyed.load());
    caller.join();
    EXPECT_EQ(7, result);
}

TEST(Executor, DestroyedFromOneOfItsOwnTasksWithoutDeadlock) {
    std::promise<void> done;
    auto fut = done.get_future();
    std::atomic<int> after{0};
    {
        auto ex =
            std::make_shared<photon::Executor>(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE);
        ex->async_perform(new auto([&ex, &done, &after] {
            ex.reset();  // ~Executor on its own vCPU, in a task
            after++;
            done.set_value();
        }));
        ASSERT_EQ(std::future_status::ready, fut.wait_for(std::chrono::seconds(10)));
    }
    EXPECT_EQ(1, after.load());
}

TEST(Executor, ExportAsExecutorServesFromTheCallingVcpu) {
    errno = 0;
    EXPECT_EQ(nullptr, photon::Executor::export_as_executor());
    EXPECT_EQ(ENOSYS, errno) << "not a vCPU";

    ASSERT_EQ(0, photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE));
    {
        auto here = photon::get_vcpu();
        auto ex = photon::Executor::export_as_executor();
        ASSERT_NE(nullptr, ex);
        std::atomic<photon::vcpu_base*> ran_on{nullptr};
        std::atomic<bool> done{false};
        std::thread t([&] {
            ran_on = ex->perform([] { return photon::get_vcpu(); });
            done = true;
        });
        // This vCPU serves the task: sleep, never block it.
        EXPECT_TRUE(wait_for([&] { return done.load(); }));
        t.join();
        EXPECT_EQ(here, ran_on.load());

        std::atomic<int> ran{0}, destroyed{0};
        for (int i = 0; i < 20; i++) ex->async_perform(new counted_task{&ran, &destroyed});
        delete ex;  // from the serving vCPU, but not from a task: waits
        EXPECT_EQ(20, ran.load());
    }
    EXPECT_EQ(0, photon::fini());
}

TEST(Executor, AFailedEngineInitFallsBackToAVcpuWithoutEngine) {
    // kqueue does not exist on Linux: photon::init fails on the executor thread.
    photon::Executor ex(photon::INIT_EVENT_KQUEUE, photon::INIT_IO_NONE);
    EXPECT_NE(nullptr, ex.perform([] { return photon::get_vcpu(); }));
    EXPECT_EQ(0, ex.perform([] { return photon::thread_usleep(1000); }));
}

TEST(Executor, NoPollingQueueOptionStillServesEveryTask) {
    photon::Executor ex(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE, {}, {0, 0});
    int sum = 0;
    for (int i = 1; i <= 100; i++) sum += ex.perform([i] { return i; });
    EXPECT_EQ(5050, sum);
}

TEST(StdCond, WaitForTimesOutOrSeesANotification) {
    std::mutex mtx;
    photon::StdCond cond(mtx);
    std::unique_lock<std::mutex> lock(mtx);
    auto t0 = Clock::now();
    EXPECT_FALSE(cond.wait_for(lock, 10 * 1000));
    EXPECT_GE(us_since(t0), 9 * 1000u);
    bool flag = false;
    std::thread notifier([&] {
        cond.lock();
        flag = true;
        cond.unlock();
        cond.notify_all();
    });
    while (!flag) EXPECT_TRUE(cond.wait_for(lock, -1)) << "negative: no timeout";
    lock.unlock();
    notifier.join();
}

}  // namespace
