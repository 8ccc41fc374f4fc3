// photon/common/singleflight.h: callers that overlap a run share its result
// (coroutines of one vCPU and callers on several vCPUs, in both wait modes),
// late callers start a new run, results of any copyable type reach every
// waiter, a throwing run releases its waiters, a caller of another result type
// is not handed foreign bytes, and destruction waits for a pending run.
//
// Overlap is made certain, not timed: the running function blocks until every
// other caller is parked inside Do().
#include <photon/common/singleflight.h>
#include <photon/photon.h>

#include <gtest/gtest.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../thread/test_util.h"

namespace {

using namespace photon_test;

class SingleFlightTest : public VcpuTest, public ::testing::WithParamInterface<bool> {
protected:
    bool use_sem() const { return GetParam(); }
};

// Starts `n` coroutines calling body() and yields until each one is parked
// (inside Do(), for callers that reach it), bounded.
template <typename F>
std::vector<task> start_parked(int n, F body) {
    std::vector<task> tasks;
    for (int i = 0; i < n; i++) {
        tasks.push_back(spawn(body));
        EXPECT_TRUE(until_sleeping(tasks.back().th)) << "caller " << i << " never parked";
    }
    return tasks;
}

TEST_P(SingleFlightTest, SequentialCallsEachRunTheFunction) {
    photon::SingleFlight sf;
    int runs = 0;
    for (int i = 1; i <= 5; i++) EXPECT_EQ(i, sf.Do([&] { return ++runs; }, use_sem()));
    EXPECT_EQ(5, runs);
}

TEST_P(SingleFlightTest, OverlappingCoroutinesShareOneRunAndItsResult) {
    photon::SingleFlight sf;
    photon::semaphore gate(0);
    int runs = 0;
    std::vector<int> results;
    auto call = [&] {
        results.push_back(sf.Do(
            [&] {
                runs++;
                gate.wait(1);  // keeps the run pending while the others arrive
                return 4242;
            },
            use_sem()));
    };
    auto tasks = start_parked(1, call);  // the executor, parked on the gate
    auto waiters = start_parked(20, call);
    EXPECT_EQ(1, runs);
    gate.signal(1);
    for (auto& t : tasks) t.join();
    for (auto& t : waiters) t.join();
    EXPECT_EQ(1, runs);
    EXPECT_EQ(std::vector<int>(21, 4242), results);
}

TEST_P(SingleFlightTest, VoidFunctionRunsOnceForOverlappingCallers) {
    photon::SingleFlight sf;
    photon::semaphore gate(0);
    int runs = 0, returned = 0;
    auto call = [&] {
        sf.Do(
            [&] {
                runs++;
                gate.wait(1);
            },
            use_sem());
        returned++;
    };
    auto tasks = start_parked(1, call);
    auto waiters = start_parked(5, call);
    EXPECT_EQ(0, returned);  // nobody leaves before the run ends
    gate.signal(1);
    for (auto& t : tasks) t.join();
    for (auto& t : waiters) t.join();
    EXPECT_EQ(1, runs);
    EXPECT_EQ(6, returned);
}

struct Complex {
    int value;
    std::string message;
    explicit Complex(int v, std::string m) : value(v), message(std::move(m)) {}  // no default
};

TEST_P(SingleFlightTest, StringsAndTypesWithoutDefaultConstructorReachEveryWaiter) {
    photon::SingleFlight sf;
    photon::semaphore gate(0);
    int runs = 0;
    std::vector<Complex> got;
    const std::string long_text(1000, 'x');  // heap-allocated: a real copy each
    auto call = [&] {
        got.push_back(sf.Do(
            [&] {
                runs++;
                gate.wait(1);
                return Complex(7, long_text);
            },
            use_sem()));
    };
    auto tasks = start_parked(1, call);
    auto waiters = start_parked(8, call);
    gate.signal(1);
    for (auto& t : tasks) t.join();
    for (auto& t : waiters) t.join();
    EXPECT_EQ(1, runs);
    ASSERT_EQ(9u, got.size());
    for (auto& c : got) {
        EXPECT_EQ(7, c.value);
        EXPECT_EQ(long_text, c.message);
    }
}

TEST_P(SingleFlightTest, ACallerArrivingAfterTheRunEndedStartsANewOne) {
    photon::SingleFlight sf;
    photon::semaphore gate(0);
    int runs = 0;
    auto call = [&] { return sf.Do([&] { return gate.wait(1), ++runs; }, use_sem()); };
    std::vector<int> first;
    auto tasks = start_parked(1, [&] { first.push_back(call()); });
    auto waiters = start_parked(3, [&] { first.push_back(call()); });
    gate.signal(1);
    for (auto& t : tasks) t.join();
    for (auto& t : waiters) t.join();
    EXPECT_EQ(std::vector<int>(4, 1), first);
    gate.signal(1);
    EXPECT_EQ(2, call());  // a fresh run
    EXPECT_EQ(2, runs);
}

TEST_P(SingleFlightTest, SeparateInstancesDoNotShareRuns) {
    photon::SingleFlight a, b;
    photon::semaphore gate(0);
    int runs_a = 0, runs_b = 0;
    auto tasks = start_parked(1, [&] { a.Do([&] { runs_a++, gate.wait(1); }, use_sem()); });
    auto more = start_parked(1, [&] { b.Do([&] { runs_b++, gate.wait(1); }, use_sem()); });
    EXPECT_EQ(1, runs_a);
    EXPECT_EQ(1, runs_b);  // b's caller ran its own function, not waiting on a's
    gate.signal(2);
    tasks[0].join();
    more[0].join();
}

TEST_P(SingleFlightTest, AThrowingRunReachesItsCallerAndItsWaitersRunAgain) {
    photon::SingleFlight sf;
    photon::semaphore gate(0);
    int thrown = 0, second_runs = 0;
    std::vector<int> waiter_results;
    auto executor = start_parked(1, [&] {
        try {
            sf.Do(
                [&]() -> int {
                    gate.wait(1);
                    throw std::runtime_error("backend down");
                },
                use_sem());
        } catch (const std::runtime_error&) {
            thrown++;
        }
    });
    auto waiters = start_parked(
        4, [&] { waiter_results.push_back(sf.Do([&] { return ++second_runs, 99; }, use_sem())); });
    gate.signal(1);
    executor[0].join();
    for (auto& t : waiters) t.join();
    EXPECT_EQ(1, thrown);
    EXPECT_EQ(std::vector<int>(4, 99), waiter_results);  // none hung, none got garbage
    EXPECT_GE(second_runs, 1);
    EXPECT_LE(second_runs, 4);
}

TEST_P(SingleFlightTest, AWaiterOfAnotherResultTypeRunsItsOwnFunction) {
    photon::SingleFlight sf;
    photon::semaphore gate(0);
    int int_runs = 0, string_runs = 0;
    int int_result = 0;
    std::string string_result;
    auto executor = start_parked(
        1, [&] { int_result = sf.Do([&] { return gate.wait(1), ++int_runs, 5; }, use_sem()); });
    auto other = start_parked(1, [&] {
        string_result = sf.Do([&] { return ++string_runs, std::string("mine"); }, use_sem());
    });
    gate.signal(1);
    executor[0].join();
    other[0].join();
    EXPECT_EQ(5, int_result);
    EXPECT_EQ("mine", string_result);
    EXPECT_EQ(1, int_runs);
    EXPECT_EQ(1, string_runs);
}

TEST_P(SingleFlightTest, DestructionWaitsForThePendingRun) {
    auto sf = std::make_unique<photon::SingleFlight>();
    photon::semaphore gate(0);
    std::atomic<bool> run_over{false};
    auto executor = start_parked(1, [&] {
        sf->Do(
            [&] {
                gate.wait(1);
                run_over = true;
            },
            use_sem());
    });
    auto opener = spawn([&] {
        photon::thread_usleep(10 * 1000);
        gate.signal(1);
    });
    sf.reset();  // yields until the run ends
    EXPECT_TRUE(run_over);
    executor[0].join();
    opener.join();
}

INSTANTIATE_TEST_SUITE_P(WaitModes, SingleFlightTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) {
                             return i.param ? "Semaphore" : "Yield";
                         });

