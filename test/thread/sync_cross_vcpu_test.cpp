// Locks shared between OS threads: the spinlocks across plain std::threads,
// and the sleeping locks across several vCPUs, where wakeups travel through
// another vCPU's standby queue. Every wait has a timeout and every vCPU is
// kicked by a watchdog, so a lost wakeup or timer shows up as a failed
// assertion, not a hang.
#include <photon/thread/thread.h>

#include <gtest/gtest.h>

#include <sys/prctl.h>

#include <atomic>
#include <deque>
#include <thread>
#include <vector>

#include "test_util.h"

namespace {

using namespace photon_test;

class Spinlock : public VcpuTest {};
class CrossVcpu : public VcpuTest {};

template <typename L>
void increment_from_os_threads(L& lock, int threads, int rounds, long* counter,
                               std::atomic<int>* overlaps) {
    std::atomic<int> inside{0}, ready{0};
    std::vector<std::thread> os;
    for (int i = 0; i < threads; i++)
        os.emplace_back([&] {
            ready++;
            auto deadline = Clock::now() + std::chrono::seconds(5);
            while (ready < threads && Clock::now() < deadline) std::this_thread::yield();
            for (int r = 0; r < rounds; r++) {
                lock.lock();
                if (inside.fetch_add(1, std::memory_order_relaxed) != 0) ++*overlaps;
                ++*counter;
                inside.fetch_sub(1, std::memory_order_relaxed);
                lock.unlock();
            }
        });
    for (auto& t : os) t.join();
}

TEST_F(Spinlock, ExcludesFourOsThreads) {
    photon::spinlock s;
    long counter = 0;
    std::atomic<int> overlaps{0};
    increment_from_os_threads(s, 4, 20000, &counter, &overlaps);
    EXPECT_EQ(4 * 20000, counter);
    EXPECT_EQ(0, overlaps.load());
    EXPECT_FALSE(s.locked());
    EXPECT_EQ(0, s.try_lock());
    EXPECT_EQ(-1, s.try_lock());
    s.unlock();
}

TEST_F(Spinlock, TicketSpinlockExcludesFourOsThreads) {
    // Few rounds: with more threads than cores, each hand-off waits for the
    // scheduler to run the next ticket's thread (a time slice, ~ms).
    photon::ticket_spinlock s;
    long counter = 0;
    std::atomic<int> overlaps{0};
    increment_from_os_threads(s, 4, 2000, &counter, &overlaps);
    EXPECT_EQ(4 * 2000, counter);
    EXPECT_EQ(0, overlaps.load());
    EXPECT_EQ(0, s.try_lock());
    EXPECT_EQ(-1, s.try_lock());
    s.unlock();
    EXPECT_EQ(0, s.try_lock()) << "released after the unlock";
    s.unlock();
}

// OS threads that are vCPUs for the duration of a test. Every second a
// watchdog signals a helper coroutine on each of them, so a vCPU that sleeps
// through its own timer runs late instead of hanging the test; the tests
// count such late waits with late_wait().
class vcpu_group {
public:
    vcpu_group() : watchdog_([this] { watch(); }) {}
    ~vcpu_group() { join(); }

    // Starts an OS thread that becomes a vCPU and runs body() on it.
    template <typename F>
    void run(F body) {
        int i = n_.load();
        if (i == kMaxVcpus) {
            ADD_FAILURE() << "vcpu_group: too many vCPUs";
            return;
        }
        slot* s = &slots_[i];
        threads_.emplace_back([s, body]() mutable {
            if (photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE) != 0) {
                ADD_FAILURE() << "photon::init failed on a new OS thread";
                s->done = true;
                return;
            }
            auto kicked = spawn([s] {
                while (!s->done) s->kick.wait(1, kLongUs);
            });
            body();
            s->done = true;
            s->kick.signal(1);
            kicked.join();
            photon::fini();
        });
        n_++;
    }
    // Runs `per_vcpu` coroutines of f() on each of `vcpus` new vCPUs.
    template <typename F>
    void run_coroutines(int vcpus, int per_vcpu, F f) {
        for (int v = 0; v < vcpus; v++)
            run([=] {
                std::vector<task> ts;
                for (int i = 0; i < per_vcpu; i++) ts.push_back(spawn(f));
                for (auto& t : ts) t.join();
            });
    }
    void join() {
        for (auto& t : threads_)
            if (t.joinable()) t.join();
        stop_ = true;
        if (watchdog_.joinable()) watchdog_.join();
    }

private:
    static constexpr int kMaxVcpus = 8;
    struct slot {
        photon::semaphore kick{0};
        std::atomic<bool> done{false};
    };
    void watch() {
        for (int tick = 1; !stop_; tick++) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
            if (tick % 100 != 0) continue;
            for (int i = 0; i < n_; i++)
                if (!slots_[i].done) slots_[i].kick.signal(1);
        }
    }

    slot slots_[kMaxVcpus];
    std::atomic<int> n_{0};
    std::atomic<bool> stop_{false};
    std::vector<std::thread> threads_;
    std::thread watchdog_;  // last: starts once the rest exists
};

