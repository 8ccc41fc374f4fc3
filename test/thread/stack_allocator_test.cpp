// photon/thread/stack-allocator.h: Photon's allocator functions called
// directly, installing user allocators (pairs, objects, facades), stacks
// going back to the allocator that made them, the built-in allocator's
// options, trims and statistics.
#include <photon/photon.h>
#include <photon/thread/stack-allocator.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <utility>

#include "test_util.h"

namespace {

using namespace photon_test;

constexpr size_t kPage = 4096;

class StackAllocator : public VcpuTest {
protected:
    void TearDown() override {
        photon::set_photon_thread_stack_allocator();  // the built-in one again
        photon::pooled_stack_trim_threshold(size_t(1) << 30);
        EXPECT_EQ(0, photon::use_global_pooled_stack_allocator({1ULL << 30, 1ULL << 30}));
        VcpuTest::TearDown();
    }
};

// Counts the calls of a user stack allocator; hands out plain memory.
struct CountingAllocator {
    int allocs = 0, frees = 0, trims = 0;
    char* last = nullptr;
    size_t last_size = 0;
    void* alloc(size_t n) {
        allocs++;
        last_size = n;
        return last = static_cast<char*>(aligned_alloc(kPage, n));
    }
    void dealloc(void* p, size_t n) {
        frees++;
        EXPECT_EQ(last_size, n);
        free(p);
    }
    size_t trim(size_t keep) {
        trims++;
        return keep;
    }
    photon::StackPoolStats stats() {
        photon::StackPoolStats s;
        s.hits = (uint64_t)allocs;
        s.misses = (uint64_t)frees;
        return s;
    }
};

// Only what a facade needs.
struct MinimalAllocator {
    int allocs = 0;
    void* alloc(size_t n) {
        allocs++;
        return aligned_alloc(kPage, n);
    }
    void dealloc(void* p, size_t) { free(p); }
};

void* record_sp(void* arg) {
    *static_cast<char**>(arg) = static_cast<char*>(__builtin_frame_address(0));
    return nullptr;
}

// Runs a joinable coroutine of `stack` bytes to its end; returns where its
// frame was.
char* run_one(size_t stack = 64 * 1024) {
    char* sp = nullptr;
    auto th = photon::thread_create(&record_sp, &sp, stack, 0, photon::THREAD_JOINABLE);
    EXPECT_NE(nullptr, th);
    if (th) photon::thread_join(photon::thread_enable_join(th));
    return sp;
}

// ---- the functions called directly --------------------------------------------

TEST(StackAllocFunctions, GivePageAlignedMemoryWithAGuardAtTheBottom) {
    using alloc_fn = void* (*)(void*, size_t);
    using dealloc_fn = void (*)(void*, void*, size_t);
    const std::pair<alloc_fn, dealloc_fn> pairs[] = {
        {&photon::default_photon_thread_stack_alloc, &photon::default_photon_thread_stack_dealloc},
        {&photon::pooled_stack_alloc, &photon::pooled_stack_dealloc},
        {&photon::global_pooled_stack_alloc, &photon::global_pooled_stack_dealloc}};
    for (auto f : pairs) {
        auto p = static_cast<char*>(f.first(nullptr, 16 * kPage));
        ASSERT_NE(nullptr, p);
        EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(p) % kPage);
        memset(p + kPage, 1, 15 * kPage);  // above the guard: usable
        auto r = in_child([&] {
            p[0] = 1;  // the guard: must fault
            return 0;
        });
        // Killed by SIGSEGV (under ASan: reported, exit code 1), not returned 0.
        EXPECT_FALSE(WIFEXITED(r.second) && WEXITSTATUS(r.second) == 0) << r.first;
        f.second(nullptr, p, 16 * kPage);  // each with its own (the pooled ones pool)
    }
    photon::pooled_stack_dealloc(nullptr, nullptr, 0);  // nothing to free
}

TEST(StackAllocFunctions, RefuseASizeWithNoRoomAboveTheGuard) {
    errno = 0;
    EXPECT_EQ(nullptr, photon::default_photon_thread_stack_alloc(nullptr, kPage));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(nullptr, photon::global_pooled_stack_alloc(nullptr, 0));
    EXPECT_EQ(EINVAL, errno);
}

// ---- installing allocators -----------------------------------------------------

TEST_F(StackAllocator, APairOfDelegatesServesNewCoroutinesAboveItsGuardPage) {
    CountingAllocator ca;
    photon::set_photon_thread_stack_allocator({&ca, &CountingAllocator::alloc},
                                              {&ca, &CountingAllocator::dealloc});
    char* sp = run_one();
    EXPECT_EQ(1, ca.allocs);
    EXPECT_EQ(1, ca.frees);
    EXPECT_GE(ca.last_size, 64u * 1024);
    EXPECT_GE(sp, ca.last + kPage) << "the bottom page is the allocator's guard";
    EXPECT_LT(sp, ca.last + ca.last_size);
}

