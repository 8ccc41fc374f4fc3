// thread-perf: micro-benchmarks of the coroutine core through the public API.
//
//   thread-perf [--rounds R] [--only yield|yield10|create|memory|million|dump|slowturn]
//               [--stack-kib K]
//
// Each benchmark runs R rounds (default 7; 3 at most for the memory rows) and
// prints the median and the range; see doc/performance.md for figures and how
// they were taken. `million`: 1,000,000 coroutines sleep at once, each on a
// default stack (or one of K KiB: --stack-kib), then are interrupted and joined; beside it,
// the kernel's own cost of one fresh page per stack of address space (this machine's floor).
// tools/go-sleepers is Go's side of it.
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <photon/photon.h>
#include <photon/thread/dump.h>
#include <photon/thread/slow_turn.h>
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

// A "Field: N kB" line of a /proc file, -1 if absent.
long status_kb_of(const char* path, const char* field) {
    FILE* f = fopen(path, "r");
    if (!f) return -1;
    char line[256];
    long kb = -1;
    size_t n = strlen(field);
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, field, n) && line[n] == ':') kb = atol(line + n + 1);
    fclose(f);
    return kb;
}

// A /proc/self/status field in kB (VmPTE: the process's page tables).
long status_kb(const char* field) { return status_kb_of("/proc/self/status", field); }

long map_count() {
    FILE* f = fopen("/proc/self/maps", "r");
    if (!f) return -1;
    long n = 0;
    for (int c; (c = fgetc(f)) != EOF;) n += c == '\n';
    fclose(f);
    return n;
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

// The sleepers' stack size (--stack-kib).
uint64_t g_sleeper_stack = photon::DEFAULT_STACK_SIZE;

// One round of the "million sleepers" test: n coroutines with g_sleeper_stack stacks
// each in thread_usleep(1 h), then interrupted and joined.
struct sleepers {
    double created, rss_per, pte_per, create_s, teardown_s, interrupt_s, maps;
};

void* sleep_an_hour(void*) {
    photon::thread_usleep(3600ULL * 1000 * 1000);
    return nullptr;
}

sleepers sleepers_round(uint64_t n) {
    std::vector<photon::join_handle*> jh;
    jh.reserve(n);
    long rss0 = rss_bytes(), pte0 = status_kb("VmPTE");
    auto t0 = clock_type::now();
    for (uint64_t i = 0; i < n; i++) {
        auto th = photon::thread_create(&sleep_an_hour, nullptr, g_sleeper_stack, 0,
                                        photon::THREAD_JOINABLE);
        if (!th) {
            fprintf(stderr, "thread_create failed at %lu: %s\n", (unsigned long)i, strerror(errno));
            break;
        }
        jh.push_back(reinterpret_cast<photon::join_handle*>(th));
    }
    photon::thread_yield();  // each runs once, into its sleep
    sleepers r{};
    r.create_s = seconds_since(t0);
    r.created = double(jh.size());
    r.rss_per = double(rss_bytes() - rss0) / r.created;
    r.pte_per = double(status_kb("VmPTE") - pte0) * 1024 / r.created;
    r.maps = double(map_count());
    t0 = clock_type::now();
    for (auto h : jh) photon::thread_interrupt(reinterpret_cast<photon::thread*>(h), 0);
    r.interrupt_s = seconds_since(t0);
    for (auto h : jh) photon::thread_join(h);
    r.teardown_s = seconds_since(t0);
    return r;
}

// The kernel's share, measured in the same process: reserve n stack-sized slots,
// write one byte at the top of each (the page a sleeping coroutine needs,
// plus its page table), then unmap them all.
std::pair<double, double> page_fault_floor(uint64_t n) {
    const size_t slot = g_sleeper_stack + 4096, per_map = 512;
    std::vector<char*> maps;
    auto t0 = clock_type::now();
    for (uint64_t i = 0; i < n; i += per_map) {
        size_t k = std::min<uint64_t>(per_map, n - i);
        void* p = mmap(nullptr, k * slot, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) return {0, 0};
        madvise(p, k * slot, MADV_NOHUGEPAGE);
        auto c = static_cast<char*>(p);
        for (size_t j = 0; j < k; j++) c[(j + 1) * slot - 64] = 1;
        maps.push_back(c);
    }
    double touch = seconds_since(t0);
    t0 = clock_type::now();
    for (size_t i = 0; i < maps.size(); i++)
        munmap(maps[i], std::min<uint64_t>(per_map, n - i * per_map) * slot);
    return {touch, seconds_since(t0)};
}

// `dump`: n sleepers (64 KiB stacks: the dump does not depend on their size), dumped as
// text with backtraces, as JSON, and as text without backtraces. Prints each dump's wall
// time, the longest a vCPU spent copying at once, and the output's size.
void run_dump(uint64_t n) {
    std::vector<photon::join_handle*> jh;
    jh.reserve(n);
    for (uint64_t i = 0; i < n; i++) {
        auto th =
            photon::thread_create(&sleep_an_hour, nullptr, 64 * 1024, 0, photon::THREAD_JOINABLE);
        if (!th) break;
        jh.push_back(reinterpret_cast<photon::join_handle*>(th));
    }
    photon::thread_yield();
    struct variant {
        const char* name;
        bool json;
        int frames;
    } variants[] = {{"text, 16 frames", false, 16},
                    {"JSON, 16 frames", true, 16},
                    {"text, no frames", false, 0}};
    for (auto& v : variants) {
        photon::ThreadDumpOptions o;
        o.json = v.json;
        o.max_frames = v.frames;
        o.timeout_us = 60ULL * 1000 * 1000;
        std::string out;
        auto t0 = clock_type::now();
        int r = photon::thread_dump(&out, o);
        double sec = seconds_since(t0);
        double slice_ms = -1;
        size_t at = out.find(v.json ? "\"max_slice_us\":" : "held a vCPU ");
        if (at != std::string::npos)
            slice_ms = v.json ? atof(out.c_str() + at + 15) / 1000 : atof(out.c_str() + at + 12);
        printf("dump of %lu sleepers, %-16s %s: %.3f s, longest slice %.3f ms, %.1f MiB\n",
               (unsigned long)jh.size(), v.name, r == 0 ? "ok" : "FAILED", sec, slice_ms,
               out.size() / 1048576.0);
    }
    for (auto h : jh) photon::thread_interrupt(reinterpret_cast<photon::thread*>(h), 0);
    for (auto h : jh) photon::thread_join(h);
}

// `slowturn`: 20 busy loops of 50 ms, each followed by 30 ms asleep, under the slow-turn
// detector's default threshold (10 ms; reports not capped at 10 a second here): how many are
// reported, and how many name the loop. The loop reads the clock rarely: a signal that lands
// in the clock's code (libc, the vDSO: no frame pointers) names that and the loop's caller.
std::atomic<int> g_slow_reports{0}, g_slow_named{0};

}  // namespace

