// photon::WorkPool (photon/thread/workerpool.h): call() from coroutines and
// plain OS threads, async_call(), thread_migrate() into the pool, the three
// thread modes, joining a vCPU into the pool, and the destructor.
#include <photon/thread/workerpool.h>

#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "test_util.h"

namespace {

using namespace photon_test;

class WorkPool : public VcpuTest {};

TEST_F(WorkPool, CallRunsOnAPoolVcpuAndReturnsToACoroutine) {
    photon::WorkPool pool(2);
    EXPECT_EQ(2, pool.get_vcpu_num());
    EXPECT_EQ(3u, photon::get_vcpu_num()) << "each pool OS thread is a vCPU";
    int result = 0;
    photon::vcpu_base* ran_on = nullptr;
    pool.call([&](int x) { result = x * 2, ran_on = photon::get_vcpu(); }, 21);
    EXPECT_EQ(42, result);
    EXPECT_NE(nullptr, ran_on);
    EXPECT_NE(photon::get_vcpu(), ran_on);
}

TEST_F(WorkPool, CallParksOnlyTheCallingCoroutine) {
    photon::WorkPool pool(1);
    std::atomic<int> ticks{0};
    std::atomic<bool> stop{false};
    auto ticker = spawn([&] {
        while (!stop) {
            ticks++;
            photon::thread_usleep(1000);
        }
    });
    pool.call([] { std::this_thread::sleep_for(std::chrono::milliseconds(50)); });
    stop = true;
    ticker.join();
    EXPECT_GT(ticks.load(), 1) << "this vCPU ran other coroutines while the caller waited";
}

TEST_F(WorkPool, CallFromAPlainOsThreadBlocksItUntilTheTaskIsDone) {
    photon::WorkPool pool(1);
    int a = 0, b = 0;
    bool was_vcpu = true, task_on_vcpu = false;
    std::thread os([&] {
        was_vcpu = photon::CURRENT != nullptr;
        pool.call([&] { a = 1, task_on_vcpu = photon::CURRENT != nullptr; });
        pool.call<photon::StdContext>([&] { b = 2; });
    });
    os.join();
    EXPECT_FALSE(was_vcpu);
    EXPECT_TRUE(task_on_vcpu);
    EXPECT_EQ(1, a);
    EXPECT_EQ(2, b);
}

TEST_F(WorkPool, CallWithEachContextFromACoroutine) {
    photon::WorkPool pool(1);
    int n = 0;
    pool.call<photon::PhotonContext>([&] { n++; });
    pool.call<photon::StdContext>([&] { n++; });
    pool.call<photon::AutoContext>([&] { n++; });
    EXPECT_EQ(3, n);
}

TEST_F(WorkPool, ManyConcurrentCallersFromThreadsAndCoroutinesAllGetTheirResults) {
    constexpr int kThreads = 4, kThreadCalls = 1000, kCoroutines = 100, kCoroutineCalls = 100;
    photon::WorkPool pool(2);
    std::atomic<int> ran{0};
    std::vector<int> thread_counts(kThreads), coroutine_counts(kCoroutines);
    std::vector<std::thread> os;
    for (int i = 0; i < kThreads; i++)
        os.emplace_back([&, i] {
            for (int k = 0; k < kThreadCalls; k++) pool.call([&] { thread_counts[i]++, ran++; });
        });
    std::vector<task> cos;
    for (int i = 0; i < kCoroutines; i++)
        cos.push_back(spawn([&, i] {
            for (int k = 0; k < kCoroutineCalls; k++)
                pool.call([&] { coroutine_counts[i]++, ran++; });
        }));
    for (auto& c : cos) c.join();
    for (auto& t : os) t.join();
    for (int c : thread_counts) EXPECT_EQ(kThreadCalls, c);
    for (int c : coroutine_counts) EXPECT_EQ(kCoroutineCalls, c);
    EXPECT_EQ(kThreads * kThreadCalls + kCoroutines * kCoroutineCalls, ran.load());
}

struct counted_task {
    std::atomic<int>* ran;
    std::atomic<int>* deleted;
    void operator()() { ++*ran; }
    ~counted_task() { ++*deleted; }
};

TEST_F(WorkPool, AsyncCallRunsAndDeletesEveryTask) {
    constexpr int kTasks = 1000;
    std::atomic<int> ran{0}, deleted{0};
    {
        photon::WorkPool pool(2);
        for (int i = 0; i < kTasks; i++) pool.async_call(new counted_task{&ran, &deleted});
        EXPECT_TRUE(wait_for([&] { return deleted.load() == kTasks; }));
    }
    EXPECT_EQ(kTasks, ran.load());
    EXPECT_EQ(kTasks, deleted.load());
}

TEST_F(WorkPool, AsyncCallFromAPlainOsThreadRunsTheTask) {
    std::atomic<int> ran{0}, deleted{0};
    {
        photon::WorkPool pool(1);
        std::thread os([&] { pool.async_call(new counted_task{&ran, &deleted}); });
        os.join();
    }
    EXPECT_EQ(1, ran.load());
    EXPECT_EQ(1, deleted.load());
}

TEST_F(WorkPool, ThreadMigrateSpreadsCoroutinesRoundRobinOverThePoolVcpus) {
    constexpr int kVcpus = 2, kPer = 4;
    photon::WorkPool pool(kVcpus);
    std::vector<photon::vcpu_base*> landed(kVcpus * kPer);
    std::vector<task> ts;
    for (int i = 0; i < kVcpus * kPer; i++)
        ts.push_back(spawn([&, i] {
            EXPECT_EQ(0, pool.thread_migrate());  // CURRENT, round-robin
            landed[i] = photon::get_vcpu(current_uncached());
        }));
    for (auto& t : ts) t.join();
    std::map<photon::vcpu_base*, int> per_vcpu;
    for (auto v : landed) per_vcpu[v]++;
    EXPECT_EQ(0u, per_vcpu.count(photon::get_vcpu()));
    ASSERT_EQ((size_t)kVcpus, per_vcpu.size());
    for (auto& p : per_vcpu) EXPECT_EQ(kPer, p.second);
}

TEST_F(WorkPool, ThreadMigrateToAnIndexMovesAReadyCoroutineThere) {
    photon::WorkPool pool(2);
    photon::vcpu_base* seen[2] = {};
    for (size_t i = 0; i < 2; i++) {
        auto t = spawn([&, i] { seen[i] = photon::get_vcpu(current_uncached()); });
        EXPECT_EQ(0, pool.thread_migrate(t.th, i));
        t.join();
    }
    EXPECT_NE(seen[0], seen[1]);
    EXPECT_NE(photon::get_vcpu(), seen[0]);
    EXPECT_NE(photon::get_vcpu(), seen[1]);
    errno = 0;
    auto t = spawn([] {});
    EXPECT_EQ(-1, pool.thread_migrate(t.th, 2));
    EXPECT_EQ(EINVAL, errno);
    t.join();
}

// The largest number of tasks running at once, for 8 tasks that sleep.
int max_concurrency(int thread_mod) {
    std::atomic<int> inside{0}, peak{0}, ran{0};
    {
        photon::WorkPool pool(1, 0, 0, thread_mod);
        for (int i = 0; i < 8; i++) {
            auto task = [&] {
                int n = ++inside;
                int p = peak.load();
                while (n > p && !peak.compare_exchange_weak(p, n)) {
                }
                photon::thread_usleep(30 * 1000);
                inside--;
                ran++;
            };
            pool.async_call(new decltype(task)(task));
        }
    }
    EXPECT_EQ(8, ran.load()) << "thread_mod " << thread_mod;
    return peak.load();
}

TEST_F(WorkPool, ThreadModMinusOneRunsTasksOneAtATimeInline) { EXPECT_EQ(1, max_concurrency(-1)); }

TEST_F(WorkPool, ThreadModZeroRunsEachTaskInItsOwnCoroutine) { EXPECT_GE(max_concurrency(0), 2); }

TEST_F(WorkPool, ThreadModFourRunsAtMostFourTasksAtOnce) {
    int peak = max_concurrency(4);
    EXPECT_GE(peak, 2);
    EXPECT_LE(peak, 4);
}

TEST_F(WorkPool, DestructorRunsTheTasksStillQueued) {
    constexpr int kTasks = 100;
    std::atomic<int> ran{0}, deleted{0};
    {
        photon::WorkPool pool(1);
        auto blocker = [] { photon::thread_usleep(300 * 1000); };
        pool.async_call(new decltype(blocker)(blocker));
        for (int i = 0; i < kTasks; i++) pool.async_call(new counted_task{&ran, &deleted});
        ASSERT_EQ(0, ran.load()) << "the tasks must still be queued when the pool goes";
    }
    EXPECT_EQ(kTasks, ran.load());
    EXPECT_EQ(kTasks, deleted.load());
}

TEST_F(WorkPool, AFullQueueMakesTheProducerWaitInsteadOfDroppingTasks) {
    constexpr int kTasks = 200;
    std::atomic<int> ran{0}, deleted{0};
    {
        photon::WorkPool pool(1, 0, 0, -1, 4);
        for (int i = 0; i < kTasks; i++) pool.async_call(new counted_task{&ran, &deleted});
    }
    EXPECT_EQ(kTasks, ran.load());
    EXPECT_EQ(kTasks, deleted.load());
}

TEST_F(WorkPool, AJoinedVcpuServesThePoolUntilItIsDestroyed) {
    auto pool = std::make_unique<photon::WorkPool>(1);
    int joined = -1;
    auto joiner = spawn([&] { joined = pool->join_current_vcpu_into_workpool(); });
    ASSERT_TRUE(wait_for([&] { return pool->get_vcpu_num() == 2; }));
    errno = 0;
    EXPECT_EQ(-1, pool->join_current_vcpu_into_workpool()) << "this vCPU serves it already";
    EXPECT_EQ(EALREADY, errno);
    int os_ret = 0, os_err = 0;
    std::thread os([&] {
        os_ret = pool->join_current_vcpu_into_workpool();
        os_err = errno;
    });
    os.join();
    EXPECT_EQ(-1, os_ret);
    EXPECT_EQ(ENOSYS, os_err);
    // The pool's own vCPU is stuck in the first task, so the others run here.
    std::atomic<int> here{0}, done{0};
    photon::vcpu_base* me = photon::get_vcpu();
    for (int i = 0; i < 4; i++) {
        auto task = [&, me] {
            if (photon::get_vcpu() == me) here++;
            photon::thread_usleep(20 * 1000);
            done++;
        };
        pool->async_call(new decltype(task)(task));
    }
    EXPECT_TRUE(wait_for([&] { return done.load() == 4; }));
    EXPECT_GE(here.load(), 1);
    EXPECT_EQ(-1, joined) << "returns only when the pool goes";
    pool.reset();
    joiner.join();
    EXPECT_EQ(0, joined);
}

TEST_F(WorkPool, PoolOsThreadsAreVcpusUntilThePoolIsDestroyed) {
    {
        photon::WorkPool pool(3);
        EXPECT_EQ(3, pool.get_vcpu_num());
        EXPECT_EQ(4u, photon::get_vcpu_num());
    }
    EXPECT_EQ(1u, photon::get_vcpu_num());
}

TEST_F(WorkPool, DestructorWaitsForCoroutinesMigratedIntoThePool) {
    std::atomic<bool> finished{false};
    {
        photon::WorkPool pool(1);
        auto th = photon::thread_create11([&] {
            photon::thread_usleep(50 * 1000);
            finished = true;
        });
        EXPECT_EQ(0, pool.thread_migrate(th));
    }
    EXPECT_TRUE(finished.load());
}

}  // namespace
