// vCPU life cycle, the clock, statistics and migration.
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <thread>

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

uint64_t __update_now() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t t = (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
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
    g_updater = new std::thread([] {
        while (g_updater_run.load(std::memory_order_relaxed)) {
            __update_now();
            std::this_thread::sleep_for(std::chrono::microseconds(500));
        }
    });
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
    auto v = new vcpu_t;
    auto main = new thread;
    main->flags = TF_MAIN;
    main->vcpu = v;
    set_main_stack_bounds(main);
#ifdef PHOTON_TSAN
    main->tsan_fiber = __tsan_get_current_fiber();
#endif
    v->main = main;
    v->id = g_vcpu_ids.fetch_add(1);
    v->rng ^= (uint64_t)(uintptr_t)v * 0x9E3779B97F4A7C15ULL;
    v->rng |= 1;
    v->nthreads = 1;
    v->rq.push_back(main);
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
    CURRENT = nullptr;
    stack_guard_vcpu_fini();
    delete self;
    delete v;
    g_vcpu_num.fetch_sub(1);
    return 0;
}

vcpu_base* get_vcpu(thread* th) { return th ? th->vcpu : nullptr; }

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

// Queues `th` (off every queue of its old vCPU) on `to`, which adopts it.
void hand_over(thread* th, vcpu_t* to) {
    to->nthreads.fetch_add(1, std::memory_order_relaxed);
    // Queue and notify under th->lock, as make_ready_locked does: `to` drains
    // th only after taking that lock, so it cannot run th, see it end and
    // finish (freeing itself) before we are done with it.
    th->lock.lock();
    th->state = STANDBY;
    th->flags |= TF_MIGRATING;
    th->vcpu = to;
    to->standby_lock.lock();
    to->standby.push_back(th);
    to->has_standby.store(true, std::memory_order_seq_cst);
    to->standby_lock.unlock();
    notify_vcpu(to);
    th->lock.unlock();
}

struct migration {
    thread* th;
    vcpu_t* to;
};

void migrate_hook(void* arg) {
    auto m = static_cast<migration*>(arg);
    hand_over(m->th, m->to);
}

}  // namespace

int thread_migrate(thread* th, vcpu_base* vb) {
    thread* self = CURRENT;
    auto to = static_cast<vcpu_t*>(vb);
    if (!self || !to) LOG_ERROR_RETURN(EINVAL, -1, "thread_migrate: no such vCPU");
    if (!th) th = self;
    vcpu_t* v = self->vcpu;
    if (th->vcpu != v || (th != self && th->state != READY) || (th->flags & TF_MAIN))
        LOG_ERROR_RETURN(EINVAL, -1, "thread_migrate: only a READY coroutine of this vCPU");
    if (to == v) return 0;
    v->nthreads--;
    wake_wait_all(v);
    if (th != self) {
        v->rq.erase(th);
        hand_over(th, to);
    } else {
        // Handed over from the next coroutine's stack, once nothing runs on ours.
        migration m{self, to};
        switch_out_hooked(v, self, &migrate_hook, &m, false);
    }
    return 0;
}

}  // namespace photon
