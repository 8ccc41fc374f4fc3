// mutex and recursive_mutex.
#include <photon/common/alog.h>

#include "../vcpu.h"
#include "waitq.h"

namespace photon {

mutex::~mutex() {
    if (owner.load(std::memory_order_relaxed)) LOG_WARN("photon::mutex destroyed while locked");
}

int mutex::lock(Timeout timeout) {
    thread* self = CURRENT;
    if (!self) LOG_ERROR_RETURN(ENOSYS, -1, "mutex::lock: not a vCPU");
    if (try_lock_as(self) == 0) return 0;
    if (owner.load(std::memory_order_relaxed) == self) {
        errno = EDEADLK;
        return -1;
    }
    for (uint16_t i = 0; i < retries; i++) {
        if (timeout.expired()) break;
        thread_yield();
        if (try_lock_as(self) == 0) return 0;
    }
    while (true) {
        q.lock.lock();
        if (try_lock_as(self) == 0) {
            q.lock.unlock();
            return 0;
        }
        int ret = waitq_sleep(&q, timeout);
        q.lock.unlock();
        if (ret < 0) return -1;
        // Popped: either handed the mutex, or (contending) free to compete.
        if (owner.load(std::memory_order_acquire) == self) return 0;
    }
}

void mutex::unlock() {
    if (owner.load(std::memory_order_relaxed) != CURRENT) {
        LOG_ERROR("mutex::unlock by a coroutine that does not own it");
        errno = EINVAL;
        return;
    }
    q.lock.lock();
    thread* next = waitq_front(&q);
    // Hand over before waking, so the woken waiter finds itself the owner.
    owner.store(next && !_contending ? next : nullptr, std::memory_order_release);
    if (next) waitq_wake(&q, next);
    q.lock.unlock();
}

int recursive_mutex::lock(Timeout timeout) {
    if (owner.load(std::memory_order_relaxed) == CURRENT && CURRENT) {
        recursive_count++;
        return 0;
    }
    int ret = mutex::lock(timeout);
    if (ret == 0) recursive_count = 1;
    return ret;
}

int recursive_mutex::try_lock() {
    if (owner.load(std::memory_order_relaxed) == CURRENT && CURRENT) {
        recursive_count++;
        return 0;
    }
    int ret = mutex::try_lock();
    if (ret == 0) recursive_count = 1;
    return ret;
}

void recursive_mutex::unlock() {
    if (owner.load(std::memory_order_relaxed) != CURRENT) {
        LOG_ERROR("recursive_mutex::unlock by a coroutine that does not own it");
        errno = EINVAL;
        return;
    }
    if (--recursive_count > 0) return;
    mutex::unlock();
}

}  // namespace photon
