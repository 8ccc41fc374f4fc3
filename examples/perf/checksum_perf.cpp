// checksum-perf: throughput of the checksums in common/checksum/, and how
// close hardware CRC32C gets to what the core can do.
//
//   checksum-perf [--rounds R] [--ms M]
//
// For each buffer size (in cache: the same buffer is summed over and over)
// it prints GB/s and bytes per core cycle, best and median of R rounds
// (default 7), each row run for about M ms (default 60). "crc32c ideal" is
// the instruction's ceiling: independent crc32 chains with no joining, i.e.
// 8 bytes/cycle on cores that issue one crc32 per cycle. "vs ideal" is
// crc32c's throughput relative to that loop: best against best, and the
// median of the ratios taken round by round (the two run back to back); it
// needs no cycle counter at all.
//
// Cycles come from perf_event_open(PERF_COUNT_HW_CPU_CYCLES) when the kernel
// offers it; otherwise (VMs without a virtual PMU, perf_event_paranoid > 2)
// the core clock is estimated just before and after each row from a chain of
// dependent adds, which, unlike rdtsc's constant reference ticks, follows
// turbo and power states. All times are this thread's CPU time
// (CLOCK_THREAD_CPUTIME_ID), so GB/s is per CPU-second and time slices lost
// to other processes do not count; a busy machine still adds noise (cache
// and SMT sharing, frequency), so best-of-R is the figure to read.
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <photon/common/checksum/crc32c.h>
#include <photon/common/checksum/crc64ecma.h>
#include <photon/common/checksum/xxhash.h>

#include "checksum_perf.h"

namespace {

// This thread's CPU time in ns: time the scheduler gives to other processes
// on a busy machine is not counted against the loop being measured.
double cpu_ns() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

// Core cycles of this thread in user mode, or -1 when there is no PMU.
class cycle_counter {
public:
    cycle_counter() {
        perf_event_attr a;
        memset(&a, 0, sizeof(a));
        a.type = PERF_TYPE_HARDWARE;
        a.size = sizeof(a);
        a.config = PERF_COUNT_HW_CPU_CYCLES;
        a.exclude_kernel = 1;
        a.exclude_hv = 1;
        fd_ = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
        if (fd_ < 0) error_ = errno;
    }
    ~cycle_counter() {
        if (fd_ >= 0) close(fd_);
    }
    bool ok() const { return fd_ >= 0; }
    int error() const { return error_; }
    int64_t read_now() const {
        uint64_t v = 0;
        if (fd_ < 0 || ::read(fd_, &v, sizeof(v)) != sizeof(v)) return -1;
        return (int64_t)v;
    }

private:
    int fd_ = -1, error_ = 0;
};

struct sample {
    double gbps, bytes_per_cycle;
};

// Core GHz from dependent adds: n adds take n cycles.
double estimate_ghz() {
    const uint64_t n = 50'000'000;
    double t0 = cpu_ns();
    perf::dependent_adds(n);
    double ns = cpu_ns() - t0;
    return n / ns;
}

volatile uint64_t g_sink;

// Runs fn over the buffer for about ms milliseconds. Without a PMU the
// clock is estimated right before and after, so it matches the run.
sample measure(const std::function<uint64_t(const uint8_t*, size_t)>& fn, const uint8_t* buf,
               size_t size, double ms, const cycle_counter& cc, std::vector<double>& ghzs) {
    uint64_t reps = 1, acc = 0;
    for (;;) {  // find a repetition count that lasts long enough
        double t0 = cpu_ns();
        for (uint64_t i = 0; i < reps; i++) acc += fn(buf, size);
        double took = (cpu_ns() - t0) / 1e6;
        if (took > ms / 8 || reps > (1ull << 40)) {
            reps = std::max<uint64_t>(1, uint64_t(reps * ms / std::max(took, 1e-3)));
            break;
        }
        reps *= 4;
    }
    double ghz = cc.ok() ? 0 : estimate_ghz();
    int64_t c0 = cc.read_now();
    double t0 = cpu_ns();
    for (uint64_t i = 0; i < reps; i++) acc += fn(buf, size);
    double ns = cpu_ns() - t0;
    int64_t c1 = cc.read_now();
    g_sink = acc;
    if (!cc.ok()) ghz = (ghz + estimate_ghz()) / 2, ghzs.push_back(ghz);
    double bytes = double(size) * reps;
    double cycles = cc.ok() ? double(c1 - c0) : ns * ghz;
    return {bytes / ns, bytes / cycles};
}

struct row {
    std::string name;
    size_t size;
    std::function<uint64_t(const uint8_t*, size_t)> fn;
    int ideal = -1;  // index of the ideal row this one is compared with
    std::vector<sample> samples = {};
    std::vector<double> vs_ideal = {};  // this GB/s / ideal GB/s, same round
};

struct stat2 {
    double best, median;
};

stat2 stats(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return {v.back(), v[v.size() / 2]};
}

// --rounds R, --ms M; false (after the usage line) on anything else.
bool parse_args(int argc, char** argv, int* rounds, double* ms) {
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 < argc && !strcmp(argv[i], "--rounds"))
            *rounds = std::max(1, atoi(argv[i + 1]));
        else if (i + 1 < argc && !strcmp(argv[i], "--ms"))
            *ms = std::max(1.0, atof(argv[i + 1]));
        else
            return fprintf(stderr, "usage: %s [--rounds R] [--ms M]\n", argv[0]), false;
    }
    return true;
}

