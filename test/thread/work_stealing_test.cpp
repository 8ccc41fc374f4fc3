// Work stealing: which coroutines move (READY ones created with THREAD_ENABLE_WORK_STEALING,
// not paused or pinned), between which vCPUs (from a passive one to an active one), and that
// nothing is lost or run twice when vCPUs steal from each other, end, or come and go.
#include <sched.h>

#include <photon/photon.h>
#include <photon/thread/stats.h>
#include <photon/thread/thread.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "test_util.h"

namespace {

using namespace photon_test;
using photon::THREAD_ENABLE_WORK_STEALING;
using photon::THREAD_JOINABLE;
using photon::VCPU_ENABLE_ACTIVE_WORK_STEALING;
using photon::VCPU_ENABLE_PASSIVE_WORK_STEALING;
constexpr uint64_t kBoth = VCPU_ENABLE_ACTIVE_WORK_STEALING | VCPU_ENABLE_PASSIVE_WORK_STEALING;

// Work goes to an idle vCPU only while fewer vCPUs run than the process has CPUs: with one,
// the giver alone fills it.
bool one_cpu() {
    cpu_set_t set;
    return sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) < 2;
}
#define SKIP_ON_ONE_CPU() \
    if (one_cpu()) GTEST_SKIP() << "one CPU: a vCPU gives work only while a CPU is free"

// The test's own OS thread as a vCPU with `flags`, for one test.
struct main_vcpu {
    explicit main_vcpu(uint64_t flags) { EXPECT_GT(photon::vcpu_init(flags), 0); }
    ~main_vcpu() { EXPECT_EQ(0, photon::vcpu_fini()); }
};

// Another vCPU on an OS thread of its own, idle but for a 1 ms sleep loop until it is told to
// stop; its vcpu_fini() (photon::fini() with an event engine) waits for whatever it took.
struct other_vcpu {
    std::atomic<bool> stop{false};
    std::atomic<photon::vcpu_base*> vcpu{nullptr};
    std::thread os;
    explicit other_vcpu(uint64_t flags = VCPU_ENABLE_ACTIVE_WORK_STEALING, bool engine = false)
        : os([this, flags, engine] {
              photon::PhotonOptions opt;
              opt.vcpu_flags = flags;
              int r = engine ? photon::init(photon::INIT_EVENT_EPOLL, photon::INIT_IO_NONE, opt)
                             : photon::vcpu_init(flags);
              if (r < 0) return;
              vcpu = photon::get_vcpu();
              while (!stop) photon::thread_usleep(1000);
              engine ? photon::fini() : photon::vcpu_fini();
          }) {
        EXPECT_TRUE(wait_for_off_vcpu([this] { return vcpu.load() != nullptr; }));
    }
    ~other_vcpu() {
        stop = true;
        os.join();
    }
};

void spin_us(int us) {
    auto end = Clock::now() + std::chrono::microseconds(us);
    while (Clock::now() < end) {
    }
}

// Where a task started and ended; it computes for `spin` µs between the two without a switch.
struct record {
    std::atomic<photon::vcpu_base*> start{nullptr}, end{nullptr};
    std::atomic<int> runs{0};
    int spin = 1000;
};

void* busy_task(void* arg) {
    auto r = static_cast<record*>(arg);
    r->runs++;
    r->start = photon::get_vcpu(current_uncached());
    spin_us(r->spin);
    r->end = photon::get_vcpu(current_uncached());
    return nullptr;
}

// Runs rounds of n busy tasks created with `flags` on this vCPU and joins them, until one
// round had a task run elsewhere or `rounds` rounds ran; returns the tasks run elsewhere. Every
// task must run once, start to end on one vCPU.
int run_rounds(uint64_t flags, int n, int rounds) {
    auto here = photon::get_vcpu();
    int away = 0;
    for (int round = 0; round < rounds && away == 0; round++) {
        std::vector<record> recs(n);
        std::vector<photon::join_handle*> jh;
        for (auto& r : recs)
            jh.push_back(photon::thread_enable_join(
                photon::thread_create(&busy_task, &r, 0, 0, flags | THREAD_JOINABLE)));
        for (auto h : jh) photon::thread_join(h);
        for (auto& r : recs) {
            EXPECT_EQ(1, r.runs.load());
            EXPECT_EQ(r.start.load(), r.end.load());
            if (r.start != here) away++;
        }
    }
    return away;
}

