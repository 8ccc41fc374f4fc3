// photon_std: std::thread, std::mutex, std::condition_variable and
// std::this_thread on photon coroutines, so that code written against the
// standard ones runs on coroutines by changing the namespace only. Errors are
// logged and thrown as std::system_error, as the standard classes do.
//
// Opt-in extension: with PHOTON_STD_ALIAS defined before the include,
// photon::std is an alias of photon_std; everything photon_std does not
// redefine resolves to ::std, so `std::vector` still works inside namespace
// photon. It is off by default because PhotonLibOS has no such alias, and a
// file with `using namespace photon;` at global scope that names `std::`
// would see two `std`s. (PHOTON_NO_STD_ALIAS is still honoured.)
//
// future<T> / promise<T> are PhotonLibOS's: a shared photon::Future<T>
// underneath (so get() waits the way its Awaiter does) and a single
// set_value(). A promise destroyed without a value makes its future's get()
// throw (broken_promise); get() of a future<void> returns void.
// Differences from PhotonLibOS: doc/compat.md#threadstd-compath
// Floor: runtime (tools/floors.txt), above its folder's: it needs vCPUs and engines.
#pragma once

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <ostream>
#include <system_error>
#include <thread>
#include <utility>

#include <photon/photon.h>
#include <photon/thread/future.h>
#include <photon/thread/thread-local.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

namespace photon_std {

using namespace ::std;  // everything not redefined below

using cv_status = ::std::cv_status;
using defer_lock_t = ::std::defer_lock_t;
using try_to_lock_t = ::std::try_to_lock_t;
using adopt_lock_t = ::std::adopt_lock_t;

// Logs and throws std::system_error(err_num, generic_category(), msg).
[[noreturn]] void __throw_system_error(int err_num, const char* msg);

namespace detail {

[[noreturn]] void throw_error(int err, const char* what);

// Moves `th`, a new READY coroutine, round-robin into the work pool, if any.
void spread_into_work_pool(photon::thread* th);

// Microseconds from now to `d` for photon's sleeps: <= 0 is 0, huge is -1.
template <class Rep, class Period>
uint64_t to_us(const ::std::chrono::duration<Rep, Period>& d) {
    using namespace ::std::chrono;
    if (d <= d.zero()) return 0;
    constexpr auto century = hours(24 * 365 * 100);
    if (d > century) return UINT64_MAX;  // compared in the common type: no overflow
    auto us = duration_cast<microseconds>(d);
    if (us < d) us += microseconds(1);  // never wake early
    return (uint64_t)us.count();
}

template <class Clock, class Duration>
uint64_t until_us(const ::std::chrono::time_point<Clock, Duration>& t) {
    return to_us(t - Clock::now());
}

}  // namespace detail

// Photon's name for detail::to_us(): microseconds for photon's sleeps, 0 for
// none, at least 1 for any positive duration (rounded up), -1 past 100 years.
template <typename Rep, typename Period>
inline uint64_t __duration_to_microseconds(const ::std::chrono::duration<Rep, Period>& d) {
    return detail::to_us(d);
}

class thread {
public:
    class id {
    public:
        id() noexcept = default;
        id(photon::thread* th) noexcept : th_(th) {}  // implicit, as Photon's
        uint64_t value() const noexcept { return (uint64_t)(uintptr_t)th_; }
        bool operator==(const id& r) const noexcept { return th_ == r.th_; }
        bool operator!=(const id& r) const noexcept { return th_ != r.th_; }
        bool operator<(const id& r) const noexcept { return value() < r.value(); }
        friend ::std::ostream& operator<<(::std::ostream& os, const id& x) {
            return os << (void*)x.th_;
        }

    private:
        photon::thread* th_ = nullptr;
    };

    thread() noexcept = default;
    template <typename Function, typename... Args>
    explicit thread(Function&& f, Args&&... args) {
        th_ = photon::thread_create11(::std::forward<Function>(f), ::std::forward<Args>(args)...);
        if (!th_) detail::throw_error(errno, "photon_std::thread: cannot create");
        photon::thread_enable_join(th_);
        detail::spread_into_work_pool(th_);
    }
    thread(thread&& r) noexcept : th_(r.th_) { r.th_ = nullptr; }
    thread& operator=(thread&& r) noexcept {
        if (joinable()) ::std::terminate();
        th_ = r.th_;
        r.th_ = nullptr;
        return *this;
    }
    thread(const thread&) = delete;
    thread& operator=(const thread&) = delete;
    ~thread() {
        if (joinable()) ::std::terminate();
    }

