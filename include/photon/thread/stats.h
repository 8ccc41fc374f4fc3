// Extension: counters and histograms of every vCPU, read live from any thread, and exposed in
// the metrics registry (<photon/common/metric-meter/prometheus.h>) as photon_vcpu_* and
// photon_stack_cache_*. Each vCPU writes its own with plain stores (no locked instruction on
// its paths). The run-queue delay is that of coroutines made ready (woken or created), timed
// on photon's coarse clock (`photon::now`) where it is fresh: at one switch in 64 and after
// each idle wait, so it is a sample of the woken runs. A coroutine that only yields is not
// timed.
#pragma once

#include <cstdint>
#include <vector>

#include <photon/common/metric-meter/prometheus.h>

namespace photon {

struct VcpuStats {
    int id = 0;                  // vCPUs count from 0 in the order they started
    uint64_t coroutines = 0;     // alive now, the vCPU's own thread included
    uint64_t created = 0;        // coroutines created on it
    uint64_t switches = 0;       // context switches
    uint64_t lone_yields = 0;    // thread_yield()s with nothing else to run
    uint64_t engine_polls = 0;   // non-blocking looks at the event engine while busy
    uint64_t idle_waits = 0;     // blocking waits (the event engine, or a futex without one)
    uint64_t idle_wait_us = 0;   // their total time
    uint64_t cross_wakeups = 0;  // coroutines woken from another OS thread
    uint64_t migrations_in = 0;  // coroutines that moved here from another vCPU
    uint64_t given_away = 0;     // coroutines it gave to vCPUs that stole work
    uint64_t timer_wakeups = 0;  // sleepers woken by their deadline
    uint64_t run_queue = 0;      // coroutines ready now, the running one included
    // What the vCPU's I/O engines handed the kernel and got back: [0] its master event engine
    // (named by `engine`: interests registered with epoll, or io_uring submissions; events or
    // completions handled), [1] libaio, [2] posix_aio (requests and completions).
    const char* engine = "none";
    uint64_t io_submitted[3] = {}, io_completed[3] = {};
    // In microseconds: made ready -> running (sampled), the time between two returns to the event
    // engine (how long I/O readiness may wait for this vCPU), and each idle wait.
    metrics::Log2Histogram run_queue_delay_us, engine_interval_us, idle_wait_hist_us;
    // The run queue's length at one switch in 64.
    metrics::Log2Histogram run_queue_length;
};

// Appends one VcpuStats per running vCPU to *out. 0, or -1 with errno EINVAL (null out).
int get_vcpu_stats(std::vector<VcpuStats>* out);

}  // namespace photon
