// What the lock headers need of thread.h, declared without it: the coroutine
// handle and the running coroutine. thread.h includes them, so they cannot
// include it back. Users get these names from <photon/thread/thread.h>.
#pragma once

namespace photon {

struct thread;

typedef void (*defer_func)(void*);

// The running coroutine of this OS thread; nullptr if it is not a vCPU.
extern __thread thread* CURRENT __attribute__((tls_model("initial-exec")));

}  // namespace photon