// Runs f() and counts it in `late` if it took over 200 ms, far beyond any
// timeout or hand-off in these tests.
template <typename F>
auto late_wait(std::atomic<int>& late, F f) {
    auto t0 = Clock::now();
    auto ret = f();
    if (ms_since(t0) > 200) late++;
    return ret;
}

TEST_F(CrossVcpu, OneMutexSharedByFourVcpusKeepsTheCounterExact) {
    constexpr int kVcpus = 4, kCoroutines = 4, kRounds = 300;
    for (bool contending : {false, true}) {
        photon::mutex m(8, contending);
        long counter = 0;
        std::atomic<int> inside{0}, overlaps{0}, failures{0};
        vcpu_group g;
        g.run_coroutines(kVcpus, kCoroutines, [&] {
            for (int r = 0; r < kRounds; r++) {
                if (m.lock(kLongUs) != 0) {
                    failures++;
                    return;
                }
                if (inside.fetch_add(1) != 0) overlaps++;
                long v = counter;
                if (r % 4 == 0) photon::thread_yield();
                counter = v + 1;
                inside.fetch_sub(1);
                m.unlock();
            }
        });
        g.join();
        EXPECT_EQ(0, failures.load()) << "contending " << contending;
        EXPECT_EQ(0, overlaps.load());
        EXPECT_EQ(long(kVcpus) * kCoroutines * kRounds, counter);
        EXPECT_FALSE(m.locked());
    }
}

TEST_F(CrossVcpu, ASemaphorePingPongsBetweenTwoVcpus) {
    constexpr int kRounds = 2000;
    photon::semaphore ping(0), pong(0);
    int pinged = 0, ponged = 0;
    std::atomic<int> late{0};
    vcpu_group g;
    g.run([&] {
        for (int i = 0; i < kRounds; i++) {
            ping.signal(1);
            if (late_wait(late, [&] { return pong.wait(1, kLongUs); }) != 0) return;
            pinged++;
        }
    });
    g.run([&] {
        for (int i = 0; i < kRounds; i++) {
            if (late_wait(late, [&] { return ping.wait(1, kLongUs); }) != 0) return;
            ponged++;
            pong.signal(1);
        }
    });
    g.join();
    EXPECT_EQ(0, late.load()) << "a signal reached its waiter's vCPU only by the watchdog";
    EXPECT_EQ(kRounds, pinged);
    EXPECT_EQ(kRounds, ponged);
    EXPECT_EQ(0u, ping.count());
    EXPECT_EQ(0u, pong.count());
}

TEST_F(CrossVcpu, AConditionVariableCarriesItemsFromAProducerToConsumersOnOtherVcpus) {
    constexpr int kItems = 3000, kConsumers = 2;
    photon::mutex m;
    photon::condition_variable cv;
    std::deque<int> q;
    bool done = false;
    long sum = 0;
    int got = 0, timeouts = 0;
    std::atomic<int> late{0};
    vcpu_group g;
    for (int c = 0; c < kConsumers; c++)
        g.run([&] {
            SCOPED_LOCK(m);
            while (true) {
                auto ready = [&] { return !q.empty() || done; };
                if (late_wait(late, [&] { return cv.wait(m, ready, kLongUs); }) != 0) {
                    timeouts++;
                    return;
                }
                if (q.empty()) return;  // done and drained
                sum += q.front();
                got++;
                q.pop_front();
            }
        });
    g.run([&] {
        for (int i = 1; i <= kItems; i++) {
            WITH_LOCK(m) { q.push_back(i); }
            cv.notify_one();
            if (i % 8 == 0) photon::thread_yield();
        }
        WITH_LOCK(m) { done = true; }
        cv.notify_all();
    });
    g.join();
    EXPECT_EQ(0, timeouts);
    EXPECT_EQ(0, late.load());
    EXPECT_EQ(kItems, got);
    EXPECT_EQ(long(kItems) * (kItems + 1) / 2, sum);
    EXPECT_TRUE(q.empty());
}

TEST_F(CrossVcpu, TimedOutSemaphoreWaitersRacingWithSignalsNeverLoseAUnit) {
    constexpr int kUnits = 3000;
    photon::semaphore sem(0);
    std::atomic<int> taken{0}, bad_errno{0}, late{0};
    std::atomic<bool> signaller_done{false};
    vcpu_group g;
    g.run([&] {
        for (int i = 0; i < kUnits; i++) {
            sem.signal(1);
            late_wait(late, [&] { return photon::thread_usleep(i % 5 * 10); });
        }
        signaller_done = true;
    });
    g.run_coroutines(2, 2, [&] {
        for (int i = 0; i < 100000; i++) {
            bool last = signaller_done.load();
            if (late_wait(late, [&] { return sem.wait(1, 20 + i % 4 * 10); }) == 0)
                taken++;
            else if (errno != ETIMEDOUT)
                bad_errno++;
            else if (last)
                return;  // the signaller had finished before this try
        }
    });
    g.join();
    EXPECT_EQ(0, late.load()) << "a vCPU slept through a timer until the watchdog woke it";
    EXPECT_EQ(0, bad_errno.load());
    EXPECT_EQ(uint64_t(kUnits), taken + sem.count()) << "units lost or duplicated";
}

