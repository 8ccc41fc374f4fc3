// The slow-turn detector (photon/thread/slow_turn.h): a coroutine that runs without a switch
// past the threshold is reported once per such turn, with the backtrace where it runs; a vCPU
// blocked in a system call is reported without a signal (the call is not cut short); yielding, idle
// and a detector turned off give no report; a signal the program handles itself gives reports
// without backtraces. Built with -rdynamic and frame pointers (test/CMakeLists.txt).
#include <photon/thread/slow_turn.h>

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <photon/thread/stack-allocator.h>

#include "test_util.h"

using namespace photon;

// Reports so far, read with the builtin: no call in the busy loop even at -O0 (a signal in a
// called function's prologue would leave the loop out of the frame-pointer chain).
static size_t g_count = 0;

// A busy loop, without a switch, until the reports reach `until` (or `cap_ms` passes): the
// slow turn to catch. Busy until caught rather than for a fixed time, so that a loaded
// machine, where the detector may look late, cannot end the turn first. It reads the clock
// rarely, so that the signal finds it in its own code (named whatever the unwinder can do).
__attribute__((noinline)) uint64_t slow_turn_test_busy(size_t until, int cap_ms) {
    auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(cap_ms);
    uint64_t spins = 0;
    while (__atomic_load_n(&g_count, __ATOMIC_RELAXED) < until) {
        if ((++spins & 0xffff) == 0 && std::chrono::steady_clock::now() >= end) break;
    }
    asm volatile("" ::: "memory");
    return spins;
}

// A coroutine's entry: one slow turn of about `ms`, then it ends.
void* slow_turn_test_ending(void* ms) {
    slow_turn_test_busy(SIZE_MAX, (int)(intptr_t)ms);
    return nullptr;
}

namespace {

// Called through a volatile pointer: no constant-argument clone (a local symbol) of it.
uint64_t (*volatile busy)(size_t, int) = &slow_turn_test_busy;

std::mutex g_mu;
std::vector<std::string> g_reports;

void collect(const char* text, void*) {
    std::lock_guard<std::mutex> lock(g_mu);
    g_reports.push_back(text);
    __atomic_store_n(&g_count, g_reports.size(), __ATOMIC_RELAXED);
}

size_t reports() {
    std::lock_guard<std::mutex> lock(g_mu);
    return g_reports.size();
}

std::string report(size_t i) {
    std::lock_guard<std::mutex> lock(g_mu);
    return i < g_reports.size() ? g_reports[i] : "";
}

// Waits (yielding, so that turns end) until there are n reports, at most 2 s.
bool until_reports(size_t n) {
    return photon_test::wait_for([n] { return reports() >= n; }, 2000);
}

class SlowTurn : public photon_test::VcpuTest {
protected:
    void SetUp() override {
        VcpuTest::SetUp();
        saved_ = get_slow_turn_options();
        SlowTurnOptions o;
        o.threshold_us = 10 * 1000;
        o.report = &collect;
        o.max_reports_per_sec = 100;
        ASSERT_EQ(0, set_slow_turn_options(o));
        std::lock_guard<std::mutex> lock(g_mu);
        g_reports.clear();
        __atomic_store_n(&g_count, 0, __ATOMIC_RELAXED);
    }
    void TearDown() override {
        set_slow_turn_options(saved_);
        VcpuTest::TearDown();
    }
    SlowTurnOptions saved_;
};

TEST_F(SlowTurn, OnByDefaultAt10ms) {
    if (getenv("PHOTON_SLOW_TURN_US")) GTEST_SKIP() << "PHOTON_SLOW_TURN_US is set here";
#if defined(__SANITIZE_THREAD__) || defined(PHOTON_TSAN)
    EXPECT_EQ(0u, saved_.threshold_us);
#else
    EXPECT_EQ(10000u, saved_.threshold_us);
#endif
    EXPECT_EQ(SIGURG, saved_.signo);
}

TEST_F(SlowTurn, EachBusyTurnIsReportedOnceWithWhereItRuns) {
    for (size_t i = 0; i < 5; i++) {
        busy(i + 1, 5000);
        ASSERT_EQ(i + 1, reports()) << "turn " << i << " was not reported in 5 s";
        std::string r = report(i);
        EXPECT_NE(std::string::npos, r.find("slow turn: vCPU ")) << r;
        EXPECT_NE(std::string::npos, r.find("without a switch; entry (the vCPU's own thread)"))
            << r;
        EXPECT_NE(std::string::npos, r.find("slow_turn_test_busy(unsigned long, int)")) << r;
        photon::thread_usleep(20 * 1000);  // a few checks: no second report of the same turn
        EXPECT_EQ(i + 1, reports()) << report(i + 1);
    }
}

TEST_F(SlowTurn, ABlockingSystemCallIsReportedAndNotCutShort) {
    auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(0, ::usleep(300 * 1000));  // no signal: no EINTR
    EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(300));
    ASSERT_TRUE(until_reports(1));
    std::string r = report(0);
    EXPECT_NE(std::string::npos, r.find("blocked in a system call")) << r;
}

