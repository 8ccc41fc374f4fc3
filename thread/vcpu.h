// One scheduler per OS thread ("vCPU") and the scheduler primitives the rest of
// thread/ builds on. Private header.
//
// The run queue is a ring through the running coroutine: its front is the one
// running now, so a yield just advances the front. A sleeping coroutine leaves
// the ring; if the ring runs empty, the coroutine that goes to sleep waits
// for work on its own stack (no idle coroutine, so a lone coroutine woken by
// I/O resumes without any switch). Wakeups from other OS threads go through
// the `standby` list, which only the owning vCPU drains.
#pragma once

#include <pthread.h>
#include <sys/types.h>
#include <time.h>

#include <atomic>
#include <cstdint>

#include <photon/common/list.h>
#include <photon/common/metric-meter/prometheus.h>
#include <photon/thread/detail/idle-wait.h>
#include <photon/thread/thread.h>

#include "../common/metric-meter/counting.h"
#include "sleep_queue.h"
#include "stack_pool.h"
#include "thread_control.h"

namespace photon {

// thread::error_number of a sleeper woken by its deadline.
constexpr int kTimedOut = -2;

// Where a slow turn was caught (slow_turn.cpp): filled by the signal handler on the vCPU's own
// OS thread when the detector asked (state 1 -> 2), read by the detector.
struct slow_sample {
    std::atomic<int> state{0};  // 0: nothing asked, 1: asked (signal sent), 2: taken
    uint64_t asked_at = 0;      // the detector's clock, us
    uint64_t count = 0;         // switch_count when taken
    thread* th = nullptr;       // for its address only: it may be gone when the detector reads
    thread_entry entry = nullptr;
    bool main = false;  // th is the vCPU's own thread
    uint32_t n = 0;
    void* pcs[32];
};

// A vCPU's counters (photon/thread/stats.h): written by the vCPU alone with relaxed atomic
// stores (bump()), read by anyone.
struct vcpu_counters {
    uint64_t created = 0, engine_polls = 0;
    uint64_t cross_wakeups = 0, migrations_in = 0, given_away = 0, timer_wakeups = 0;
    uint64_t io_submitted[VCPU_IO_ENGINES] = {}, io_completed[VCPU_IO_ENGINES] = {};
    metrics::Log2Histogram run_queue_delay, run_queue_length, engine_interval, idle_wait;
};

inline void bump(uint64_t& c, uint64_t d = 1) {
    if (metrics::kCounting) __atomic_store_n(&c, c + d, __ATOMIC_RELAXED);
}
inline void put(metrics::Log2Histogram& h, uint64_t x) {
    if (metrics::kCounting) h.put(x);
}

// The run queue, with its length for the metrics (the running coroutine is its front, so it
// counts). Every element goes in by push_back and out by erase; move_after reorders.
struct run_queue : intrusive_list<thread> {
    uint64_t n = 0;
    void push_back(thread* th) {
        bump(n);
        intrusive_list::push_back(th);
    }
    // th is in the queue.
    void erase(thread* th) {
        bump(n, (uint64_t)-1);
        intrusive_list::erase(th);
    }
    // th may be out of the queue already (lone, and not its front).
    void erase_if_queued(thread* th) {
        if (th == node || !th->single()) erase(th);
    }
    // Moves th, in the queue, to just behind pos, in the queue too: the count stays.
    void move_after(thread* pos, thread* th) {
        intrusive_list::erase(th);
        pos->insert_after(th);
    }
};

struct vcpu_t : vcpu_base {
    thread* main = nullptr;  // the OS thread's own context
    run_queue rq;
    sleep_queue sleepq;
    stack_pool stacks;
    // Alive coroutines, main included, and those migrating in (counted by
    // the vCPU that hands them over).
    std::atomic<uint32_t> nthreads{0};
    thread* bounce = nullptr;  // see switch_out_hooked
    thread* wait_all_waiter = nullptr;
    uint64_t rng = 0x9E3779B97F4A7C15ULL;
    uint64_t default_stack = DEFAULT_STACK_SIZE;  // set_default_stack_size()
    int id = 0;

