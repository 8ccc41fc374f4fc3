// Coroutine stacks (photon/thread/thread.h, stack-allocator.h): the guard
// page below each stack, reuse of pooled stacks, thread_stack_stat,
// stack_pages_gc, a user stack allocator and sizes that cannot be satisfied.
#include <photon/photon.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <sys/wait.h>

#include <string>
#include <thread>

#include <alloca.h>
#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "test_util.h"

namespace {

using namespace photon_test;

class ThreadStack : public VcpuTest {
protected:
    void SetUp() override {
        testing::FLAGS_gtest_death_test_style = death_test_style();
        VcpuTest::SetUp();
    }
};

uintptr_t distance(uintptr_t a, uintptr_t b) { return a > b ? a - b : b - a; }

// Writes to n bytes of fresh stack below the caller (alloca: never moved off
// the stack by sanitizers' fake stacks).
__attribute__((noinline)) void touch_stack(size_t n) {
    auto p = static_cast<volatile char*>(alloca(n));
    for (size_t i = 0; i < n; i += 256) p[i] = 1;
    asm volatile("" : : "r"(p) : "memory");
}

// ---- guard page ------------------------------------------------------------

// Where the fault of an overflow must land: around the bottom of the stack.
uintptr_t g_fault_lo, g_fault_hi;

void on_segv(int, siginfo_t* si, void*) {
    auto a = reinterpret_cast<uintptr_t>(si->si_addr);
    signal(SIGSEGV, SIG_DFL);
    if (a < g_fault_lo || a >= g_fault_hi) _exit(3);  // not the guard page
    // Returning repeats the faulting access, which now kills the process.
}

__attribute__((noinline)) int recurse(int depth) {
    volatile char buf[1024];
    for (size_t i = 0; i < sizeof(buf); i += 64) buf[i] = (char)depth;
    if (depth >= 100000) return buf[0];  // ~100 MB: far past any 64 KiB stack
    return recurse(depth + 1) + buf[depth % sizeof(buf)];
}

void overflow_a_64k_coroutine_stack() {
    static char altstack[64 * 1024];
    stack_t ss{};
    ss.ss_sp = altstack;
    ss.ss_size = sizeof(altstack);
    sigaltstack(&ss, nullptr);
    struct sigaction sa {};
    sa.sa_sigaction = &on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(SIGSEGV, &sa, nullptr);
    photon::thread_create11(64 * 1024, [] {
        char here;
        photon::stack_stat st{};
        photon::thread_stack_stat(photon::CURRENT, &st);
        uintptr_t lo = reinterpret_cast<uintptr_t>(&here) - st.size;  // about the stack bottom
        g_fault_lo = lo - 3 * 4096;
        g_fault_hi = lo + 3 * 4096;
        recurse(0);
    });
    photon::wait_all();
    _exit(0);
}

TEST_F(ThreadStack, OverflowingA64KiBStackDiesWithSigsegvOnTheGuardPage) {
    EXPECT_EXIT(overflow_a_64k_coroutine_stack(), testing::KilledBySignal(SIGSEGV), "");
}

// With photon's own handler (installed by photon::init), the death says why.
TEST_F(ThreadStack, AnOverflowIsReportedAsAStackOverflowOfThatCoroutine) {
    EXPECT_DEATH(
        {
            photon::thread_create11(64 * 1024, [] { recurse(0); });
            photon::wait_all();
        },
        "photon: stack overflow in coroutine 0x[0-9a-f]+: fault at 0x[0-9a-f]+, below its "
        "65536-byte stack");
}

// A fault elsewhere (here: a PROT_NONE page) still kills the process, with
// no stack overflow message. Forked by hand to read what the child printed.
TEST_F(ThreadStack, AFaultOutsideAnyGuardPageIsNotCalledAStackOverflow) {
    void* page = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(MAP_FAILED, page);
    auto r = in_child([page] {
        photon::thread_create11([page] { *static_cast<volatile int*>(page) = 1; });
        photon::wait_all();
        return 0;
    });
    ASSERT_NE(-1, r.second);
    EXPECT_FALSE(WIFEXITED(r.second) && WEXITSTATUS(r.second) == 0) << "the fault did not kill it";
    EXPECT_EQ(std::string::npos, r.first.find("stack overflow in coroutine")) << r.first;
    munmap(page, 4096);
}

// ---- pooling -----------------------------------------------------------------

TEST_F(ThreadStack, TheStackOfAnEndedCoroutineIsReusedByTheNextOne) {
    constexpr uint64_t kStack = 72 * 1024;  // a size no other test uses
    uintptr_t a = 0, b = 0, c = 0, concurrent = 0;
    photon::thread_create11(kStack, [&] {
        char x;
        a = reinterpret_cast<uintptr_t>(&x);
    });
    photon::wait_all();
    photon::thread_create11(kStack, [&] {
        char x;
        b = reinterpret_cast<uintptr_t>(&x);
        photon::thread_create11(kStack, [&] {
            char y;
            concurrent = reinterpret_cast<uintptr_t>(&y);
        });
        photon::thread_yield();
    });
    photon::wait_all();
    auto th = photon::thread_create11(kStack, [&] {
        char x;
        c = reinterpret_cast<uintptr_t>(&x);
    });
    photon::thread_join(photon::thread_enable_join(th));
    // Within one stack the frames differ only by the control block's random
    // gap; different stacks are at least a whole stack apart.
    EXPECT_LT(distance(a, b), kStack);
    EXPECT_GE(distance(b, concurrent), kStack);
    auto th2 = photon::thread_create11(kStack, [&] {
        char x;
        a = reinterpret_cast<uintptr_t>(&x);
    });
    photon::thread_join(photon::thread_enable_join(th2));
    EXPECT_LT(distance(a, c), kStack);  // a joined coroutine's stack, too
}

// ---- statistics and gc ---------------------------------------------------------

TEST_F(ThreadStack, StackStatHighWaterMarkGrowsWhenTheCoroutineUsesMoreStack) {
    constexpr uint64_t kStack = 264 * 1024;
    photon::stack_stat before{}, after{}, again{};
    photon::thread_create11(kStack, [&] {
        EXPECT_EQ(0, photon::thread_stack_stat(photon::CURRENT, &before));
        touch_stack(96 * 1024);
        EXPECT_EQ(0, photon::thread_stack_stat(photon::CURRENT, &after));
        EXPECT_EQ(0, photon::thread_stack_stat(photon::CURRENT, &again));  // a mark, not usage
    });
    photon::wait_all();
    EXPECT_LE(before.size, kStack);
    EXPECT_GE(before.size, kStack - 4096);
    EXPECT_LT(before.used_max, 64u * 1024);
    EXPECT_GE(after.used_max, before.used_max + 88 * 1024);
    EXPECT_LE(after.used_max, after.size);
    EXPECT_GE(again.used_max, after.used_max);
    errno = 0;
    EXPECT_EQ(-1, photon::thread_stack_stat(nullptr, &before));
    EXPECT_EQ(EINVAL, errno);
}

// A running coroutine has at least the page of its own frame resident, even
// when everything it uses fits in the stack's top page.
TEST_F(ThreadStack, StackStatCountsThePageOfTheRunningFrame) {
    constexpr int N = 64;  // alive together: fresh stacks, varied control-block gaps
    static photon::stack_stat st[N];
    static int next;
    next = 0;
    auto entry = [](void*) -> void* {
        int i = next++;
        photon::thread_stack_stat(photon::CURRENT, &st[i]);
        photon::thread_usleep(10 * 1000 * 1000);
        return nullptr;
    };
    std::vector<photon::thread*> ths;
    for (int i = 0; i < N; i++) ths.push_back(photon::thread_create(entry, nullptr, 88 * 1024));
    photon::thread_yield();
    ASSERT_EQ(N, next);
    int zero = 0;
    for (int i = 0; i < N; i++) zero += st[i].used_max < 4096;
    EXPECT_EQ(0, zero) << "of " << N << " coroutines reported less than a page in use";
    for (auto th : ths) photon::thread_interrupt(th);
}

TEST_F(ThreadStack, StackPagesGcReturnsZeroAndReleasesThePagesBelowTheFrame) {
    constexpr uint64_t kStack = 280 * 1024;
    photon::stack_stat deep{}, after{};
    int gc_ret = -1;
    photon::thread_create11(kStack, [&] {
        touch_stack(128 * 1024);
        photon::thread_stack_stat(photon::CURRENT, &deep);
        gc_ret = photon::stack_pages_gc();
        photon::thread_stack_stat(photon::CURRENT, &after);
    });
    photon::wait_all();
    EXPECT_EQ(0, gc_ret);
    EXPECT_GE(deep.used_max, 128u * 1024);
    EXPECT_LE(after.used_max + 96 * 1024, deep.used_max);

    // ... and for a sleeping coroutine.
    photon::stack_stat sleeping{};
    auto th = photon::thread_create11(kStack, [] {
        touch_stack(128 * 1024);
        photon::thread_usleep(10 * 1000 * 1000);
    });
    photon::thread_yield();
    EXPECT_EQ(0, photon::stack_pages_gc(th));
    EXPECT_EQ(0, photon::thread_stack_stat(th, &sleeping));
    EXPECT_LT(sleeping.used_max, 64u * 1024);
    photon::thread_interrupt(th);
}

// ---- sizes that cannot be satisfied ------------------------------------------

TEST_F(ThreadStack, CreateWithAnAbsurdStackSizeFailsWithEnomem) {
    errno = 0;
    EXPECT_EQ(nullptr, photon::thread_create(&noop, nullptr, 1ULL << 60));
    EXPECT_EQ(ENOMEM, errno);
    EXPECT_EQ(1u, photon::get_info(photon::INFO_THREAD_NUM));
    ASSERT_NE(nullptr, photon::thread_create(&noop, nullptr));  // the vCPU still works
    photon::wait_all();
}

// Page rounding of sizes within a page of 2^64 must not wrap to 0.
TEST_F(ThreadStack, CreateWithStackSizeUint64MaxFailsInsteadOfCrashing) {
    EXPECT_EXIT(
        {
            errno = 0;
            photon::thread* th = photon::thread_create(&noop, nullptr, UINT64_MAX);
            _exit(th == nullptr && (errno == ENOMEM || errno == EINVAL) ? 0 : 1);
        },
        testing::ExitedWithCode(0), "");
}

// Counts the calls of a user stack allocator.
struct CountingAllocator {
    int allocs = 0, frees = 0;
    size_t size = 0;
    void* alloc(size_t n) {
        allocs++;
        size = n;
        return aligned_alloc(4096, n);
    }
    void dealloc(void* p, size_t n) {
        frees++;
        EXPECT_EQ(size, n);
        free(p);
    }
};

TEST_F(ThreadStack, ACustomStackAllocatorServesAndFreesEachStack) {
    CountingAllocator ca;
    photon::set_photon_thread_stack_allocator({&ca, &CountingAllocator::alloc},
                                              {&ca, &CountingAllocator::dealloc});
    uintptr_t local = 0;
    photon::thread_create11(64 * 1024, [&] {
        char x;
        local = reinterpret_cast<uintptr_t>(&x);
    });
    photon::wait_all();
    auto th = photon::thread_create(&noop, nullptr, 64 * 1024, 0, photon::THREAD_JOINABLE);
    photon::thread_join(photon::thread_enable_join(th));
    EXPECT_EQ(0, photon::use_pooled_stack_allocator());
    EXPECT_EQ(2, ca.allocs);
    EXPECT_EQ(2, ca.frees);
    EXPECT_GE(ca.size, 64u * 1024);
    EXPECT_NE(0u, local);
    photon::thread_create(&noop, nullptr, 64 * 1024);  // pooled again
    photon::wait_all();
    EXPECT_EQ(2, ca.allocs);
}

// set_default_stack_size: what thread_create gives for 0 and for DEFAULT_STACK_SIZE (its
// default argument), and only that; through photon::init's options too.
uint64_t stack_size_of_new(uint64_t asked) {
    auto th = photon::thread_create(&noop, nullptr, asked, 0, photon::THREAD_JOINABLE);
    auto jh = photon::thread_enable_join(th);
    photon::stack_stat st{};
    EXPECT_EQ(0, photon::thread_stack_stat(th, &st));
    photon::thread_join(jh);
    return st.size;
}

TEST_F(ThreadStack, TheDefaultStackSizeIsWhatThreadCreateGivesForZeroOrTheDefault) {
    uint64_t full = stack_size_of_new(photon::DEFAULT_STACK_SIZE);
    EXPECT_GE(full, photon::DEFAULT_STACK_SIZE - 4096);
    ASSERT_EQ(0, photon::set_default_stack_size(64 * 1024));
    EXPECT_EQ(64u * 1024, photon::get_default_stack_size());
    EXPECT_LE(stack_size_of_new(0), 64u * 1024);
    EXPECT_LE(stack_size_of_new(photon::DEFAULT_STACK_SIZE), 64u * 1024);
    EXPECT_GE(stack_size_of_new(photon::DEFAULT_STACK_SIZE), 60u * 1024);
    EXPECT_GE(stack_size_of_new(1024 * 1024), 1020u * 1024);  // asked for: unchanged
    ASSERT_EQ(0, photon::set_default_stack_size(0));          // back to 8 MiB
    EXPECT_EQ(full, stack_size_of_new(0));
    errno = 0;
    EXPECT_EQ(-1, photon::set_default_stack_size(1ULL << 50));
    EXPECT_EQ(EINVAL, errno);
}

TEST(DefaultStackSize, PhotonOptionsSetItForTheNewVcpu) {
    std::thread([] {
        photon::PhotonOptions opt;
        opt.default_stack_size = 128 * 1024;
        ASSERT_EQ(0, photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE, opt));
        EXPECT_EQ(128u * 1024, photon::get_default_stack_size());
        EXPECT_LE(stack_size_of_new(0), 128u * 1024);
        photon::fini();
    }).join();
    EXPECT_EQ(photon::DEFAULT_STACK_SIZE, photon::get_default_stack_size());  // off a vCPU
}

}  // namespace
