// vCPU life cycle, the clock, statistics and migration.
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <cstddef>
#include <mutex>
#include <new>
#include <chrono>
#include <ctime>
#include <thread>
#include <utility>

#include <photon/common/alog.h>

#include "arch/context.h"
#include "fiber_annotations.h"
#include "vcpu.h"

namespace photon {

void thread_key_run_destructors(thread* th);
void stack_guard_vcpu_init();
void stack_guard_vcpu_fini();

volatile uint64_t now = 0;

namespace {

std::atomic<uint32_t> g_vcpu_num{0};
std::atomic<int> g_vcpu_ids{0};

std::atomic<bool> g_updater_run{false};
std::thread* g_updater = nullptr;

// Every vCPU, for debuggers (tools/photon-gdb.py): the head is photon_gdb_vcpus.
std::mutex g_vcpus_mu;

void register_vcpu(vcpu_t* v);
void unregister_vcpu(vcpu_t* v);

void set_main_stack_bounds(thread* main) {
    pthread_attr_t attr;
    void* addr = nullptr;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        pthread_attr_getstack(&attr, &addr, &size);
        pthread_attr_destroy(&attr);
    }
    main->stack_lo = static_cast<char*>(addr);
    main->stack_hi = static_cast<char*>(addr) + size;
}

}  // namespace
}  // namespace photon

// What tools/photon-gdb.py reads, by symbol, with no debug information: the
// list of vCPUs, and where the fields it needs are. Version 1.
extern "C" {
__attribute__((used)) void* photon_gdb_vcpus = nullptr;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
__attribute__((used)) const unsigned long photon_gdb_layout[] = {
    1,  // version
    offsetof(photon::thread, sp),
    offsetof(photon::thread, state),
    offsetof(photon::thread, start),
    offsetof(photon::thread, stack_lo),
    offsetof(photon::thread, stack_hi),
    offsetof(photon::thread, all_next),
    offsetof(photon::thread, flags),
    offsetof(photon::vcpu_t, all_head),
    offsetof(photon::vcpu_t, id),
    offsetof(photon::vcpu_t, all_vcpus_next),
    offsetof(photon::vcpu_t, main),
};
#pragma GCC diagnostic pop
}