    bool joinable() const noexcept { return th_ != nullptr; }
    id get_id() const noexcept { return id(th_); }
    static unsigned int hardware_concurrency() noexcept { return photon::get_vcpu_num(); }
    void join();
    void detach();
    void swap(thread& r) noexcept { ::std::swap(th_, r.th_); }

private:
    photon::thread* th_ = nullptr;
};

class mutex : public photon::mutex {
public:
    using photon::mutex::mutex;
    void lock() {
        int ret;
        while ((ret = photon::mutex::lock()) < 0 && errno != EDEADLK) {
        }
        if (ret < 0) detail::throw_error(errno, "photon_std::mutex::lock");
    }
    bool try_lock() { return photon::mutex::try_lock() == 0; }
    template <class Rep, class Period>
    bool try_lock_for(const ::std::chrono::duration<Rep, Period>& d) {
        return photon::mutex::lock(detail::to_us(d)) == 0;
    }
    template <class Clock, class Duration>
    bool try_lock_until(const ::std::chrono::time_point<Clock, Duration>& t) {
        return photon::mutex::lock(detail::until_us(t)) == 0;
    }
};

using timed_mutex = mutex;

class recursive_mutex : public photon::recursive_mutex {
public:
    void lock() {
        while (photon::recursive_mutex::lock() < 0) {
        }
    }
    bool try_lock() { return photon::recursive_mutex::try_lock() == 0; }
};

template <class Mutex>
class lock_guard : public photon::locker<Mutex> {
public:
    explicit lock_guard(Mutex& m) : photon::locker<Mutex>(&m) {}
    lock_guard(Mutex& m, adopt_lock_t) : photon::locker<Mutex>(&m, 0) { this->m_locked = true; }
};

template <class Mutex>
class unique_lock {
public:
    using mutex_type = Mutex;

    unique_lock() noexcept = default;
    explicit unique_lock(Mutex& m) : mutex_(&m) { lock(); }
    unique_lock(Mutex& m, defer_lock_t) noexcept : mutex_(&m) {}
    unique_lock(Mutex& m, try_to_lock_t) : mutex_(&m) { try_lock(); }
    unique_lock(Mutex& m, adopt_lock_t) noexcept : mutex_(&m), owns_(true) {}
    template <class Rep, class Period>
    unique_lock(Mutex& m, const ::std::chrono::duration<Rep, Period>& d) : mutex_(&m) {
        try_lock_for(d);
    }
    template <class Clock, class Duration>
    unique_lock(Mutex& m, const ::std::chrono::time_point<Clock, Duration>& t) : mutex_(&m) {
        try_lock_until(t);
    }
    unique_lock(unique_lock&& r) noexcept : mutex_(r.mutex_), owns_(r.owns_) {
        r.mutex_ = nullptr;
        r.owns_ = false;
    }
    unique_lock& operator=(unique_lock&& r) noexcept {
        if (owns_) mutex_->unlock();
        mutex_ = r.mutex_;
        owns_ = r.owns_;
        r.mutex_ = nullptr;
        r.owns_ = false;
        return *this;
    }
    unique_lock(const unique_lock&) = delete;
    unique_lock& operator=(const unique_lock&) = delete;
    ~unique_lock() {
        if (owns_) mutex_->unlock();
    }

