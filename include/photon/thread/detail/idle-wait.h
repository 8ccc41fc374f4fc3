// The scheduler's view of an event engine: what a vCPU with nothing to run
// waits in, and how another vCPU wakes it. The event engines of io/
// (MasterEventEngine) implement it, so thread/ needs nothing of io/.
// Internal: users meet it only as MasterEventEngine's base.
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace photon {

struct vcpu_base;

class idle_wait_engine {
public:
    virtual ~idle_wait_engine() = default;
    // Waits up to timeout us (0: a poll; -1: no limit) for events, wakes the
    // coroutines they concern; returns how many, or -1 with errno.
    virtual ssize_t wait_and_fire_events(uint64_t timeout = -1) = 0;
    // Makes a blocked wait_and_fire_events() return soon. Any OS thread.
    virtual int cancel_wait() = 0;
    // A static name for the metrics ("epoll", "io_uring").
    virtual const char* idle_wait_name() const { return "engine"; }
};

// What the calling vCPU's I/O engines hand the kernel and get back, for its metrics
// (photon/thread/stats.h): `which` is the master event engine or a file I/O engine. Does
// nothing off a vCPU.
enum vcpu_io_engine { VCPU_IO_MASTER, VCPU_IO_LIBAIO, VCPU_IO_POSIX_AIO, VCPU_IO_ENGINES };
void vcpu_count_io(vcpu_io_engine which, uint64_t submitted, uint64_t completed);
// The calling vCPU's count of submissions to `which`, for an engine that counts on its hot path
// (vcpu_count_add) and lives no longer than the vCPU; nullptr off a vCPU or when not counting.
uint64_t* vcpu_io_submitted(vcpu_io_engine which);
inline void vcpu_count_add(uint64_t* c, uint64_t n) {
    if (c) __atomic_store_n(c, *c + n, __ATOMIC_RELAXED);  // the vCPU is its only writer
}

// What vCPU v (nullptr: none) waits in when idle; nullptr: a futex. Set by
// the owner of v's master event engine with it, and cleared first.
void set_vcpu_idle_wait(vcpu_base* v, idle_wait_engine* w);

// Whether a coroutine other than the caller is ready to run on its vCPU, so
// that the vCPU will not idle as soon as the caller parks.
bool vcpu_has_other_ready();

}  // namespace photon