TEST_F(CrossVcpu, TimedOutMutexWaitersRacingWithUnlocksNeverStrandTheMutex) {
    constexpr int kRounds = 1000;
    photon::mutex m(0);
    long counter = 0;
    std::atomic<long> successes{0};
    std::atomic<int> bad_errno{0}, late{0};
    vcpu_group g;
    g.run_coroutines(3, 2, [&] {
        for (int i = 0; i < kRounds; i++) {
            if (late_wait(late, [&] { return m.lock(10 + i % 3 * 10); }) != 0) {
                if (errno != ETIMEDOUT) bad_errno++;
                continue;
            }
            counter++;
            successes++;
            if (i % 2) late_wait(late, [&] { return photon::thread_usleep(i % 7 * 5); });
            m.unlock();
        }
    });
    g.join();
    EXPECT_EQ(0, late.load()) << "a vCPU slept through a timer until the watchdog woke it";
    EXPECT_EQ(0, bad_errno.load());
    EXPECT_EQ(successes.load(), counter);
    EXPECT_GT(successes.load(), 0);
    EXPECT_FALSE(m.locked()) << "a waiter that timed out was left owning the mutex";
    EXPECT_EQ(0, m.try_lock());
    m.unlock();
}

TEST_F(CrossVcpu, AnRwlockSharedByVcpusNeverShowsAHalfWrittenPair) {
    constexpr int kRounds = 300;
    photon::rwlock l;
    long a = 0, b = 0;
    std::atomic<int> torn{0}, failures{0};
    std::atomic<int> which{0};
    vcpu_group g;
    g.run_coroutines(3, 3, [&] {
        bool writer = which.fetch_add(1) % 3 == 0;
        for (int i = 0; i < kRounds; i++) {
            if (l.lock(writer ? photon::WLOCK : photon::RLOCK, kLongUs) != 0) {
                failures++;
                return;
            }
            if (writer) {
                a++;
                photon::thread_yield();
                b++;
            } else {
                long x = a;
                photon::thread_yield();
                if (x != a || a != b) torn++;
            }
            l.unlock();
        }
    });
    g.join();
    EXPECT_EQ(0, failures.load());
    EXPECT_EQ(0, torn.load());
    EXPECT_EQ(3L * kRounds, a);
    EXPECT_EQ(a, b);
}

TEST_F(CrossVcpu, AMutexWaiterInterruptedFromAnotherVcpuFailsWithTheErrno) {
    photon::mutex m(0);
    ASSERT_EQ(0, m.lock());
    std::atomic<photon::thread*> waiter{nullptr};
    std::atomic<int> ret{-2}, err{0};
    vcpu_group g;
    g.run([&] {
        waiter = photon::CURRENT;
        ret = m.lock(kLongUs);
        err = errno;
    });
    auto deadline = Clock::now() + std::chrono::seconds(10);
    while ((!waiter || photon::thread_stat(waiter) != photon::SLEEPING) && Clock::now() < deadline)
        std::this_thread::yield();
    EXPECT_EQ(photon::SLEEPING, photon::thread_stat(waiter));
    photon::thread_interrupt(waiter, ENOTCONN);
    g.join();
    EXPECT_EQ(-1, ret.load());
    EXPECT_EQ(ENOTCONN, err.load());
    EXPECT_TRUE(m.locked());
    m.unlock();
    EXPECT_FALSE(m.locked());
}

// Regression: an idle vCPU computed its sleep as `deadline - now`, re-reading
// the process-wide `now` after firing its timers; when another OS thread
// moved `now` past the deadline in between, the difference wrapped and the
// vCPU slept with its timer pending until something else woke it.
TEST_F(CrossVcpu, AnIdleVcpuWakesForItsTimerWhileAnotherThreadAdvancesTheClock) {
    std::atomic<bool> stop{false};
    std::atomic<int> late{0};
    long sleeps = 0;
    std::thread clock([&] {
        while (!stop) photon::__update_now();
    });
    vcpu_group g;
    g.run([&] {
        prctl(PR_SET_TIMERSLACK, 1UL);  // short sleeps end promptly: more tries
        auto end = Clock::now() + std::chrono::seconds(3);
        while (Clock::now() < end && late == 0) {
            late_wait(late, [] { return photon::thread_usleep(1); });
            sleeps++;
        }
    });
    g.join();
    stop = true;
    clock.join();
    EXPECT_EQ(0, late.load()) << "a 1 us sleep took over 200 ms, in " << sleeps << " sleeps";
}

}  // namespace
