// Coroutine stacks at scale (thread/stack_slab.h, stack_pool.h and
// photon/thread/stack-allocator.h): a million sleepers at the kernel's
// default vm.max_map_count, guard pages that survive it, the mprotect
// fallback and its map budget, trimming pooled stacks, and running out of
// address space without an abort.
#include <photon/photon.h>
#include <photon/thread/stack-allocator.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

#include <gtest/gtest.h>

#include <alloca.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../../thread/fiber_annotations.h"
#include "../../thread/stack_slab.h"
#include "../../thread/thread_control.h"
#include "test_util.h"

namespace {

using namespace photon_test;

class StackSlab : public VcpuTest {
protected:
    void SetUp() override {
        testing::FLAGS_gtest_death_test_style = death_test_style();
        VcpuTest::SetUp();
    }
};

long proc_value(const char* path, const char* field) {  // a "Field: N kB" line, or -1
    FILE* f = fopen(path, "r");
    if (!f) return -1;
    char line[256];
    long v = -1;
    size_t n = strlen(field);
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, field, n) && line[n] == ':') v = atol(line + n + 1);
    fclose(f);
    return v;
}

long rss_bytes() { return proc_value("/proc/self/status", "VmRSS") * 1024; }

[[maybe_unused]] long map_count() {
    FILE* f = fopen("/proc/self/maps", "r");
    if (!f) return -1;
    long n = 0;
    for (int c; (c = fgetc(f)) != EOF;) n += c == '\n';
    fclose(f);
    return n;
}

[[maybe_unused]] long max_map_count() {
    long v = 65530;
    if (FILE* f = fopen("/proc/sys/vm/max_map_count", "r")) {
        if (fscanf(f, "%ld", &v) != 1) v = 65530;
        fclose(f);
    }
    return v;
}

__attribute__((noinline)) int recurse(int depth) {
    volatile char buf[1024];
    for (size_t i = 0; i < sizeof(buf); i += 64) buf[i] = (char)depth;
    if (depth >= 100000) return buf[0];  // ~100 MB: past any default stack
    return recurse(depth + 1) + buf[depth % sizeof(buf)];
}

__attribute__((noinline)) void touch_stack(size_t n) {
    auto p = static_cast<volatile char*>(alloca(n));
    for (size_t i = 0; i < n; i += 256) p[i] = 1;
    asm volatile("" : : "r"(p) : "memory");
}

size_t count_of(const std::string& s, const std::string& what) {
    size_t n = 0;
    for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) n++;
    return n;
}

// ---- a million sleepers --------------------------------------------------------

int g_interrupted;

void* sleep_an_hour(void*) {
    if (photon::thread_usleep(3600ULL * 1000 * 1000) == -1 && errno == ECANCELED) g_interrupted++;
    return nullptr;
}