TEST(WorkStealing, AnIdleActiveVcpuTakesReadyCoroutinesFromAPassiveOne) {
    SKIP_ON_ONE_CPU();
    main_vcpu m(VCPU_ENABLE_PASSIVE_WORK_STEALING);
    other_vcpu stealer;
    EXPECT_GT(run_rounds(THREAD_ENABLE_WORK_STEALING, 8, 50), 0);
#ifndef PHOTON_METRICS_OFF
    std::vector<photon::VcpuStats> stats;
    ASSERT_EQ(0, photon::get_vcpu_stats(&stats));
    uint64_t given = 0, moved_in = 0;
    for (auto& s : stats) given += s.given_away, moved_in += s.migrations_in;
    EXPECT_GT(given, 0u);
    EXPECT_GE(moved_in, given);
#endif
}

// Through photon::init (PhotonOptions::vcpu_flags): the taker idles in epoll, and the giver
// wakes it there.
TEST(WorkStealing, VcpusMadeByInitStealThroughTheirEventEngines) {
    SKIP_ON_ONE_CPU();
    photon::PhotonOptions opt;
    opt.vcpu_flags = VCPU_ENABLE_PASSIVE_WORK_STEALING;
    ASSERT_EQ(0, photon::init(photon::INIT_EVENT_EPOLL, photon::INIT_IO_NONE, opt));
    {
        other_vcpu stealer(VCPU_ENABLE_ACTIVE_WORK_STEALING, true);
        EXPECT_GT(run_rounds(THREAD_ENABLE_WORK_STEALING, 8, 50), 0);
    }
    EXPECT_EQ(0, photon::fini());
}

TEST(WorkStealing, OnlyCoroutinesCreatedStealableMove) {
    main_vcpu m(VCPU_ENABLE_PASSIVE_WORK_STEALING);
    other_vcpu stealer;
    EXPECT_EQ(0, run_rounds(0, 8, 5));
}

TEST(WorkStealing, AVcpuWithoutThePassiveFlagIsNotStolenFrom) {
    main_vcpu m(VCPU_ENABLE_ACTIVE_WORK_STEALING);
    other_vcpu stealer;
    EXPECT_EQ(0, run_rounds(THREAD_ENABLE_WORK_STEALING, 8, 5));
}

TEST(WorkStealing, AVcpuWithoutTheActiveFlagDoesNotSteal) {
    main_vcpu m(VCPU_ENABLE_PASSIVE_WORK_STEALING);
    other_vcpu idle(VCPU_ENABLE_PASSIVE_WORK_STEALING);
    EXPECT_EQ(0, run_rounds(THREAD_ENABLE_WORK_STEALING, 8, 5));
}

TEST(WorkStealing, UnknownVcpuFlagsAreRefused) {
    std::thread([] {
        errno = 0;
        EXPECT_EQ(-1, photon::vcpu_init(4));
        EXPECT_EQ(EINVAL, errno);
        EXPECT_GT(photon::vcpu_init(kBoth), 0);
        EXPECT_EQ(0, photon::vcpu_fini());
    }).join();
}

// A stealable coroutine that yields while `hold` keeps it here (a pause, a scoped pause or a
// pin), beside five rounds of busy stealable ones that keep this vCPU switching and giving:
// it must not move, and some of them must have (else the hold was not tested).
template <typename Hold>
void stays_while_held(Hold hold) {
    SKIP_ON_ONE_CPU();
    main_vcpu m(VCPU_ENABLE_PASSIVE_WORK_STEALING);
    other_vcpu stealer;
    auto here = photon::get_vcpu();
    std::atomic<int> moved{0}, turns{0};
    std::atomic<bool> tasks_done{false};
    std::function<void()> held_body = [&] {
        hold([&] {
            while (!tasks_done) {
                if (photon::get_vcpu(current_uncached()) != here) moved++;
                turns++;
                photon::thread_yield();
            }
        });
    };
    auto held = photon::thread_enable_join(photon::thread_create(
        [](void* f) -> void* {
            (*static_cast<std::function<void()>*>(f))();
            return nullptr;
        },
        &held_body, 0, 0, THREAD_ENABLE_WORK_STEALING | THREAD_JOINABLE));
    int away = 0;
    for (int round = 0; round < 5; round++) {
        std::vector<record> recs(400);
        std::vector<photon::join_handle*> jh;
        for (auto& r : recs) {
            r.spin = 50;
            jh.push_back(photon::thread_enable_join(photon::thread_create(
                &busy_task, &r, 64 * 1024, 0, THREAD_ENABLE_WORK_STEALING | THREAD_JOINABLE)));
        }
        for (auto h : jh) photon::thread_join(h);
        for (auto& r : recs) away += r.start != here;
    }
    tasks_done = true;
    photon::thread_join(held);
    EXPECT_GT(away, 0);
    EXPECT_GE(turns.load(), 5);  // a turn a round at least: READY and queued behind the tasks
    EXPECT_EQ(0, moved.load());
}

