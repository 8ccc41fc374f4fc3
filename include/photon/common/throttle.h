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
// it (PhotonLibOS keeps two flows of one priority at 0.4-0.6 each).
//
// Not thread-safe: use one throttle from the coroutines of one vCPU.
//
// Differs from PhotonLibOS where it was a trap:
// - consume() of more than `limit` units takes them a bucketful at a time
//   (Photon asserted, and hung without asserts); if interrupted midway, the
//   part taken stays taken;
// - the refill rate is exact: partial slices and the rounding of
//   limit / slice carry over (Photon dropped both, and rounded the limit up
//   to a multiple of `slice`, e.g. 150/s became 200/s with 100 slices);
// - the bucket is filled from elapsed time without 64-bit overflow, so the
//   unlimited throttle (-1ULL) works for Medium and Low priority too;
// - the first refill counts from construction (Photon's from time 0 gave a
//   second bucketful at once if `now` was stale then);
// - update() to a lower limit trims the bucket to it (from unlimited,
//   Photon's bucket stayed practically infinite);
// - time_window 0 is taken as 1 us, slice 0 as 1, and more slices than
//   microseconds in the window as one slice per microsecond (Photon divided
//   by zero).
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
