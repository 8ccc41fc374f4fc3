// Waiting on state instead of sleeping for a while: until a coroutine has
// parked, or until a condition holds, each with a bound that only a broken
// test reaches. Call on a vCPU (the waits yield or sleep the calling
// coroutine), except wait_for_off_vcpu, which sleeps a plain OS thread.
#pragma once

#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

#include <chrono>
#include <thread>

namespace photon_test {

// Yields until `th` sleeps (parks in a wait), at most 100000 rounds; true if
// it does. Use before waking or interrupting a coroutine that must already
// be waiting.
inline bool until_sleeping(photon::thread* th) {
    for (int i = 0; i < 100000; i++) {
        if (photon::thread_stat(th) == photon::SLEEPING) return true;
        photon::thread_yield();
    }
    return false;
}

// Sleeps in 1 ms steps (so this vCPU's other coroutines and its event
// engine run) until pred() holds, at most max_ms steps; returns pred(). A
// slow machine's steps take longer, so the bound stretches with it.
template <typename P>
bool wait_for(P pred, int max_ms = 5000) {
    for (int i = 0; i < max_ms && !pred(); i++) photon::thread_usleep(1000);
    return pred();
}

// For an OS thread that is not a vCPU: sleeps it in 5 ms steps until
// pred() holds, for at most about max_ms of wall time; returns pred().
template <typename P>
bool wait_for_off_vcpu(P pred, int max_ms = 5000) {
    auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(max_ms);
    while (!pred()) {
        if (std::chrono::steady_clock::now() > end) return pred();
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
}

// Lets the other ready coroutines of this vCPU run for a while.
inline void run_others(int rounds = 20) {
    for (int i = 0; i < rounds; i++) photon::thread_yield();
}

// Calls f() while another coroutine of this vCPU spins (yielding) and
// returns the turns that coroutine got: 0 if f() never left this coroutine,
// about one per yield, and one per scheduler round for as long as a sleep
// lasts (thousands in a millisecond). How a test says "does not wait" with an
// event count (at most kTurnsOfAYield), where a bound on wall time would fail
// on a loaded machine.
constexpr int kTurnsOfAYield = 3;
template <typename F>
int turns_of_others_during(F f) {
    int turns = 0;
    bool stop = false;
    auto jh = photon::thread_enable_join(photon::thread_create11([&] {
        while (!stop) {
            turns++;
            photon::thread_yield();
        }
    }));
    f();
    int seen = turns;
    stop = true;
    photon::thread_join(jh);
    return seen;
}

}  // namespace photon_test
