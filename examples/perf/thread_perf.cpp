// thread-perf: micro-benchmarks of the coroutine core through the public API.
//
//   thread-perf [--rounds R] [--only yield|yield10|create|memory]
//
// Each benchmark runs R rounds (default 7) and prints the median and the
// range; see doc/performance.md for figures and how they were taken.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <photon/photon.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
    return std::chrono::duration<double>(clock_type::now() - t0).count();
}

struct summary {
    double median, lo, hi;
};

summary summarize(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return {v[v.size() / 2], v.front(), v.back()};
}

// ns per switch: `n` coroutines with default stacks each yield `iters` times.
double yield_round(int n, uint64_t iters) {
    std::vector<photon::join_handle*> jh;
    for (int i = 0; i < n; i++) {
        auto th = photon::thread_create11([iters] {
            for (uint64_t k = 0; k < iters; k++) photon::thread_yield();
        });
        jh.push_back(photon::thread_enable_join(th));
    }
    auto t0 = clock_type::now();
    for (auto h : jh) photon::thread_join(h);
    return seconds_since(t0) * 1e9 / double(iters * n);
}

void* empty_entry(void*) { return nullptr; }

// Coroutines per second: create, run and join one empty coroutine at a time.
double create_round(uint64_t n) {
    auto t0 = clock_type::now();
    for (uint64_t i = 0; i < n; i++) {
        auto th = photon::thread_create(&empty_entry, nullptr, photon::DEFAULT_STACK_SIZE, 0,
                                        photon::THREAD_JOINABLE);
        photon::thread_join(reinterpret_cast<photon::join_handle*>(th));
    }
    return double(n) / seconds_since(t0);
}

long rss_bytes() {
    long pages = 0, resident = 0;
    FILE* f = fopen("/proc/self/statm", "r");
    if (!f) return -1;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
    fclose(f);
    return resident * sysconf(_SC_PAGESIZE);
}

// Bytes of RSS per idle coroutine: n coroutines with 8 MiB stacks sleeping.
double memory_round(int n) {
    long before = rss_bytes();
    std::vector<photon::join_handle*> jh;
    jh.reserve(n);
    for (int i = 0; i < n; i++) {
        auto th = photon::thread_create11([] { photon::thread_usleep(-1); });
        if (!th) {
            fprintf(stderr, "thread_create failed at %d: %s\n", i, strerror(errno));
            break;
        }
        jh.push_back(photon::thread_enable_join(th));
    }
    photon::thread_yield();  // let every one of them start and go to sleep
    double per = double(rss_bytes() - before) / double(jh.size());
    for (auto h : jh) photon::thread_interrupt(reinterpret_cast<photon::thread*>(h), 0);
    for (auto h : jh) photon::thread_join(h);
    return per;
}

template <typename F>
void run(const char* name, const char* unit, int rounds, F f) {
    std::vector<double> v;
    for (int r = 0; r < rounds; r++) v.push_back(f());
    auto s = summarize(v);
    printf("%-44s median %12.2f %s   (min %.2f, max %.2f, %d rounds)\n", name, s.median, unit, s.lo,
           s.hi, rounds);
    fflush(stdout);
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
            fprintf(stderr, "usage: %s [--rounds R] [--only yield|yield10|create|memory]\n",
                    argv[0]);
            return 2;
        }
    }
    if (rounds < 1) rounds = 1;
    if (photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE) < 0) return 1;
    auto want = [&](const char* x) { return only.empty() || only == x; };
    if (want("yield"))
        run("thread_yield, 2 coroutines", "ns/switch", rounds,
            [] { return yield_round(2, 5000000); });
    if (want("yield10"))
        run("thread_yield, 10 coroutines", "ns/switch", rounds,
            [] { return yield_round(10, 1000000); });
    if (want("create"))
        run("create+run+join, pooled 8 MiB stacks", "per s", rounds,
            [] { return create_round(1000000); });
    if (want("memory"))
        run("RSS per idle coroutine (100k, 8 MiB stacks)", "bytes", std::min(rounds, 3),
            [] { return memory_round(100000); });
    photon::fini();
    return 0;
}