    spinlock standby_lock;
    intrusive_list<thread> standby;
    std::atomic<bool> has_standby{false};
    std::atomic<bool> idle_sleeping{false};
    std::atomic<uint32_t> futex_word{0};    // idle wait without an event engine
    idle_wait_engine* idle_wait = nullptr;  // the master event engine (set_vcpu_idle_wait)
    const char* idle_wait_name = "none";    // its name, static: read by the metrics
    // For debuggers: every coroutine of this vCPU (main, daemons and the
    // migrated-in included), and the list of all vCPUs (vcpu.cpp).
    thread* all_head = nullptr;
    vcpu_t* all_vcpus_next = nullptr;
    uint64_t engine_polled = 0;  // `now` at the last non-blocking engine poll
    uint64_t idle_end = 0;       // `now` at the end of the last idle wait
    // A dump's part for this vCPU to fill (dump.cpp), and how far it got in
    // all_head's list (moved on when the coroutine there ends or leaves).
    std::atomic<struct dump_part*> dump{nullptr};
    thread* dump_cursor = nullptr;
    // Slow-turn detection (slow_turn.cpp): the OS thread, the sample its signal handler takes,
    // and what the detector last saw (the detector's own, under the vCPU registry's lock).
    pthread_t os_thread{};
    pid_t os_tid = 0;
    uint64_t lone_yields = 0;  // thread_yield()s with nothing else to run
    slow_sample slow;
    uint64_t watch_count = 0, watch_since = 0;
    bool watch_reported = false;
    // Work stealing (steal.cpp): VCPU_ENABLE_*_WORK_STEALING; whether it is idle and asks for
    // work (active vCPUs only); whether it runs (not idle, or given work); how many of its
    // coroutines may leave (all_link/all_unlink); the switch before which it does not look for
    // coroutines to give again.
    uint8_t ws_flags = 0;
    std::atomic<bool> hungry{false};
    std::atomic<bool> ws_running{false};  // counted in g_ws.running
    uint32_t ws_alive = 0;
    uint64_t ws_quiet_until = 0;
    vcpu_counters ctr;

