// State Threads' coroutine calls on photon (st.h): threads, sleeps, keys,
// condition variables, mutexes and time. st_init and the fd calls need the
// event engines and live in io/st_netfd.cpp.
#include <photon/thread/st.h>

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <ctime>
#include <functional>
#include <mutex>
#include <new>
#include <vector>

#include <photon/common/timeout.h>
#include <photon/thread/thread-key.h>
#include <photon/thread/thread.h>

namespace {

std::atomic<int> g_eventsys{ST_EVENTSYS_DEFAULT};
std::atomic<int> g_randomize_stacks{0};
std::atomic<int> g_timecache{0};
std::atomic<st_utime_t (*)(void)> g_utime_function{nullptr};

// Joinable coroutines of st_thread_create not joined yet, sorted. Only these
// may be joined: a non-joinable coroutine is freed when it ends, so any other
// pointer may dangle and cannot be checked.
std::mutex g_joinable_lock;
std::vector<void*> g_joinable;

// ST keys are small ints; photon's are 64-bit. Keys are never deleted.
constexpr int kMaxKeys = 1024;  // Photon's THREAD_KEYS_MAX
std::mutex g_keys_lock;
photon::thread_key_t g_keys[kMaxKeys];
std::atomic<int> g_nkeys{0};

struct st_cond : photon::condition_variable {
    bool busy() const { return q.head.load() != nullptr; }
};

struct st_mutex : photon::mutex {
    bool owned_by(photon::thread* th) const { return th && owner.load() == th; }
    bool busy() const { return owner.load() != nullptr || q.head.load() != nullptr; }
};

int fail(int e) {
    errno = e;
    return -1;
}

}  // namespace

extern "C" {

int st_set_eventsys(int eventsys) {
    if (eventsys < ST_EVENTSYS_DEFAULT || eventsys > ST_EVENTSYS_IOURING) return fail(EINVAL);
    g_eventsys = eventsys;
    return 0;
}

int st_get_eventsys(void) { return g_eventsys; }

int st_getfdlimit(void) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0) return -1;
    return rl.rlim_max == RLIM_INFINITY || rl.rlim_max > (rlim_t)INT_MAX ? INT_MAX
                                                                         : (int)rl.rlim_max;
}

st_thread_t st_thread_create(void* (*start)(void*), void* arg, int joinable, int stack_size) {
    if (!start || stack_size < 0) return errno = EINVAL, nullptr;
    uint64_t size = stack_size ? (uint64_t)stack_size : photon::DEFAULT_STACK_SIZE;
    if (!joinable) return photon::thread_create(start, arg, size);
    std::lock_guard<std::mutex> lock(g_joinable_lock);
    // Room first, so recording the new coroutine cannot fail after it exists.
    if (g_joinable.size() == g_joinable.capacity()) {
        try {
            g_joinable.reserve(std::max<size_t>(16, 2 * g_joinable.capacity()));
        } catch (const std::bad_alloc&) {
            return errno = ENOMEM, nullptr;
        }
    }
    void* th = photon::thread_create(start, arg, size, 0, photon::THREAD_JOINABLE);
    if (th) {
        auto at = std::upper_bound(g_joinable.begin(), g_joinable.end(), th, std::less<void*>());
        g_joinable.insert(at, th);
    }
    return th;
}

void st_thread_exit(void* retval) { photon::thread_exit(retval); }

int st_thread_join(st_thread_t thread, void** retvalp) {
    if (!thread) return fail(EINVAL);
    if (!photon::CURRENT) return fail(ENOSYS);
    if (thread == photon::CURRENT) return fail(EDEADLK);
    {
        std::lock_guard<std::mutex> lock(g_joinable_lock);
        auto it =
            std::lower_bound(g_joinable.begin(), g_joinable.end(), thread, std::less<void*>());
        if (it == g_joinable.end() || *it != thread) return fail(EINVAL);
        g_joinable.erase(it);
    }
    void* ret = photon::thread_join(reinterpret_cast<photon::join_handle*>(thread));
    if (retvalp) *retvalp = ret;
    return 0;
}

st_thread_t st_thread_self(void) { return photon::CURRENT; }