// Callers on several vCPUs: the first to arrive runs; it waits until every
// other caller is parked in Do(), so all of them must share its run.
class SingleFlightVcpus : public ::testing::TestWithParam<bool> {};

TEST_P(SingleFlightVcpus, CallersOnSeveralVcpusShareOneRun) {
    constexpr int kThreads = 4;
    photon::SingleFlight sf;
    std::atomic<photon::thread*> callers[kThreads] = {};
    std::atomic<int> entered{0}, runs{0}, right{0};
    std::atomic<bool> all_parked{false};
    auto others_parked = [&] {
        if (entered.load() < kThreads) return false;
        for (auto& c : callers) {
            auto th = c.load();
            if (th != photon::CURRENT && photon::thread_stat(th) != photon::SLEEPING) return false;
        }
        return true;
    };
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; i++) {
        threads.emplace_back([&, i] {
            if (photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE) != 0) return;
            callers[i] = photon::CURRENT;
            entered++;
            int r = sf.Do(
                [&] {
                    runs++;
                    all_parked = wait_for(others_parked, 20000);
                    return 777;
                },
                GetParam());
            if (r == 777) right++;
            photon::fini();
        });
    }
    for (auto& t : threads) t.join();
    EXPECT_TRUE(all_parked);
    EXPECT_EQ(1, runs.load());
    EXPECT_EQ(kThreads, right.load());
}

