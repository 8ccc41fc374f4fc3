// Smoke test for a project that consumes photon: a few coroutines sleep for different times,
// are joined, and must have finished shortest-sleep first. Exits 0 only if everything worked.
#include <photon/photon.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

#include <chrono>
#include <cstdint>
#include <cstdio>

namespace {

constexpr int kCoroutines = 4;
int finish_order[kCoroutines];
int finished = 0;

// Function-pointer form of thread_create11: arguments are forwarded.
void sleeper(int id, uint64_t sleep_us, int* out) {
    photon::thread_usleep(sleep_us);
    *out = id + 1;
    finish_order[finished++] = id;
}

}  // namespace

int main() {
    if (photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE) != 0) {
        std::fprintf(stderr, "photon::init failed\n");
        return 1;
    }
    auto start = std::chrono::steady_clock::now();

    int results[kCoroutines] = {};
    photon::join_handle* handles[kCoroutines + 1] = {};
    for (int i = 0; i < kCoroutines; ++i) {
        // Coroutine i sleeps (kCoroutines - i) * 5 ms, so they finish in reverse order.
        uint64_t sleep_us = uint64_t(kCoroutines - i) * 5000;
        photon::thread* th = photon::thread_create11(&sleeper, i, sleep_us, &results[i]);
        if (th == nullptr) {
            std::fprintf(stderr, "thread_create11 failed\n");
            return 1;
        }
        handles[i] = photon::thread_enable_join(th);
    }
    // Functor form, capturing by reference.
    bool lambda_ran = false;
    photon::thread* th = photon::thread_create11([&lambda_ran] {
        photon::thread_usleep(1000);
        lambda_ran = true;
    });
    if (th == nullptr) {
        std::fprintf(stderr, "thread_create11 (lambda) failed\n");
        return 1;
    }
    handles[kCoroutines] = photon::thread_enable_join(th);

    for (auto* h : handles) photon::thread_join(h);
    double elapsed_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

    int failures = 0;
    for (int i = 0; i < kCoroutines; ++i) {
        if (results[i] != i + 1) {
            std::fprintf(stderr, "coroutine %d: result %d, expected %d\n", i, results[i], i + 1);
            ++failures;
        }
        if (finish_order[i] != kCoroutines - 1 - i) {
            std::fprintf(stderr, "finish #%d was coroutine %d, expected %d\n", i, finish_order[i],
                         kCoroutines - 1 - i);
            ++failures;
        }
    }
    if (finished != kCoroutines || !lambda_ran) {
        std::fprintf(stderr, "finished %d of %d sleepers, lambda ran: %d\n", finished, kCoroutines,
                     int(lambda_ran));
        ++failures;
    }
    if (elapsed_ms < kCoroutines * 5.0 * 0.9) {
        std::fprintf(stderr, "joined after %.2f ms: the sleeps did not last\n", elapsed_ms);
        ++failures;
    }
    if (photon::fini() != 0) {
        std::fprintf(stderr, "photon::fini failed\n");
        ++failures;
    }
    if (failures) return 1;
    std::printf("photon consumer OK: %d coroutines joined in %.2f ms\n", kCoroutines + 1,
                elapsed_ms);
    return 0;
}
