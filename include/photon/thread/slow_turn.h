// Slow turns: a coroutine that keeps its vCPU longer than a threshold without a switch (a busy
// loop, a long computation, a blocking system call) holds up every other coroutine there. A
// detector thread (one per process, running while vCPUs do) notices such a turn and reports it
// once: the vCPU, how long so far, and where it is:
// - running: a signal to the vCPU's OS thread records the coroutine, its entry and the
//   backtrace where it runs (frame pointers), which the detector then names;
// - blocked in a system call: the call's number (/proc), and no signal, so that no call of
//   the program is cut short with EINTR.
// Reports go to the log (WARN) or to `report`, at most max_reports_per_sec a second.
// On by default at 10 ms (off in TSan builds, which defer signals); PHOTON_SLOW_TURN_US in the
// environment sets the default threshold (0: off).
#pragma once

#include <signal.h>

#include <cstdint>

namespace photon {

struct SlowTurnOptions {
    uint64_t threshold_us = 10000;  // 0: off
    int signo = SIGURG;             // ignored by default by processes that do not use it
    unsigned max_reports_per_sec = 10;
    // Called on the detector's thread with each report, instead of logging it.
    void (*report)(const char* text, void* arg) = nullptr;
    void* report_arg = nullptr;
};

// Applies from the detector's next check, starting it if vCPUs run. 0, or -1 with errno:
// EINVAL (a signal that cannot be caught), or sigaction's.
int set_slow_turn_options(const SlowTurnOptions& opt);
SlowTurnOptions get_slow_turn_options();

}  // namespace photon