void print_header(const cycle_counter& cc, int rounds, double ms) {
    printf("checksum-perf: crc32c hw %s, crc64ecma hw %s; %d rounds of ~%.0f ms per row\n",
           is_crc32c_hw_available() ? "yes" : "no", is_crc64ecma_hw_available() ? "yes" : "no",
           rounds, ms);
    if (cc.ok())
        printf("cycles: perf_event_open(PERF_COUNT_HW_CPU_CYCLES), user mode\n");
    else
        printf(
            "cycles: perf_event_open unavailable (%s); core clock estimated around each row "
            "from dependent adds (thread CPU time)\n",
            strerror(cc.error()));
}

// The table's rows, in order; each crc32c row of 64 KiB and 1 MiB follows
// its "crc32c ideal" row when the ideal loop is available.
std::vector<row> make_rows(bool ideal) {
    auto crc32c_fn = [](const uint8_t* p, size_t n) -> uint64_t { return crc32c(p, n); };
    auto crc32c_sw_fn = [](const uint8_t* p, size_t n) -> uint64_t { return crc32c_sw(p, n, 0); };
    auto crc64_fn = [](const uint8_t* p, size_t n) -> uint64_t { return crc64ecma(p, n, 0); };
    auto crc64_sw_fn = [](const uint8_t* p, size_t n) -> uint64_t { return crc64ecma_sw(p, n, 0); };
    auto xxh_fn = [](const uint8_t* p, size_t n) -> uint64_t { return xxhash32_sw(p, n); };
    auto ideal_fn = [](const uint8_t* p, size_t n) -> uint64_t { return perf::crc32c_ideal(p, n); };

    std::vector<row> rows;
    auto add = [&](const char* name, size_t size, decltype(row::fn) fn, int ideal_row = -1) {
        rows.push_back({name, size, std::move(fn), ideal_row});
        return int(rows.size() - 1);
    };
    for (size_t size : {size_t(64 << 10), size_t(1 << 20)}) {
        int i = ideal ? add("crc32c ideal", size, ideal_fn) : -1;
        add("crc32c", size, crc32c_fn, i);
    }
    for (size_t size : {size_t(256), size_t(4 << 10)}) add("crc32c", size, crc32c_fn);
    add("crc32c_sw", 64 << 10, crc32c_sw_fn);
    for (size_t size : {size_t(256), size_t(4 << 10), size_t(64 << 10), size_t(1 << 20)})
        add("crc64ecma", size, crc64_fn);
    add("crc64ecma_sw", 64 << 10, crc64_sw_fn);
    add("xxhash32_sw", 64 << 10, xxh_fn);
    return rows;
}

// Every row once per round, so that a row and its ideal run back to back;
// the clock estimates (without a PMU) go to ghzs.
void run_rounds(std::vector<row>& rows, const uint8_t* buf, int rounds, double ms,
                const cycle_counter& cc, std::vector<double>& ghzs) {
    for (int r = 0; r < rounds; r++) {
        for (auto& w : rows) {
            w.samples.push_back(measure(w.fn, buf, w.size, ms, cc, ghzs));
            if (w.ideal >= 0)
                w.vs_ideal.push_back(w.samples.back().gbps / rows[w.ideal].samples.back().gbps);
        }
    }
}

void print_table(const std::vector<row>& rows, const cycle_counter& cc, bool ideal,
                 const std::vector<double>& ghzs) {
    if (!cc.ok())
        printf("core clock estimate: median %.2f GHz, range %.2f-%.2f\n", stats(ghzs).median,
               *std::min_element(ghzs.begin(), ghzs.end()), stats(ghzs).best);
    if (ideal)
        printf("crc32c ideal: %d independent crc32 chains, no joining (the core's ceiling)\n",
               perf::kIdealChains);
    printf("%-18s %9s  %17s  %17s  %15s\n", "row", "bytes", "GB/s best/median", "B/cycle best/med",
           "vs ideal b/m");
    auto gbps = [](const row& w) {
        std::vector<double> g;
        for (auto& s : w.samples) g.push_back(s.gbps);
        return stats(g);
    };
    for (auto& w : rows) {
        std::vector<double> b;
        for (auto& s : w.samples) b.push_back(s.bytes_per_cycle);
        auto gs = gbps(w), bs = stats(b);
        printf("%-18s %9zu  %8.2f %8.2f  %8.2f %8.2f", w.name.c_str(), w.size, gs.best, gs.median,
               bs.best, bs.median);
        if (w.ideal >= 0)
            printf("  %7.3f %7.3f", gs.best / gbps(rows[w.ideal]).best, stats(w.vs_ideal).median);
        printf("\n");
    }
}

}  // namespace

int main(int argc, char** argv) {
    int rounds = 7;
    double ms = 60;
    if (!parse_args(argc, argv, &rounds, &ms)) return 2;

    const size_t max_size = 1 << 20;
    std::vector<uint8_t> storage(max_size + 64);
    uint8_t* buf = storage.data() + (64 - (uintptr_t)storage.data() % 64);  // cache-line aligned
    std::mt19937_64 rng(42);
    for (size_t i = 0; i < max_size; i++) buf[i] = (uint8_t)rng();

    cycle_counter cc;
    bool ideal = perf::crc32c_ideal_available();
    print_header(cc, rounds, ms);
    std::vector<row> rows = make_rows(ideal);
    std::vector<double> ghzs;
    run_rounds(rows, buf, rounds, ms, cc, ghzs);
    print_table(rows, cc, ideal, ghzs);
    return 0;
}
