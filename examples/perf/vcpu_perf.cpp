// vcpu-perf: cross-vCPU round trips through the public API, next to the
// standard-library equivalents.
//
//   vcpu-perf [--rounds R] [--only pingpong|std-pingpong|call|std-call]
//
//   pingpong      photon::semaphore ping-pong between two vCPUs
//   std-pingpong  the same between two std::threads (std::mutex + condvar)
//   call          WorkPool::call of an empty task, from a coroutine and from
//                 a plain std::thread
//   std-call      std::async(launch::async).get(), and a std::thread worker
//                 fed through a mutex + condvar queue, answering by future
//
// Each benchmark runs R rounds (default 7) and prints the median and range
// in ns per round trip, and round trips per second; see doc/performance.md.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <photon/photon.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>
#include <photon/thread/workerpool.h>

namespace {

using clock_type = std::chrono::steady_clock;

double ns_per(clock_type::time_point t0, uint64_t n) {
    return std::chrono::duration<double, std::nano>(clock_type::now() - t0).count() / double(n);
}

// ns per round trip: semaphore ping-pong with a vCPU on another OS thread.
double photon_pingpong(uint64_t n) {
    photon::semaphore ping(0), pong(0);
    std::thread other([&] {
        photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE);
        for (uint64_t i = 0; i < n; i++) {
            ping.wait(1);
            pong.signal(1);
        }
        photon::fini();
    });
    auto t0 = clock_type::now();
    for (uint64_t i = 0; i < n; i++) {
        ping.signal(1);
        pong.wait(1);
    }
    double r = ns_per(t0, n);
    other.join();
    return r;
}

// The same with two std::threads, std::mutex and std::condition_variable.
double std_pingpong(uint64_t n) {
    std::mutex m;
    std::condition_variable cv;
    uint64_t turn = 0;  // even: ping's turn to be answered, odd: pong's
    std::thread other([&] {
        for (uint64_t i = 0; i < n; i++) {
            std::unique_lock<std::mutex> l(m);
            cv.wait(l, [&] { return turn == 2 * i + 1; });
            turn++;
            cv.notify_one();
        }
    });
    auto t0 = clock_type::now();
    for (uint64_t i = 0; i < n; i++) {
        std::unique_lock<std::mutex> l(m);
        turn++;
        cv.notify_one();
        cv.wait(l, [&] { return turn == 2 * i + 2; });
    }
    double r = ns_per(t0, n);
    other.join();
    return r;
}

double pool_call_from_coroutine(photon::WorkPool& pool, uint64_t n) {
    int x = 0;
    auto t0 = clock_type::now();
    for (uint64_t i = 0; i < n; i++) pool.call([&] { x++; });
    return ns_per(t0, n);
}

double pool_call_from_std_thread(photon::WorkPool& pool, uint64_t n) {
    double r = 0;
    std::thread caller([&] {
        int x = 0;
        auto t0 = clock_type::now();
        for (uint64_t i = 0; i < n; i++) pool.call([&] { x++; });
        r = ns_per(t0, n);
    });
    caller.join();
    return r;
}

double std_async(uint64_t n) {
    int x = 0;
    auto t0 = clock_type::now();
    for (uint64_t i = 0; i < n; i++) std::async(std::launch::async, [&] { x++; }).get();
    return ns_per(t0, n);
}

// A one-thread std "pool": a queue under a mutex, a condvar to wake the
// worker, a promise/future per call.
class std_worker {
public:
    std_worker() : thread_([this] { serve(); }) {}
    ~std_worker() {
        {
            std::lock_guard<std::mutex> l(m_);
            stop_ = true;
        }
        cv_.notify_one();
        thread_.join();
    }
    void call(std::function<void()> f) {
        std::promise<void> done;
        auto fut = done.get_future();
        {
            std::lock_guard<std::mutex> l(m_);
            q_.push_back([&] {
                f();
                done.set_value();
            });
        }
        cv_.notify_one();
        fut.get();
    }

private:
    void serve() {
        std::unique_lock<std::mutex> l(m_);
        while (true) {
            cv_.wait(l, [this] { return stop_ || !q_.empty(); });
            if (q_.empty()) return;
            auto f = std::move(q_.front());
            q_.pop_front();
            l.unlock();
            f();
            l.lock();
        }
    }
    std::mutex m_;
    std::condition_variable cv_;
    std::deque<std::function<void()>> q_;
    bool stop_ = false;
    std::thread thread_;
};

double std_worker_call(std_worker& w, uint64_t n) {
    int x = 0;
    auto t0 = clock_type::now();
    for (uint64_t i = 0; i < n; i++) w.call([&] { x++; });
    return ns_per(t0, n);
}

std::map<std::string, double> g_medians;

template <typename F>
void run(const char* name, int rounds, F f) {
    std::vector<double> v;
    for (int r = 0; r < rounds; r++) v.push_back(f());
    std::sort(v.begin(), v.end());
    double med = v[v.size() / 2];
    g_medians[name] = med;
    printf("%-44s median %10.0f ns/round trip %10.0f /s   (min %.0f, max %.0f, %d rounds)\n", name,
           med, 1e9 / med, v.front(), v.back(), rounds);
    fflush(stdout);
}

void ratio(const char* a, const char* b) {
    if (g_medians.count(a) && g_medians.count(b))
        printf("  %s / %s = %.2f\n", a, b, g_medians[a] / g_medians[b]);
}

}  // namespace

int main(int argc, char** argv) {
    int rounds = 7;
    std::string only;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--rounds R] [--only pingpong|std-pingpong|call|std-call]\n",
                    argv[0]);
            return 2;
        }
    }
    if (rounds < 1) rounds = 1;
    if (photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE) < 0) return 1;
    auto want = [&](const char* x) { return only.empty() || only == x; };
    constexpr uint64_t kTrips = 20000;
    if (want("pingpong"))
        run("semaphore ping-pong, 2 vCPUs", rounds, [] { return photon_pingpong(kTrips); });
    if (want("std-pingpong"))
        run("mutex+condvar ping-pong, 2 std::threads", rounds, [] { return std_pingpong(kTrips); });
    if (want("call")) {
        photon::WorkPool pool(1);
        run("WorkPool::call from a coroutine", rounds,
            [&] { return pool_call_from_coroutine(pool, kTrips); });
        run("WorkPool::call from a std::thread", rounds,
            [&] { return pool_call_from_std_thread(pool, kTrips); });
    }
    if (want("std-call")) {
        run("std::async(launch::async).get()", rounds, [] { return std_async(kTrips / 10); });
        std_worker w;
        run("std::thread worker + promise/future", rounds,
            [&] { return std_worker_call(w, kTrips); });
    }
    printf("ratios of medians (< 1: photon is faster):\n");
    ratio("semaphore ping-pong, 2 vCPUs", "mutex+condvar ping-pong, 2 std::threads");
    ratio("WorkPool::call from a coroutine", "std::thread worker + promise/future");
    ratio("WorkPool::call from a std::thread", "std::thread worker + promise/future");
    ratio("WorkPool::call from a coroutine", "std::async(launch::async).get()");
    photon::fini();
    return 0;
}
