// Process-wide performance counters written to ./perf.log, as PhotonLibOS
// declares them (global namespace):
//   REGISTER_PERF(name, TOTAL | ACCUMULATE | AVERAGE [, interval_seconds])
//   REPORT_PERF(name, value)
// Every `interval` seconds (default DEFAULT_INTERVAL) a background OS thread
// appends "YYYY-MM-DD HH:MM:SS name : value" per counter: TOTAL the running
// sum, ACCUMULATE the sum since the last line, AVERAGE the mean of the
// values reported since the last line. Counting and registration happen only
// when the user's code is compiled with -DPERF; otherwise both macros cost
// nothing. add() is lock-free and callable from any thread; never yields.
//
// Differences from PhotonLibOS: doc/compat.md#commonperf_counterh
#pragma once

#include <atomic>
#include <cinttypes>
#include <cstdint>

struct __perf_counter;

extern "C" {
// Registers pc (once; nullptr is ignored) and starts the reporter thread on
// the first call; logs an error if ./perf.log cannot be opened.
void init_perf_counter(__perf_counter* pc);
}

enum PerfType {
    TOTAL = 0,
    ACCUMULATE,
    AVERAGE,
};

#define DEFAULT_INTERVAL 5

struct __perf_counter {
    const char* _name;
    std::atomic<uint64_t> _value;  // sum of the reported values
    const PerfType _type;
    const int _name_length;
    const int _interval;  // seconds between lines
    __perf_counter* _next;
    uint64_t _last;                // ms timestamp of the last line
    std::atomic<uint64_t> count_;  // AVERAGE: values reported

    template <int N>
    constexpr __perf_counter(const char (&name)[N], PerfType type, int interval = DEFAULT_INTERVAL)
        : _name(name),
          _value(0),
          _type(type),
          _name_length(N - 1),
          _interval(interval),
          _next(nullptr),
          _last(0),
          count_(0) {
        static_assert(sizeof(_type) == 4, "PerfType must stay 4 bytes");
    }

    void add(uint64_t dx) {
#ifdef PERF
        _value.fetch_add(dx, std::memory_order_relaxed);
        if (_type == AVERAGE) count_.fetch_add(1, std::memory_order_relaxed);
#else
        (void)dx;
#endif
    }
};

// Registers a counter during static (or first-use) initialisation.
struct __PCR {
    __PCR(__perf_counter* pc) {
#ifdef PERF
        init_perf_counter(pc);
#else
        (void)pc;
#endif
    }
};

#define REGISTER_PERF(NAME, ...)                             \
    static __perf_counter __g_PC_##NAME(#NAME, __VA_ARGS__); \
    static __PCR __pcr##NAME(&__g_PC_##NAME);

#define REPORT_PERF(NAME, VALUE) __g_PC_##NAME.add(VALUE);