// Photon freed a stack with whatever allocator was installed by then.
TEST_F(StackAllocator, AStackGoesBackToTheAllocatorThatMadeIt) {
    CountingAllocator a, b;
    photon::set_photon_thread_stack_allocator({&a, &CountingAllocator::alloc},
                                              {&a, &CountingAllocator::dealloc});
    bool go = false;
    auto t = spawn([&] {
        while (!go) photon::thread_usleep(1000);
    });  // a's stack
    photon::set_photon_thread_stack_allocator({&b, &CountingAllocator::alloc},
                                              {&b, &CountingAllocator::dealloc});
    run_one();
    photon::set_photon_thread_stack_allocator();  // built-in
    run_one();
    go = true;
    t.join();
    EXPECT_EQ(1, a.allocs);
    EXPECT_EQ(1, a.frees);
    EXPECT_EQ(1, b.allocs);
    EXPECT_EQ(1, b.frees);
}

TEST_F(StackAllocator, AnUnboundDelegateIsRefusedAndChangesNothing) {
    CountingAllocator ca;
    photon::set_photon_thread_stack_allocator({&ca, &CountingAllocator::alloc},
                                              {&ca, &CountingAllocator::dealloc});
    errno = 0;
    photon::set_photon_thread_stack_allocator({}, {&ca, &CountingAllocator::dealloc});
    EXPECT_EQ(EINVAL, errno);
    run_one();
    EXPECT_EQ(1, ca.allocs) << "the installed allocator stayed";
}

TEST_F(StackAllocator, PhotonsFunctionsAndTheDefaultArgumentsSelectTheBuiltInAllocator) {
    CountingAllocator ca;
    photon::set_photon_thread_stack_allocator({&ca, &CountingAllocator::alloc},
                                              {&ca, &CountingAllocator::dealloc});
    photon::set_photon_thread_stack_allocator({&photon::pooled_stack_alloc, nullptr},
                                              {&photon::pooled_stack_dealloc, nullptr});
    auto before = photon::global_pooled_stack_stats();
    run_one();
    run_one();
    EXPECT_EQ(0, ca.allocs);
    auto after = photon::global_pooled_stack_stats();
    EXPECT_EQ(before.hits + before.misses + 2, after.hits + after.misses) << "from the slabs";
    photon::set_photon_thread_stack_allocator({&ca, &CountingAllocator::alloc},
                                              {&ca, &CountingAllocator::dealloc});
    EXPECT_EQ(0, photon::use_pooled_stack_allocator());
    run_one();
    photon::set_photon_thread_stack_allocator({&ca, &CountingAllocator::alloc},
                                              {&ca, &CountingAllocator::dealloc});
    photon::set_photon_thread_stack_allocator();
    run_one();
    EXPECT_EQ(0, ca.allocs);
}

// ---- the facade ------------------------------------------------------------------

TEST_F(StackAllocator, AnObjectIsInstalledWholeAndReachedThroughTheFacade) {
    CountingAllocator ca;
    auto saved = photon::get_photon_thread_stack_allocator();
    ASSERT_EQ(0, photon::set_photon_thread_stack_allocator(ca));
    for (int i = 0; i < 4; i++) run_one();
    EXPECT_EQ(4, ca.allocs);
    EXPECT_EQ(4, ca.frees);
    auto& sa = photon::get_photon_thread_stack_allocator();
    EXPECT_EQ(123u, sa.trim(123));
    EXPECT_EQ(1, ca.trims);
    EXPECT_EQ(4u, sa.stats().hits);
    ASSERT_EQ(0, photon::set_photon_thread_stack_allocator(saved));
    run_one();
    EXPECT_EQ(4, ca.allocs) << "the saved facade stands for the built-in allocator";
}

TEST_F(StackAllocator, AnObjectWithoutTrimOrStatsWorksAndReportsZeroes) {
    MinimalAllocator m;
    ASSERT_EQ(0, photon::set_photon_thread_stack_allocator(m));
    run_one();
    EXPECT_EQ(1, m.allocs);
    auto& sa = photon::get_photon_thread_stack_allocator();
    EXPECT_EQ(0u, sa.trim(100));
    EXPECT_EQ(0u, sa.stats().hits);
}

TEST_F(StackAllocator, AFacadeWithoutDeallocIsRefused) {
    photon::StackAllocator broken;
    errno = 0;
    EXPECT_EQ(-1, photon::set_photon_thread_stack_allocator(broken));
    EXPECT_EQ(EINVAL, errno);
    CountingAllocator ca;
    photon::StackAllocator half;
    photon::DUtils::bind_func_delegate<photon::DStackAlloc, void*(size_t)>(
        half, {&ca, &CountingAllocator::alloc});
    EXPECT_EQ(-1, photon::set_photon_thread_stack_allocator(half));
    run_one();
    EXPECT_EQ(0, ca.allocs);
}

