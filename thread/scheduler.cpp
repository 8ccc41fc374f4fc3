// Switching, sleeping, waking and idling: the hot paths of the scheduler.
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ctime>

#include <photon/common/detail/log_coroutine.h>
#include <photon/thread/detail/idle-wait.h>

#include "arch/context.h"
#include "fiber_annotations.h"
#include "vcpu.h"

namespace photon {

__thread thread* CURRENT = nullptr;

namespace {

const void* current_for_log() { return CURRENT; }
[[maybe_unused]] const bool log_reader_registered =
    (detail::log_current_coroutine = current_for_log, true);

// Clock and timers are checked every this many switches, so coroutines that
// only switch among themselves never starve sleepers for long.
constexpr uint64_t kMaintenanceMask = 63;
// A vCPU that never idles still polls its event engine this often (us), so
// busy coroutines delay I/O by at most about this much.
constexpr uint64_t kEnginePollUs = 50;
// How much of a parked coroutine's stack, above its saved context, the next
// switch but one prefetches: its resume path returns through these frames.
constexpr int kPrefetchStackLines = 16;
constexpr uint32_t kPrefetchMinThreads = 64;

inline void before_switch(thread* from, thread* to, bool from_dies) {
#ifdef PHOTON_ASAN
    __sanitizer_start_switch_fiber(from_dies ? nullptr : &from->asan_fake_stack, to->stack_lo,
                                   (size_t)(to->stack_hi - to->stack_lo));
#endif
#ifdef PHOTON_TSAN
    __tsan_switch_to_fiber(to->tsan_fiber, 0);
#endif
}

inline void after_switch(thread* self) {
#ifdef PHOTON_ASAN
    __sanitizer_finish_switch_fiber(self->asan_fake_stack, nullptr, nullptr);
#endif
}

// Warms the caches for the coroutines queued behind `to`, a whole turn
// before they run: the next one's top stack lines (its control block came
// one switch earlier) and the control block of the one after it. With
// thousands of connections, one coroutine each, these misses were most of a
// switch's cost. A guess: a wrong one only wastes the prefetches.
inline void prefetch_ahead(vcpu_t* v, thread* to) {
    // A few coroutines stay in cache: the prefetches would only cost (3 ns
    // on a 2-coroutine yield).
    if (v->nthreads.load(std::memory_order_relaxed) < kPrefetchMinThreads) return;
    thread* n1 = to->next();
    if (n1 == to) return;
    auto sp = reinterpret_cast<uintptr_t>(n1->sp);  // integers: never dereferenced
    for (int line = 0; line < kPrefetchStackLines; line++)
        __builtin_prefetch(reinterpret_cast<const void*>(sp + 64 * line));
    __builtin_prefetch(n1->next());
}

// The run-queue delay of th, made ready (woken, or new) and now running, on the coarse clock:
// taken where the clock is fresh (a maintenance switch, the end of an idle wait), so a sample
// of the woken runs. Those that only yield are not timed: a yield stores nothing more.
// Those an idle wait woke were stamped with the clock from before it: they count from its end.
inline void note_delay(vcpu_t* v, thread* th) {
    uint64_t t = clock_now(), r = th->ready_at > v->idle_end ? th->ready_at : v->idle_end;
    put(v->ctr.run_queue_delay, t > r ? t - r : 0);
}

// Switches from `from` (already accounted for) to `to`, the new front.
inline void switch_to(vcpu_t* v, thread* from, thread* to) {
    CURRENT = to;
    // Stored atomically: the slow-turn detector reads it from its own thread.
    uint64_t n = v->switch_count + 1;
    __atomic_store_n(&v->switch_count, n, __ATOMIC_RELAXED);
    bool fresh = (n & kMaintenanceMask) == 0;
    if (fresh) {
        vcpu_maintenance(v, from);
        put(v->ctr.run_queue_length, v->rq.n);
    }
    if (metrics::kCounting && to->woken) {
        to->woken = false;
        if (fresh) note_delay(v, to);
    }
    maybe_offer_work(v, from, to);
    prefetch_ahead(v, to);
    before_switch(from, to, false);
    arch::photon_switch_context(&from->sp, to->sp);
    after_switch(from);
}

void futex_wait(std::atomic<uint32_t>* word, uint32_t expected, uint64_t timeout_us) {
    struct timespec ts, *pts = nullptr;
    if (timeout_us != UINT64_MAX) {
        ts.tv_sec = (time_t)(timeout_us / 1000000);
        ts.tv_nsec = (long)(timeout_us % 1000000) * 1000;
        pts = &ts;
    }
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, pts, nullptr, 0);
}

void futex_wake(std::atomic<uint32_t>* word) {
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

void drain_standby(vcpu_t* v) {
    if (!v->has_standby.load(std::memory_order_acquire)) return;
    v->standby_lock.lock();
    intrusive_list<thread> list;
    list.splice(v->standby);
    v->has_standby.store(false, std::memory_order_relaxed);
    v->standby_lock.unlock();
    while (thread* th = list.pop_front()) {
        th->lock.lock();
        if (th->flags & TF_MIGRATING) {
            th->flags &= ~TF_MIGRATING;
            all_link(v, th);  // adopted
            bump(v->ctr.migrations_in);
            stamp_ready(th);
            if (th->state == SLEEPING) {  // moved while asleep: sleeps on here
                if (th->deadline != UINT64_MAX) v->sleepq.push(th);
                th->lock.unlock();
                continue;
            }
        }
        v->sleepq.erase(th);
        th->state = READY;  // ready_at: set by its waker (make_ready_locked) or above
        bump(v->ctr.cross_wakeups);
        v->rq.push_back(th);
        th->lock.unlock();
    }
}

void fire_timers(vcpu_t* v) {
    while (thread* th = v->sleepq.front()) {
        if (th->deadline > clock_now()) break;
        v->sleepq.pop_front();
        th->lock.lock();
        if (th->state == SLEEPING) {  // else STANDBY: drain_standby owns it
            th->error_number = kTimedOut;
            th->state = READY;
            stamp_ready(th);
            bump(v->ctr.timer_wakeups);
            v->rq.push_back(th);
        }
        th->lock.unlock();
    }
}

// Timers and standby: the part of maintenance that needs no syscall.
void run_due(vcpu_t* v) {
    __update_now();
    fire_timers(v);
    drain_standby(v);
}

// Blocks the OS thread until the run queue has work: in the event engine,
// which may wake coroutines itself, or in a futex. Runs on the stack of
// whichever coroutine went to sleep last.
void idle_until_runnable(vcpu_t* v, thread* on_stack) {
    while (v->rq.empty()) {
        run_due(v);
        if (v->dump.load(std::memory_order_relaxed)) serve_dump(v, on_stack);
        if (!v->rq.empty()) break;
        uint64_t deadline = v->sleepq.next_deadline();
        // Read the clock once: other vCPUs move it, and a deadline that has
        // just passed must give 0, not a wrapped-around timeout.
        uint64_t t = clock_now();
        uint64_t timeout = deadline == UINT64_MAX ? UINT64_MAX : deadline > t ? deadline - t : 0;
        uint32_t seen = v->futex_word.load(std::memory_order_acquire);
        // Asked before the last look at standby, where the work arrives.
        ask_for_work(v);
        // Publish "asleep" before the last look at standby; a waker publishes
        // standby before looking at "asleep": one of the two sees the other.
        // The explicit fences (here and in notify_vcpu) order each side's store
        // before its load even where seq_cst stores and loads alone do not
        // (qemu-user runs AArch64's stlr/ldar pair without a fence between).
        v->idle_sleeping.store(true, std::memory_order_seq_cst);
        std::atomic_thread_fence(std::memory_order_seq_cst);
        bool waited = false;
        if (!v->has_standby.load(std::memory_order_seq_cst) &&
            !v->dump.load(std::memory_order_seq_cst)) {
            if (idle_wait_engine* engine = v->idle_wait) {
                put(v->ctr.engine_interval, t > v->engine_polled ? t - v->engine_polled : 0);
                ssize_t n = engine->wait_and_fire_events(timeout);
                if (n > 0) bump(v->ctr.io_completed[VCPU_IO_MASTER], (uint64_t)n);
            } else {
                futex_wait(&v->futex_word, seen, timeout);
            }
            waited = true;
        }
        v->idle_sleeping.store(false, std::memory_order_relaxed);
        // The wait may have lasted long and woken coroutines that compute
        // what is left of their deadlines: give them the time of now.
        __update_now();
        v->engine_polled = clock_now();
        if (waited) {
            v->idle_end = v->engine_polled;
            uint64_t d = v->engine_polled > t ? v->engine_polled - t : 0;
            put(v->ctr.idle_wait, d);  // its count and sum are the waits and their time
        }
    }
    stop_asking_for_work(v);
}

}  // namespace

void notify_vcpu(vcpu_t* v) {
    std::atomic_thread_fence(std::memory_order_seq_cst);            // standby published first
    if (!v->idle_sleeping.load(std::memory_order_seq_cst)) return;  // it will look anyway
    if (idle_wait_engine* engine = v->idle_wait) {
        engine->cancel_wait();
    } else {
        v->futex_word.fetch_add(1, std::memory_order_release);
        futex_wake(&v->futex_word);
    }
}

void vcpu_maintenance(vcpu_t* v, thread* on_stack) {
    run_due(v);
    if (v->dump.load(std::memory_order_relaxed)) serve_dump(v, on_stack);
    idle_wait_engine* engine = v->idle_wait;
    uint64_t t = clock_now();
    if (engine && t - v->engine_polled >= kEnginePollUs) {
        put(v->ctr.engine_interval, t > v->engine_polled ? t - v->engine_polled : 0);
        bump(v->ctr.engine_polls);
        v->engine_polled = t;
        ssize_t n = engine->wait_and_fire_events(0);
        if (n > 0) bump(v->ctr.io_completed[VCPU_IO_MASTER], (uint64_t)n);
    }
}

void make_ready_locked(thread* th, int err) {
    th->error_number = err;
    stamp_ready(th);
    if (th->flags & TF_MIGRATING) {  // a sleeper in its new vCPU's standby list
        th->state = STANDBY;         // already: drain_standby will run it
        return;
    }
    vcpu_t* v = th->vcpu;
    if (CURRENT && CURRENT->vcpu == v) {
        v->sleepq.erase(th);
        th->state = READY;
        v->rq.push_back(th);
        return;
    }
    th->state = STANDBY;
    v->standby_lock.lock();
    v->standby.push_back(th);
    v->has_standby.store(true, std::memory_order_seq_cst);
    v->standby_lock.unlock();
    notify_vcpu(v);
}

// Hands the vCPU to the next runnable coroutine after `self` left the run
// queue; returns when `self` is resumed.
static void switch_out(vcpu_t* v, thread* self) {
    if (v->rq.empty()) idle_until_runnable(v, self);
    thread* next = v->rq.front();
    if (next == self) {  // woken while idling on our own stack
        if (metrics::kCounting && self->woken) {
            self->woken = false;
            note_delay(v, self);
        }
        return;
    }
    switch_to(v, self, next);
}

int sleep_current(uint64_t deadline, defer_func defer, void* arg) {
    thread* self = CURRENT;
    vcpu_t* v = self->vcpu;
    self->lock.lock();
    if (self->flags & TF_SHUTDOWN) {
        uint64_t cap = clock_now() + 10 * 1000;
        if (deadline > cap) deadline = cap;
    }
    self->error_number = -1;
    self->state = SLEEPING;
    self->slept_at = clock_now();
    if (deadline != UINT64_MAX) {
        self->deadline = deadline;
        v->sleepq.push(self);
    }
    // Leave the run queue before anyone can see SLEEPING: a remote waker
    // reuses the same links for the standby list.
    v->rq.erase(self);
    self->lock.unlock();
    if (defer) defer(arg);
    switch_out(v, self);
    int e = self->error_number;
    self->error_number = -1;
    return e;
}

bool vcpu_has_other_ready() {
    thread* self = CURRENT;
    if (!self) return false;
    return self->next() != self || self->vcpu->has_standby.load(std::memory_order_relaxed);
}

int thread_yield() {
    thread* self = CURRENT;
    if (!self) return 0;
    vcpu_t* v = self->vcpu;
    thread* next = self->next();
    if (next == self) {
        vcpu_maintenance(v, self);
        next = self->next();
        // A turn ends here too, for the slow-turn detector, though nothing else ran.
        if (next == self) __atomic_store_n(&v->lone_yields, v->lone_yields + 1, __ATOMIC_RELAXED);
    }
    if (next != self) {
        v->rq.node = next;
        switch_to(v, self, next);
    }
    int e = self->error_number;
    if (e > 0) {
        self->error_number = -1;
        return e;
    }
    return 0;
}

int thread_yield_to(thread* th) {
    thread* self = CURRENT;
    if (!th) return thread_yield();
    if (!self) {
        errno = ENOSYS;
        return -1;
    }
    if (th == self) {
        __update_now();
        return 0;
    }
    vcpu_t* v = self->vcpu;
    if (th->vcpu != v || th->state != READY) {
        errno = EINVAL;
        return -1;
    }
    v->rq.move_after(self, th);
    v->rq.node = th;
    switch_to(v, self, th);
    return 0;
}

namespace {

constexpr uint64_t kBounceStackSize = 64 * 1024;

// The bounce coroutine: switched to when a coroutine must leave its stack
// (it ends or migrates) and nothing else can run, so that the hook runs at
// once, on the bounce's stack, which then idles. Not counted in nthreads.
void* bounce_entry(void*) {
    while (true) sleep_current(UINT64_MAX, nullptr, nullptr);
}

bool wake_bounce(vcpu_t* v) {
    if (!v->bounce) {
        v->bounce = thread_create(&bounce_entry, nullptr, kBounceStackSize, 0, 0);
        if (!v->bounce) return false;
        v->nthreads--;
        return true;  // created READY
    }
    v->bounce->state = READY;
    v->rq.push_back(v->bounce);
    return true;
}

}  // namespace

void switch_out_hooked(vcpu_t* v, thread* self, arch::context_hook hook, void* arg, bool dies) {
    if (self->single() && !wake_bounce(v)) {
        v->rq.erase(self);
        idle_until_runnable(v, self);  // no stack for the bounce: wait here instead
    }
    v->rq.erase_if_queued(self);  // out already if it waited above
    thread* next = v->rq.front();
    maybe_offer_work(v, self, next);
    CURRENT = next;
    __atomic_store_n(&v->switch_count, v->switch_count + 1, __ATOMIC_RELAXED);
    next->woken = false;
    before_switch(self, next, dies);
    arch::photon_switch_context_hook(&self->sp, next->sp, hook, arg);
    after_switch(self);
}

void wake_wait_all(vcpu_t* v) {
    thread* w = v->wait_all_waiter;
    if (w && v->nthreads == 1) {
        v->wait_all_waiter = nullptr;
        w->lock.lock();
        if (w->state == SLEEPING) make_ready_locked(w, 0);
        w->lock.unlock();
    }
}

}  // namespace photon
