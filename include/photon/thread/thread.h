// Photon coroutines ("threads") and the per-OS-thread scheduler ("vCPU").
//
// A vCPU is an OS thread that called photon::init() (or vcpu_init()); it runs
// its coroutines one at a time, switching only when the running one yields,
// sleeps or ends. Functions here act on the calling vCPU unless they say
// otherwise; "blocks" means the calling coroutine sleeps while the vCPU runs
// others. thread_interrupt(), the lock unlocks/notifies/signals and
// semaphore::signal() may be called from any vCPU or plain OS thread.
//
// Differs from PhotonLibOS's thread.h:
//  - `partial_thread` (Photon's mirror of its private control block layout,
//    for inline field access) is not provided: our control block differs;
//  - thread_interrupt() and thread_resume() return int (Photon: void);
//  - work stealing is not implemented: the THREAD_/VCPU_ flags are accepted,
//    thread_pause_work_stealing() does nothing;
//  - fixed traps: a qspinlock may be nested and unlocked from another OS
//    thread (Photon kept one queue node per OS thread); locker and
//    scoped_rwlock stop retrying on EDEADLK/EINVAL; a predicated wait never
//    returns 0 while its predicate is false; qrwlock rejects modes other than
//    RLOCK/WLOCK (EINVAL); stackful_malloc() checks the room it has left.
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
#include <photon/thread/stack-allocator.h>

#ifndef ESHUTDOWN
#define ESHUTDOWN 108
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <emmintrin.h>  // as Photon's thread.h: users get _mm_pause() and SSE2
#endif

