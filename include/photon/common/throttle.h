// photon::throttle: a token-bucket rate limiter for coroutines. The bucket
// holds up to `limit` units and refills at `limit` units per `time_window`
// microseconds, in `slice` steps per window; it starts full. consume()
// blocks the calling coroutine until the units are there; try_consume()
// never waits; restore() gives back units taken for work that did not happen.
//
// Priorities: High takes units as soon as there are any; Medium and Low wait
// (a slice at a time) until the bucket is at least 30% / 60% full, so that
// they leave bursts to High, but go ahead anyway once they have waited more
// than 10% / 20% of a window's slices.
//
// Flows of one priority (each consuming coroutine is a flow) share the limit
// evenly: while others of its priority are active (called within the last
// window), a flow that has lately taken more than one of them takes units only
// beyond what those ask for at a time; units nobody else asks for still go to
// it.
//
// Not thread-safe: use one throttle from the coroutines of one vCPU.
//
// Differences from PhotonLibOS: doc/compat.md#commonthrottleh
// Floor: runtime (tools/floors.txt), above its folder's: it needs vCPUs and engines.
#pragma once

#include <cstdint>

#include <photon/common/utility.h>
#include <photon/thread/thread.h>

namespace photon {

class throttle {
public:
    // limit: units per time_window (us); -1ULL means no limit, 0 that
    // consume() waits until interrupted.
    explicit throttle(uint64_t limit, uint64_t time_window = 1000ULL * 1000, uint64_t slice = 100);

    enum class Priority {
        High,
        Medium,
        Low,
        NumPriorities,
    };

    // Sets a new limit per time window; the refill rate follows.
    void update(uint64_t limit);

    // Takes `amount` units, waiting (the calling coroutine sleeps) as long as
    // needed. 0, or -1 with errno if the wait was interrupted (EINTR, or the
    // interrupter's errno; ENOSYS outside a vCPU) or prio is not one of
    // High, Medium, Low (EINVAL).
    int consume(uint64_t amount, Priority prio = Priority::High);

    // Takes `amount` units if the bucket holds them: 0, else -1 ETIMEDOUT.
    int try_consume(uint64_t amount);

    // Puts `amount` units back, up to a full bucket.
    void restore(uint64_t amount);

protected:
    // Adds the units earned since the last refill, in whole slices.
    void try_signal();

    static uint64_t get_fulfill_percent(Priority prio);
    static uint64_t get_starving_percent(Priority prio);

    photon::semaphore sem;
    uint64_t last_retrieve = 0;  // the clock reading the bucket is filled up to
    uint64_t credit_ = 0;        // limit * us not yet a whole unit; < m_time_window
    uint64_t m_limit = -1ULL;
    uint64_t m_time_window;
    uint64_t m_time_window_per_slice;
    uint64_t m_slice_num;
    uint64_t m_starving_slice_num[int(Priority::NumPriorities)] = {};

private:
    // The recent consumers, for the fair share among flows of one priority.
    struct flow_record {
        const void* who;     // the coroutine; nullptr: a free record
        double taken;        // units taken, decaying by e every time window
        uint64_t last_seen;  // its last consume() call, and when `taken` decayed
        uint64_t part;       // what it asks for at a time
        int prio;
    };
    static constexpr int kFlowRecords = 8;
    flow_record flows_[kFlowRecords] = {};

    flow_record& flow_of(const void* who, int prio, uint64_t part);
    // Whether `f` may take `part` units now, leaving what other flows need.
    bool fair_to_take(const flow_record& f, uint64_t part);
};

}  // namespace photon
