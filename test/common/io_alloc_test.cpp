// photon/common/io-alloc.h: the default, aligned and pooled I/O buffer
// allocators, their size classes, and requests they cannot serve.
#include <photon/common/io-alloc.h>
#include <photon/photon.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

namespace {

TEST(IOAllocTest, TheDefaultAllocatorServesTheRangesMaxAndFrees) {
    IOAlloc a;
    void* p = nullptr;
    EXPECT_EQ(300, a.allocate({100, 300}, &p));
    ASSERT_NE(nullptr, p);
    memset(p, 1, 300);
    EXPECT_EQ(0, a.deallocate(p));
    void* q = a.alloc(64);
    ASSERT_NE(nullptr, q);
    EXPECT_EQ(0, a.dealloc(q));
    errno = 0;
    EXPECT_EQ(nullptr, a.alloc((size_t)INT32_MAX + 1));
    EXPECT_EQ(ENOMEM, errno);
}

TEST(IOAllocTest, AlignedAllocAlignsEveryBuffer) {
    AlignedAlloc a(4096);
    std::vector<void*> ps;
    for (int i = 1; i < 20; i++) {
        void* p = a.alloc((size_t)i * 1000);
        ASSERT_NE(nullptr, p);
        EXPECT_EQ(0u, (uintptr_t)p % 4096);
        ps.push_back(p);
    }
    for (auto p : ps) a.dealloc(p);
    a.reset();  // still aligned after a reset
    void* p = a.alloc(10);
    EXPECT_EQ(0u, (uintptr_t)p % 4096);
    a.dealloc(p);
}

TEST(IOAllocTest, PooledAllocatorReusesFreedBuffersOfTheSameClass) {
    PooledAllocator<1024 * 1024, 4> pool;
    IOAlloc a = pool.get_io_alloc();
    void* p = nullptr;
    EXPECT_EQ(5000, a.allocate({1, 5000}, &p));  // from the 8 KiB class
    ASSERT_NE(nullptr, p);
    EXPECT_EQ(0u, (uintptr_t)p % 4096);
    EXPECT_GE(malloc_usable_size(p), 8192u);
    memset(p, 7, 8192);
    a.deallocate(p);
    void* q = nullptr;
    EXPECT_EQ(8000, a.allocate({8000, 8000}, &q));
    EXPECT_EQ(p, q);  // the same buffer back
    a.deallocate(q);
    void* r = nullptr;
    EXPECT_EQ(4096, a.allocate({4096, 4096}, &r));
    EXPECT_NE(p, r);  // another class
    a.deallocate(r);
}

TEST(IOAllocTest, PooledAllocatorCapsTheMaxAndRefusesATooLargeMin) {
    PooledAllocator<64 * 1024, 4> pool;
    IOAlloc a = pool.get_io_alloc();
    void* p = nullptr;
    EXPECT_EQ(64 * 1024, a.allocate({1000, 1 << 20}, &p));
    ASSERT_NE(nullptr, p);
    EXPECT_GE(malloc_usable_size(p), 64u * 1024);
    a.deallocate(p);
    errno = 0;
    EXPECT_EQ(-1, a.allocate({128 * 1024, 1 << 20}, &p));
    EXPECT_EQ(ENOMEM, errno);
}

TEST(IOAllocTest, PooledAllocatorKeepsAtMostItsCapacityPerClass) {
    PooledAllocator<1024 * 1024, 2> pool;
    IOAlloc a = pool.get_io_alloc();
    std::vector<void*> ps(5);
    for (auto& p : ps) ASSERT_EQ(4096, a.allocate({4096, 4096}, &p));
    for (auto p : ps) a.deallocate(p);  // 2 kept, 3 freed
    std::set<void*> kept(ps.begin(), ps.end());
    std::vector<void*> again(2);
    for (auto& p : again) {
        a.allocate({4096, 4096}, &p);
        EXPECT_EQ(1u, kept.count(p));
    }
    for (auto p : again) a.deallocate(p);
}

TEST(IOAllocTest, PooledAllocatorWorksFromPlainThreadsAtOnce) {
    PooledAllocator<1024 * 1024, 8> pool;
    IOAlloc a = pool.get_io_alloc();
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; t++)
        ts.emplace_back([&a, t] {
            for (int i = 0; i < 2000; i++) {
                void* p = nullptr;
                int n = a.allocate({1, 4096 << (i % 3)}, &p);
                EXPECT_GT(n, 0);
                if (n > 0) {
                    memset(p, t, (size_t)n);
                    a.deallocate(p);
                }
            }
        });
    for (auto& t : ts) t.join();
}

TEST(IOAllocTest, PowerOfTwoHelpersRoundAsTheirNamesSay) {
    EXPECT_TRUE(is_power_of_2(0));
    EXPECT_TRUE(is_power_of_2(1));
    EXPECT_TRUE(is_power_of_2(4096));
    EXPECT_FALSE(is_power_of_2(4097));
    EXPECT_EQ(0, log2_truncate(1));
    EXPECT_EQ(12, log2_truncate(4096));
    EXPECT_EQ(12, log2_truncate(8191));
    EXPECT_EQ(0, log2_round_up(1));
    EXPECT_EQ(1, log2_round_up(2));
    EXPECT_EQ(2, log2_round_up(3));
    EXPECT_EQ(13, log2_round_up(4097));
    EXPECT_EQ(64, log2_round_up(SIZE_MAX));
    EXPECT_EQ(2, log2_round(5));
    EXPECT_EQ(3, log2_round(6));
    EXPECT_EQ(0, log2_round(1));
    EXPECT_EQ(8192u, round_up_to_exp2(4097));
    EXPECT_EQ(4096u, round_up_to_exp2(4096));
    EXPECT_EQ(1u, round_up_to_exp2(0));
}

}  // namespace
