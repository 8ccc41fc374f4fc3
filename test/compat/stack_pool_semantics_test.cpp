// PhotonLibOS's global pooled stack allocator as its own tests use it:
// direct calls pool and reuse, a double free is detected and counted
// instead of crashing, and stacks freed on other vCPUs do not make the
// process's stack memory grow without bound.
#include <photon/photon.h>
#include <photon/thread/stack-allocator.h>
#include <photon/thread/thread.h>
#include <photon/thread/workerpool.h>

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cstdio>

namespace {

constexpr size_t K = 1024, M = 1024 * 1024;

size_t rss_bytes() {
    FILE* f = fopen("/proc/self/statm", "r");
    unsigned long size = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%lu %lu", &size, &resident) != 2) resident = 0;
        fclose(f);
    }
    return resident * (size_t)getpagesize();
}

TEST(GlobalStackPoolSemantics, DirectCallsReuseAFreedStack) {
    ASSERT_EQ(0, photon::use_global_pooled_stack_allocator());
    photon::global_pooled_stack_trim(0);
    const size_t sz = 128 * K;
    void* p1 = photon::global_pooled_stack_alloc(nullptr, sz);
    ASSERT_NE(nullptr, p1);
    static_cast<char*>(p1)[getpagesize()] = 1;  // above the guard page
    static_cast<char*>(p1)[sz - 1] = 1;         // the whole size is the caller's
    photon::global_pooled_stack_dealloc(nullptr, p1, sz);
    void* p2 = photon::global_pooled_stack_alloc(nullptr, sz);
    EXPECT_EQ(p1, p2);
    photon::global_pooled_stack_dealloc(nullptr, p2, sz);
    auto before = photon::global_pooled_stack_stats();
    for (int i = 0; i < 2000; i++) {
        void* p = photon::global_pooled_stack_alloc(nullptr, sz);
        ASSERT_NE(nullptr, p);
        photon::global_pooled_stack_dealloc(nullptr, p, sz);
    }
    auto after = photon::global_pooled_stack_stats();
    EXPECT_LT(after.os_maps - before.os_maps, 4u);
    EXPECT_GE(after.hits - before.hits, 1999u);
}

TEST(GlobalStackPoolSemantics, ADoubleFreeIsCountedNotACrash) {
    ASSERT_EQ(0, photon::use_global_pooled_stack_allocator());
    const size_t sz = 128 * K;
    auto before = photon::global_pooled_stack_stats();
    void* p = photon::global_pooled_stack_alloc(nullptr, sz);
    ASSERT_NE(nullptr, p);
    photon::global_pooled_stack_dealloc(nullptr, p, sz);
    photon::global_pooled_stack_dealloc(nullptr, p, sz);
    auto after = photon::global_pooled_stack_stats();
    EXPECT_EQ(1u, after.corruptions - before.corruptions);
    // The pool still works, and hands the stack out once only.
    void* a = photon::global_pooled_stack_alloc(nullptr, sz);
    void* b = photon::global_pooled_stack_alloc(nullptr, sz);
    EXPECT_NE(a, b);
    photon::global_pooled_stack_dealloc(nullptr, a, sz);
    photon::global_pooled_stack_dealloc(nullptr, b, sz);
    int never_allocated;
    photon::global_pooled_stack_dealloc(nullptr, &never_allocated, sz);
    EXPECT_EQ(2u, photon::global_pooled_stack_stats().corruptions - before.corruptions);
}

std::atomic<uint64_t> g_done{0};
photon::semaphore* g_sem;
void* migrant(void*) {
    g_done.fetch_add(1, std::memory_order_relaxed);
    g_sem->signal(1);
    return nullptr;
}

// Photon's CrossVcpuBounded: coroutines made on one vCPU end on four others.
TEST(GlobalStackPoolSemantics, StacksFreedOnOtherVcpusStayBounded) {
    photon::GlobalStackPoolOptions opt;
    opt.per_vcpu_cache_bytes = 4 * M;
    opt.max_pooled_bytes = 32 * M;
    opt.max_pending_bytes = 16 * M;
    opt.max_cold_bytes = 32 * M;
    photon::PhotonOptions po;
    po.use_pooled_stack_allocator = photon::STACK_ALLOCATOR_GLOBAL_POOLED;
    ASSERT_EQ(0, photon::init(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE, po));
    ASSERT_EQ(0, photon::use_global_pooled_stack_allocator(opt));
    g_done = 0;
    {
        const int NV = 4, CONC = 32, ROUNDS = 40;
        const size_t sz = 512 * K;
        photon::WorkPool pool(NV, photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE, 0);
        photon::semaphore sem(0);
        g_sem = &sem;
        size_t baseline = 0, rss_baseline = 0;
        for (int r = 0; r < ROUNDS; r++) {
            for (int i = 0; i < CONC; i++) {
                auto th = photon::thread_create(&migrant, nullptr, sz);
                ASSERT_NE(nullptr, th);
                pool.thread_migrate(th, i % NV);
            }
            sem.wait(CONC);
            if (r == 2) {
                baseline = photon::global_pooled_stack_stats().mapped_bytes;
                rss_baseline = rss_bytes();
            }
        }
        EXPECT_EQ((uint64_t)ROUNDS * CONC, g_done.load());
        auto s = photon::global_pooled_stack_stats();
        ASSERT_GT(baseline, 0u);
        EXPECT_LT(s.mapped_bytes, baseline + 64 * M)
            << "baseline " << baseline / M << " MiB, now " << s.mapped_bytes / M << " MiB";
        EXPECT_LT(rss_bytes(), rss_baseline + 64 * M)
            << "rss baseline " << rss_baseline / M << " MiB, now " << rss_bytes() / M << " MiB";
        printf("mapped: baseline %zu MiB, end %zu MiB; rss: baseline %zu MiB, end %zu MiB\n",
               baseline / M, s.mapped_bytes / M, rss_baseline / M, rss_bytes() / M);
    }
    EXPECT_EQ(0, photon::fini());
}

}  // namespace