// The README's test command runs this on a stock kernel: vm.max_map_count at
// its default (65530) once cost two maps per stack and stopped near 32K.
TEST_F(StackSlab, AMillionSleepingCoroutinesAreCreatedWokenAndJoinedAtTheDefaultMapLimit) {
#if defined(PHOTON_TSAN)
    constexpr uint64_t N = 6000;  // TSan counts each coroutine as a thread: 8128 at most
#elif defined(PHOTON_ASAN) || defined(PHOTON_TEST_EMULATED)
    // ASan shadows every stack page and keeps fake frames, several times the
    // 8 KiB (a stack page and its page table) a coroutine costs here;
    // qemu-user runs page faults an order of magnitude slower.
    constexpr uint64_t N = 100000;
#else
    constexpr uint64_t N = 1000000;
#endif
    // Each sleeper holds one 4 KiB stack page and one 4 KiB page table.
    long avail = proc_value("/proc/meminfo", "MemAvailable") * 1024;
    if (avail > 0 && (uint64_t)avail < N * 12 * 1024)
        GTEST_SKIP() << "needs " << N * 12 / 1024 << " MiB of available memory, has "
                     << avail / (1 << 20) << " MiB";
    [[maybe_unused]] const long rss0 = rss_bytes();
    const size_t out0 = photon::get_slab_stats().stacks_out;
    g_interrupted = 0;
    std::vector<photon::join_handle*> jh;
    jh.reserve(N);
    for (uint64_t i = 0; i < N; i++) {
        auto th = photon::thread_create(&sleep_an_hour, nullptr, photon::DEFAULT_STACK_SIZE, 0,
                                        photon::THREAD_JOINABLE);
        ASSERT_NE(nullptr, th) << "thread_create failed at " << i << ": " << strerror(errno);
        jh.push_back(reinterpret_cast<photon::join_handle*>(th));
    }
    photon::thread_yield();  // each runs into its sleep
    EXPECT_EQ(N, photon::get_info(photon::INFO_SLEEPING_THREAD_NUM));
    // Slabs grow to 512 stacks. Guard markers (Linux 6.13+) cost no map; on an
    // older kernel (Debian 12's 6.1) or under qemu-user, mprotect guards are set
    // only while they stay within their budget (half of vm.max_map_count).
    const auto stats = photon::get_slab_stats();
    const bool mprotect_guards = stats.method == photon::guard_method::mprotect;
    const size_t guard_budget = mprotect_guards ? (size_t)max_map_count() / 2 : 0;
#ifndef PHOTON_TSAN  // which maps regions of its own for each fiber
    EXPECT_LT((size_t)map_count(), guard_budget + max_map_count() / 8)
        << "stacks must not cost a memory map each";
#endif
    EXPECT_LE(stats.maps, guard_budget + N / 256 + 16);
    EXPECT_GE(photon::get_slab_stats().stacks_out, N);
    for (auto h : jh) ASSERT_EQ(0, photon::thread_interrupt((photon::thread*)h, ECANCELED));
    for (auto h : jh) photon::thread_join(h);
    EXPECT_EQ((int)N, g_interrupted);
    EXPECT_EQ(1u, photon::get_info(photon::INFO_THREAD_NUM));
    // Past the pool's limits the stacks went back to the slabs, their memory
    // to the kernel (RSS says so too, except where a sanitizer's shadow and
    // per-fiber state keep theirs).
    EXPECT_LE(photon::get_slab_stats().stacks_out, out0 + 1024);
    // (qemu-user takes madvise(MADV_DONTNEED) as a hint it may ignore, and does.)
#if !defined(PHOTON_ASAN) && !defined(PHOTON_TSAN) && !defined(PHOTON_TEST_EMULATED)
    EXPECT_LT(rss_bytes() - rss0, 64L << 20) << "RSS before: " << rss0;
#endif
}

// Forty thousand stacks once exhausted the default map limit's guard pages;
// with guard markers an overflow past them still dies on its guard page.
TEST_F(StackSlab, AnOverflowStillDiesOnItsGuardPageBeyondFortyThousandStacks) {
#ifdef PHOTON_TSAN
    GTEST_SKIP() << "TSan counts each coroutine as a thread: 8128 at most";
#endif
    photon::thread_create(&noop, nullptr);  // the first slab picks the guard method
    photon::wait_all();
    if (photon::get_slab_stats().method != photon::guard_method::marker)
        GTEST_SKIP() << "no MADV_GUARD_INSTALL (Linux 6.13+): mprotect guards are budgeted";
    EXPECT_DEATH(
        {
            for (int i = 0; i < 40000; i++)
                if (!photon::thread_create11([] { photon::thread_usleep(-1); })) _exit(5);
            photon::thread_yield();
            photon::thread_create11([] { recurse(0); });
            photon::wait_all();
        },
        "photon: stack overflow in coroutine 0x[0-9a-f]+: fault at 0x[0-9a-f]+, below its "
        "8388608-byte stack");
}

// ---- the mprotect fallback -------------------------------------------------------

// An mprotect guard splits its slab's map in up to three: past the budget,
// new stacks go without a guard and one warning says so.
TEST_F(StackSlab, MprotectGuardsStopAtTheirMapBudgetWithOneWarning) {
    auto r = in_child([] {
        constexpr uint64_t kSize = 76 * 1024;  // a size no other test uses: new slabs
        const size_t before = photon::get_slab_stats().maps;
        photon::override_stack_guard(photon::guard_method::mprotect, before + 40);
        std::vector<photon::thread*> ths;
        for (int i = 0; i < 100; i++) {
            auto th = photon::thread_create11(kSize, [] { photon::thread_usleep(-1); });
            if (!th) return 2;
            ths.push_back(th);
        }
        photon::thread_yield();
        int guarded = 0;
        for (auto th : ths) guarded += th->stack->guarded;
        fprintf(stderr, "guarded=%d\n", guarded);
        for (auto th : ths) photon::thread_interrupt(th);
        photon::wait_all();
        // Two maps a guard, within the 40 left (the slabs' own maps count too).
        return guarded > 0 && guarded < 20 ? 0 : 3;
    });
    EXPECT_TRUE(WIFEXITED(r.second) && WEXITSTATUS(r.second) == 0) << r.first;
    EXPECT_EQ(1u, count_of(r.first, "get none from now on")) << r.first;
}

