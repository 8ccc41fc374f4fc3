// Busy-wait helpers of the spinlocks (spinlock.h) and of lock-free code in
// common/: a CPU pause hint and giving the OS thread's CPU away. Never yield
// the coroutine. Photon declares spin_wait()/spin_wait_n() in thread.h, which
// still provides them.
#pragma once

#include <cstdint>

namespace photon {

inline void spin_wait() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("isb" ::: "memory");
#endif
}
inline void spin_wait_n(uint32_t n) {
    while (n--) spin_wait();
}

// Gives the OS thread's CPU away for a moment (sched_yield).
void spin_yield();

}  // namespace photon
