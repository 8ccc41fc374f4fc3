// Thread pool: coroutines that are kept after their work ends and reused for
// the next thread_create on the pool, as PhotonLibOS declares it. A pool
// keeps at most `capacity` idle coroutines (more run at once if asked; the
// surplus ends with its work). Their stacks are `stack_size` each. Each piece
// of work starts with no coroutine-local values, and the ones it set are
// destroyed when it returns. Create and join on any vCPU; a pooled coroutine
// runs on the vCPU that first created it.
//
// Differences from PhotonLibOS: doc/compat.md#threadthread-poolh
// Floor: runtime (tools/floors.txt), above its folder's: it needs vCPUs and engines.
#pragma once

#include <cstdint>

#include <photon/common/identity-pool.h>
#include <photon/thread/thread.h>

namespace photon {

class ThreadPoolBase;

// A pooled coroutine and the work it was given. Lives on its stack.
struct TPControl {
    thread* th;
    ThreadPoolBase* pool;
    thread_entry start;  // the work; nullptr while idle
    void* arg;
    condition_variable cvar;
    bool joinable, joining;
    photon::spinlock m_mtx;
};

class ThreadPoolBase : protected IdentityPool0<TPControl> {
public:
    using IdentityPool0<TPControl>::enable_autoscale;
    using IdentityPool0<TPControl>::disable_autoscale;

    // Runs start(arg) in a pooled coroutine; nullptr with errno if none could
    // be made. The coroutine is not joinable through this call.
    thread* thread_create(thread_entry start, void* arg) {
        TPControl* c = thread_create_ex(start, arg);
        return c ? c->th : nullptr;
    }
    // As thread_create; with joinable, join() waits for the work and must be
    // called once. Returns a handle that needs no freeing, nullptr on failure.
    TPControl* thread_create_ex(thread_entry start, void* arg, bool joinable = false);
    // Waits until the work of a joinable thread_create_ex has returned.
    void join(TPControl* pCtrl);

    // A pool on the heap: delete it with delete_thread_pool. nullptr if out of memory.
    static ThreadPoolBase* new_thread_pool(uint32_t capacity,
                                           uint64_t stack_size = DEFAULT_STACK_SIZE);
    // Waits for running work to end, then ends the idle coroutines.
    static void delete_thread_pool(ThreadPoolBase* p);

protected:
    typedef IdentityPool0<TPControl> B;
    static void* stub(void* arg);
    static int ctor(ThreadPoolBase*, TPControl**);
    static int dtor(ThreadPoolBase*, TPControl*);
    static bool wait_for_work(TPControl& ctrl);
    static bool after_work_done(TPControl& ctrl);
    static bool do_thread_join(TPControl* pCtrl);
    void init(uint64_t stack_size) {
        set_ctor({this, &ctor});
        set_dtor({this, &dtor});
        m_reserved = (void*)stack_size;
    }
    ThreadPoolBase(uint32_t capacity, void** items, uint64_t stack_size) : B(capacity, items) {
        init(stack_size);
    }
    // Only through delete_thread_pool (or a ThreadPool going out of scope).
    ~ThreadPoolBase() {}
};

inline ThreadPoolBase* new_thread_pool(uint32_t capacity,
                                       uint64_t stack_size = DEFAULT_STACK_SIZE) {
    return ThreadPoolBase::new_thread_pool(capacity, stack_size);
}

inline void delete_thread_pool(ThreadPoolBase* p) { ThreadPoolBase::delete_thread_pool(p); }

// With flag, every pool's thread_create is a plain photon::thread_create (the
// pooled stack allocator makes that about as cheap). Process-wide.
void set_bypass_threadpool(bool flag = true);

// A pool with room for CAPACITY idle coroutines inside it.
template <uint32_t CAPACITY>
class ThreadPool : public ThreadPoolBase {
public:
    ThreadPool(uint64_t stack_size = DEFAULT_STACK_SIZE)
        : ThreadPoolBase(CAPACITY, slots_, stack_size) {}

protected:
    void* slots_[CAPACITY ? CAPACITY : 1];
};

}  // namespace photon