    void lock() {
        check_lockable();
        mutex_->lock();
        owns_ = true;
    }
    bool try_lock() {
        check_lockable();
        return owns_ = mutex_->try_lock();
    }
    template <class Rep, class Period>
    bool try_lock_for(const ::std::chrono::duration<Rep, Period>& d) {
        check_lockable();
        return owns_ = mutex_->try_lock_for(d);
    }
    template <class Clock, class Duration>
    bool try_lock_until(const ::std::chrono::time_point<Clock, Duration>& t) {
        check_lockable();
        return owns_ = mutex_->try_lock_until(t);
    }
    void unlock() {
        if (!owns_) detail::throw_error(EPERM, "photon_std::unique_lock::unlock: not owned");
        mutex_->unlock();
        owns_ = false;
    }
    void swap(unique_lock& r) noexcept {
        ::std::swap(mutex_, r.mutex_);
        ::std::swap(owns_, r.owns_);
    }
    Mutex* release() noexcept {
        Mutex* m = mutex_;
        mutex_ = nullptr;
        owns_ = false;
        return m;
    }
    Mutex* mutex() const noexcept { return mutex_; }
    bool owns_lock() const noexcept { return owns_; }
    explicit operator bool() const noexcept { return owns_; }

private:
    void check_lockable() {
        if (!mutex_) detail::throw_error(EPERM, "photon_std::unique_lock: no mutex");
        if (owns_) detail::throw_error(EDEADLK, "photon_std::unique_lock: already owned");
    }
    Mutex* mutex_ = nullptr;
    bool owns_ = false;
};

class condition_variable : public photon::condition_variable {
public:
    void notify_one() noexcept { photon::condition_variable::notify_one(); }
    void notify_all() noexcept { photon::condition_variable::notify_all(); }

    void wait(unique_lock<mutex>& lock) { wait_us(lock, UINT64_MAX); }
    template <class Predicate>
    void wait(unique_lock<mutex>& lock, Predicate pred) {
        while (!pred()) wait(lock);
    }
    template <class Rep, class Period>
    cv_status wait_for(unique_lock<mutex>& lock, const ::std::chrono::duration<Rep, Period>& d) {
        return wait_us(lock, detail::to_us(d));
    }
    template <class Rep, class Period, class Predicate>
    bool wait_for(unique_lock<mutex>& lock, const ::std::chrono::duration<Rep, Period>& d,
                  Predicate pred) {
        return wait_until(lock, ::std::chrono::steady_clock::now() + d, ::std::move(pred));
    }
    template <class Clock, class Duration>
    cv_status wait_until(unique_lock<mutex>& lock,
                         const ::std::chrono::time_point<Clock, Duration>& t) {
        wait_us(lock, detail::until_us(t));
        return Clock::now() < t ? cv_status::no_timeout : cv_status::timeout;
    }
    template <class Clock, class Duration, class Predicate>
    bool wait_until(unique_lock<mutex>& lock, const ::std::chrono::time_point<Clock, Duration>& t,
                    Predicate pred) {
        while (!pred())
            if (wait_until(lock, t) == cv_status::timeout) return pred();
        return true;
    }

private:
    cv_status wait_us(unique_lock<mutex>& lock, uint64_t us) {
        if (!lock.owns_lock()) detail::throw_error(EPERM, "condition_variable::wait: not locked");
        int ret = photon::condition_variable::wait(*static_cast<photon::mutex*>(lock.mutex()), us);
        return ret < 0 && errno == ETIMEDOUT ? cv_status::timeout : cv_status::no_timeout;
    }
};

namespace this_thread {

inline void yield() noexcept { photon::thread_yield(); }
inline thread::id get_id() noexcept { return thread::id(photon::CURRENT); }
template <class Rep, class Period>
inline void sleep_for(const ::std::chrono::duration<Rep, Period>& d) {
    photon::thread_usleep(detail::to_us(d));
}
template <class Clock, class Duration>
inline void sleep_until(const ::std::chrono::time_point<Clock, Duration>& t) {
    photon::thread_usleep(detail::until_us(t));
}
// Moves the calling coroutine to the next work-pool vCPU (round-robin); it
// returns on that vCPU's OS thread. Throws EPERM if there is no work pool.
void migrate();

}  // namespace this_thread

// Starts the global work pool: vcpu_num extra vCPUs, each on its own OS
// thread with photon::init(event_engine, io_engine). New photon_std::threads
// are then spread over them round-robin. -1 with EINVAL (vcpu_num < 1) or
// EALREADY (a pool exists). Blocks the calling OS thread until they are up.
int work_pool_init(int vcpu_num = 1,
                   int event_engine = photon::INIT_EVENT_DEFAULT & (~photon::INIT_EVENT_SIGNAL),
                   int io_engine = 0);
// Stops the global work pool: waits for the coroutines on its vCPUs to end.
// -1 with EALREADY if there is none.
int work_pool_fini();

// ---- future / promise ----------------------------------------------------------

namespace detail {

// The shared state: Photon's Future, whether a value came, and how many
// promise copies could still give one (Photon's promises are copyable).
template <typename T>
struct shared_future_state {
    photon::Future<T> fut;
    ::std::atomic<bool> set{false};
    ::std::atomic<bool> broken{false};
    ::std::atomic<int> promises{1};
};

}  // namespace detail

template <typename T>
class future {
protected:
    using pf = detail::shared_future_state<T>;
    ::std::shared_ptr<pf> fut_;

public:
    future() = default;
    future(::std::shared_ptr<pf>& fut) : fut_(fut) {}
    bool valid() const { return (bool)fut_; }
    // Waits for the value and returns a copy of it. Throws future_error
    // no_state (no promise behind it) or broken_promise (destroyed unset).
    T get() {
        wait_value();
        return fut_->fut.get_value();
    }
    // ready, or timeout after `timeout` us (-1: waits for ever).
    ::std::future_status wait(uint64_t timeout = -1) const {
        if (!fut_) throw ::std::future_error(::std::future_errc::no_state);
        return fut_->fut.wait(timeout) == 0 ? ::std::future_status::ready
                                            : ::std::future_status::timeout;
    }
    template <class Rep, class Period>
    ::std::future_status wait_for(const ::std::chrono::duration<Rep, Period>& d) const {
        return wait(detail::to_us(d));
    }
    template <class Clock, class Duration>
    ::std::future_status wait_until(const ::std::chrono::time_point<Clock, Duration>& t) const {
        return wait(detail::until_us(t));
    }

protected:
    void wait_value() {
        if (wait() != ::std::future_status::ready || !fut_->set.load(::std::memory_order_acquire))
            throw ::std::future_error(::std::future_errc::broken_promise);
    }
};

template <typename T>
class promise {
protected:
    using pf = detail::shared_future_state<T>;
    ::std::shared_ptr<pf> fut_{new pf};

public:
    promise() = default;
    promise(const promise& r) : fut_(r.fut_) {
        if (fut_) fut_->promises.fetch_add(1, ::std::memory_order_relaxed);
    }
    promise(promise&&) noexcept = default;
    promise& operator=(promise r) noexcept {
        r.swap(*this);
        return *this;
    }
    ~promise() { release(); }

