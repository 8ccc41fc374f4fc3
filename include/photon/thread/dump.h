// Coroutine dumps: what every coroutine of every vCPU is doing, from inside the running process.
// For each coroutine: its vCPU, state (running, ready, sleeping and for how long, with its
// deadline), what it waits on (a lock or other wait queue, an fd and the events, an io_uring
// request), its entry function, its stack use, and the backtrace of a parked one, walked from
// its saved context through frame pointers (photon builds with them; code built without them
// ends the walk early). Names come from the dynamic symbol table: link the program with
// -rdynamic (CMake ENABLE_EXPORTS) for its own functions, or feed the addresses to addr2line.
//
// Each vCPU copies its own coroutines into the request between its coroutines' turns, at most
// `slice_us` at a time, so a dump never holds a vCPU for long; one that does not get to it
// (a coroutine that does not yield) is reported as busy after `timeout_us`. Not for signal
// handlers: thread_dump_on_signal() arranges that.
#pragma once

#include <cstdint>
#include <string>

namespace photon {

struct ThreadDumpOptions {
    bool json = false;              // else text, one line per coroutine, frames indented
    int max_frames = 16;            // per parked coroutine; 0: no backtraces
    uint64_t slice_us = 2000;       // the longest a vCPU spends copying before it runs others
    uint64_t timeout_us = 1000000;  // for all the vCPUs to finish their part
};

// Appends the dump to *out. Any OS thread, a vCPU's or not. 0, or -1 with errno: EBUSY
// (another dump is running), EINVAL (null out). vCPUs that did not answer in time are
// named in the dump, which is still returned (0).
int thread_dump(std::string* out, const ThreadDumpOptions& opt = ThreadDumpOptions());

// The dump, written whole to fd (retrying short writes). 0 or -1 with errno.
int thread_dump_to_fd(int fd, const ThreadDumpOptions& opt = ThreadDumpOptions());

// From now on, signal signo writes a text dump to fd (2: stderr). The handler only wakes a
// helper OS thread (started here, not a vCPU), which makes the dump. Once per process:
// -1 EALREADY after that; -1 EINVAL for a signal that cannot be caught.
int thread_dump_on_signal(int signo, int fd = 2);

}  // namespace photon
