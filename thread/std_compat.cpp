#include <photon/thread/std-compat.h>

#include <photon/common/alog.h>
#include <photon/thread/workerpool.h>

#include <atomic>
#include <mutex>

namespace photon_std {

namespace {

::std::atomic<photon::WorkPool*> g_work_pool{nullptr};
::std::mutex g_work_pool_mutex;  // serializes init and fini

}  // namespace

namespace detail {

void spread_into_work_pool(photon::thread* th) {
    if (photon::WorkPool* pool = g_work_pool.load(::std::memory_order_acquire))
        pool->thread_migrate(th);  // on failure (logged) it stays here
}

void throw_error(int err, const char* what) {
    LOG_ERROR(what, ": ", ERRNO(err));
    throw ::std::system_error(err, ::std::generic_category(), what);
}

}  // namespace detail

void __throw_system_error(int err_num, const char* msg) { detail::throw_error(err_num, msg); }

void thread::join() {
    if (!joinable()) detail::throw_error(EINVAL, "photon_std::thread::join: not joinable");
    if (th_ == photon::CURRENT)
        detail::throw_error(EDEADLK, "photon_std::thread::join: joining itself");
    photon::thread_join(reinterpret_cast<photon::join_handle*>(th_));
    th_ = nullptr;
}

void thread::detach() {
    if (!joinable()) detail::throw_error(EPERM, "photon_std::thread::detach: not joinable");
    photon::thread_enable_join(th_, false);
    th_ = nullptr;
}

void this_thread::migrate() {
    photon::WorkPool* pool = g_work_pool.load(::std::memory_order_acquire);
    if (!pool) detail::throw_error(EPERM, "photon_std::this_thread::migrate: no work pool");
    if (pool->thread_migrate(photon::CURRENT) < 0)
        detail::throw_error(errno, "photon_std::this_thread::migrate");
}

int work_pool_init(int vcpu_num, int event_engine, int io_engine) {
    if (vcpu_num < 1) LOG_ERROR_RETURN(EINVAL, -1, "work_pool_init: vcpu_num ` < 1", vcpu_num);
    ::std::lock_guard<::std::mutex> l(g_work_pool_mutex);
    if (g_work_pool.load()) LOG_ERROR_RETURN(EALREADY, -1, "work_pool_init: the pool exists");
    g_work_pool.store(new photon::WorkPool(vcpu_num, event_engine, io_engine),
                      ::std::memory_order_release);
    return 0;
}

int work_pool_fini() {
    photon::WorkPool* pool;
    {
        ::std::lock_guard<::std::mutex> l(g_work_pool_mutex);
        pool = g_work_pool.exchange(nullptr);
    }
    if (!pool) LOG_ERROR_RETURN(EALREADY, -1, "work_pool_fini: no pool");
    delete pool;  // may sleep this coroutine: not under the mutex
    return 0;
}

}  // namespace photon_std