void st_thread_interrupt(st_thread_t thread) {
    if (thread) photon::thread_interrupt(static_cast<photon::thread*>(thread), EINTR);
}

int st_sleep(int secs) {
    return secs < 0 ? photon::thread_usleep(UINT64_MAX) : photon::thread_sleep((uint64_t)secs);
}

int st_usleep(st_utime_t usecs) { return photon::thread_usleep((uint64_t)usecs); }

int st_randomize_stacks(int on) { return g_randomize_stacks.exchange(on); }

int st_key_create(int* keyp, void (*destructor)(void*)) {
    if (!keyp) return fail(EINVAL);
    std::lock_guard<std::mutex> lock(g_keys_lock);
    int n = g_nkeys.load(std::memory_order_relaxed);
    if (n >= kMaxKeys) return fail(EAGAIN);
    if (int e = photon::thread_key_create(&g_keys[n], destructor)) return fail(e);
    g_nkeys.store(n + 1, std::memory_order_release);  // publishes g_keys[n]
    *keyp = n;
    return 0;
}

int st_key_getlimit(void) { return kMaxKeys; }

int st_thread_setspecific(int key, void* value) {
    if (key < 0 || key >= g_nkeys.load(std::memory_order_acquire)) return fail(EINVAL);
    int e = photon::thread_setspecific(g_keys[key], value);
    return e ? fail(e) : 0;
}

void* st_thread_getspecific(int key) {
    if (key < 0 || key >= g_nkeys.load(std::memory_order_acquire)) return nullptr;
    return photon::thread_getspecific(g_keys[key]);
}

st_cond_t st_cond_new(void) {
    auto c = new (std::nothrow) st_cond;
    if (!c) errno = ENOMEM;
    return c;
}

int st_cond_destroy(st_cond_t cvar) {
    auto c = static_cast<st_cond*>(cvar);
    if (!c) return fail(EINVAL);
    if (c->busy()) return fail(EBUSY);
    delete c;
    return 0;
}

int st_cond_wait(st_cond_t cvar) { return st_cond_timedwait(cvar, ST_UTIME_NO_TIMEOUT); }

int st_cond_timedwait(st_cond_t cvar, st_utime_t timeout) {
    if (!cvar) return fail(EINVAL);
    return static_cast<st_cond*>(cvar)->wait_no_lock(photon::Timeout(timeout));
}

int st_cond_signal(st_cond_t cvar) {
    if (!cvar) return fail(EINVAL);
    static_cast<st_cond*>(cvar)->signal();
    return 0;
}

int st_cond_broadcast(st_cond_t cvar) {
    if (!cvar) return fail(EINVAL);
    static_cast<st_cond*>(cvar)->broadcast();
    return 0;
}

st_mutex_t st_mutex_new(void) {
    auto m = new (std::nothrow) st_mutex;
    if (!m) errno = ENOMEM;
    return m;
}

int st_mutex_destroy(st_mutex_t lock) {
    auto m = static_cast<st_mutex*>(lock);
    if (!m) return fail(EINVAL);
    if (m->busy()) return fail(EBUSY);
    delete m;
    return 0;
}

int st_mutex_lock(st_mutex_t lock) {
    if (!lock) return fail(EINVAL);
    return static_cast<st_mutex*>(lock)->lock();
}

int st_mutex_trylock(st_mutex_t lock) {
    if (!lock) return fail(EINVAL);
    return static_cast<st_mutex*>(lock)->try_lock() == 0 ? 0 : fail(EBUSY);
}

int st_mutex_unlock(st_mutex_t lock) {
    auto m = static_cast<st_mutex*>(lock);
    if (!m) return fail(EINVAL);
    if (!m->owned_by(photon::CURRENT)) return fail(EPERM);
    m->unlock();
    return 0;
}

time_t st_time(void) { return ::time(nullptr); }

st_utime_t st_utime(void) {
    auto f = g_utime_function.load(std::memory_order_acquire);
    return f ? f() : (st_utime_t)photon::__update_now();
}

int st_set_utime_function(st_utime_t (*func)(void)) {
    g_utime_function.store(func, std::memory_order_release);
    return 0;
}

int st_timecache_set(int on) { return g_timecache.exchange(on); }

}  // extern "C"
