// photon/thread/thread-pool.h: pooled coroutines reused for new work, join in
// either order, coroutine-local values reset between works, more work than
// capacity, bypass mode, deleting a pool with work running, and failure.
#include <photon/thread/thread-key.h>
#include <photon/thread/thread-pool.h>
#include <photon/thread/workerpool.h>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "test_util.h"

namespace {

using namespace photon_test;
using photon::TPControl;

class ThreadPool : public VcpuTest {};

struct work {
    photon::thread* ran_on = nullptr;
    uint64_t sleep_us = 0;
    bool done = false;
};

void* do_work(void* arg) {
    auto w = static_cast<work*>(arg);
    w->ran_on = photon::CURRENT;
    if (w->sleep_us) photon::thread_usleep(w->sleep_us);
    w->done = true;
    return nullptr;
}

TEST_F(ThreadPool, AnEndedWorksCoroutineRunsTheNextWork) {
    auto pool = photon::new_thread_pool(4, kStack);
    ASSERT_NE(nullptr, pool);
    work a, b;
    photon::thread* th = pool->thread_create(&do_work, &a);
    ASSERT_NE(nullptr, th);
    EXPECT_TRUE(wait_for([&] { return a.done; }));
    run_others();  // it goes back to the pool
    EXPECT_EQ(th, pool->thread_create(&do_work, &b));
    EXPECT_TRUE(wait_for([&] { return b.done; }));
    EXPECT_EQ(a.ran_on, b.ran_on);
    photon::delete_thread_pool(pool);
    run_others();
    EXPECT_EQ(1u, photon::get_info(photon::INFO_THREAD_NUM));
}

TEST_F(ThreadPool, JoinWaitsForWorkStillRunning) {
    auto pool = photon::new_thread_pool(4, kStack);
    work w;
    w.sleep_us = 20 * 1000;
    auto c = pool->thread_create_ex(&do_work, &w, true);
    ASSERT_NE(nullptr, c);
    pool->join(c);
    EXPECT_TRUE(w.done);
    work again;
    EXPECT_EQ(c, pool->thread_create_ex(&do_work, &again, true));  // the joiner put it back
    pool->join(c);
    EXPECT_TRUE(again.done);
    photon::delete_thread_pool(pool);
}

TEST_F(ThreadPool, JoinAfterTheWorkEndedReturnsAndTheCoroutineIsReused) {
    auto pool = photon::new_thread_pool(4, kStack);
    work w;
    auto c = pool->thread_create_ex(&do_work, &w, true);
    ASSERT_NE(nullptr, c);
    EXPECT_TRUE(wait_for([&] { return w.done; }));
    run_others();  // the worker waits for its joiner now
    pool->join(c);
    run_others();
    work next;
    EXPECT_EQ(c->th, pool->thread_create(&do_work, &next));
    EXPECT_TRUE(wait_for([&] { return next.done; }));
    photon::delete_thread_pool(pool);
}

TEST_F(ThreadPool, WorkBeyondCapacityRunsAtOnceAndOnlyCapacityStaysIdle) {
    constexpr int N = 10;
    auto pool = photon::new_thread_pool(2, kStack);
    std::vector<work> ws(N);
    for (auto& w : ws) {
        w.sleep_us = 10 * 1000;
        ASSERT_NE(nullptr, pool->thread_create(&do_work, &w));
    }
    EXPECT_EQ(N + 1u, photon::get_info(photon::INFO_THREAD_NUM));
    EXPECT_TRUE(wait_for([&] {
        for (auto& w : ws)
            if (!w.done) return false;
        return true;
    }));
    EXPECT_TRUE(wait_for([] { return photon::get_info(photon::INFO_THREAD_NUM) == 3; }));
    photon::delete_thread_pool(pool);
    EXPECT_TRUE(wait_for([] { return photon::get_info(photon::INFO_THREAD_NUM) == 1; }));
}

int g_destroyed;

TEST_F(ThreadPool, EachWorkStartsWithoutTheLastWorksCoroutineLocalValues) {
    photon::thread_key_t key;
    ASSERT_EQ(0, photon::thread_key_create(&key, [](void*) { g_destroyed++; }));
    g_destroyed = 0;
    photon::ThreadPool<2> pool(kStack);
    static photon::thread_key_t k;
    k = key;
    static void* seen;
    seen = (void*)1;
    auto set = [](void*) -> void* {
        photon::thread_setspecific(k, (void*)0x1234);
        return nullptr;
    };
    auto get = [](void*) -> void* {
        seen = photon::thread_getspecific(k);
        return nullptr;
    };
    auto c = pool.thread_create_ex(set, nullptr, true);
    pool.join(c);
    auto c2 = pool.thread_create_ex(get, nullptr, true);
    EXPECT_EQ(c, c2);  // the same coroutine
    pool.join(c2);
    EXPECT_EQ(nullptr, seen);
    EXPECT_EQ(1, g_destroyed);
    photon::thread_key_delete(key);
}

TEST_F(ThreadPool, BypassMakesPlainJoinableCoroutines) {
    photon::set_bypass_threadpool(true);
    auto pool = photon::new_thread_pool(4, kStack);
    work a, b;
    auto ca = pool->thread_create_ex(&do_work, &a, true);
    ASSERT_NE(nullptr, ca);
    photon::thread* tha = ca->th;
    pool->join(ca);
    auto cb = pool->thread_create_ex(&do_work, &b, true);
    ASSERT_NE(nullptr, cb);
    photon::set_bypass_threadpool(false);  // join follows how it was created
    pool->join(cb);
    EXPECT_TRUE(a.done && b.done);
    EXPECT_EQ(tha, a.ran_on);
    photon::delete_thread_pool(pool);
    EXPECT_EQ(1u, photon::get_info(photon::INFO_THREAD_NUM));
}

TEST_F(ThreadPool, DeletingAPoolWaitsForItsRunningWork) {
    work w;
    w.sleep_us = 20 * 1000;
    {
        photon::ThreadPool<4> pool(kStack);
        ASSERT_NE(nullptr, pool.thread_create(&do_work, &w));
        photon::thread_yield();
        EXPECT_FALSE(w.done);
    }
    EXPECT_TRUE(w.done);
    EXPECT_TRUE(wait_for([] { return photon::get_info(photon::INFO_THREAD_NUM) == 1; }));
}

// Work given from another vCPU runs on the pooled coroutine's own vCPU, and
// joins across vCPUs meet in either order.
TEST_F(ThreadPool, WorkCreatedAndJoinedFromAnotherVcpuRunsAndIsJoined) {
    constexpr int kRounds = 200;
    auto pool = photon::new_thread_pool(8, kStack);
    std::vector<work> warm(4);
    std::vector<TPControl*> cs;
    for (auto& w : warm) cs.push_back(pool->thread_create_ex(&do_work, &w, true));
    for (auto c : cs) pool->join(c);  // 4 idle coroutines on this vCPU
    static std::atomic<int> ran;
    ran = 0;
    std::atomic<bool> finished{false};
    int joined = 0;
    photon::WorkPool other(1);
    std::thread t([&] {
        other.call([&] {
            for (int i = 0; i < kRounds; i++) {
                auto c = pool->thread_create_ex(
                    [](void* arg) -> void* {
                        if ((intptr_t)arg % 3 == 0) photon::thread_usleep(100);
                        ran++;
                        return nullptr;
                    },
                    (void*)(intptr_t)i, true);
                if (!c) break;
                if (i % 2) photon::thread_usleep(200);  // the work ends first
                pool->join(c);
                joined++;
            }
        });
        finished = true;
    });
    EXPECT_TRUE(wait_for([&] { return finished.load(); }, 20000));
    t.join();
    EXPECT_EQ(kRounds, joined);
    EXPECT_EQ(kRounds, ran.load());
    photon::delete_thread_pool(pool);
}

TEST_F(ThreadPool, WhenNoCoroutineCanBeMadeCreateFailsWithEnomem) {
    for (bool bypass : {false, true}) {
        photon::set_bypass_threadpool(bypass);
        auto pool = photon::new_thread_pool(4, 1ULL << 60);  // no such stack
        work w;
        errno = 0;
        EXPECT_EQ(nullptr, pool->thread_create(&do_work, &w));
        EXPECT_EQ(ENOMEM, errno);
        EXPECT_EQ(nullptr, pool->thread_create_ex(&do_work, &w, true));
        photon::delete_thread_pool(pool);  // nothing is out: returns at once
    }
    photon::set_bypass_threadpool(false);
}

}  // namespace