namespace photon {
namespace {

void register_vcpu(vcpu_t* v) {
    std::lock_guard<std::mutex> lock(g_vcpus_mu);
    v->all_vcpus_next = static_cast<vcpu_t*>(photon_gdb_vcpus);
    photon_gdb_vcpus = v;
}

void unregister_vcpu(vcpu_t* v) {
    std::lock_guard<std::mutex> lock(g_vcpus_mu);
    for (auto p = reinterpret_cast<vcpu_t**>(&photon_gdb_vcpus); *p; p = &(*p)->all_vcpus_next) {
        if (*p == v) {
            *p = v->all_vcpus_next;
            return;
        }
    }
}

}  // namespace

// A sleeper stays SLEEPING: TF_MIGRATING tells its wakers that it is queued
// already (make_ready_locked then only marks it STANDBY), and drain_standby
// puts it in `to`'s sleep queue.
void hand_over_locked(thread* th, vcpu_t* to) {
    to->nthreads.fetch_add(1, std::memory_order_relaxed);
    if (th->state != SLEEPING) th->state = STANDBY;
    th->flags |= TF_MIGRATING;
    th->vcpu = to;
    to->standby_lock.lock();
    to->standby.push_back(th);
    to->has_standby.store(true, std::memory_order_seq_cst);
    to->standby_lock.unlock();
}

vcpu_t* first_vcpu_locked() { return static_cast<vcpu_t*>(photon_gdb_vcpus); }

void vcpu_registry_lock() { g_vcpus_mu.lock(); }
void vcpu_registry_unlock() { g_vcpus_mu.unlock(); }

void for_each_vcpu_locked(void (*fn)(vcpu_t*, void*), void* arg) {
    std::lock_guard<std::mutex> lock(g_vcpus_mu);
    for (auto v = static_cast<vcpu_t*>(photon_gdb_vcpus); v; v = v->all_vcpus_next) fn(v, arg);
}

uint64_t __update_now() {
    uint64_t t = monotonic_ns() / 1000;
    // Several vCPUs write it: only ever move it forward.
    auto p = const_cast<uint64_t*>(&now);
    uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (t > cur &&
           !__atomic_compare_exchange_n(p, &cur, t, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return t;
}

int timestamp_updater_init() {
    bool expected = false;
    if (!g_updater_run.compare_exchange_strong(expected, true)) {
        errno = EALREADY;
        return -1;
    }
    try {
        g_updater = new std::thread([] {
            while (g_updater_run.load(std::memory_order_relaxed)) {
                __update_now();
                std::this_thread::sleep_for(std::chrono::microseconds(500));
            }
        });
    } catch (const std::exception& e) {  // bad_alloc, or system_error from the thread
        g_updater_run = false;
        LOG_ERROR_RETURN(EAGAIN, -1, "timestamp_updater_init: cannot start its thread: `",
                         e.what());
    }
    return 0;
}

int timestamp_updater_fini() {
    if (!g_updater_run.exchange(false)) {
        errno = EALREADY;
        return -1;
    }
    g_updater->join();
    delete g_updater;
    g_updater = nullptr;
    return 0;
}

int vcpu_init(uint64_t flags) {
    if (CURRENT) LOG_ERROR_RETURN(EALREADY, -1, "vcpu_init: this OS thread is a vCPU already");
    constexpr uint64_t kKnownFlags =
        VCPU_ENABLE_ACTIVE_WORK_STEALING | VCPU_ENABLE_PASSIVE_WORK_STEALING;
    if (flags & ~kKnownFlags) LOG_ERROR_RETURN(EINVAL, -1, "vcpu_init: unknown flags `", flags);
    auto v = new (std::nothrow) vcpu_t;
    auto main = new (std::nothrow) thread;
    if (!v || !main) {
        delete v;
        delete main;
        LOG_ERROR_RETURN(ENOMEM, -1, "vcpu_init: out of memory");
    }
    main->flags = TF_MAIN;
    main->vcpu = v;
    set_main_stack_bounds(main);
#ifdef PHOTON_TSAN
    main->tsan_fiber = __tsan_get_current_fiber();
#endif
    v->main = main;
    v->ws_flags = (uint8_t)flags;
    start_work_stealing(v);
    v->id = g_vcpu_ids.fetch_add(1);
    v->rng ^= (uint64_t)(uintptr_t)v * 0x9E3779B97F4A7C15ULL;
    v->rng |= 1;
    v->nthreads = 1;
    all_link(v, main);
    v->rq.push_back(main);
    slow_turn_vcpu_init(v);
    stats_vcpu_init();
    register_vcpu(v);
    CURRENT = main;
    stack_guard_vcpu_init();
    __update_now();
    return (int)g_vcpu_num.fetch_add(1) + 1;
}

int wait_all() {
    thread* self = CURRENT;
    if (!self) {
        errno = ENOSYS;
        return -1;
    }
    vcpu_t* v = self->vcpu;
    while (v->nthreads > 1) {
        v->wait_all_waiter = self;
        sleep_current(UINT64_MAX, nullptr, nullptr);
    }
    return 0;
}

int vcpu_fini() {
    thread* self = CURRENT;
    if (!self) LOG_ERROR_RETURN(ENOSYS, -1, "vcpu_fini: not a vCPU");
    if (!(self->flags & TF_MAIN))
        LOG_ERROR_RETURN(EPERM, -1, "vcpu_fini: must be called from the vCPU's main coroutine");
    vcpu_t* v = self->vcpu;
    close_work_stealing(v);  // before the wait: stolen work could land after it
    wait_all();
    thread_key_run_destructors(self);
    if (thread* b = v->bounce) {  // asleep for good; only its stack is left
#ifdef PHOTON_TSAN
        __tsan_destroy_fiber(b->tsan_fiber);
#endif
        v->stacks.put(b->stack);
    }
    // Remote wakeups that raced with the last exits land here; nobody is left.
    v->rq.erase(self);
    unregister_vcpu(v);
    end_dump(v);  // after: no dump can post a part to it any more
    slow_turn_vcpu_fini();
    CURRENT = nullptr;
    stack_guard_vcpu_fini();
    delete self;
    delete v;
    g_vcpu_num.fetch_sub(1);
    return 0;
}

void spin_yield() { sched_yield(); }

vcpu_base* get_vcpu(thread* th) { return th ? th->vcpu : nullptr; }

void set_vcpu_idle_wait(vcpu_base* v, idle_wait_engine* w) {
    if (!v) return;
    auto vt = static_cast<vcpu_t*>(v);
    vt->idle_wait = w;
    if (w) __atomic_store_n(&vt->idle_wait_name, w->idle_wait_name(), __ATOMIC_RELAXED);
}

uint64_t get_info(uint64_t type, vcpu_base* vb) {
    if (type == INFO_VCPU_NUM) return g_vcpu_num.load();
    auto v = static_cast<vcpu_t*>(vb ? vb : current_vcpu());
    if (!v) {
        errno = ENOSYS;
        return -1;
    }
    if (type == INFO_THREAD_NUM) return v->nthreads.load(std::memory_order_relaxed);
    if (v != current_vcpu()) {  // queues belong to their vCPU
        errno = EINVAL;
        return -1;
    }
    uint64_t runnable = 0;
    if (thread* f = v->rq.front()) {
        thread* p = f;
        do {
            runnable++;
            p = p->next();
        } while (p != f);
    }
    uint64_t standby = 0;  // woken, not yet back in the run queue
    v->standby_lock.lock();
    if (thread* f = v->standby.front()) {
        thread* p = f;
        do {
            standby++;
            p = p->next();
        } while (p != f);
    }
    v->standby_lock.unlock();
    uint64_t n = v->nthreads.load(std::memory_order_relaxed);
    switch (type) {
        case INFO_RUNNABLE_THREAD_NUM:
            return runnable;
        case INFO_STANDBY_THREAD_NUM:
            return standby;
        case INFO_SLEEPING_THREAD_NUM:
            return n > runnable + standby ? n - runnable - standby : 0;
        default:
            errno = EINVAL;
            return -1;
    }
}

namespace {

void migrate_hook(void* arg) {
    auto m = static_cast<std::pair<thread*, vcpu_t*>*>(arg);
    m->first->lock.lock();
    hand_over_locked(m->first, m->second);
    // Still under th->lock, as make_ready_locked does: `to` drains th only
    // after taking that lock, so it cannot run th, see it end and finish
    // (freeing itself) before we are done with it.
    notify_vcpu(m->second);
    m->first->lock.unlock();
}

// Why `th` (locked) cannot leave vCPU v: 0 if it can.
int unmovable_locked(thread* th, vcpu_t* v) {
    if (th->vcpu != v || (th->flags & (TF_MAIN | TF_DAEMON)) || th->state == DONE) return EINVAL;
    // Only v's event engine can deliver its event (the engines pin their
    // waiters); wait_all() watches v.
    if (th->pins) return EBUSY;  // parked in its vCPU's event engine, or pinned
    if (th->state == SLEEPING && th == v->wait_all_waiter) return EBUSY;
    return 0;
}

// Takes locked `th`, not running, off v's run queue, standby list and
// sleep queue; a sleeper keeps its deadline (UINT64_MAX if none) for the
// next vCPU's sleep queue. Runs on v, the only one that drains its standby.
void detach_locked(thread* th, vcpu_t* v) {
    if (th->state == READY) {
        v->rq.erase(th);
        return;
    }
    bool migrating_in = th->flags & TF_MIGRATING;  // its deadline is set already
    if (th->state == STANDBY || migrating_in) {
        v->standby_lock.lock();
        v->standby.erase(th);
        v->standby_lock.unlock();
    }
    if (th->in_sleepq)
        v->sleepq.erase(th);
    else if (!migrating_in)
        th->deadline = UINT64_MAX;  // sleep_current leaves it stale then
}

int migrate_self(thread* self, vcpu_t* to) {
    vcpu_t* v = self->vcpu;
    if (self->flags & (TF_MAIN | TF_DAEMON))
        LOG_ERROR_RETURN(EINVAL, -1, "thread_migrate: a main or daemon coroutine cannot move");
    if (self->pins) LOG_ERROR_RETURN(EBUSY, -1, "thread_migrate: pinned to its vCPU");
    if (to == v) return 0;
    v->nthreads--;
    wake_wait_all(v);
    all_unlink(v, self);
    // Handed over from the next coroutine's stack, once nothing runs on ours.
    std::pair<thread*, vcpu_t*> m{self, to};
    switch_out_hooked(v, self, &migrate_hook, &m, false);
    return 0;
}

int migrate_other(thread* th, vcpu_t* v, vcpu_t* to) {
    th->lock.lock();
    if (int e = unmovable_locked(th, v)) {
        th->lock.unlock();
        LOG_ERROR_RETURN(e, -1, "thread_migrate: coroutine ` cannot move (state `, flags `)", th,
                         (int)th->state, (uint32_t)th->flags);
    }
    if (to != v) {
        if (!(th->flags & TF_MIGRATING)) all_unlink(v, th);  // else not adopted here yet
        detach_locked(th, v);
        v->nthreads--;
        hand_over_locked(th, to);
        notify_vcpu(to);  // under th->lock: see migrate_hook
    }
    th->lock.unlock();
    if (to != v) wake_wait_all(v);
    return 0;
}

}  // namespace

int thread_migrate(thread* th, vcpu_base* vb) {
    thread* self = CURRENT;
    auto to = static_cast<vcpu_t*>(vb);
    if (!self || !to) LOG_ERROR_RETURN(EINVAL, -1, "thread_migrate: no such vCPU");
    if (!th || th == self) return migrate_self(self, to);
    return migrate_other(th, self->vcpu, to);
}

}  // namespace photon