TEST_F(SlowTurn, YieldingIdleOrOffIsNotReported) {
    // A threshold far above any preemption a loaded machine gives this thread.
    SlowTurnOptions o = get_slow_turn_options();
    o.threshold_us = 150 * 1000;
    ASSERT_EQ(0, set_slow_turn_options(o));
    auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(400);
    while (std::chrono::steady_clock::now() < end) {  // busy, but yielding every 1 ms
        busy(SIZE_MAX, 1);
        photon::thread_yield();
    }
    photon::thread_usleep(400 * 1000);  // idle
    EXPECT_EQ(0u, reports()) << report(0);
    o.threshold_us = 0;
    ASSERT_EQ(0, set_slow_turn_options(o));
    busy(SIZE_MAX, 100);
    photon::thread_usleep(20 * 1000);
    EXPECT_EQ(0u, reports()) << report(0);
}

// Stacks mapped for each coroutine and unmapped when it is gone: reading an ended
// coroutine's control block faults.
struct unmapping_stacks {
    static void* alloc(void*, size_t n) {
        void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        return p == MAP_FAILED ? nullptr : p;
    }
    static void dealloc(void*, void* p, size_t n) {
        munmap(p, n);
        __atomic_add_fetch(&unmapped, 1, __ATOMIC_RELAXED);
    }
    static int unmapped;
};
int unmapping_stacks::unmapped = 0;

// The sample is taken at the first check past the threshold and reported at the next one,
// half a threshold later; a coroutine that ends in between is reported from its sample alone.
// (The detector read the ended coroutine's flags: ASan CI caught it on a reused stack.)
TEST_F(SlowTurn, ACoroutineThatEndsBeforeItsReportIsReportedFromItsSample) {
    SlowTurnOptions o = get_slow_turn_options();
    o.threshold_us = 200 * 1000;  // checks every 100 ms
    ASSERT_EQ(0, set_slow_turn_options(o));
    set_photon_thread_stack_allocator({&unmapping_stacks::alloc, nullptr},
                                      {&unmapping_stacks::dealloc, nullptr});
    // Each turn of 250 ms is sampled at the check in [200, 300) ms when that check comes
    // before 250 ms (about half of the turns), and reported at the next one, past its end.
    for (int i = 0; i < 16 && reports() < 2; i++) {
        int before = __atomic_load_n(&unmapping_stacks::unmapped, __ATOMIC_RELAXED);
        auto th = thread_create(&slow_turn_test_ending, (void*)(intptr_t)250);
        ASSERT_NE(nullptr, th);
        thread_join(thread_enable_join(th));
        EXPECT_EQ(before + 1, __atomic_load_n(&unmapping_stacks::unmapped, __ATOMIC_RELAXED));
        photon::thread_usleep(250 * 1000);  // two checks: the report is in
    }
    set_photon_thread_stack_allocator();
    ASSERT_GE(reports(), 1u) << "no turn of 16 was sampled before it ended";
    for (size_t i = 0; i < reports(); i++) {
        std::string r = report(i);
        EXPECT_NE(std::string::npos, r.find("; entry slow_turn_test_ending(void*)")) << r;
    }
}

void programs_handler(int) {}

TEST_F(SlowTurn, ASignalTheProgramHandlesIsLeftToIt) {
    struct sigaction sa = {}, old = {};
    sa.sa_handler = &programs_handler;
    ASSERT_EQ(0, sigaction(SIGUSR1, &sa, &old));
    SlowTurnOptions o = get_slow_turn_options();
    o.signo = SIGUSR1;
    ASSERT_EQ(0, set_slow_turn_options(o));
    busy(1, 5000);
    ASSERT_EQ(1u, reports());
    EXPECT_NE(std::string::npos, report(0).find("its signal is the program's")) << report(0);
    sigaction(SIGUSR1, &old, nullptr);
    o.signo = SIGKILL;
    EXPECT_EQ(-1, set_slow_turn_options(o));
    EXPECT_EQ(EINVAL, errno);
}

}  // namespace
