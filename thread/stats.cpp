// Every vCPU's counters (photon/thread/stats.h) and their collector for the metrics registry.
#include <photon/thread/stats.h>

#include <photon/thread/stack-allocator.h>

#include <cerrno>
#include <mutex>
#include <string>

#include "vcpu.h"

namespace photon {

namespace {

template <typename T>
uint64_t load(const T& c) {
    return __atomic_load_n(&c, __ATOMIC_RELAXED);
}

void snapshot(vcpu_t* v, void* arg) {
    auto out = static_cast<std::vector<VcpuStats>*>(arg);
    VcpuStats s;
    const vcpu_counters& c = v->ctr;
    s.id = v->id;
    s.coroutines = v->nthreads.load(std::memory_order_relaxed);
    s.created = load(c.created);
    s.switches = load(v->switch_count);
    s.lone_yields = load(v->lone_yields);
    s.engine_polls = load(c.engine_polls);
    s.cross_wakeups = load(c.cross_wakeups);
    s.migrations_in = load(c.migrations_in);
    s.given_away = load(c.given_away);
    s.timer_wakeups = load(c.timer_wakeups);
    s.run_queue = load(v->rq.n);
    s.engine = __atomic_load_n(&v->idle_wait_name, __ATOMIC_RELAXED);
    for (int i = 0; i < VCPU_IO_ENGINES; i++) {
        s.io_submitted[i] = load(c.io_submitted[i]);
        s.io_completed[i] = load(c.io_completed[i]);
    }
    c.run_queue_length.snapshot(&s.run_queue_length);
    c.run_queue_delay.snapshot(&s.run_queue_delay_us);
    c.engine_interval.snapshot(&s.engine_interval_us);
    c.idle_wait.snapshot(&s.idle_wait_hist_us);
    s.idle_waits = s.idle_wait_hist_us.count;
    s.idle_wait_us = s.idle_wait_hist_us.sum;
    out->push_back(s);
}

struct counter_def {
    const char* name;
    const char* help;
    uint64_t VcpuStats::*field;
    metrics::Exposition::Type type;
};

const counter_def kCounters[] = {
    {"photon_vcpu_coroutines", "Coroutines alive on the vCPU, its own thread included.",
     &VcpuStats::coroutines, metrics::Exposition::GAUGE},
    {"photon_vcpu_coroutines_created_total", "Coroutines created on the vCPU.", &VcpuStats::created,
     metrics::Exposition::COUNTER},
    {"photon_vcpu_switches_total", "Context switches.", &VcpuStats::switches,
     metrics::Exposition::COUNTER},
    {"photon_vcpu_lone_yields_total", "Yields with nothing else to run.", &VcpuStats::lone_yields,
     metrics::Exposition::COUNTER},
    {"photon_vcpu_engine_polls_total", "Non-blocking looks at the event engine while busy.",
     &VcpuStats::engine_polls, metrics::Exposition::COUNTER},
    {"photon_vcpu_idle_waits_total", "Blocking waits in the event engine (or a futex).",
     &VcpuStats::idle_waits, metrics::Exposition::COUNTER},
    {"photon_vcpu_cross_wakeups_total",
     "Coroutines made ready from another OS thread (wake-ups and migrations).",
     &VcpuStats::cross_wakeups, metrics::Exposition::COUNTER},
    {"photon_vcpu_migrations_in_total", "Coroutines that moved here from another vCPU.",
     &VcpuStats::migrations_in, metrics::Exposition::COUNTER},
    {"photon_vcpu_given_away_total", "Coroutines this vCPU gave to vCPUs that stole work.",
     &VcpuStats::given_away, metrics::Exposition::COUNTER},
    {"photon_vcpu_timer_wakeups_total", "Sleepers woken by their deadline.",
     &VcpuStats::timer_wakeups, metrics::Exposition::COUNTER},
    {"photon_vcpu_run_queue", "Coroutines ready to run, the running one included.",
     &VcpuStats::run_queue, metrics::Exposition::GAUGE},
};

struct histogram_def {
    const char* name;
    const char* help;
    metrics::Log2Histogram VcpuStats::*field;
};

const histogram_def kHistograms[] = {
    {"photon_vcpu_run_queue_delay_seconds",
     "From woken (or created) to running: a sample, on the coarse clock.",
     &VcpuStats::run_queue_delay_us},
    {"photon_vcpu_engine_interval_seconds",
     "Time between two returns to the event engine (how long I/O readiness may wait).",
     &VcpuStats::engine_interval_us},
    {"photon_vcpu_idle_wait_seconds", "Each blocking wait for work.",
     &VcpuStats::idle_wait_hist_us},
};

// Static (photon/thread/stats.h), for the `engine` label of VcpuStats::io_*[1] and [2].
const char* const kFileEngines[] = {"libaio", "posix_aio"};

// The I/O engines' counts, labelled by vCPU and engine; file engines a vCPU never used are left
// out.
void collect_io(metrics::Exposition& e, const std::vector<VcpuStats>& all, const char* name,
                const char* help, uint64_t const (VcpuStats::*field)[3]) {
    e.family(name, help, metrics::Exposition::COUNTER);
    for (auto& s : all) {
        std::string id = std::to_string(s.id);
        for (int i = 0; i < VCPU_IO_ENGINES; i++) {
            uint64_t v = (s.*field)[i];
            if (i > 0 && v == 0) continue;
            metrics::Label l[2] = {{"vcpu", id},
                                   {"engine", i == 0 ? s.engine : kFileEngines[i - 1]}};
            e.sample(name, v, l, 2);
        }
    }
}

// The built-in stack allocator's caches and slabs (photon/thread/stack-allocator.h).
void collect_stacks(metrics::Exposition& e) {
    GlobalStackPoolStats s = global_pooled_stack_stats();
    struct {
        const char* name;
        const char* help;
        uint64_t value;
        metrics::Exposition::Type type;
    } const defs[] = {
        {"photon_stack_cache_hits_total", "Coroutine stacks taken from a cache.", s.hits,
         metrics::Exposition::COUNTER},
        {"photon_stack_cache_misses_total", "Coroutine stacks made anew.", s.misses,
         metrics::Exposition::COUNTER},
        {"photon_stack_cache_bytes", "Bytes of idle stack kept in the caches.", s.pooled_bytes,
         metrics::Exposition::GAUGE},
        {"photon_stack_live_bytes", "Bytes of stack in use by coroutines.", s.live_bytes,
         metrics::Exposition::GAUGE},
        {"photon_stack_slab_mapped_bytes", "Address space of the stack slabs.", s.mapped_bytes,
         metrics::Exposition::GAUGE},
        {"photon_stack_slab_cold_bytes", "Free slab slots, released but still mapped.",
         s.cold_bytes, metrics::Exposition::GAUGE},
        {"photon_stack_slab_maps_total", "Stack slabs mapped.", s.os_maps,
         metrics::Exposition::COUNTER},
        {"photon_stack_slab_unmaps_total", "Stack slabs unmapped.", s.os_unmaps,
         metrics::Exposition::COUNTER},
    };
    for (auto& d : defs) {
        e.family(d.name, d.help, d.type);
        e.sample(d.name, d.value);
    }
}

void collect(void*, metrics::Exposition& e) {
    std::vector<VcpuStats> all;
    get_vcpu_stats(&all);
    e.family("photon_vcpus", "vCPUs running.", metrics::Exposition::GAUGE);
    e.sample("photon_vcpus", (uint64_t)all.size());
    for (auto& d : kCounters) {
        e.family(d.name, d.help, d.type);
        for (auto& s : all) {
            metrics::Label l{"vcpu", std::to_string(s.id)};
            e.sample(d.name, s.*d.field, &l, 1);
        }
    }
    for (auto& d : kHistograms) {
        e.family(d.name, d.help, metrics::Exposition::HISTOGRAM);
        for (auto& s : all) {
            metrics::Label l{"vcpu", std::to_string(s.id)};
            e.histogram(d.name, s.*d.field, 1e-6, &l, 1);
        }
    }
    e.family("photon_vcpu_run_queue_length", "The run queue's length, at one switch in 64.",
             metrics::Exposition::HISTOGRAM);
    for (auto& s : all) {
        metrics::Label l{"vcpu", std::to_string(s.id)};
        e.histogram("photon_vcpu_run_queue_length", s.run_queue_length, 1, &l, 1);
    }
    collect_io(e, all, "photon_vcpu_io_submissions_total",
               "Work handed to the kernel: epoll interests registered, io_uring entries, aio "
               "requests.",
               &VcpuStats::io_submitted);
    collect_io(e, all, "photon_vcpu_io_completions_total",
               "Events and completions handled (epoll events, io_uring completions, aio events).",
               &VcpuStats::io_completed);
    collect_stacks(e);
}

}  // namespace

int get_vcpu_stats(std::vector<VcpuStats>* out) {
    if (!out) return errno = EINVAL, -1;
    for_each_vcpu_locked(&snapshot, out);
    return 0;
}

void vcpu_count_io(vcpu_io_engine which, uint64_t submitted, uint64_t completed) {
    if (!metrics::kCounting) return;
    vcpu_t* v = current_vcpu();
    if (!v || which >= VCPU_IO_ENGINES) return;
    if (submitted) bump(v->ctr.io_submitted[which], submitted);
    if (completed) bump(v->ctr.io_completed[which], completed);
}

uint64_t* vcpu_io_submitted(vcpu_io_engine which) {
    vcpu_t* v = current_vcpu();
    if (!metrics::kCounting || !v || which >= VCPU_IO_ENGINES) return nullptr;
    return &v->ctr.io_submitted[which];
}

void stats_vcpu_init() {
    static std::once_flag once;
    std::call_once(once, [] { metrics::register_collector(&collect, nullptr); });
}

}  // namespace photon
