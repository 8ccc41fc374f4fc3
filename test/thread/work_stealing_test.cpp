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

#include "../util/hang_watch.h"
#include "test_util.h"

namespace {

using namespace photon_test;
using photon::THREAD_ENABLE_WORK_STEALING;
using photon::THREAD_JOINABLE;
using photon::VCPU_ENABLE_ACTIVE_WORK_STEALING;
using photon::VCPU_ENABLE_PASSIVE_WORK_STEALING;
constexpr uint64_t kBoth = VCPU_ENABLE_ACTIVE_WORK_STEALING | VCPU_ENABLE_PASSIVE_WORK_STEALING;

// Work lost on its way, or on a vCPU that ended, leaves a join waiting: named, with a dump.
static photon_test::HangWatch hang_watch(120);

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
    SKIP_ON_ONE_CPU();
    main_vcpu m(VCPU_ENABLE_PASSIVE_WORK_STEALING);
    other_vcpu stealer;
    EXPECT_EQ(0, run_rounds(0, 8, 5));
    EXPECT_GT(run_rounds(THREAD_ENABLE_WORK_STEALING, 8, 50), 0);  // the same vCPUs could
}

// Without a flag nothing moves; the test above shows the same setting with both flags moves.
TEST(WorkStealing, AVcpuWithoutThePassiveFlagIsNotStolenFrom) {
    SKIP_ON_ONE_CPU();
    main_vcpu m(VCPU_ENABLE_ACTIVE_WORK_STEALING);
    other_vcpu stealer;
    EXPECT_EQ(0, run_rounds(THREAD_ENABLE_WORK_STEALING, 8, 5));
}

TEST(WorkStealing, AVcpuWithoutTheActiveFlagDoesNotSteal) {
    SKIP_ON_ONE_CPU();
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

// Active vCPUs come and go (half through photon::init and photon::fini, half through
// vcpu_init and vcpu_fini) while a passive one on another OS thread keeps giving: each ends
// with what it took finished, every task runs once, and some ran on the stealers. A task lost
// on an ended vCPU would leave the giver in thread_join (hang_watch).
TEST(WorkStealing, StealersThatComeAndGoLoseNothing) {
    SKIP_ON_ONE_CPU();
    struct counts {
        std::atomic<long> created{0}, ran{0}, moved{0};
        std::atomic<photon::vcpu_base*> giver{nullptr};
    } c;
    auto task = [](void* arg) -> void* {
        auto c = static_cast<counts*>(arg);
        for (int s = 0; s < 3; s++) {
            spin_us(30);
            if (photon::get_vcpu(current_uncached()) != c->giver) c->moved++;
            photon::thread_yield();
        }
        c->ran++;
        return nullptr;
    };
    std::atomic<bool> stop{false};
    std::thread giver([&] {
        if (photon::vcpu_init(VCPU_ENABLE_PASSIVE_WORK_STEALING) < 0) return;
        c.giver = photon::get_vcpu();
        while (!stop) {
            std::vector<photon::join_handle*> jh;
            for (int i = 0; i < 32; i++, c.created++)
                jh.push_back(photon::thread_enable_join(photon::thread_create(
                    task, &c, 64 * 1024, 0, THREAD_ENABLE_WORK_STEALING | THREAD_JOINABLE)));
            for (auto h : jh) photon::thread_join(h);
        }
        photon::vcpu_fini();
    });
    ASSERT_TRUE(wait_for_off_vcpu([&] { return c.giver.load() != nullptr; }));
    for (int round = 0; round < 20; round++) {
        other_vcpu stealer(VCPU_ENABLE_ACTIVE_WORK_STEALING, round % 2 == 1);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }  // each ends while the giver keeps giving
    stop = true;
    giver.join();
    EXPECT_GT(c.created.load(), 0);
    EXPECT_EQ(c.created.load(), c.ran.load());
    EXPECT_GT(c.moved.load(), 0);
}

}  // namespace