// Out of the anonymous namespace, and called through a volatile pointer: a name in the dynamic
// symbol table, not a local clone's.
__attribute__((noinline)) uint64_t thread_perf_busy_50ms() {
    auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
    uint64_t spins = 0;
    for (;;) {
        if ((++spins & 0xffff) == 0 && std::chrono::steady_clock::now() >= end) break;
        asm volatile("" ::: "memory");
    }
    return spins;
}

namespace {

uint64_t (*volatile busy_50ms)() = &thread_perf_busy_50ms;

void run_slow_turns() {
    photon::SlowTurnOptions o = photon::get_slow_turn_options();
    o.max_reports_per_sec = 100;
    o.report = [](const char* text, void*) {
        g_slow_reports++;
        if (strstr(text, "thread_perf_busy_50ms")) g_slow_named++;
    };
    if (photon::set_slow_turn_options(o) < 0 || !o.threshold_us) {
        printf("slow turns: the detector is off here\n");
        return;
    }
    const int n = 20;
    for (int i = 0; i < n; i++) {
        busy_50ms();
        photon::thread_usleep(30 * 1000);
    }
    printf(
        "slow turns: %d busy loops of 50 ms, threshold %.0f ms: %d reported, %d naming the "
        "loop\n",
        n, o.threshold_us / 1000.0, g_slow_reports.load(), g_slow_named.load());
}

void run_sleepers(uint64_t n, int rounds) {
    std::vector<double> created, rss, pte, create, teardown, interrupt, maps, floor_c, floor_t;
    for (int r = 0; r < rounds; r++) {
        auto f = page_fault_floor(n);
        floor_c.push_back(f.first);
        floor_t.push_back(f.second);
        auto s = sleepers_round(n);
        created.push_back(s.created);
        rss.push_back(s.rss_per);
        pte.push_back(s.pte_per);
        create.push_back(s.create_s);
        teardown.push_back(s.teardown_s);
        interrupt.push_back(s.interrupt_s);
        maps.push_back(s.maps);
    }
    auto row = [rounds](const char* name, const char* unit, std::vector<double> v) {
        auto s = summarize(v);
        printf("%-44s median %12.2f %s   (min %.2f, max %.2f, %d rounds)\n", name, s.median, unit,
               s.lo, s.hi, rounds);
    };
    printf("-- %lu sleeping coroutines, %lu KiB stacks, vm.max_map_count %ld\n", (unsigned long)n,
           (unsigned long)(g_sleeper_stack / 1024), []() -> long {
               long v = -1;
               if (FILE* f = fopen("/proc/sys/vm/max_map_count", "r")) {
                   if (fscanf(f, "%ld", &v) != 1) v = -1;
                   fclose(f);
               }
               return v;
           }());
    row("  coroutines created and woken", "", created);
    row("  RSS per sleeping coroutine", "bytes", rss);
    row("  page tables per sleeping coroutine (VmPTE)", "bytes", pte);
    row("  memory maps of the process while asleep", "", maps);
    row("  create, until all are asleep", "s", create);
    row("  teardown: interrupt and join all", "s", teardown);
    row("    of which interrupting them", "s", interrupt);
    row("  kernel floor: touch 1 page per stack slot", "s", floor_c);
    row("  kernel floor: unmap those slots", "s", floor_t);
    fflush(stdout);
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
        else if (!strcmp(argv[i], "--stack-kib") && i + 1 < argc && atoi(argv[i + 1]) > 0)
            g_sleeper_stack = (uint64_t)atoi(argv[++i]) * 1024;
        else {
            fprintf(stderr,
                    "usage: %s [--rounds R] [--only "
                    "yield|yield10|create|memory|million|dump|slowturn] [--stack-kib K]\n",
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
    if (want("million")) {
        // A sleeper holds a stack page and a page table; the floor's slots as many.
        uint64_t n = 1000000;
        long avail = status_kb_of("/proc/meminfo", "MemAvailable");
        if (avail > 0 && (uint64_t)avail * 1024 < n * 12 * 1024) {
            n = (uint64_t)avail / 12 / 1000 * 1000;
            printf("-- MemAvailable is %ld MiB: %lu sleepers instead of 1,000,000\n", avail / 1024,
                   (unsigned long)n);
        }
        if (n) run_sleepers(n, std::min(rounds, 3));
    }
    if (only == "dump") run_dump(1000000);  // not in the default set: a long run
    if (only == "slowturn") run_slow_turns();
    photon::fini();
    return 0;
}
