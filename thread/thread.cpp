// Coroutine life cycle: create, run, end, join; sleeping and interrupting.
#include <pthread.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>

#include <photon/common/alog.h>

#include "arch/context.h"
#include "fiber_annotations.h"
#include "stackful.h"
#include "vcpu.h"

namespace photon {

void thread_key_run_destructors(thread* th);

namespace {

constexpr uint64_t kMinStackSize = 16 * 1024;
constexpr uint64_t kMaxStackSize = 1ULL << 40;  // keeps page rounding from overflowing
constexpr size_t kCacheLine = 64;
// The control block sits up to this far below the stack top, at random.
constexpr uint64_t kRandomGapLines = 32;

uint64_t next_random(vcpu_t* v) {
    uint64_t x = v->rng;  // xorshift64
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return v->rng = x;
}

// Runs on the next coroutine's stack once `dead` has switched out for good.
void on_dead(void* arg) {
    auto dead = static_cast<thread*>(arg);
#ifdef PHOTON_TSAN
    __tsan_destroy_fiber(dead->tsan_fiber);
#endif
    annotate_stack_dead(dead->sp, dead->stack_hi);
    vcpu_t* v = CURRENT->vcpu;
    all_unlink(v, dead);
    dead->lock.lock();
    dead->state = DONE;
    if (dead->flags & TF_JOINABLE) {
        // The joiner frees it; publish DONE only now that its stack is idle.
        // Wake before unlocking: once the joiner sees DONE it may return and
        // end, and its control block must not be touched after that.
        if (thread* j = dead->joiner) wake_sleeper(j, 0);
        dead->lock.unlock();
        return;
    }
    dead->lock.unlock();
    v->stacks.put(dead->stack);
}

[[noreturn]] void thread_die(thread* self, void* retval) {
    if (self->flags & TF_MAIN) {
        LOG_FATAL("thread_exit() called on the main coroutine of a vCPU");
        abort();
    }
    thread_key_run_destructors(self);
    self->retval = retval;
    vcpu_t* v = self->vcpu;
    if (!(self->flags & TF_DAEMON)) {
        v->nthreads--;
        wake_wait_all(v);
    }
    // Wake the joiner now so that there is someone to switch to; it sees DONE
    // only after on_dead (and sleeps again if it gets there first).
    self->lock.lock();
    thread* j = (self->flags & TF_JOINABLE) ? self->joiner : nullptr;
    self->lock.unlock();
    if (j) wake_sleeper(j, 0);
    switch_out_hooked(v, self, &on_dead, self, true);
    __builtin_unreachable();
}

void thread_stub(void* arg) {
    auto self = static_cast<thread*>(arg);
#ifdef PHOTON_ASAN
    __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
#endif
    thread_die(self, self->start(self->arg));
}

void free_joined(thread* th) {
    vcpu_t* v = current_vcpu();
    v->stacks.put(th->stack);
}

}  // namespace

thread* thread_create(thread_entry start, void* arg, uint64_t stack_size, uint32_t reserved_space,
                      uint64_t flags) {
    thread* self = CURRENT;
    if (!self) LOG_ERROR_RETURN(ENOSYS, nullptr, "thread_create: not a vCPU (call photon::init)");
    if (!start) LOG_ERROR_RETURN(EINVAL, nullptr, "thread_create: null entry");
    if (stack_size == 0 || stack_size == DEFAULT_STACK_SIZE) stack_size = self->vcpu->default_stack;
    if (stack_size < kMinStackSize) stack_size = kMinStackSize;
    if (stack_size > kMaxStackSize)
        LOG_ERROR_RETURN(ENOMEM, nullptr, "thread_create: stack_size ` is too large", stack_size);
    if (reserved_space > stack_size / 2)
        LOG_ERROR_RETURN(EINVAL, nullptr, "thread_create: reserved_space ` > stack_size/2",
                         reserved_space);
    vcpu_t* v = self->vcpu;
    stack_block* b = v->stacks.get(stack_size);
    if (!b) return nullptr;  // logged, errno = ENOMEM

    char* top = reinterpret_cast<char*>(b);  // the block header is the top
    uint64_t gap = (next_random(v) % kRandomGapLines) * kCacheLine;
    auto tcb = reinterpret_cast<uintptr_t>(top - gap - sizeof(thread));
    tcb &= ~(uintptr_t)(kCacheLine - 1);
    auto th = new (reinterpret_cast<void*>(tcb)) thread;
    th->vcpu = v;
    th->start = start;
    th->arg = arg;
    th->stack = b;
    th->stack_hi = top;
    th->stack_lo = b->base + (b->total - b->usable);
    th->reserved_size = reserved_space;
    th->reserved =
        reinterpret_cast<char*>((tcb - reserved_space) & ~(uintptr_t)(arch::kStackAlignment - 1));
    if (flags & THREAD_JOINABLE) th->flags |= TF_JOINABLE;
    if (flags & THREAD_DAEMON) th->flags |= TF_DAEMON;
    if (flags & THREAD_ENABLE_WORK_STEALING) th->flags |= TF_STEAL;
    th->sp = arch::photon_make_context(th->reserved, &thread_stub, th);
#ifdef PHOTON_TSAN
    th->tsan_fiber = __tsan_create_fiber(0);
#endif
    if (!(flags & THREAD_DAEMON)) v->nthreads++;
    all_link(v, th);
    bump(v->ctr.created);
    stamp_ready(th);
    v->rq.push_back(th);
    return th;
}

void* __thread_reserved_space(thread* th, uint64_t reserved_size) {
    if (!th || reserved_size > th->reserved_size) return nullptr;
    return th->reserved;
}

void thread_exit(void* retval) {
    if (!CURRENT) abort();
    thread_die(CURRENT, retval);
}

states thread_stat(thread* th) {
    if (!th) return DONE;
    if (th == CURRENT) return RUNNING;
    return (states)th->state;  // the running coroutine of another vCPU shows READY
}

join_handle* thread_enable_join(thread* th, bool flag) {
    if (!th) LOG_ERROR_RETURN(EINVAL, nullptr, "thread_enable_join: null thread");
    th->lock.lock();
    if (th->state == DONE) {
        bool orphan = !flag && (th->flags & TF_JOINABLE);
        th->lock.unlock();
        if (!orphan) {
            errno = ESRCH;
        } else if (!CURRENT) {  // its stack can only go to a vCPU's pool
            errno = ENOSYS;
        } else {
            free_joined(th);  // ended while joinable: nobody else frees it
        }
        return nullptr;
    }
    if (flag)
        th->flags |= TF_JOINABLE;
    else
        th->flags &= ~TF_JOINABLE;
    th->lock.unlock();
    return flag ? reinterpret_cast<join_handle*>(th) : nullptr;
}

void* thread_join(join_handle* jh) {
    auto th = reinterpret_cast<thread*>(jh);
    thread* self = CURRENT;
    if (!th || !self) {
        errno = th ? ENOSYS : EINVAL;
        return nullptr;
    }
    th->lock.lock();
    if (!(th->flags & TF_JOINABLE)) {
        th->lock.unlock();
        LOG_ERROR_RETURN(ENOSYS, nullptr, "thread_join: thread is not joinable");
    }
    while (th->state != DONE) {
        th->joiner = self;
        // Unlock once committed to sleep, so the ending thread cannot miss us.
        sleep_current(
            UINT64_MAX, [](void* l) { static_cast<spinlock*>(l)->unlock(); }, &th->lock);
        th->lock.lock();
    }
    th->lock.unlock();
    void* ret = th->retval;
    free_joined(th);
    return ret;
}

uint64_t threads_create_join(uint64_t n, thread_entry start, void* arg, uint64_t stack_size) {
    // malloc'ed, not a vector: a C-style call must not throw bad_alloc.
    join_handle** handles = nullptr;
    uint64_t count = 0, cap = 0;
    for (; count < n; count++) {
        if (count == cap) {
            cap = cap ? cap * 2 : 64;
            auto p = static_cast<join_handle**>(realloc(handles, cap * sizeof(*handles)));
            if (!p) break;
            handles = p;
        }
        thread* th = thread_create(start, arg, stack_size, 0, THREAD_JOINABLE);
        if (!th) break;
        handles[count] = reinterpret_cast<join_handle*>(th);
    }
    for (uint64_t i = 0; i < count; i++) thread_join(handles[i]);
    free(handles);
    return count;
}

static int usleep_until(uint64_t deadline) {
    thread* self = CURRENT;
    if (!self) {
        errno = ENOSYS;
        return -1;
    }
    int e = sleep_current(deadline, nullptr, nullptr);
    if (e == kTimedOut) {
        if (!(self->flags & TF_SHUTDOWN)) return 0;
        e = EPERM;
    }
    if (e == 0) return 0;
    errno = e;
    return -1;
}

int thread_usleep(Timeout timeout) {
    if (!CURRENT) {
        errno = ENOSYS;
        return -1;
    }
    if (timeout.expired()) {
        thread_yield();
        return 0;
    }
    return usleep_until(timeout.expiration());
}

int thread_usleep(uint64_t useconds) {
    if (!CURRENT) {
        errno = ENOSYS;
        return -1;
    }
    if (useconds == 0) {
        thread_yield();
        return 0;
    }
    if (useconds == UINT64_MAX) return usleep_until(UINT64_MAX);  // no clock read for "forever"
    uint64_t t = __update_now();
    return usleep_until(t + useconds < t ? UINT64_MAX : t + useconds);
}

int thread_usleep_defer(Timeout timeout, defer_func defer, void* defer_arg) {
    thread* self = CURRENT;
    if (!self) {
        errno = ENOSYS;
        return -1;
    }
    int e = sleep_current(timeout.expiration(), defer, defer_arg);
    if (e == kTimedOut) return (self->flags & TF_SHUTDOWN) ? (errno = EPERM, -1) : 0;
    if (e == 0) return 0;
    errno = e;
    return -1;
}

void thread_pin_current(bool pin) {
    if (thread* self = CURRENT) self->pins += pin ? 1 : -1;
}

// th (locked) was READY when it was handed to another vCPU (migrated or stolen), which has not
// adopted it yet: an interrupt is for its next thread_yield(), as for any READY one. A woken
// sleeper there has its wakeup result instead (-1 is none).
static bool on_its_way_ready(const thread* th) {
    return th->state == STANDBY && (th->flags & TF_MIGRATING) && th->error_number == -1;
}

int thread_interrupt(thread* th, int error_number) {
    if (!th) {
        errno = EINVAL;
        return -1;
    }
    SCOPED_LOCK(th->lock);
    switch (th->state) {
        case SLEEPING:
            make_ready_locked(th, error_number);
            return 0;
        case DONE:
            errno = ESRCH;
            return -1;
        case STANDBY:  // already being woken, or a READY one on its way to another vCPU
            if (on_its_way_ready(th) && error_number > 0) th->error_number = error_number;
            return 0;
        default:  // READY: seen by its next thread_yield(); the caller itself: none
            if (error_number > 0 && th != CURRENT) th->error_number = error_number;
            return 0;
    }
}

int thread_shutdown(thread* th, bool flag) {
    if (!th) {
        errno = EINVAL;
        return -1;
    }
    {
        SCOPED_LOCK(th->lock);
        if (th->state == DONE) {
            errno = ESRCH;
            return -1;
        }
        if (!flag) {
            th->flags &= ~TF_SHUTDOWN;
            return 0;
        }
        th->flags |= TF_SHUTDOWN;
        // Wake it while still holding its lock: once released, a coroutine
        // that is not joinable may end and its control block be reused.
        if (th->state == SLEEPING)
            make_ready_locked(th, EPERM);
        else if (th != CURRENT && (th->state == READY || on_its_way_ready(th)))
            th->error_number = EPERM;
    }
    return 0;
}

int stack_pages_gc(thread* th) {
    if (!th) {
        errno = EINVAL;
        return -1;
    }
    char* sp = th == CURRENT ? (char*)__builtin_frame_address(0) : (char*)th->sp;
    if (!th->stack || sp < th->stack_lo || sp > th->stack_hi) {
        errno = EINVAL;
        return -1;
    }
    // Keep a margin below sp for the calls still to come from here, and the
    // stackful_malloc() blocks at the bottom.
    const uintptr_t ps = page_size();
    auto end = ((uintptr_t)sp - 2 * ps) & ~(ps - 1);
    auto begin = (uintptr_t)th->stack_lo;
    if (char* used = stackful_end(th)) begin = ((uintptr_t)used + ps - 1) & ~(ps - 1);
    if (end <= begin) return 0;
    return madvise((void*)begin, end - begin, MADV_DONTNEED);
}

int set_default_stack_size(uint64_t size) {
    thread* self = CURRENT;
    if (!self) LOG_ERROR_RETURN(ENOSYS, -1, "set_default_stack_size: not a vCPU");
    if (size > kMaxStackSize)
        LOG_ERROR_RETURN(EINVAL, -1, "set_default_stack_size: ` is too large", size);
    if (size == 0) size = DEFAULT_STACK_SIZE;
    self->vcpu->default_stack = size < kMinStackSize ? kMinStackSize : size;
    return 0;
}

uint64_t get_default_stack_size() {
    thread* self = CURRENT;
    return self ? self->vcpu->default_stack : DEFAULT_STACK_SIZE;
}

int thread_stack_stat(thread* th, stack_stat* out) {
    if (!th || !out || !th->stack) {
        errno = EINVAL;
        return -1;
    }
    const size_t ps = page_size();
    char* lo = th->stack_lo;
    char* hi = th->stack->base + th->stack->total;  // page-aligned end of the slot
    const size_t pages = (size_t)(hi - lo) / ps;
    // The lowest resident page, found a chunk at a time from the bottom.
    unsigned char vec[256];
    size_t lowest = pages;
    for (size_t at = 0; at < pages && lowest == pages; at += sizeof(vec)) {
        size_t k = std::min(sizeof(vec), pages - at);
        if (mincore(lo + at * ps, k * ps, vec) < 0) return -1;
        for (size_t i = 0; i < k; i++)
            if (vec[i] & 1) {
                lowest = at + i;
                break;
            }
    }
    out->size = (uint64_t)(th->stack_hi - lo);
    out->used_max = (uint64_t)(pages - lowest) * ps;
    return 0;
}

__make_sure_yield::__make_sure_yield() {
    vcpu_t* v = current_vcpu();
    count = v ? v->switch_count : 0;
}

__make_sure_yield::~__make_sure_yield() {
    vcpu_t* v = current_vcpu();
    if (v && v->switch_count == count) thread_yield();
}

}  // namespace photon
