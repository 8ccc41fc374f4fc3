// Code written the way PhotonLibOS users write it, against the thread/
// headers: Photon's includes, names and call shapes (qspinlock, qrwlock, a
// primitive derived from waitq, locker's do_lock, thread_create11 with
// reference parameters, coroutine keys, the stack allocator facade and
// options, Timer, WorkPool, photon_std's future/promise), compiled
// unchanged. The functions above the gtest include see only what the photon
// headers included.
#include <photon/photon.h>
#include <photon/common/alog.h>
#include <photon/thread/stack-allocator.h>
#include <photon/thread/std-compat.h>
#include <photon/thread/thread-key.h>
#include <photon/thread/thread-local.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>
#include <photon/thread/timer.h>
#include <photon/thread/workerpool.h>

#include <cstring>
#include <string>

namespace {

using namespace photon;

// A one-shot event, built on waitq as a Photon library would build one.
class event : public waitq {
public:
    int wait_ready(Timeout timeout = {}) {
        if (ready) return 0;
        return wait(timeout);
    }
    void set() {
        ready = true;
        resume_all();
    }

private:
    bool ready = false;
};

void worker(event& ev, int& hits, const std::string& tag) {
    if (ev.wait_ready() == 0 && tag == "w") hits++;
}

int waitq_event_round() {
    event ev;
    int hits = 0;
    for (int i = 0; i < 3; i++) thread_create11(&worker, ev, hits, std::string("w"));
    thread_yield();
    ev.set();
    wait_all();
    return hits;
}

// qspinlock and qrwlock in the shapes Photon code uses.
int lock_round() {
    qspinlock ql;
    { SCOPED_LOCK(ql); }
    qrwlock rw;
    int readers = 0;
    if (rw.lock(RLOCK) == 0) readers++;
    if (rw.try_lock(RLOCK) == 0) readers++;
    bool writer_blocked = rw.try_lock(WLOCK) != 0;
    rw.unlock();
    rw.unlock();
    bool writer_ok = rw.lock(WLOCK, 1000 * 1000) == 0;
    rw.unlock();
    bool unlocked_again = rw.unlock() == -1 && errno == ENOLCK;
    mutex m;
    {
        SCOPED_LOCK(m, 1);  // one lock() call
        if (!m.locked()) return -1;
    }
    return readers == 2 && writer_blocked && writer_ok && unlocked_again ? 0 : -1;
}

// Coroutine keys: pthread-style results, deallocate_tls() between jobs.
int key_round() {
    static int destroyed = 0;
    thread_key_t key;
    if (thread_key_create(&key, [](void*) { destroyed++; }) != 0) return -1;
    int done = 0;
    thread_create11([&] {
        static int value;
        if (thread_setspecific(key, &value) != 0) return;
        deallocate_tls();  // a pool worker finishing a job
        if (thread_getspecific(key) == nullptr) done++;
    });
    wait_all();
    bool full = THREAD_KEYS_MAX >= 1024;
    return thread_key_delete(key) == 0 && thread_key_delete(key) == EINVAL && done == 1 &&
                   destroyed == 1 && full
               ? 0
               : -1;
}

// A user stack allocator installed whole, then Photon's default restored.
struct MyStackAllocator {
    int allocs = 0;
    void* alloc(size_t size) {
        allocs++;
        return default_photon_thread_stack_alloc(nullptr, size);
    }
    void dealloc(void* ptr, size_t size) {
        default_photon_thread_stack_dealloc(nullptr, ptr, size);
    }
    size_t trim(size_t keep) { return keep; }
    StackPoolStats stats() { return {}; }
};

int stack_allocator_round() {
    MyStackAllocator mine;
    auto saved = get_photon_thread_stack_allocator();
    if (set_photon_thread_stack_allocator(mine) != 0) return -1;
    auto th = thread_create11(64 * 1024, [] { thread_yield(); });
    thread_join(thread_enable_join(th));
    set_photon_thread_stack_allocator(saved);
    GlobalStackPoolOptions opts;
    opts.per_vcpu_cache_bytes = 32ULL << 20;
    if (use_global_pooled_stack_allocator(opts) != 0) return -1;
    auto stats = global_pooled_stack_stats();
    global_pooled_stack_trim();
    return mine.allocs == 1 && stats.mapped_bytes > 0 ? 0 : -1;
}

// Timer: created disarmed, armed by reset(), paused by stop().
int timer_round() {
    int fired = 0;
    auto on_timer = [&]() -> uint64_t {
        fired++;
        return 1000;  // the next timeout: the default one is "never"
    };
    Timer timer(-1, {&on_timer, &decltype(on_timer)::operator()}, true);
    timer.reset(1000);
    while (fired < 2) thread_usleep(1000);
    timer.stop();
    int seen = fired;
    thread_usleep(5000);
    return fired == seen ? 0 : -1;
}

// photon_std futures between a coroutine and a work-pool task.
int std_future_round() {
    photon_std::promise<int> p;
    auto f = p.get_future();
    WorkPool pool(1, INIT_EVENT_NONE, INIT_IO_NONE, -1);
    pool.async_call(new auto([p]() mutable { p.set_value(21); }));
    photon_std::thread::id me = CURRENT;
    if (me != photon_std::this_thread::get_id()) return -1;
    return f.get() * 2;
}

// Frames at the low end of the coroutine's stack.
int stackful_round() {
    int ok = 0;
    auto th = thread_create11([&] {
        auto p = (char*)stackful_malloc(256);
        if (!p) return;
        memset(p, 0, 256);
        stackful_free(p);
        ok = 1;
    });
    thread_join(thread_enable_join(th));
    spin_wait_n(4);
    spill_additional_fp_simd_regs();
    return ok;
}

}  // namespace

#include <gtest/gtest.h>

TEST(ThreadApiStyle, PhotonThreadCodeCompilesAndRuns) {
    PhotonOptions opts;
    opts.use_pooled_stack_allocator = STACK_ALLOCATOR_GLOBAL_POOLED;
    ASSERT_EQ(0, photon::init(INIT_EVENT_EPOLL, INIT_IO_NONE, opts));
    EXPECT_FALSE(is_master_event_engine_default());
    EXPECT_EQ(3, waitq_event_round());
    EXPECT_EQ(0, lock_round());
    EXPECT_EQ(0, key_round());
    EXPECT_EQ(0, stack_allocator_round());
    EXPECT_EQ(0, timer_round());
    EXPECT_EQ(42, std_future_round());
    EXPECT_EQ(1, stackful_round());
    EXPECT_EQ(0, photon::fini());
}