    ~vcpu_t() {
        rq.release();
        standby.release();
    }
};

// CLOCK_MONOTONIC read now, in ns (`now` is the scheduler's coarse copy in µs).
inline uint64_t monotonic_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

// `now`, read atomically: several vCPUs move it.
inline uint64_t clock_now() {
    return __atomic_load_n(const_cast<const uint64_t*>(&now), __ATOMIC_RELAXED);
}

// th is made ready (woken or new) now: its run-queue delay counts from here (scheduler.cpp).
inline void stamp_ready(thread* th) {
    if (!metrics::kCounting) return;
    th->ready_at = clock_now();
    th->woken = true;
}

inline vcpu_t* current_vcpu() { return CURRENT ? CURRENT->vcpu : nullptr; }

// v's list of all its coroutines: only v changes it (create, adopt after a
// migration; end, leave for another vCPU), so it takes no lock. A debugger
// reads it with the process stopped.
inline void all_link(vcpu_t* v, thread* th) {
    if (th->flags & TF_STEAL) v->ws_alive++;
    th->all_prev = nullptr;
    th->all_next = v->all_head;
    if (v->all_head) v->all_head->all_prev = th;
    v->all_head = th;
}
inline void all_unlink(vcpu_t* v, thread* th) {
    if (th->flags & TF_STEAL) v->ws_alive--;
    if (v->dump_cursor == th) v->dump_cursor = th->all_next;
    if (th->all_prev)
        th->all_prev->all_next = th->all_next;
    else
        v->all_head = th->all_next;
    if (th->all_next) th->all_next->all_prev = th->all_prev;
    th->all_prev = th->all_next = nullptr;
}

// The slow-turn detector (slow_turn.cpp) learns of v before it is registered, and that a
// vCPU ended after it was unregistered (the detector runs while vCPUs do).
void slow_turn_vcpu_init(vcpu_t* v);
void slow_turn_vcpu_fini();

// The first vCPU registers their collector in the metrics registry (stats.cpp).
void stats_vcpu_init();

// The lock of the list of vCPUs, taken around fork() (slow_turn.cpp), so that a child never
// starts with it held by a thread it does not have.
void vcpu_registry_lock();
void vcpu_registry_unlock();

// Calls fn(v, arg) for every vCPU, holding the lock that keeps each from
// ending meanwhile (fn must not wait for a vCPU).
void for_each_vcpu_locked(void (*fn)(vcpu_t*, void*), void* arg);

// Fills a slice of the dump part posted to v, if any (dump.cpp). v's own
// OS thread, between coroutines' turns, on the stack of on_stack (whose
// saved context is stale: it is walked from here).
void serve_dump(vcpu_t* v, thread* on_stack);
// v ends: a dump part still posted to it is finished as it stands.
void end_dump(vcpu_t* v);

// Makes sleeping `th` runnable with `err` as its wakeup result; th->lock is
// held by the caller. Works from any OS thread.
void make_ready_locked(thread* th, int err);

// Wakes `th` with `err` if it sleeps; no effect otherwise.
inline void wake_sleeper(thread* th, int err) {
    th->lock.lock();
    if (th->state == SLEEPING) make_ready_locked(th, err);
    th->lock.unlock();
}

// Makes vCPU v look at its standby list: a wakeup syscall only if it is
// blocked idle. Any OS thread.
void notify_vcpu(vcpu_t* v);

// Puts CURRENT to sleep until `deadline` (absolute, on `now`) or a wakeup;
// runs defer(arg) once committed. Returns the wakeup result: 0, an errno
// value, or kTimedOut.
int sleep_current(uint64_t deadline, defer_func defer, void* arg);

// Takes `self` (RUNNING) off the run queue and switches to the next
// coroutine, which first runs hook(arg) on its own stack. Returns when `self`
// is resumed (never if `dies`).
void switch_out_hooked(vcpu_t* v, thread* self, void (*hook)(void*), void* arg, bool dies);

// Wakes the wait_all() waiter once only it is left.
void wake_wait_all(vcpu_t* v);

// Queues `th` (locked, READY or SLEEPING, on no queue of its old vCPU) on `to`'s standby list
// for `to` to adopt; the caller notifies `to` (vcpu.cpp).
void hand_over_locked(thread* th, vcpu_t* to);

// The list of all vCPUs (through all_vcpus_next), under vcpu_registry_lock().
vcpu_t* first_vcpu_locked();

// Work stealing (steal.cpp). Of the vCPUs with a work-stealing flag, how many are active and
// ask for work, and how many run. A busy passive vCPU reads `hungry` at every switch, so it has
// a cache line of its own; every idle wait of a vCPU with a flag writes `running`.
struct work_stealing_counts {
    alignas(64) std::atomic<uint32_t> hungry{0};
    alignas(64) std::atomic<uint32_t> running{0};  // the struct's size rounds up to its line
};
extern work_stealing_counts g_ws;
// v (any flags) starts running, as a vCPU made with a work-stealing flag.
void start_work_stealing(vcpu_t* v);
// v is about to wait idle: it stops counting as running and, if active, asks for work. Done
// waiting, it runs again and stops asking.
void ask_for_work(vcpu_t* v);
void stop_asking_for_work(vcpu_t* v);
// Passive v, switching from `from` to `to`, gives READY coroutines that may leave to the
// vCPUs asking for work, if any.
void offer_work(vcpu_t* v, thread* from, thread* to);
inline void maybe_offer_work(vcpu_t* v, thread* from, thread* to) {
    if (__builtin_expect(g_ws.hungry.load(std::memory_order_relaxed) != 0, 0) &&
        (v->ws_flags & VCPU_ENABLE_PASSIVE_WORK_STEALING))
        offer_work(v, from, to);
}
// v ends (photon::fini, vcpu_fini): it takes no more work, and none is on its way when this
// returns.
void close_work_stealing(vcpu_t* v);
// In a forked child, under the registry lock: only `self` (the forking vCPU, or nullptr) is
// left; the others neither ask nor run.
void work_stealing_after_fork(vcpu_t* self);

// Refreshes `now`; runs expired timers, drains standby into the run queue
// and, at most every kEnginePollUs, polls the event engine without blocking.
void vcpu_maintenance(vcpu_t* v, thread* on_stack);

}  // namespace photon
