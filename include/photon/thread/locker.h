// locker<M>: the RAII holder of any lock with lock()/try_lock()/unlock()
// (photon's locks return 0 / -1, std-style ones void / bool), and SCOPED_LOCK,
// which makes one for the rest of the scope. It blocks only if M::lock()
// does. Also reachable through <photon/thread/thread.h>, as in Photon.
//
// Differences from PhotonLibOS: doc/compat.md#threadlockerh
#pragma once

#include <cerrno>
#include <cstdint>
#include <type_traits>

namespace photon {

// RAII holder of any lock with lock()/try_lock()/unlock(). do_lock: 0 don't
// lock, 1 one lock() call (it may wait; an interrupted or timed-out one
// leaves the locker unlocked), >= 2 lock (retrying on error until locked).
template <typename M>
class locker {
public:
    M* m_mutex;
    bool m_locked;

    explicit locker(M* mutex, uint64_t do_lock = 2) : m_mutex(mutex), m_locked(false) {
        if (do_lock) lock(do_lock > 1);
    }
    explicit locker(M& mutex, uint64_t do_lock = 2) : locker(&mutex, do_lock) {}
    locker(locker&& rhs) : m_mutex(rhs.m_mutex), m_locked(rhs.m_locked) {
        rhs.m_mutex = nullptr;
        rhs.m_locked = false;
    }
    locker(const locker&) = delete;
    locker& operator=(const locker&) = delete;

    int lock(bool must_lock = true) {
        int ret;
        // Retry interrupted locks; a relock by the owner or a bad lock fails.
        while ((ret = lock_once()) < 0 && must_lock && errno != EDEADLK && errno != EINVAL) {
        }
        m_locked = (ret == 0);
        return ret;
    }
    int try_lock() {
        // std-style locks return void / bool, photon's 0 / -1.
        int ret = as_status(m_mutex->try_lock());
        m_locked = (ret == 0);
        return ret;
    }
    bool locked() const { return m_locked; }
    operator bool() const { return m_locked; }
    void unlock() {
        if (m_locked) {
            m_mutex->unlock();
            m_locked = false;
        }
    }
    ~locker() {
        if (m_locked) m_mutex->unlock();
    }

private:
    static int as_status(bool locked) { return locked ? 0 : -1; }
    static int as_status(int ret) { return ret; }
    int lock_once() { return lock_once(std::is_void<decltype(m_mutex->lock())>()); }
    int lock_once(std::true_type /* void lock() */) {
        m_mutex->lock();
        return 0;
    }
    int lock_once(std::false_type) { return m_mutex->lock(); }
};

#define _PHOTON_CONCAT_(a, b) a##b
#define _PHOTON_CONCAT(a, b) _PHOTON_CONCAT_(a, b)
#ifndef _TOKEN_CONCAT  // Photon's names for the same
#define _TOKEN_CONCAT(a, b) a##b
#endif
#ifndef _TOKEN_CONCAT_
#define _TOKEN_CONCAT_(a, b) _TOKEN_CONCAT(a, b)
#endif
#define SCOPED_LOCK(x, ...) \
    auto _PHOTON_CONCAT(__locker__, __LINE__) = ::photon::__make_locker(x, ##__VA_ARGS__)

template <typename M>
inline locker<M> __make_locker(M* m, uint64_t do_lock = 2) {
    return locker<M>(m, do_lock);
}
template <typename M>
inline locker<M> __make_locker(M& m, uint64_t do_lock = 2) {
    return locker<M>(&m, do_lock);
}

}  // namespace photon
