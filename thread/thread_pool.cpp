// photon/thread/thread-pool.h. A pooled coroutine keeps its TPControl in its
// reserved space and loops: wait for work, run it, drop its coroutine-local
// values, hand itself back to the pool (or to its joiner, who does that).
#include <photon/thread/thread-pool.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include <photon/common/alog.h>

namespace photon {

void thread_key_run_destructors(thread* th);  // thread_key.cpp

namespace {

std::atomic<bool> g_bypass{false};

}  // namespace

void set_bypass_threadpool(bool flag) { g_bypass.store(flag, std::memory_order_relaxed); }

ThreadPoolBase* ThreadPoolBase::new_thread_pool(uint32_t capacity, uint64_t stack_size) {
    void* mem = malloc(sizeof(ThreadPoolBase) + sizeof(void*) * (size_t)(capacity ? capacity : 1));
    if (!mem) LOG_ERROR_RETURN(ENOMEM, nullptr, "new_thread_pool: out of memory");
    auto items = reinterpret_cast<void**>(static_cast<char*>(mem) + sizeof(ThreadPoolBase));
    return new (mem) ThreadPoolBase(capacity, items, stack_size);
}

void ThreadPoolBase::delete_thread_pool(ThreadPoolBase* p) {
    if (!p) return;
    p->~ThreadPoolBase();
    free(p);
}

TPControl* ThreadPoolBase::thread_create_ex(thread_entry start, void* arg, bool joinable) {
    if (!start) LOG_ERROR_RETURN(EINVAL, nullptr, "thread pool: null entry");
    if (m_capacity == 0 || g_bypass.load(std::memory_order_relaxed)) {
        // A plain coroutine; its control only serves join (pool == nullptr).
        thread* th = photon::thread_create(start, arg, (uint64_t)m_reserved, sizeof(TPControl));
        if (!th) return nullptr;  // logged, errno set
        auto c = new (thread_reserved_space<TPControl>(th)) TPControl{};
        c->th = th;
        c->start = start;
        c->arg = arg;
        c->joinable = joinable;
        if (joinable) thread_enable_join(th);
        return c;
    }
    TPControl* c = B::get();
    if (!c) return nullptr;  // the constructor logged why
    SCOPED_LOCK(c->m_mtx);
    c->joinable = joinable;
    c->joining = false;
    c->start = start;
    c->arg = arg;
    c->cvar.notify_one();
    return c;
}

bool ThreadPoolBase::wait_for_work(TPControl& ctrl) {
    SCOPED_LOCK(ctrl.m_mtx);
    while (!ctrl.start) ctrl.cvar.wait(ctrl.m_mtx);
    return ctrl.start != &stub;  // &stub: told to end
}

// The worker and its joiner meet here and in do_thread_join: whichever comes
// first waits for the other, and puts the control back into the pool.
bool ThreadPoolBase::after_work_done(TPControl& ctrl) {
    SCOPED_LOCK(ctrl.m_mtx);
    bool first = !ctrl.joining;
    if (!first) {  // the joiner waits: release it
        ctrl.joining = false;
        ctrl.cvar.notify_all();
    } else if (ctrl.joinable) {
        ctrl.joining = true;
        while (ctrl.joining) ctrl.cvar.wait(ctrl.m_mtx);
    }
    ctrl.joinable = false;
    ctrl.start = nullptr;
    return first;
}

bool ThreadPoolBase::do_thread_join(TPControl* c) {
    SCOPED_LOCK(c->m_mtx);
    if (!c->joinable) LOG_ERROR_RETURN(EINVAL, false, "thread pool join: not joinable");
    if (!c->start || c->start == &stub)
        LOG_ERROR_RETURN(EINVAL, false, "thread pool join: no work to join");
    bool first = !c->joining;
    if (!first) {  // the worker is done and waits: release it
        c->joining = false;
        c->cvar.notify_all();
    } else {
        c->joining = true;
        while (c->joining) c->cvar.wait(c->m_mtx);
    }
    return first;
}

void ThreadPoolBase::join(TPControl* c) {
    if (!c) return;
    if (!c->pool) {  // created bypassing the pool
        photon::thread_join(reinterpret_cast<join_handle*>(c->th));
        return;
    }
    if (do_thread_join(c)) c->pool->put(c);
}

void* ThreadPoolBase::stub(void*) {
    TPControl& ctrl = *thread_reserved_space<TPControl>(CURRENT);
    while (wait_for_work(ctrl)) {
        ctrl.start(ctrl.arg);
        thread_key_run_destructors(CURRENT);  // the next work starts with none
        if (after_work_done(ctrl)) ctrl.pool->put(&ctrl);
    }
    return nullptr;
}

int ThreadPoolBase::ctor(ThreadPoolBase* pool, TPControl** out) {
    thread* th =
        photon::thread_create(&stub, nullptr, (uint64_t)pool->m_reserved, sizeof(TPControl));
    if (!th) return -1;  // logged, errno set
    // Ready before it first runs (when its creator next yields).
    auto c = new (thread_reserved_space<TPControl>(th)) TPControl{};
    c->th = th;
    c->pool = pool;
    *out = c;
    return 0;
}

// Ends an idle pooled coroutine: it sees &stub and returns. Nothing touches
// `c` after the unlock: that coroutine may end, and its stack go, at once.
int ThreadPoolBase::dtor(ThreadPoolBase*, TPControl* c) {
    SCOPED_LOCK(c->m_mtx);
    c->start = &stub;
    c->cvar.notify_all();
    return 0;
}

}  // namespace photon
