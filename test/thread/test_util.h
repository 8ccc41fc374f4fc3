// Helpers shared by the tests of test/thread/ and above: wall-clock timing,
// joinable coroutines, child processes; with test/util/'s vCPU fixtures and
// bounded waits, which it includes.
#pragma once

#include <photon/photon.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <cstdint>
#include <utility>

#include "../util/engine_fixture.h"
#include "../util/wait.h"

namespace photon_test {

// ---- time ------------------------------------------------------------------

using Clock = std::chrono::steady_clock;

constexpr uint64_t kLongUs = 10 * 1000 * 1000;  // "never" for a test that works

// Microseconds since `t0`.
inline uint64_t us_since(Clock::time_point t0) {
    return (uint64_t)std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0)
        .count();
}

// Milliseconds since `t0`, with fractions.
inline double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// ---- coroutines ------------------------------------------------------------

constexpr uint64_t kStack = 256 * 1024;

inline void* noop(void*) { return nullptr; }

// Death tests re-exec the test binary ("threadsafe"), except under a user-mode
// emulator (cross builds), where exec of a foreign binary fails: fork only.
inline const char* death_test_style() {
#ifdef PHOTON_TEST_EMULATED
    return "fast";
#else
    return "threadsafe";
#endif
}

// CURRENT read through a call the compiler cannot inline: after a coroutine
// migrates to another OS thread, code may not reuse a thread-pointer value
// computed before (AArch64 compilers keep it in a register).
__attribute__((noinline)) inline photon::thread* current_uncached() {
    asm volatile("" ::: "memory");
    return photon::CURRENT;
}

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

// ---- child processes -------------------------------------------------------

// Runs f() in a forked child of this process (and vCPU); returns what the
// child wrote to stdout (where the log goes) and stderr, and its wait status.
template <typename F>
std::pair<std::string, int> in_child(F f) {
    int fds[2];
    if (pipe(fds) != 0) return {"pipe failed", -1};
    fflush(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        dup2(fds[1], STDERR_FILENO);
        close(fds[0]);
        _exit(f());
    }
    close(fds[1]);
    std::string out;
    char buf[512];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof(buf))) > 0) out.append(buf, (size_t)n);
    close(fds[0]);
    int status = -1;
    if (pid > 0) waitpid(pid, &status, 0);
    return {out, status};
}

}  // namespace photon_test
