// photon::MemoryBudget (photon/common/memory_budget.h): the limit, fair
// shares and the reserve kept for light accounts, waiting for room and being
// woken by a release or a closing account, timeouts and interrupts, the
// default limit, RAII holds, and concurrent use from two vCPUs.
#include <photon/common/memory_budget.h>

#include <photon/thread/thread.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <thread>

#include "../thread/test_util.h"

namespace {

using namespace photon_test;
using photon::MemoryBudget;
using Account = MemoryBudget::Account;

class Budget : public VcpuTest {};

constexpr uint64_t kMs = 1000;

TEST_F(Budget, OneAccountTakesUpToTheLimitAndNoMore) {
    MemoryBudget b(1000);
    Account a(&b);
    EXPECT_EQ(1000u, b.share());
    ASSERT_EQ(0, a.acquire(600));
    ASSERT_EQ(0, a.try_acquire(400));
    EXPECT_EQ(1000u, b.used());
    EXPECT_EQ(1000u, a.held());
    errno = 0;
    EXPECT_EQ(-1, a.try_acquire(1));
    EXPECT_EQ(ENOMEM, errno);
    a.release(1000);
    EXPECT_EQ(0u, b.used());
    EXPECT_EQ(1u, b.sheds());
}

TEST_F(Budget, MoreThanTheLimitIsRefusedAtOnceWithoutWaiting) {
    MemoryBudget b(1000);
    Account a(&b);
    auto t0 = Clock::now();
    errno = 0;
    EXPECT_EQ(-1, a.acquire(1001, photon::Timeout(kLongUs)));
    EXPECT_EQ(ENOMEM, errno);
    EXPECT_LT(us_since(t0), kLongUs / 2);
    EXPECT_EQ(0u, b.used());
    EXPECT_EQ(0u, b.waits());
}

TEST_F(Budget, AHeavyAccountLeavesTheReserveToLightOnes) {
    // Two accounts: share 500, reserve 250. The heavy one stops at 750; the
    // light one still gets its 250 from the reserve.
    MemoryBudget b(1000);
    Account heavy(&b), light(&b);
    EXPECT_EQ(500u, b.share());
    ASSERT_EQ(0, heavy.acquire(500));  // within its share
    ASSERT_EQ(0, heavy.acquire(250));  // heavy now, up to limit - reserve
    errno = 0;
    EXPECT_EQ(-1, heavy.acquire(1, photon::Timeout(20 * kMs)));
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_EQ(1u, b.waits());
    EXPECT_EQ(750u, b.used());
    ASSERT_EQ(0, light.try_acquire(250));
    EXPECT_EQ(1000u, b.used());
    // A heavy taker whose request alone passes limit - reserve never fits.
    heavy.release(750);
    light.release(250);
    errno = 0;
    EXPECT_EQ(-1, heavy.acquire(800, photon::Timeout(kLongUs)));
    EXPECT_EQ(ENOMEM, errno);
}

// A fair share of a large budget is large: with three connections each
// could hold 21 MiB of 64 and together take the reserve. The share is capped
// at a 64th of the limit, so past 1 MiB they are heavy and stop at 48 MiB,
// and a connection holding little still gets its bytes.
TEST_F(Budget, AFewConnectionsWithinFairSharesCannotTakeTheReserve) {
    constexpr size_t MiB = 1 << 20;
    MemoryBudget b(64 * MiB);
    Account a(&b), c(&b), d(&b);
    EXPECT_EQ(MiB, b.share());
    ASSERT_EQ(0, a.try_acquire(20 * MiB));
    ASSERT_EQ(0, c.try_acquire(20 * MiB));
    errno = 0;
    EXPECT_EQ(-1, d.try_acquire(20 * MiB));  // 60 MiB would eat into the reserve
    EXPECT_EQ(ENOMEM, errno);
    Account small(&b);
    EXPECT_EQ(0, small.try_acquire(MiB / 2));  // from the reserve
    EXPECT_EQ(0, d.try_acquire(7 * MiB));      // heavy, up to 48 MiB: 47.5 held
    EXPECT_EQ(-1, d.try_acquire(MiB));
}

TEST_F(Budget, AWaiterIsWokenWhenBytesAreReleased) {
    MemoryBudget b(1000);
    Account a(&b), other(&b);
    ASSERT_EQ(0, other.acquire(500));
    ASSERT_EQ(0, a.acquire(250));  // 750 used; a asking for 300 more is heavy: cap 750
    int result = -2;
    auto t = spawn([&] { result = a.acquire(300, photon::Timeout(kLongUs)); });
    photon::thread_usleep(10 * kMs);
    EXPECT_EQ(-2, result);  // still waiting: no room
    other.release(500);
    t.join();
    EXPECT_EQ(0, result);
    EXPECT_EQ(550u, a.held());
    EXPECT_EQ(550u, b.used());
}

TEST_F(Budget, AClosingAccountWidensTheOthersShares) {
    // With three accounts the share is 333: a holding 300 asks for 200 more
    // and is heavy (cap 750), which 700 used forbids. When `third` closes,
    // the share is 500 and a (300 + 200) is light again: cap 1000.
    MemoryBudget b(1000);
    Account a(&b), second(&b);
    auto third = std::make_unique<Account>(&b);
    ASSERT_EQ(0, a.acquire(300));
    ASSERT_EQ(0, second.acquire(300));
    ASSERT_EQ(0, third->acquire(100));
    int result = -2;
    auto t = spawn([&] { result = a.acquire(200, photon::Timeout(kLongUs)); });
    photon::thread_usleep(10 * kMs);
    EXPECT_EQ(-2, result);
    third.reset();  // gives back its 100 and closes
    t.join();
    EXPECT_EQ(0, result);
    EXPECT_EQ(800u, b.used());
    EXPECT_EQ(2u, b.accounts());
}

TEST_F(Budget, AnInterruptedWaitFailsWithEintrAndTakesNothing) {
    MemoryBudget b(100);
    Account a(&b);
    ASSERT_EQ(0, a.acquire(100));
    int result = -2, err = 0;
    auto t = spawn([&] {
        result = a.acquire(10, photon::Timeout(kLongUs));
        err = errno;
    });
    photon::thread_usleep(5 * kMs);
    photon::thread_interrupt(t.th);
    t.join();
    EXPECT_EQ(-1, result);
    EXPECT_EQ(EINTR, err);
    EXPECT_EQ(100u, b.used());
}

TEST_F(Budget, HoldsGiveTheirBytesBackWhenTheyEnd) {
    MemoryBudget b(1000);
    Account a(&b);
    {
        photon::BudgetHold h(&a);
        ASSERT_EQ(0, h.acquire(100));
        ASSERT_EQ(0, h.try_acquire(50));
        EXPECT_EQ(150u, h.held());
        photon::BudgetHold moved(std::move(h));
        EXPECT_EQ(0u, h.held());
        EXPECT_EQ(150u, moved.held());
        EXPECT_EQ(150u, b.used());
    }
    EXPECT_EQ(0u, b.used());
    EXPECT_EQ(0u, a.held());
    {
        Account gone(&b);
        ASSERT_EQ(0, gone.acquire(200));
    }  // an account that ends gives back what it held
    EXPECT_EQ(0u, b.used());
    EXPECT_EQ(1u, b.accounts());
}

TEST_F(Budget, ANullBudgetGrantsEverything) {
    Account a(nullptr);
    ASSERT_EQ(0, a.acquire(size_t(1) << 60));
    EXPECT_EQ(size_t(1) << 60, a.held());
    a.release(size_t(1) << 60);
    photon::BudgetHold none;  // no account: a no-op
    EXPECT_EQ(0, none.acquire(5));
    EXPECT_EQ(0u, none.held());
}

TEST_F(Budget, SetLimitWakesWaitersThatNowFit) {
    MemoryBudget b(100);
    Account a(&b);
    ASSERT_EQ(0, a.acquire(100));
    int result = -2;
    auto t = spawn([&] { result = a.acquire(50, photon::Timeout(kLongUs)); });
    photon::thread_usleep(5 * kMs);
    EXPECT_EQ(-2, result);
    b.set_limit(200);
    t.join();
    EXPECT_EQ(0, result);
    EXPECT_EQ(150u, b.used());
}

TEST(BudgetDefault, TheEnvironmentSetsTheDefaultLimitElseAQuarterOfMemory) {
    const char* old = getenv("PHOTON_MEMORY_BUDGET");
    std::string saved = old ? old : "";
    ASSERT_EQ(0, setenv("PHOTON_MEMORY_BUDGET", "96M", 1));
    EXPECT_EQ(96u << 20, MemoryBudget::default_limit());
    ASSERT_EQ(0, setenv("PHOTON_MEMORY_BUDGET", "2G", 1));
    EXPECT_EQ(size_t(2) << 30, MemoryBudget::default_limit());
    ASSERT_EQ(0, setenv("PHOTON_MEMORY_BUDGET", "nonsense", 1));  // ignored
    size_t machine = MemoryBudget::default_limit();
    unsetenv("PHOTON_MEMORY_BUDGET");
    EXPECT_EQ(machine, MemoryBudget::default_limit());
    size_t phys = (size_t)sysconf(_SC_PHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
    EXPECT_LE(machine, std::max(phys / 4, size_t(64) << 20));
    EXPECT_GE(machine, size_t(64) << 20);
    if (old) setenv("PHOTON_MEMORY_BUDGET", saved.c_str(), 1);
    EXPECT_EQ(MemoryBudget::process(), MemoryBudget::process());
}

TEST_F(Budget, TwoVcpusTakingAndGivingNeverPassTheLimit) {
    // Each side takes 1..64 bytes at a time, holding up to 5 takes, for a
    // bounded count; the total sampled after every take stays within it.
    MemoryBudget b(256);
    std::atomic<size_t> peak{0};
    auto work = [&](unsigned seed) {
        Account a(&b);
        size_t held[5] = {};
        for (int i = 0; i < 20000; i++) {
            size_t n = 1 + (seed = seed * 1103515245 + 12345) % 64;
            int k = i % 5;
            a.release(held[k]);
            held[k] = 0;
            // Short waits: both sides may wait at once, each holding what the other needs.
            if (a.acquire(n, photon::Timeout(1000)) == 0) held[k] = n;
            size_t u = b.used(), p = peak.load();
            while (u > p && !peak.compare_exchange_weak(p, u)) {
            }
        }
        for (auto h : held) a.release(h);
    };
    std::thread other([&] {
        photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE);
        work(7);
        photon::fini();
    });
    work(11);
    other.join();
    EXPECT_LE(peak.load(), 256u);
    EXPECT_GT(peak.load(), 128u);  // both sides did hold bytes at once
    EXPECT_EQ(0u, b.used());
    EXPECT_EQ(0u, b.accounts());
}

}  // namespace