TEST_F(StackSlab, AnMprotectGuardStillCatchesAnOverflow) {
    EXPECT_DEATH(
        {
            photon::override_stack_guard(photon::guard_method::mprotect, 0);
            photon::thread_create11(92 * 1024, [] { recurse(0); });
            photon::wait_all();
        },
        "photon: stack overflow in coroutine 0x[0-9a-f]+: fault at 0x[0-9a-f]+, below its "
        "94208-byte stack");
}

// ---- trimming ----------------------------------------------------------------------

// Counts which of `pages` are resident.
int resident(const std::vector<uintptr_t>& pages) {
    int n = 0;
    for (uintptr_t p : pages) {
        unsigned char v = 0;
        if (mincore(reinterpret_cast<void*>(p & ~uintptr_t(4095)), 1, &v) == 0) n += v & 1;
    }
    return n;
}

TEST_F(StackSlab, PooledStacksPastTheTrimThresholdReturnTheirMemory) {
    constexpr uint64_t kSize = 264 * 1024;
    constexpr int N = 64;
    constexpr size_t kTouch = 192 * 1024;
    size_t old = photon::pooled_stack_trim_threshold(8 * kSize);
    photon::pooled_stack_trim_current_vcpu(0);
    // A page deep in each stack, touched (alloca: never on a sanitizer's fake stack).
    static std::vector<uintptr_t> deep;
    deep.clear();
    std::vector<photon::join_handle*> jh;
    for (int i = 0; i < N; i++) {
        auto th = photon::thread_create11(kSize, [] {
            auto p = static_cast<volatile char*>(alloca(kTouch));
            for (size_t k = 0; k < kTouch; k += 256) p[k] = 1;
            deep.push_back(reinterpret_cast<uintptr_t>(p));
            photon::thread_usleep(-1);
        });
        ASSERT_NE(nullptr, th);
        jh.push_back(photon::thread_enable_join(th));
    }
    photon::thread_yield();
    ASSERT_EQ((size_t)N, deep.size());
    EXPECT_EQ(N, resident(deep));
    for (auto h : jh) photon::thread_interrupt((photon::thread*)h);
    for (auto h : jh) photon::thread_join(h);
    // At most 8 stacks stay pooled, pages and all; the others' pages are gone.
    EXPECT_LE(resident(deep), 8);
    EXPECT_GE(resident(deep), 4);  // what stays pooled is reused as it is
    size_t released = photon::pooled_stack_trim_current_vcpu(0);
    EXPECT_GT(released, 0u);
    EXPECT_LE(released, 8 * kSize);
    EXPECT_EQ(0u, photon::pooled_stack_trim_current_vcpu(0));
    EXPECT_EQ(0, resident(deep));
    // A stack whose pages were released is reused as fresh, zeroed memory.
    bool zeroed = false;
    auto th = photon::thread_create11(kSize, [&zeroed] {
        auto p = static_cast<volatile char*>(alloca(kTouch));
        zeroed = true;
        for (size_t k = 0; k < kTouch; k += 256) zeroed = zeroed && p[k] == 0;
    });
    photon::thread_join(photon::thread_enable_join(th));
    EXPECT_TRUE(zeroed);
    EXPECT_EQ(old, photon::pooled_stack_trim_threshold(old));
}

