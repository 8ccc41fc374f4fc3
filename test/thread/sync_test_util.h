// Helpers shared by the sync tests (sync_test, semaphore_test,
// sync_cross_vcpu_test): joinable coroutines, bounded waits for a coroutine to
// sleep, and a fixture that makes the test's OS thread a vCPU.
#pragma once

#include <photon/photon.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

#include <gtest/gtest.h>

#include <chrono>
#include <utility>

namespace sync_test {

using std::chrono::steady_clock;

constexpr uint64_t kStack = 256 * 1024;
constexpr uint64_t kLongUs = 10 * 1000 * 1000;  // "never" for a test that works

struct task {
    photon::thread* th = nullptr;
    photon::join_handle* jh = nullptr;
    void join() { photon::thread_join(jh); }
};

// A joinable coroutine running f() on this vCPU; it starts when we yield.
template <typename F>
task spawn(F f) {
    task t;
    t.th = photon::thread_create11(kStack, std::move(f));
    t.jh = photon::thread_enable_join(t.th);
    return t;
}

// Lets the other ready coroutines of this vCPU run for a while.
inline void run_others(int rounds = 20) {
    for (int i = 0; i < rounds; i++) photon::thread_yield();
}

// Yields until `th` sleeps (bounded); true if it does.
inline bool until_sleeping(photon::thread* th) {
    for (int i = 0; i < 100000; i++) {
        if (photon::thread_stat(th) == photon::SLEEPING) return true;
        photon::thread_yield();
    }
    return false;
}

// Milliseconds since `t0` on the clock `now` is refreshed from.
inline double ms_since(steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(steady_clock::now() - t0).count();
}

class OnVcpu : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_EQ(0, photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE));
    }
    void TearDown() override { photon::fini(); }
};

}  // namespace sync_test
