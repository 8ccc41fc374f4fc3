// Signals as coroutine events. sync_signal() handlers run one at a time in a
// photon coroutine of the vCPU that called sync_signal_init() (photon::init
// with INIT_EVENT_SIGNAL does, on the first vCPU that asks), so they may
// sleep, lock and do I/O like any coroutine. The signals handled this way
// are blocked in the calling OS thread and read from a signalfd; threads
// created afterwards inherit the mask. Call from that vCPU. A child forked
// from that vCPU gets its own event engine, signalfd and signal coroutine, as
// with Photon (coroutines parked on the parent's engine stay parked there).
#pragma once

#include <signal.h>
#include <csignal>

// In namespace photon, as PhotonLibOS declares them, with C linkage (the
// symbols are the plain names).
namespace photon {
extern "C" {

// Starts the signal coroutine on this vCPU. 0, or -1 with errno (EALREADY if
// the process has one, ENOSYS if not a vCPU).
int sync_signal_init();
// Blocks every signal but SIGKILL and SIGSTOP in the calling OS thread.
int block_all_signal();
// Handles `signum` in the signal coroutine; SIG_DFL / SIG_IGN restore the
// default / ignore it. Returns the previous handler, or SIG_ERR with errno.
sighandler_t sync_signal(int signum, sighandler_t handler);
// As sigaction(2), for SA_SIGINFO handlers too; the handler runs in the
// signal coroutine.
int sync_sigaction(int signum, const struct sigaction* act, struct sigaction* oldact);
// Stops the signal coroutine and restores the default dispositions.
int sync_signal_fini();
}
}  // namespace photon