// Coroutines created on one vCPU end on the other, so each vCPU's pool gives
// back the other's stacks, into slabs both take from, at a threshold of a few
// stacks: slabs empty and are unmapped while the other vCPU works on them.
TEST_F(StackSlab, StacksEndingOnAnotherVcpuGoBackToSharedSlabsIntact) {
    constexpr uint64_t kSize = 44 * 1024;  // a size no other test uses
    constexpr int kRounds = 40, kPerRound = 64;
    const photon::slab_stats before = photon::get_slab_stats();
    size_t old = photon::pooled_stack_trim_threshold(4 * kSize);
    std::atomic<photon::vcpu_base*> vcpus[2] = {{nullptr}, {nullptr}};
    std::atomic<int> finished{0}, failed{0};
    auto side = [&](int me) {
        if (photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE) != 0) {
            failed++;
            return;
        }
        vcpus[me] = photon::get_vcpu();
        auto t0 = Clock::now();
        while (!vcpus[1 - me] && us_since(t0) < kLongUs) std::this_thread::yield();
        photon::vcpu_base* other = vcpus[1 - me];
        for (int r = 0; r < kRounds && us_since(t0) < kLongUs; r++) {
            for (int i = 0; i < kPerRound; i++) {
                auto th = photon::thread_create11(kSize, [&, other] {
                    touch_stack(16 * 1024);
                    if (photon::thread_migrate(photon::CURRENT, other) != 0) failed++;
                    touch_stack(16 * 1024);  // on the other vCPU now; ends there
                    finished++;
                });
                if (!th) failed++;
            }
            photon::thread_usleep(200);
        }
        // The other side's coroutines may still be ending here.
        EXPECT_TRUE(photon_test::wait_for(
            [&] { return finished + failed >= 2 * kRounds * kPerRound; }, kLongUs / 1000));
        photon::wait_all();
        photon::pooled_stack_trim_current_vcpu(0);
        photon::fini();
    };
    std::thread a(side, 0), b(side, 1);
    a.join();
    b.join();
    photon::pooled_stack_trim_threshold(old);
    EXPECT_EQ(0, failed.load());
    EXPECT_EQ(2 * kRounds * kPerRound, finished.load());
    const photon::slab_stats after = photon::get_slab_stats();
    EXPECT_EQ(before.stacks_out, after.stacks_out);
    // A class keeps its last slab, no more: ours, and the vCPUs' bounce stacks'.
    EXPECT_LE(after.slabs, before.slabs + 2);
}

TEST_F(StackSlab, TrimOutsideAVcpuReleasesNothing) {
    std::thread([] { EXPECT_EQ(0u, photon::pooled_stack_trim_current_vcpu(0)); }).join();
}

// ---- out of address space ------------------------------------------------------------

// thread_create fails with ENOMEM, nothing throws, and what was created runs.
TEST_F(StackSlab, ThreadCreateFailsWithEnomemWhenTheAddressSpaceRunsOut) {
#if defined(PHOTON_ASAN) || defined(PHOTON_TSAN)
    GTEST_SKIP() << "sanitizers reserve terabytes of shadow: RLIMIT_AS would stop them first";
#elif defined(PHOTON_TEST_EMULATED)
    GTEST_SKIP() << "under qemu-user RLIMIT_AS limits the emulator's own address space";
#endif
    auto r = in_child([] {
        long vsz = proc_value("/proc/self/status", "VmSize") * 1024;
        struct rlimit rl = {(rlim_t)vsz + (rlim_t)(512 << 20), (rlim_t)vsz + (rlim_t)(512 << 20)};
        if (setrlimit(RLIMIT_AS, &rl) != 0) return 2;
        std::vector<photon::thread*> ths;
        for (int i = 0; i < 10000; i++) {
            errno = 0;
            auto th = photon::thread_create11([] { photon::thread_usleep(-1); });
            if (!th) {
                if (errno != ENOMEM) return 3;
                break;
            }
            ths.push_back(th);
        }
        if (ths.size() < 16 || ths.size() >= 10000) return 4;
        photon::thread_yield();
        if (photon::get_info(photon::INFO_SLEEPING_THREAD_NUM) != ths.size()) return 5;
        for (auto th : ths) photon::thread_interrupt(th);
        photon::wait_all();
        fprintf(stderr, "created=%zu\n", ths.size());
        return photon::get_info(photon::INFO_THREAD_NUM) == 1 ? 0 : 6;
    });
    EXPECT_TRUE(WIFEXITED(r.second) && WEXITSTATUS(r.second) == 0)
        << "status " << r.second << ": " << r.first;
}

}  // namespace