namespace photon {

struct thread;
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
typedef void (*defer_func)(void*);

const uint64_t DEFAULT_STACK_SIZE = 8 * 1024 * 1024;

// The running coroutine of this OS thread; nullptr if it is not a vCPU.
extern __thread thread* CURRENT __attribute__((tls_model("initial-exec")));

constexpr int RLOCK = 0x1000;
constexpr int WLOCK = 0x2000;

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

// Makes the calling OS thread a vCPU (scheduler only). Returns the number of
// vCPUs, or -1 (EALREADY) if it already is one.
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
// "unlock and sleep". `defer` must not sleep or switch.
int thread_usleep_defer(Timeout timeout, defer_func defer, void* defer_arg = nullptr);
inline int thread_usleep_defer(Timeout timeout, Delegate<void> defer) {
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

inline void thread_pause_work_stealing(bool, thread* = CURRENT) {}
#define SCOPED_PAUSE_WORK_STEALING

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

// Photon's context switch leaves some callee-saved FP/SIMD registers (d8-d15
// on aarch64) unsaved and asks users to call this where it matters. Ours
// saves them (thread/arch/), so there is nothing to spill.
inline void spill_additional_fp_simd_regs() {}

// ---- locks (usable across vCPUs) -------------------------------------------

// Gives the OS thread's CPU away for a moment (sched_yield).
void spin_yield();

// Busy-waiting lock; never sleeps. Keep critical sections short.
class spinlock {
public:
    int lock() {
        while (_lock.exchange(true, std::memory_order_acquire)) {
            // Spin, then yield the CPU: the holder may have been preempted on
            // this one (a wakeup syscall made under the lock can switch to
            // the woken thread at once), and it cannot finish while we spin.
            for (uint32_t i = 0; _lock.load(std::memory_order_relaxed); i++) {
                if (i < kSpinsBeforeYield)
                    spin_wait();
                else
                    spin_yield();
            }
        }
        return 0;
    }
    int try_lock() {
        return (!_lock.load(std::memory_order_relaxed) &&
                !_lock.exchange(true, std::memory_order_acquire))
                   ? 0
                   : -1;
    }
    bool locked() const { return _lock.load(std::memory_order_relaxed); }
    void unlock() { _lock.store(false, std::memory_order_release); }

protected:
    static constexpr uint32_t kSpinsBeforeYield = 128;
    std::atomic<bool> _lock{false};
};

// FIFO spinlock: waiters get the lock in arrival order.
class ticket_spinlock {
public:
    int lock() {
        const auto ticket = next.fetch_add(1, std::memory_order_relaxed);
        while (serv.load(std::memory_order_acquire) != ticket) spin_wait();
        return 0;
    }
    int try_lock() {
        auto s = serv.load(std::memory_order_acquire);
        auto t = s;
        return next.compare_exchange_strong(t, s + 1, std::memory_order_acquire) ? 0 : -1;
    }
    void unlock() { serv.fetch_add(1, std::memory_order_release); }

protected:
    std::atomic<uint32_t> next{0};
    std::atomic<uint32_t> serv{0};
};

// Queued (MCS) spinlock: FIFO, and each waiter spins on a node of its own
// instead of the lock word. Never sleeps. Holders may nest qspinlocks, and
// may unlock on another OS thread than the one that locked.
class qspinlock {
public:
    qspinlock() = default;
    qspinlock(const qspinlock&) = delete;
    qspinlock& operator=(const qspinlock&) = delete;
    int try_lock();  // 0, or -1 if held
    int lock();      // 0
    bool locked() const { return _owner_tail.load(std::memory_order_acquire) != nullptr; }
    void unlock();

protected:
    struct holder;
    static holder* take_node();
    static void put_node(holder* h);
    std::atomic<holder*> _owner_tail{nullptr};  // the last queued node
    holder* _owner = nullptr;                   // the holder's node; only the holder uses it
};

// A FIFO queue of sleeping coroutines under a spinlock; the building block of
// every sleeping lock below. The member functions are Photon's interface for
// building sync primitives on it (Photon makes them protected).
struct waitq {
    waitq() = default;
    waitq(const waitq&) = delete;
    waitq& operator=(const waitq&) = delete;
    ~waitq();

    // Sleeps CURRENT at the back of the queue: 0 if resumed with error_number
    // -1, else -1 with errno ETIMEDOUT, the resumer's error_number or the
    // interrupter's errno.
    int wait(Timeout timeout = {});
    // As wait(), running defer(arg) once committed to sleep (an atomic
    // "unlock and wait"); `defer` must not sleep.
    int wait_defer(Timeout timeout, void (*defer)(void*), void* arg);
    int wait_defer(Timeout timeout, Delegate<void> defer) {
        return wait_defer(timeout, (void (*)(void*))defer._func, defer._obj);
    }
    // Wakes `th` if it waits in this queue (else nothing): its wait returns
    // 0 for error_number -1, else -1 with errno = error_number.
    void resume(thread* th, int error_number = -1);
    // Wakes every waiter; returns how many.
    int resume_all(int error_number = -1);
    // Wakes the first waiter; returns it, or nullptr if none.
    thread* resume_one(int error_number = -1);

    // Ring of waiters linked through their wq links; written under `lock`,
    // peeked at without it.
    std::atomic<thread*> head{nullptr};
    spinlock lock;
};

// Sleeping mutex: tries, yields up to max_retries times, then sleeps in FIFO
// order. unlock() hands ownership to the first waiter, unless `contending`,
// where the woken waiter competes with newcomers. Timeout -> -1 ETIMEDOUT,
// interrupt -> -1 with the interrupter's errno.
class mutex {
public:
    mutex(uint16_t max_retries = 100, bool contending = false)
        : retries(max_retries), contending(contending) {}
    mutex(const mutex&) = delete;
    mutex& operator=(const mutex&) = delete;
    ~mutex();

    int lock(Timeout timeout = {});
    int try_lock() { return try_lock_as(CURRENT); }
    bool locked() const { return owner.load(std::memory_order_relaxed) != nullptr; }
    // Non-owner: EINVAL, no effect.
    void unlock();

protected:
    // Takes `self` rather than reading CURRENT: after a switch the coroutine
    // may run on another OS thread (thread_migrate), and a thread pointer the
    // compiler computed before the switch would name the old one.
    int try_lock_as(thread* self) {
        thread* expected = nullptr;
        return owner.compare_exchange_strong(expected, self, std::memory_order_acquire) ? 0 : -1;
    }
    std::atomic<thread*> owner{nullptr};
    waitq q;
    uint16_t retries;
    bool contending;
};

// A mutex that never spins before sleeping: strict FIFO.
class seq_mutex : protected mutex {
public:
    seq_mutex() : mutex(0) {}
};

class recursive_mutex : protected mutex {
public:
    using mutex::mutex;
    int lock(Timeout timeout = {});
    int try_lock();
    void unlock();
    bool locked() const { return mutex::locked(); }

protected:
    int32_t recursive_count = 0;
};

// RAII holder of any lock with lock()/try_lock()/unlock(). do_lock: 0 don't
// lock, 1 one lock() call (it may wait; an interrupted or timed-out one
// leaves the locker unlocked), >= 2 lock (retrying on error until locked).
template <typename M>
class locker {
public:
    M* m_mutex;
    bool m_locked;

    explicit locker(M* mutex, uint64_t do_lock = 2) : m_mutex(mutex), m_locked(false) {
        if (do_lock) lock(do_lock > 1);
    }
    explicit locker(M& mutex, uint64_t do_lock = 2) : locker(&mutex, do_lock) {}
    locker(locker&& rhs) : m_mutex(rhs.m_mutex), m_locked(rhs.m_locked) {
        rhs.m_mutex = nullptr;
        rhs.m_locked = false;
    }
    locker(const locker&) = delete;
    locker& operator=(const locker&) = delete;

    int lock(bool must_lock = true) {
        int ret;
        // Retry interrupted locks; a relock by the owner or a bad lock fails.
        while ((ret = lock_once()) < 0 && must_lock && errno != EDEADLK && errno != EINVAL) {
        }
        m_locked = (ret == 0);
        return ret;
    }
    int try_lock() {
        int ret;
        // std-style locks return void / bool, photon's 0 / -1.
        if constexpr (std::is_same<decltype(m_mutex->try_lock()), bool>::value)
            ret = m_mutex->try_lock() ? 0 : -1;
        else
            ret = m_mutex->try_lock();
        m_locked = (ret == 0);
        return ret;
    }
    bool locked() const { return m_locked; }
    operator bool() const { return m_locked; }
    void unlock() {
        if (m_locked) {
            m_mutex->unlock();
            m_locked = false;
        }
    }
    ~locker() {
        if (m_locked) m_mutex->unlock();
    }

private:
    int lock_once() {
        if constexpr (std::is_void<decltype(m_mutex->lock())>::value) {
            m_mutex->lock();
            return 0;
        } else {
            return m_mutex->lock();
        }
    }
};

using scoped_lock = locker<mutex>;

#define _PHOTON_CONCAT_(a, b) a##b
#define _PHOTON_CONCAT(a, b) _PHOTON_CONCAT_(a, b)
#ifndef _TOKEN_CONCAT  // Photon's names for the same
#define _TOKEN_CONCAT(a, b) a##b
#endif
#ifndef _TOKEN_CONCAT_
#define _TOKEN_CONCAT_(a, b) _TOKEN_CONCAT(a, b)
#endif
#define SCOPED_LOCK(x, ...) \
    auto _PHOTON_CONCAT(__locker__, __LINE__) = ::photon::__make_locker(x, ##__VA_ARGS__)
#define WITH_LOCK(mutex) if (auto __lock__ = ::photon::scoped_lock(mutex))

template <typename M>
inline locker<M> __make_locker(M* m, uint64_t do_lock = 2) {
    return locker<M>(m, do_lock);
}
template <typename M>
inline locker<M> __make_locker(M& m, uint64_t do_lock = 2) {
    return locker<M>(&m, do_lock);
}

// Yields at scope exit unless this coroutine switched out meanwhile.
struct __make_sure_yield {
    uint64_t count;
    __make_sure_yield();
    ~__make_sure_yield();
};
#define SCOPE_MAKESURE_YIELD ::photon::__make_sure_yield _PHOTON_CONCAT(__msy__, __LINE__)

// Waits are notified in FIFO order. wait() releases the lock while asleep and
// always retakes it; 0 if notified, -1 ETIMEDOUT / -1 with the interrupter's
// errno otherwise.
class condition_variable {
public:
    condition_variable() = default;
    int wait_no_lock(Timeout timeout = {});
    int wait(mutex* m, Timeout timeout = {}) { return wait_locked(*m, timeout); }
    int wait(mutex& m, Timeout timeout = {}) { return wait_locked(m, timeout); }
    int wait(spinlock* m, Timeout timeout = {}) { return wait_locked(*m, timeout); }
    int wait(spinlock& m, Timeout timeout = {}) { return wait_locked(m, timeout); }
    int wait(scoped_lock& l, Timeout timeout = {}) { return wait_locked(*l.m_mutex, timeout); }
    // Waits until pred() holds: 0 then (also if it held on entry), or -1
    // with errno ETIMEDOUT once the timeout expires without it. As Photon's,
    // interrupts do not end the wait, except those that end semaphore::wait
    // (ESHUTDOWN, and EPERM of a shut-down coroutine): -1 with that errno.
    template <typename LOCK, typename PRED, typename = decltype(std::declval<PRED>()())>
    int wait(LOCK&& lock, PRED&& pred, Timeout timeout = {}) {
        return wait_pred([&] { return wait(lock, timeout); }, pred, timeout);
    }
    template <typename PRED, typename = decltype(std::declval<PRED>()())>
    int wait_no_lock(PRED&& pred, Timeout timeout = {}) {
        return wait_pred([&] { return wait_no_lock(timeout); }, pred, timeout);
    }
    // Wakes the first waiter; returns it, or nullptr if none.
    thread* signal();
    thread* notify_one() { return signal(); }
    // Wakes all waiters; returns how many.
    int notify_all();
    int broadcast() { return notify_all(); }

protected:
    template <typename WAIT, typename PRED>
    static int wait_pred(WAIT&& do_wait, PRED& pred, const Timeout& timeout) {
        while (!pred()) {
            int e = ETIMEDOUT;
            if (!timeout.expired()) {
                if (do_wait() == 0) continue;
                e = errno;
                if (e != ETIMEDOUT && e != ESHUTDOWN && e != EPERM && e != ENOSYS) continue;
            }
            if (pred()) return 0;
            errno = e;
            return -1;
        }
        return 0;
    }
    // Sleeps in the queue, calling unlock(lock) once committed to sleep.
    int wait_defer(Timeout timeout, defer_func unlock, void* lock);
    template <typename LOCK>
    int wait_locked(LOCK& lock, Timeout timeout) {
        int ret = wait_defer(
            timeout, [](void* l) { static_cast<LOCK*>(l)->unlock(); }, &lock);
        int e = errno;
        while (lock.lock() < 0) {  // always retake, even when interrupted
        }
        errno = e;
        return ret;
    }
    waitq q;
};

// Counting semaphore. wait(n) takes n units (FIFO by default: a large request
// at the front holds back smaller ones behind it): 0, or -1 with ETIMEDOUT,
// ESHUTDOWN (an interrupt with that errno), EPERM (the coroutine is being shut
// down) or ENOSYS (not on a vCPU); it ignores other interrupts, while
// wait_interruptible() returns on any. signal(n) may be called from any vCPU
// or OS thread.
class semaphore {
public:
    explicit semaphore(uint64_t count = 0, bool in_order_resume = true)
        : m_count(count), m_ooo_resume(!in_order_resume) {}
    int wait(uint64_t count, Timeout timeout = {});
    int wait_interruptible(uint64_t count, Timeout timeout = {});
    int signal(uint64_t count);
    uint64_t count() const { return m_count.load(std::memory_order_relaxed); }

protected:
    bool try_take(uint64_t count);
    std::atomic<uint64_t> m_count;
    waitq q;
    bool m_ooo_resume;
};

// One-shot event for one waiter; signal() may come before wait().
class disposable_semaphore : public semaphore {
public:
    int wait(Timeout timeout = {}) { return semaphore::wait(1, timeout); }
    void signal() { semaphore::signal(1); }
};

// Reader-writer lock; a newcomer queues behind any waiter (no starvation of
// writers). mode is RLOCK or WLOCK (else -1 EINVAL).
class rwlock {
public:
    int lock(int mode, Timeout timeout = {});
    int try_lock(int mode);
    int unlock();

protected:
    friend struct rwlock_impl;
    int64_t state = 0;  // > 0 readers, -1 a writer, 0 free
    waitq q;
};

class scoped_rwlock {
public:
    scoped_rwlock(rwlock& l, int lockmode) : m_locker(&l) { lock(lockmode); }
    scoped_rwlock(const scoped_rwlock&) = delete;
    bool locked() const { return m_locked; }
    operator bool() const { return m_locked; }
    int lock(int mode, bool must_lock = true) {
        int ret;
        while ((ret = m_locker->lock(mode)) < 0 && must_lock && errno != EINVAL) {
        }
        m_locked = (ret == 0);
        return ret;
    }
    ~scoped_rwlock() {
        if (m_locked) m_locker->unlock();
    }

protected:
    rwlock* m_locker;
    bool m_locked = false;
};

// Reader-writer lock for read-mostly data: readers take it with one atomic
// operation while no writer holds it; no starvation guard (a stream of
// readers can hold writers off). At most 65536 readers at once, more wait.
// mode RLOCK or WLOCK, else -1 EINVAL; unlock() of a free lock: -1 ENOLCK.
// Timeout -> -1 ETIMEDOUT, interrupt -> -1 with the interrupter's errno.
class qrwlock {
public:
    qrwlock() = default;
    qrwlock(const qrwlock&) = delete;
    qrwlock& operator=(const qrwlock&) = delete;
    int try_lock(int mode);  // 0, or -1 (EBUSY if held)
    int lock(int mode, Timeout timeout = {});
    int unlock();

protected:
    constexpr static int64_t MAX_SHARED_LOCK_COUNT = 1 << 16;
    constexpr static int64_t WRITE_LOCKED = -1;
    bool try_lock_unique();
    bool try_lock_shared();
    void wake_locked();  // under `spin`: a writer, else all readers

    // > 0 readers, 0 free, WRITE_LOCKED a writer
    std::atomic<int64_t> lock_state{0};
    condition_variable cv_shared;
    condition_variable cv_unique;
    spinlock spin;  // orders sleeping against waking
};

}  // namespace photon