TEST(WorkStealing, APausedCoroutineStays) {
    stays_while_held([](auto body) {
        photon::thread_pause_work_stealing(true);
        body();
        photon::thread_pause_work_stealing(false);
    });
}

TEST(WorkStealing, AScopedPauseKeepsItHere) {
    stays_while_held([](auto body) {
        SCOPED_PAUSE_WORK_STEALING;
        body();
    });
}

TEST(WorkStealing, APinnedCoroutineStays) {
    stays_while_held([](auto body) {
        photon::thread_pin_current(true);
        body();
        photon::thread_pin_current(false);
    });
}

// Three vCPUs that all give and take, and coroutines that yield and take a cross-vCPU mutex
// while they may move: each runs to its end once, and the count under the mutex is exact.
TEST(WorkStealing, VcpusThatStealFromEachOtherLoseNothing) {
    main_vcpu m(kBoth);
    other_vcpu a(kBoth), b(kBoth);
    constexpr int kTasks = 3000, kSteps = 4;
    photon::mutex mu;
    long counted = 0;
    std::atomic<int> ended{0};
    std::vector<photon::join_handle*> jh;
    struct ctx {
        photon::mutex* mu;
        long* counted;
        std::atomic<int>* ended;
    } c{&mu, &counted, &ended};
    auto task = [](void* arg) -> void* {
        auto c = static_cast<ctx*>(arg);
        for (int s = 0; s < kSteps; s++) {
            spin_us(20);
            {
                photon::scoped_lock l(*c->mu);
                ++*c->counted;
            }
            photon::thread_yield();
        }
        (*c->ended)++;
        return nullptr;
    };
    for (int i = 0; i < kTasks; i++)
        jh.push_back(photon::thread_enable_join(photon::thread_create(
            task, &c, 64 * 1024, 0, THREAD_ENABLE_WORK_STEALING | THREAD_JOINABLE)));
    for (auto h : jh) photon::thread_join(h);
    EXPECT_EQ(kTasks, ended.load());
    EXPECT_EQ((long)kTasks * kSteps, counted);
}

// Active vCPUs come and go while a passive one keeps giving: each ends (vcpu_fini) with what
// it took finished, and every task runs once.
TEST(WorkStealing, StealersThatComeAndGoLoseNothing) {
    main_vcpu m(VCPU_ENABLE_PASSIVE_WORK_STEALING);
    std::atomic<int> ran{0};
    auto task = [](void* arg) -> void* {
        for (int s = 0; s < 3; s++) {
            spin_us(30);
            photon::thread_yield();
        }
        (*static_cast<std::atomic<int>*>(arg))++;
        return nullptr;
    };
    int created = 0;
    for (int round = 0; round < 20; round++) {
        std::vector<photon::join_handle*> jh;
        {
            other_vcpu stealer;
            for (int i = 0; i < 40; i++, created++)
                jh.push_back(photon::thread_enable_join(photon::thread_create(
                    task, &ran, 64 * 1024, 0, THREAD_ENABLE_WORK_STEALING | THREAD_JOINABLE)));
            // Half of them joined here; the stealer ends with the rest on their way.
            for (size_t i = 0; i < jh.size() / 2; i++) photon::thread_join(jh[i]);
        }
        for (size_t i = jh.size() / 2; i < jh.size(); i++) photon::thread_join(jh[i]);
    }
    EXPECT_EQ(created, ran.load());
}

}  // namespace
