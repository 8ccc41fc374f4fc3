// Extension: one registry of metrics for the process, rendered in Prometheus's text
// exposition format (version 0.0.4). Parts of the library and of the program register a
// collector, a function that writes its current values when the registry is rendered (a scrape),
// so nothing is kept twice and nothing runs between scrapes. photon's vCPUs register theirs
// (photon_vcpu_*, <photon/thread/stats.h>) when the first one starts; HTTP serves the registry
// through net::http::new_metrics_handler() (<photon/net/http/server.h>).
//
// Collectors run on the thread that renders, one at a time (a lock is held), so they must not
// wait for the renderer; each reads what it exposes with atomic loads or its own lock.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace photon {
namespace metrics {

// A histogram over powers of two: bucket i counts values v with 2^(i-1) < v <= 2^i (bucket 0:
// v <= 1), the last one everything larger. put() costs a count-leading-zeros and two adds.
// Plain counters: one writer, or a lock. Readers on other threads use snapshot().
struct Log2Histogram {
    enum { kBuckets = 28 };  // le 1, 2, 4, ... 2^26, +Inf (an enum: no definition needed in C++14)
    uint64_t buckets[kBuckets] = {};
    uint64_t count = 0;
    uint64_t sum = 0;

    static int bucket_of(uint64_t v) {
        if (v <= 1) return 0;
        int b = 64 - __builtin_clzll(v - 1);  // the smallest i with v <= 2^i
        return b < kBuckets - 1 ? b : kBuckets - 1;
    }
    // From the one writer: stored atomically (relaxed), so that snapshot() may run elsewhere.
    void put(uint64_t v) {
        int b = bucket_of(v);
        __atomic_store_n(&buckets[b], buckets[b] + 1, __ATOMIC_RELAXED);
        __atomic_store_n(&count, count + 1, __ATOMIC_RELAXED);
        __atomic_store_n(&sum, sum + v, __ATOMIC_RELAXED);
    }
    // From any number of writers at once (three locked adds): for what several vCPUs share.
    void put_shared(uint64_t v) {
        __atomic_fetch_add(&buckets[bucket_of(v)], 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&count, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&sum, v, __ATOMIC_RELAXED);
    }
    // A copy read atomically, field by field (a put in between may be half in it).
    void snapshot(Log2Histogram* out) const {
        for (int i = 0; i < kBuckets; i++)
            out->buckets[i] = __atomic_load_n(&buckets[i], __ATOMIC_RELAXED);
        out->count = __atomic_load_n(&count, __ATOMIC_RELAXED);
        out->sum = __atomic_load_n(&sum, __ATOMIC_RELAXED);
    }
    // Adds another histogram in (to sum several writers' at a scrape).
    void merge(const Log2Histogram& h) {
        for (int i = 0; i < kBuckets; i++) buckets[i] += h.buckets[i];
        count += h.count;
        sum += h.sum;
    }
};

// One label: a name ([a-zA-Z_][a-zA-Z0-9_]*) and any value (escaped when written).
struct Label {
    const char* name;
    std::string value;
};

// What a collector writes into. A family (name, help, type) is announced once, then its
// samples follow, each with up to 4 labels. Names that are not valid Prometheus metric or
// label names are refused: the sample is dropped and errors() counts it.
class Exposition {
public:
    enum Type { COUNTER, GAUGE, HISTOGRAM };

    explicit Exposition(std::string* out) : out_(out) {}

    // # HELP and # TYPE for `name`, once per render even if several collectors announce it.
    void family(const char* name, const char* help, Type type);
    void sample(const char* name, double value, const Label* labels = nullptr, int nlabels = 0);
    void sample(const char* name, uint64_t value, const Label* labels = nullptr, int nlabels = 0);
    void sample(const char* name, int64_t value, const Label* labels = nullptr, int nlabels = 0);
    // name_bucket{le=...} (cumulative), name_sum and name_count, bounds and sum multiplied by
    // `scale` (1e-6 turns microseconds into the seconds Prometheus expects).
    void histogram(const char* name, const Log2Histogram& h, double scale = 1,
                   const Label* labels = nullptr, int nlabels = 0);

    // The shapes most collectors write: family() and its samples in one call.
    // One series.
    void metric(const char* name, const char* help, Type type, uint64_t value,
                const Label* labels = nullptr, int nlabels = 0);
    // One series per kind: `labels` and {kind_label, kinds[i]}, with values[i] (n of each).
    void metric_by(const char* name, const char* help, Type type, const char* kind_label,
                   const char* const* kinds, const uint64_t* values, int n,
                   const Label* labels = nullptr, int nlabels = 0);
    // A snapshot() of a histogram being written, as histogram() writes it.
    void histogram_metric(const char* name, const char* help, const Log2Histogram& live,
                          double scale = 1, const Label* labels = nullptr, int nlabels = 0);

    int errors() const { return errors_; }

private:
    bool begin(const char* name, const char* suffix, const Label* labels, int nlabels,
               const Label* extra);
    std::string* out_;
    std::string families_;  // "\n"-separated names announced in this render
    int errors_ = 0;
};

// Reads n counters (atomics, or anything with load()) into plain values, for
// Exposition::metric_by().
template <typename Atomic, size_t n>
void load_all(const Atomic (&counters)[n], uint64_t (&out)[n]) {
    for (size_t i = 0; i < n; i++) out[i] = counters[i].load(std::memory_order_relaxed);
}

// A collector: called with its arg at every render.
typedef void (*Collector)(void* arg, Exposition& out);

// Adds a collector; returns its id (> 0), or -1 with errno EINVAL (null fn). The same fn and
// arg registered twice is registered once (the first id is returned).
int register_collector(Collector fn, void* arg);
// Removes it; waits for a render that is calling it to finish. 0, or -1 with errno ENOENT.
int unregister_collector(int id);

// Exposes one value, read by read(arg) at every render, as a sample of `name` (a COUNTER or a
// GAUGE) with up to 4 labels, until unregister_collector(id). Returns the id (> 0), or -1 with
// errno EINVAL (an invalid name or label name, a null read, a HISTOGRAM, more than 4 labels).
typedef int64_t (*ValueReader)(void* arg);
int register_value(const char* name, const char* help, Exposition::Type type, ValueReader read,
                   void* arg, const Label* labels = nullptr, int nlabels = 0);

// The bridge from PhotonLibOS's metric-meter (<photon/common/metric-meter/metrics.h>): exposes a
// Metric:: counter (ValueCounter, AddCounter, QPSCounter, AverageLatencyCounter, ...), or
// anything with an `int64_t val()`, as register_value does; *c must outlive the registration.
// val() runs on the rendering thread, and Metric:: counters take no lock: expose a counter that
// another OS thread updates only if its val() is a plain read (ValueCounter, AddCounter,
// MaxCounter) or the /metrics handler runs on the vCPU that updates it (with one vCPU, always).
template <typename Counter>
int expose_counter(const char* name, const char* help, Exposition::Type type, Counter* c,
                   const Label* labels = nullptr, int nlabels = 0) {
    return register_value(
        name, help, type, [](void* p) -> int64_t { return static_cast<Counter*>(p)->val(); }, c,
        labels, nlabels);
}

// Appends every collector's samples to *out, in registration order. 0, or -1 with errno
// EINVAL (null out). Any thread, a vCPU's or not; never yields.
int render_prometheus(std::string* out);

// True if `name` is a valid Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*).
bool valid_metric_name(const char* name);

}  // namespace metrics
}  // namespace photon
