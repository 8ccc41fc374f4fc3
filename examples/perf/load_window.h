// What a load client measures over its window, shared by rpc-perf and the
// gRPC peer's client (tools/grpc-echo): a latency histogram, CPU time of this
// process and of the server (/proc/PID/stat, all threads), sampled at the
// edges of the window so that warm-up and teardown cost nothing.
//
// Plain C++ (no photon): the gRPC client includes it too.
#pragma once

#include <sys/resource.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace perf {

// Log-linear buckets: exact below 32 ns, then 16 per power of two (about 3%
// apart). One writer; merge the writers' copies after they stop.
class latency_histogram {
public:
    void add(uint64_t ns) { counts_[bucket(ns)]++; }
    void merge(const latency_histogram& o) {
        for (size_t i = 0; i < counts_.size(); i++) counts_[i] += o.counts_[i];
    }
    uint64_t count() const {
        uint64_t n = 0;
        for (auto c : counts_) n += c;
        return n;
    }
    // The value (ns) at quantile q in [0, 1]: the middle of the bucket that
    // holds it; 0 when empty.
    uint64_t quantile(double q) const {
        uint64_t n = count();
        if (n == 0) return 0;
        uint64_t rank = (uint64_t)(q * (n - 1)), seen = 0;
        for (size_t i = 0; i < counts_.size(); i++) {
            seen += counts_[i];
            if (seen > rank) return (lower(i) + lower(i + 1)) / 2;
        }
        return lower(counts_.size());
    }

private:
    static constexpr int kExact = 32, kSub = 16;
    static size_t bucket(uint64_t v) {
        if (v < kExact) return v;
        int shift = 63 - __builtin_clzll(v) - 4;  // keep the top 5 bits: 16..31
        return kExact + (shift - 1) * kSub + ((v >> shift) - kSub);
    }
    static uint64_t lower(size_t b) {
        if (b < (size_t)kExact) return b;
        int shift = (int)(b - kExact) / kSub + 1;
        return (uint64_t)((b - kExact) % kSub + kSub) << shift;
    }
    std::array<uint64_t, kExact + 59 * kSub> counts_{};
};

// utime + stime of process pid (every thread), in µs; -1 if unreadable.
inline double process_cpu_us(long pid) {
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    FILE* f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    // comm may hold spaces and parentheses: the fields start after the last ')'.
    const char* p = strrchr(buf, ')');
    unsigned long long ut, st;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return -1;
    return (ut + st) * 1e6 / sysconf(_SC_CLK_TCK);
}

// This process's user + system CPU time, in µs (getrusage is finer than /proc).
inline double self_cpu_us() {
    rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 + ru.ru_utime.tv_usec +
           ru.ru_stime.tv_usec;
}

inline uint64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// One edge of the window.
struct window_edge {
    uint64_t t_ns = 0, calls = 0;
    double self_cpu = 0, server_cpu = -1;

    static window_edge take(uint64_t calls, long server_pid) {
        window_edge e;
        e.t_ns = now_ns();
        e.calls = calls;
        e.self_cpu = self_cpu_us();
        if (server_pid > 0) e.server_cpu = process_cpu_us(server_pid);
        return e;
    }
};

// The measured part of a summary line: " seconds=.. calls=.. qps=.. ... ".
// Server fields only when both edges could read the server's CPU.
inline std::string window_fields(const window_edge& a, const window_edge& b, uint64_t payload,
                                 const latency_histogram& lat) {
    double secs = (b.t_ns - a.t_ns) / 1e9;
    uint64_t calls = b.calls - a.calls;
    double qps = secs > 0 ? calls / secs : 0;
    char out[512];
    int n = snprintf(out, sizeof(out),
                     " seconds=%.2f calls=%llu qps=%.0f MiB/s=%.2f lat_p50_us=%.1f "
                     "lat_p99_us=%.1f lat_p999_us=%.1f client_cpu=%.0f%%",
                     secs, (unsigned long long)calls, qps, qps * payload / (1 << 20),
                     lat.quantile(0.5) / 1e3, lat.quantile(0.99) / 1e3, lat.quantile(0.999) / 1e3,
                     secs > 0 ? (b.self_cpu - a.self_cpu) / secs / 1e4 : 0);
    if (a.server_cpu >= 0 && b.server_cpu >= 0 && calls && n > 0 && n < (int)sizeof(out))
        snprintf(out + n, sizeof(out) - n, " server_cpu=%.0f%% server_cpu_us_per_call=%.3f",
                 (b.server_cpu - a.server_cpu) / secs / 1e4, (b.server_cpu - a.server_cpu) / calls);
    return out;
}

}  // namespace perf
