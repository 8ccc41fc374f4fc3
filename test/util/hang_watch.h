// A watchdog for tests that may hang: if one test runs longer than its bound,
// the whole process is dumped (every vCPU's coroutines, with what each waits
// on) to stderr, the test is named, and the process aborts. A hang then
// reads as a named failure with its evidence, not a ctest timeout.
//
// Declare one watch in one source of a test binary:
//     static photon_test::HangWatch hang_watch(120);
#pragma once

#include <photon/thread/dump.h>

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

namespace photon_test {

class HangWatch {
public:
    // The state is never freed: the watcher thread is detached and may still
    // wait on it while static destructors run.
    explicit HangWatch(int seconds) : s_(new State) {
        s_->bound = seconds;
        ::testing::UnitTest::GetInstance()->listeners().Append(new Forward(s_));
        std::thread([s = s_] { s->watch(); }).detach();
    }

private:
    struct State {
        int bound = 0;
        std::mutex mu;
        std::condition_variable cv;
        std::string running;
        uint64_t generation = 0;

        void arm(std::string name) {
            std::lock_guard<std::mutex> lock(mu);
            running = std::move(name);
            generation++;
            cv.notify_all();
        }
        void watch() {
            std::unique_lock<std::mutex> lock(mu);
            while (true) {
                cv.wait(lock, [&] { return !running.empty(); });
                uint64_t gen = generation;
                if (cv.wait_for(lock, std::chrono::seconds(bound),
                                [&] { return generation != gen; }))
                    continue;
                fprintf(stderr, "\nHANG: %s has run for more than %d s; its coroutines:\n",
                        running.c_str(), bound);
                lock.unlock();
                photon::thread_dump_to_fd(2);
                fflush(stderr);
                abort();
            }
        }
    };
    // The listener list owns and deletes this one.
    struct Forward : ::testing::EmptyTestEventListener {
        State* s;
        explicit Forward(State* s) : s(s) {}
        void OnTestStart(const ::testing::TestInfo& t) override {
            s->arm(std::string(t.test_suite_name()) + "." + t.name());
        }
        void OnTestEnd(const ::testing::TestInfo&) override { s->arm(""); }
    };
    State* s_;
};

}  // namespace photon_test
