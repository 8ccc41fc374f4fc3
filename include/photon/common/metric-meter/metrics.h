// Metric::*: small in-process counters, as PhotonLibOS declares them: plain
// values (ValueCounter, AddCounter, MaxCounter), windowed ones on photon's
// coarse clock `photon::now` (AverageCounter, QPSCounter, IntervalMaxCounter)
// and scoped latency meters (LatencyMetric, SCOPE_LATENCY).
//
// Windows slide approximately: once a window of `interval` microseconds has
// passed, the totals shrink in proportion to the time beyond it, and after two
// idle windows they restart from zero. Counters are plain fields with no
// locking: use each one from one vCPU (or guard it). Never yields. Latencies
// are differences of `photon::now`, which the scheduler refreshes when
// coroutines switch, so a section that never yields may measure 0.
//
// Differences from PhotonLibOS: doc/compat.md#commonmetric-metermetricsh
// Floor: thread (tools/floors.txt), above its folder's: it is built on photon's coroutines.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <type_traits>
#include <unistd.h>

#include <photon/common/utility.h>
#include <photon/thread/thread.h>

namespace Metric {

namespace detail {

// `now` is written by every vCPU; read it as they write it.
inline uint64_t clock() {
    return __atomic_load_n(const_cast<const uint64_t*>(&photon::now), __ATOMIC_RELAXED);
}

// v less the share `over / interval` of it (over < interval), in 128 bits.
inline int64_t decay(int64_t v, uint64_t over, uint64_t interval) {
    return v - (int64_t)((__int128)v * over / interval);
}

// Microseconds from `since` to `now` (0 if the clock reads earlier).
inline uint64_t elapsed(uint64_t since, uint64_t now) { return now > since ? now - since : 0; }

}  // namespace detail

class ValueCounter {
public:
    int64_t counter = 0;

    void set(int64_t x) { counter = x; }
    void reset() { counter = 0; }
    int64_t val() { return counter; }
};

class AddCounter {
public:
    int64_t counter = 0;

    void inc() { counter++; }
    void dec() { counter--; }
    void add(int64_t x) { counter += x; }
    void sub(int64_t x) { counter -= x; }
    void reset() { counter = 0; }
    int64_t val() { return counter; }
};

// Mean of the values put during about the last `interval` us (default 60 s).
class AverageCounter {
public:
    int64_t sum = 0;
    int64_t cnt = 0;
    uint64_t time = 0;  // start of the current window
    uint64_t m_interval = 60ULL * 1000 * 1000;

    void normalize() {
        auto now = detail::clock();
        auto e = detail::elapsed(time, now);
        if (e <= m_interval) return;
        auto over = e - m_interval;
        if (over > m_interval) return reset();
        sum = detail::decay(sum, over, m_interval);
        cnt = detail::decay(cnt, over, m_interval);
        time = now - m_interval;
    }
    void put(int64_t val) {
        normalize();
        sum += val;
        cnt++;
    }
    void reset() {
        sum = 0;
        cnt = 0;
        time = detail::clock();
    }
    int64_t interval() { return m_interval; }
    int64_t interval(int64_t x) { return m_interval = x; }
    // The mean, 0 when nothing was put in the window.
    int64_t val() {
        normalize();
        return cnt ? sum / cnt : 0;
    }
};

// Sum of the amounts put during about the last `interval` us (default 1 s).
class QPSCounter {
public:
    int64_t counter = 0;
    uint64_t time = detail::clock();
    uint64_t m_interval = 1ULL * 1000 * 1000;
    static constexpr uint64_t SEC = 1ULL * 1000 * 1000;

    void normalize() {
        auto now = detail::clock();
        auto e = detail::elapsed(time, now);
        if (e <= m_interval) return;
        auto over = e - m_interval;
        if (over >= m_interval) return reset();
        counter = detail::decay(counter, over, m_interval);
        time = now - m_interval;
    }
    void put(int64_t val = 1) {
        normalize();
        counter += val;
    }
    void reset() {
        counter = 0;
        time = detail::clock();
    }
    uint64_t interval() { return m_interval; }
    uint64_t interval(uint64_t x) { return m_interval = x; }
    int64_t val() {
        normalize();
        return counter;
    }
};

// Largest value put since the last reset() (0 before any).
class MaxCounter {
public:
    int64_t maxv = 0;

    void put(int64_t val) {
        if (val > maxv) maxv = val;
    }
    void reset() { maxv = 0; }
    int64_t val() { return maxv; }
};

// Largest value put in the current or the previous window of `interval` us
// (default 5 s); 0 once two windows pass without a put.
class IntervalMaxCounter {
public:
    int64_t maxv = 0, last_max = 0;
    uint64_t time = 0;  // start of the current window
    uint64_t m_interval = 5ULL * 1000 * 1000;

    void normalize() {
        auto now = detail::clock();
        auto e = detail::elapsed(time, now);
        if (e <= m_interval) return;
        // Two windows without a put: the previous window's max is stale too.
        if (e - m_interval >= m_interval) return reset();
        last_max = maxv;
        maxv = 0;
        time = now;
    }

    void put(int64_t val) {
        normalize();
        maxv = val > maxv ? val : maxv;
    }

    void reset() {
        maxv = 0;
        last_max = 0;
        time = detail::clock();
    }

    uint64_t interval() { return m_interval; }

    uint64_t interval(uint64_t x) { return m_interval = x; }

    int64_t val() {
        normalize();
        return maxv > last_max ? maxv : last_max;
    }
};

// Puts the time (us of photon::now) from its construction to its destruction
// into `counter`; neither copyable nor movable.
template <typename LatencyCounter>
class LatencyMetric {
public:
    LatencyCounter& counter;
    uint64_t start;

    explicit LatencyMetric(LatencyCounter& counter) : counter(counter), start(detail::clock()) {}

    LatencyMetric(LatencyMetric&&) = delete;
    LatencyMetric(const LatencyMetric&) = delete;
    LatencyMetric& operator=(LatencyMetric&&) = delete;
    LatencyMetric& operator=(const LatencyMetric&) = delete;

    ~LatencyMetric() { counter.put(detail::elapsed(start, detail::clock())); }
};

class AverageLatencyCounter : public AverageCounter {
public:
    using MetricType = LatencyMetric<AverageLatencyCounter>;
};

class MaxLatencyCounter : public IntervalMaxCounter {
public:
    using MetricType = LatencyMetric<IntervalMaxCounter>;
};

// Measures the rest of the enclosing scope into x, a latency counter.
#define SCOPE_LATENCY(x) \
    std::decay<decltype(x)>::type::MetricType _CONCAT(__audit_start_time__, __LINE__)(x);

}  // namespace Metric