TEST_F(StackAllocator, TheBuiltInFacadeTrimsThisVcpuAndReportsProcessWideStats) {
    run_one();
    run_one();  // from the cache
    auto& sa = photon::get_photon_thread_stack_allocator();
    auto st = sa.stats();
    auto gs = photon::global_pooled_stack_stats();
    EXPECT_GE(st.hits, 1u);
    EXPECT_GE(st.misses, 1u);
    EXPECT_EQ(gs.hits, st.hits);
    EXPECT_GE(st.pooled_bytes, 64u * 1024);
    EXPECT_GT(sa.trim(0), 0u);
    EXPECT_EQ(0u, sa.stats().pooled_bytes);
}

// ---- the built-in allocator's options and statistics ---------------------------

TEST_F(StackAllocator, GlobalPoolOptionsItCannotHonourAreRefused) {
    photon::GlobalStackPoolOptions o;
    o.guard_pages = 2;
    EXPECT_EQ(-1, photon::use_global_pooled_stack_allocator(o));
    EXPECT_EQ(ENOTSUP, errno);
    o.guard_pages = 1;
    o.paranoid = true;
    EXPECT_EQ(-1, photon::use_global_pooled_stack_allocator(o));
    EXPECT_EQ(ENOTSUP, errno);
    o.paranoid = false;
    o.per_vcpu_cache_bytes = 0;
    EXPECT_EQ(-1, photon::use_global_pooled_stack_allocator(o));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(0, photon::use_global_pooled_stack_allocator());
}

TEST_F(StackAllocator, PerVcpuCacheBytesBoundTheCache) {
    photon::GlobalStackPoolOptions o;
    o.per_vcpu_cache_bytes = 200 * 1024;  // three 64 KiB stacks
    ASSERT_EQ(0, photon::use_global_pooled_stack_allocator(o));
    photon::global_pooled_stack_trim(0);
    std::vector<task> ts;
    bool go = false;
    for (int i = 0; i < 8; i++)
        ts.push_back(spawn([&] {
            while (!go) photon::thread_usleep(1000);
        }));
    photon::thread_yield();
    go = true;
    for (auto& t : ts) t.join();
    EXPECT_LE(photon::global_pooled_stack_stats().pooled_bytes, 200u * 1024);
}

// The top of a stack reused from a cache is where the previous coroutine's
// frames were; wipe_bytes zeroes it before the next one gets it.
TEST_F(StackAllocator, WipeBytesZeroTheTopOfAReusedStack) {
    for (uint32_t wipe : {0u, 32u * 1024}) {
        photon::GlobalStackPoolOptions o;
        o.wipe_bytes = wipe;
        ASSERT_EQ(0, photon::use_global_pooled_stack_allocator(o));
        volatile char* secret = nullptr;
        photon::thread* first = nullptr;
        auto t = photon::thread_create11(64 * 1024, [&] {
            first = photon::CURRENT;
            volatile char buf[12 * 1024];
            for (auto& c : buf) c = 0x5a;
            secret = buf;  // deep enough to be below the next control block
        });
        photon::thread_join(photon::thread_enable_join(t));
        auto next = photon::thread_create(&photon_test::noop, nullptr, 64 * 1024, 0,
                                          photon::THREAD_JOINABLE);
        ASSERT_LT(std::abs(reinterpret_cast<char*>(next) - reinterpret_cast<char*>(first)),
                  64 * 1024)
            << "the next coroutine got the same stack";
        EXPECT_EQ(wipe ? 0 : 0x5a, secret[0]);
        photon::thread_join(photon::thread_enable_join(next));
    }
}

TEST_F(StackAllocator, GlobalStatsCountLivePooledAndMappedBytes) {
    photon::global_pooled_stack_trim(0);
    auto s0 = photon::global_pooled_stack_stats();
    bool go = false;
    auto t = spawn([&] {
        while (!go) photon::thread_usleep(1000);
    });
    photon::thread_yield();
    auto s1 = photon::global_pooled_stack_stats();
    EXPECT_GE(s1.live_bytes, s0.live_bytes + kStack);
    EXPECT_GT(s1.mapped_bytes, 0u);
    EXPECT_GE(s1.os_maps, 1u);
    EXPECT_LE(s1.cold_bytes, s1.mapped_bytes);
    EXPECT_EQ(0u, s1.pending_bytes);
    go = true;
    t.join();
    auto s2 = photon::global_pooled_stack_stats();
    EXPECT_GE(s2.pooled_bytes, s0.pooled_bytes + kStack);
    EXPECT_GE(photon::global_pooled_stack_trim(0), kStack);
    EXPECT_EQ(0u, photon::global_pooled_stack_stats().pooled_bytes);
}

TEST(StackAllocatorOptions, PhotonOptionsSelectAnAllocatorThroughPhotonH) {
    for (uint8_t kind : {photon::STACK_ALLOCATOR_DEFAULT, photon::STACK_ALLOCATOR_POOLED,
                         photon::STACK_ALLOCATOR_GLOBAL_POOLED}) {
        photon::PhotonOptions opts;
        opts.use_pooled_stack_allocator = kind;
        ASSERT_EQ(0, photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE, opts));
        EXPECT_NE(nullptr, run_one());
        EXPECT_EQ(0, photon::fini());
    }
}

}  // namespace
