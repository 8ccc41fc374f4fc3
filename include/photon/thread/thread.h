// Photon coroutines ("threads") and the per-OS-thread scheduler ("vCPU").
//
// A vCPU is an OS thread that called photon::init() (or vcpu_init()); it runs
// its coroutines one at a time, switching only when the running one yields,
// sleeps or ends. Functions here act on the calling vCPU unless they say
// otherwise; "blocks" means the calling coroutine sleeps while the vCPU runs
// others. thread_interrupt() may be called from any vCPU or plain OS thread.
//
// The sync primitives have headers of their own (spinlock.h, locker.h,
// mutex.h, condition_variable.h, semaphore.h, rwlock.h); this one includes
// them all, so code written for Photon's thread.h, which declared them here,
// compiles unchanged. So do waitq, spin_wait() and ESHUTDOWN (detail/).
//
// Differences from PhotonLibOS: doc/compat.md#threadthreadh
#pragma once

#include <atomic>
#include <cassert>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include <photon/common/callback.h>
#include <photon/common/timeout.h>
#include <photon/thread/detail/eshutdown.h>   // as Photon's thread.h: ESHUTDOWN where libc lacks it
#include <photon/thread/detail/thread_fwd.h>  // struct thread, CURRENT, defer_func
#include <photon/thread/stack-allocator.h>

#if defined(__x86_64__) || defined(__i386__)
#include <emmintrin.h>  // as Photon's thread.h: users get _mm_pause() and SSE2
#endif