    future<T> get_future() { return {fut_}; }
    void swap(promise& other) noexcept { fut_.swap(other.fut_); }
    // Once: a second value throws future_error promise_already_satisfied.
    template <typename P>
    void set_value(P&& value) {
        claim();
        fut_->fut.get_promise().set_value(::std::forward<P>(value));
    }

protected:
    void claim() {
        if (!fut_) throw ::std::future_error(::std::future_errc::no_state);
        if (fut_->set.exchange(true, ::std::memory_order_acq_rel) ||
            fut_->broken.load(::std::memory_order_relaxed))
            throw ::std::future_error(::std::future_errc::promise_already_satisfied);
    }
    // The last copy gone without a value: wake the waiter with none (its
    // get() throws broken_promise).
    void release() {
        if (!fut_ || fut_->promises.fetch_sub(1, ::std::memory_order_acq_rel) != 1) return;
        if (!fut_->set.load(::std::memory_order_acquire) &&
            !fut_->broken.exchange(true, ::std::memory_order_acq_rel))
            fut_->fut.get_promise().set_value(T{});
    }
};

template <>
class future<void> : public future<bool> {
public:
    future() = default;
    future(future<bool> fut) : future<bool>(fut) {}
    void get() { wait_value(); }
};

template <>
class promise<void> : public promise<bool> {
public:
    future<void> get_future() { return {promise<bool>::get_future()}; }
    void set_value() { promise<bool>::set_value(true); }
};

using ::std::swap;  // our overload must not hide the standard ones
inline void swap(thread& a, thread& b) noexcept { a.swap(b); }

}  // namespace photon_std

#if defined(PHOTON_STD_ALIAS) && !defined(PHOTON_NO_STD_ALIAS)
namespace photon {
namespace std = ::photon_std;
}
#endif

namespace std {
template <>
struct hash<photon_std::thread::id> {
    size_t operator()(const photon_std::thread::id& x) const noexcept {
        return hash<uint64_t>()(x.value());
    }
};
}  // namespace std