INSTANTIATE_TEST_SUITE_P(WaitModes, SingleFlightVcpus, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) {
                             return i.param ? "Semaphore" : "Yield";
                         });

// The state letter of OS thread `tid` in /proc ('S': blocked), '?' if unknown.
char os_thread_state(pid_t tid) {
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
    FILE* f = fopen(path, "r");
    if (!f) return '?';
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    const char* p = strrchr(buf, ')');  // the name may hold spaces and parentheses
    return (p && p[1] == ' ') ? p[2] : '?';
}

// A photon coroutine runs; plain OS threads (not vCPUs) that overlap it block
// until it ends and share it.
TEST(SingleFlightThreads, PlainThreadsBlockUntilACoroutinesRunEndsAndShareIt) {
    ASSERT_EQ(0, photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE));
    {
        constexpr int kThreads = 3;
        photon::SingleFlight sf;
        std::atomic<bool> release{false}, running{false};
        std::atomic<int> runs{0}, returned{0};
        std::atomic<pid_t> tids[kThreads] = {};
        auto executor = spawn([&] {
            sf.Do([&] {
                runs++;
                running = true;
                wait_for([&] { return release.load(); }, 20000);
            });
        });
        ASSERT_TRUE(wait_for([&] { return running.load(); }));
        std::vector<std::thread> threads;
        for (int i = 0; i < kThreads; i++) {
            threads.emplace_back([&, i] {
                tids[i] = (pid_t)syscall(SYS_gettid);
                sf.Do([&] { runs++; });
                returned++;
            });
        }
        // Blocked ('S') after publishing its tid means parked inside Do().
        auto all_blocked = [&] {
            for (auto& t : tids)
                if (!t.load() || os_thread_state(t.load()) != 'S') return false;
            return true;
        };
        EXPECT_TRUE(wait_for(all_blocked, 20000));
        EXPECT_EQ(0, returned.load());
        release = true;
        executor.join();
        for (auto& t : threads) t.join();
        EXPECT_EQ(1, runs.load());
        EXPECT_EQ(kThreads, returned.load());
    }
    EXPECT_EQ(0, photon::fini());
}

}  // namespace
