// std-threads / std-threads-photon: one program written against std::thread,
// std::mutex and std::condition_variable, built twice from this file:
//
//   std-threads          the standard library: 2,000 OS threads
//   std-threads-photon   the same code with the namespace swapped to
//                        photon_std (photon/thread/std-compat.h): 2,000
//                        coroutines on one vCPU
//
// The only differences are the lines under ON_PHOTON: the include, the
// namespace, and photon::init/fini around the work.
#include <chrono>
#include <cstdio>
#include <vector>

#ifdef ON_PHOTON
#include <photon/common/alog.h>
#include <photon/photon.h>
#include <photon/thread/std-compat.h>
namespace sys = photon_std;
#else
#include <condition_variable>
#include <mutex>
#include <thread>
namespace sys = std;
#endif

// Workers wait until released, then each adds its share under the mutex.
struct shared_state {
    sys::mutex mu;
    sys::condition_variable released_cv;
    bool released = false;
    long total = 0;
};

static void worker(shared_state* s, int id) {
    sys::unique_lock<sys::mutex> lock(s->mu);
    s->released_cv.wait(lock, [s] { return s->released; });
    s->total += id;
}

int main() {
#ifdef ON_PHOTON
    set_log_output_level(ALOG_WARN);  // photon logs INFO lines by default
    if (photon::init() != 0) return 1;
#endif
    constexpr int kWorkers = 2000;
    auto t0 = std::chrono::steady_clock::now();
    shared_state s;
    std::vector<sys::thread> threads;
    for (int i = 1; i <= kWorkers; i++) threads.emplace_back(worker, &s, i);
    sys::this_thread::sleep_for(std::chrono::milliseconds(10));  // let them all wait
    {
        sys::lock_guard<sys::mutex> lock(s.mu);
        s.released = true;
    }
    s.released_cv.notify_all();
    for (auto& t : threads) t.join();
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    bool ok = s.total == (long)kWorkers * (kWorkers + 1) / 2;
    printf("%d workers, total %ld (%s), %.1f ms\n", kWorkers, s.total, ok ? "right" : "WRONG", ms);
#ifdef ON_PHOTON
    photon::fini();
#endif
    return ok ? 0 : 1;
}