namespace photon {

struct join_handle;
class MasterEventEngine;

constexpr uint8_t VCPU_ENABLE_ACTIVE_WORK_STEALING = 1;
constexpr uint8_t VCPU_ENABLE_PASSIVE_WORK_STEALING = 2;
constexpr uint32_t THREAD_JOINABLE = 1;
constexpr uint32_t THREAD_ENABLE_WORK_STEALING = 2;
constexpr uint32_t THREAD_PAUSE_WORK_STEALING = 4;
// Photon extension: a service coroutine (an engine's reaper, the signal
// loop) that does not count for wait_all(), vcpu_fini() or INFO_THREAD_NUM
// and cannot migrate. Its owner must end it before photon::fini().
constexpr uint32_t THREAD_DAEMON = 1u << 8;

enum states { READY = 0, RUNNING = 1, SLEEPING = 2, DONE = 4, STANDBY = 8 };

typedef void* (*thread_entry)(void*);

const uint64_t DEFAULT_STACK_SIZE = 8 * 1024 * 1024;

// CURRENT, the running coroutine of this OS thread, is declared in
// detail/thread_fwd.h (the lock headers need it); RLOCK and WLOCK in rwlock.h.

const static uint64_t INFO_THREAD_NUM = 0;
const static uint64_t INFO_RUNNABLE_THREAD_NUM = 1;
const static uint64_t INFO_STANDBY_THREAD_NUM = 2;
const static uint64_t INFO_SLEEPING_THREAD_NUM = 3;
const static uint64_t INFO_VCPU_NUM = 0x100;

struct vcpu_base {
    MasterEventEngine* master_event_engine = nullptr;
    volatile uint64_t switch_count = 0;
};

// ---- vCPU and clock -------------------------------------------------------

// Makes the calling OS thread a vCPU (scheduler only); flags are
// VCPU_ENABLE_*_WORK_STEALING. Returns the number of vCPUs, or -1 with
// EALREADY if it already is one, EINVAL for an unknown flag.
int vcpu_init(uint64_t flags = 0);
// Waits until every other coroutine of this vCPU has ended, then tears it
// down. -1 with ENOSYS if the caller is not a vCPU, EPERM if it is not the
// vCPU's main coroutine.
int vcpu_fini();
// Blocks until all other coroutines of this vCPU have ended.
int wait_all();
// Starts / stops an OS thread that refreshes `now` every ~0.5 ms, for users
// that need a fresh `now` inside long compute loops.
int timestamp_updater_init();
int timestamp_updater_fini();
// Refreshes `now` from CLOCK_MONOTONIC and returns it.
uint64_t __update_now();

// INFO_* counts for a vCPU (nullptr = this one); -1 with EINVAL/ENOSYS.
uint64_t get_info(uint64_t type, vcpu_base* vcpu = nullptr);
inline uint32_t get_vcpu_num() { return (uint32_t)get_info(INFO_VCPU_NUM); }
vcpu_base* get_vcpu(thread* th = CURRENT);

// ---- create / end ---------------------------------------------------------

// Creates a READY coroutine running start(arg) on this vCPU; it runs when the
// creator yields or sleeps. stack_size 0 means DEFAULT_STACK_SIZE; it is
// rounded up to pages, at least 16 KiB. `reserved_space` (<= stack_size/2)
// bytes are kept for thread_reserved_space(). Returns nullptr with errno
// EINVAL, ENOSYS (not a vCPU) or ENOMEM (no stack; logged).
thread* thread_create(thread_entry start, void* arg, uint64_t stack_size = DEFAULT_STACK_SIZE,
                      uint32_t reserved_space = 0, uint64_t flags = 0);

inline thread* thread_create(Delegate<void*> start, uint64_t stack_size = DEFAULT_STACK_SIZE,
                             uint32_t reserved_space = 0, uint64_t flags = 0) {
    return thread_create((thread_entry)start._func, start._obj, stack_size, reserved_space, flags);
}

// The `reserved_space` area of `th`, as a T*.
void* __thread_reserved_space(thread* th, uint64_t reserved_size);
template <typename T = void>
inline T* thread_reserved_space(thread* th, uint64_t reserved_size = sizeof(T)) {
    return (T*)__thread_reserved_space(th, reserved_size);
}

// Makes `th` joinable (flag) before it ends; its control block then lives
// until thread_join(). nullptr with ESRCH if it already ended.
join_handle* thread_enable_join(thread* th, bool flag = true);
// Blocks until the coroutine ends, frees it and returns its result. nullptr
// with ENOSYS if the handle is not joinable. Once per handle.
void* thread_join(join_handle* jh);

// Ends the calling coroutine with `retval` (as returning it from the entry).
void thread_exit(void* retval) __attribute__((noreturn));
states thread_stat(thread* th = CURRENT);

// Runs n coroutines of start(arg) and joins them all; returns how many ran.
uint64_t threads_create_join(uint64_t n, thread_entry start, void* arg,
                             uint64_t stack_size = DEFAULT_STACK_SIZE);

// ---- scheduling -----------------------------------------------------------

// Lets the other ready coroutines run. Returns 0, or the error number (errno
// untouched) of a thread_interrupt() that arrived while this one was ready.
int thread_yield();
// Switches to `th`, a READY coroutine of this vCPU (nullptr = thread_yield(),
// CURRENT = refresh `now`); -1 with EINVAL otherwise.
int thread_yield_to(thread* th);

// Yields at scope exit unless this coroutine switched out meanwhile
// (SCOPE_MAKESURE_YIELD; _PHOTON_CONCAT is locker.h's).
struct __make_sure_yield {
    uint64_t count;
    __make_sure_yield();
    ~__make_sure_yield();
};
#define SCOPE_MAKESURE_YIELD ::photon::__make_sure_yield _PHOTON_CONCAT(__msy__, __LINE__)

// Sleeps until the timeout: 0 after the full time (or thread_resume), -1 with
// the interrupter's errno; an expired timeout just yields. -1 ENOSYS if not a
// vCPU; a shut-down coroutine sleeps at most 10 ms, then -1 EPERM.
int thread_usleep(Timeout timeout);
int thread_usleep(uint64_t useconds);
inline int thread_sleep(uint64_t seconds) {
    const uint64_t max_seconds = (UINT64_MAX - 1) / 1000 / 1000;
    return thread_usleep(seconds >= max_seconds ? UINT64_MAX : seconds * 1000 * 1000);
}
inline void thread_suspend() { thread_usleep(UINT64_MAX); }

// Sleeps like thread_usleep() and runs defer(arg) once this coroutine is
// committed to sleep, before any other coroutine runs: an atomic
// "unlock and sleep". `defer` must not sleep or switch. The delegate form
// takes a lambda written in the call, as Photon's.
int thread_usleep_defer(Timeout timeout, defer_func defer, void* defer_arg = nullptr);
inline int thread_usleep_defer(Timeout timeout, TempDelegate<void> defer) {
    return thread_usleep_defer(timeout, (defer_func)defer._func, defer._obj);
}
template <typename LOCK>
inline int thread_usleep_unlocked(Timeout timeout, LOCK& lock) {
    int ret = thread_usleep_defer(
        timeout, [](void* l) { static_cast<LOCK*>(l)->unlock(); }, &lock);
    int e = errno;
    lock.lock();
    errno = e;
    return ret;
}

// Wakes `th` if it sleeps (its sleep returns -1 with errno = error_number; 0
// makes it return 0); a READY `th` gets it as its thread_yield() result
// (so does the running coroutine of another vCPU); the caller itself is
// unaffected. Callable from any vCPU or OS thread. Returns 0,
// or -1 with ESRCH if `th` has ended (a joinable coroutine not yet joined)
// or EINVAL if it is nullptr. Photon declares it void; callers may ignore it.
int thread_interrupt(thread* th, int error_number = EINTR);
inline int thread_resume(thread* th) { return thread_interrupt(th, 0); }

// Marks `th` as shutting down (flag) and wakes it with EPERM; from then on its
// sleeps last at most 10 ms and fail with EPERM.
int thread_shutdown(thread* th, bool flag = true);

// Moves `th` (nullptr: CURRENT), a coroutine of this vCPU, to `vcpu`. A
// ready one runs there; a sleeping one (thread_usleep, a lock, condition
// variable, semaphore or join wait) sleeps on there with the same deadline,
// and its wakeup resumes it there. Moving CURRENT returns on the new vCPU's
// OS thread. 0 (also if it is on `vcpu` already); -1 with EINVAL (no
// `vcpu`, a coroutine of another vCPU, the main coroutine, an ended one) or
// EBUSY (it waits for an event of this vCPU's event engine, or in wait_all()).
int thread_migrate(thread* th, vcpu_base* vcpu);

// Photon extension: pins (pin = true) or unpins CURRENT to its vCPU; while
// pinned (pins nest) thread_migrate() refuses it with EBUSY. Event engines
// pin the coroutines parked in them: only their vCPU can wake them.
void thread_pin_current(bool pin);

// Work stealing is opt-in at both ends: a vCPU made with
// VCPU_ENABLE_ACTIVE_WORK_STEALING takes work when it has none, from vCPUs
// made with VCPU_ENABLE_PASSIVE_WORK_STEALING, and only coroutines created
// with THREAD_ENABLE_WORK_STEALING move, while READY (not running, sleeping
// or pinned). thread_pause_work_stealing(true, th) keeps th where it is until
// thread_pause_work_stealing(false, th); pauses do not nest. doc/thread.md
// says when a vCPU gives work away.
void thread_pause_work_stealing(bool flag, thread* th = CURRENT);
// Pauses stealing of CURRENT until the end of the scope.
#define SCOPED_PAUSE_WORK_STEALING \
    ::photon::detail::scoped_pause_work_stealing _photon_scoped_pause_ws
namespace detail {
struct scoped_pause_work_stealing {
    scoped_pause_work_stealing() { thread_pause_work_stealing(true); }
    ~scoped_pause_work_stealing() { thread_pause_work_stealing(false); }
    scoped_pause_work_stealing(const scoped_pause_work_stealing&) = delete;
    scoped_pause_work_stealing& operator=(const scoped_pause_work_stealing&) = delete;
};
}  // namespace detail

// Releases the pages of th's stack below its stack pointer (CURRENT: below
// the caller's frame). Returns 0, -1 with errno.
int stack_pages_gc(thread* th = CURRENT);

// Stack statistics of a coroutine: `size` usable bytes, `used_max` the
// high-water mark in bytes (resident pages, so page-granular; includes use by
// earlier coroutines of a pooled stack).
struct stack_stat {
    uint64_t size;
    uint64_t used_max;
};
int thread_stack_stat(thread* th, stack_stat* out);

// Photon extension: the stack size this vCPU's thread_create gives when asked for 0 or
// DEFAULT_STACK_SIZE (the default argument everywhere), rounded as thread_create rounds; 0
// restores DEFAULT_STACK_SIZE. Stacks of 64 KiB or less share page tables (512 stacks of 4 KiB
// map through one table page, 8 MiB ones need one each), for a million coroutines and more;
// a coroutine that needs more (deep recursion, big frames) must ask for it. Also
// PhotonOptions::default_stack_size. 0, or -1 with ENOSYS (not a vCPU) or EINVAL (too large).
int set_default_stack_size(uint64_t size);
uint64_t get_default_stack_size();  // DEFAULT_STACK_SIZE off a vCPU

// True if the calling vCPU runs without an event engine of its own (as after
// fd_events_fini(); also off a vCPU). reset_master_event_engine_default()
// destroys the vCPU's event engine, as fd_events_fini() does.
bool is_master_event_engine_default();
void reset_master_event_engine_default();

// A LIFO bump allocator at the far (low) end of CURRENT's stack, for
// short-lived frames such as C++20 coroutine frames (coro20.h). Blocks are
// 16-byte aligned; free them in reverse order (one freed early is reclaimed
// once those above it are freed). nullptr with ENOMEM when less than 8 KiB
// would stay between the blocks and the stack pointer, ENOTSUP on a vCPU's
// main coroutine (the OS thread's own stack), ENOSYS off a vCPU.
// stackful_free() of anything else is logged and ignored.
void* stackful_malloc(size_t size);
void stackful_free(void* ptr);

// Photon's context switch leaves some callee-saved FP/SIMD registers (d8-d15
// on aarch64) unsaved and asks users to call this where it matters. Ours
// saves them (thread/arch/), so there is nothing to spill.
inline void spill_additional_fp_simd_regs() {}

}  // namespace photon

// The sync primitives, which Photon declared here.
#include <photon/thread/condition_variable.h>
#include <photon/thread/locker.h>
#include <photon/thread/mutex.h>
#include <photon/thread/rwlock.h>
#include <photon/thread/semaphore.h>
#include <photon/thread/spinlock.h>
