// Private: the I/O parts that photon::init sets up on request. A part
// outside io/ (libcurl, in net/) registers itself from a static initializer
// of its own source, so io/ names nothing of net/; a program that does not
// link the part does not get it, and needs none of its libraries.
#pragma once

#include <cstdint>

namespace photon {

// init() runs for photon::init(event_engine, io_engine) when io_engine has
// io_bit and the vCPU gets an event engine; 0, or -1 with errno (init fails).
// Returns true (for a static initializer). At most 8 parts.
bool register_io_part(uint64_t io_bit, int (*init)());

// In a forked child, on the vCPU that forked: if it runs the signal coroutine,
// a new signalfd and coroutine take over (the old ones wait on the parent's
// event engine, which the child no longer uses). signal.cpp.
void sync_signal_after_fork();

}  // namespace photon
