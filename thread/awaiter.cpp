// Awaiter: park a coroutine or block an OS thread until resumed.
#include <photon/thread/awaiter.h>

namespace photon {
namespace detail {

int awaiter_base::suspend(Timeout timeout) {
    if (!park_) {
        std::unique_lock<std::mutex> l(mutex_);
        auto done = [this] { return done_; };
        if (timeout.expiration() == UINT64_MAX) {
            cv_.wait(l, done);
        } else if (!cv_.wait_for(l, std::chrono::microseconds(timeout.timeout()), done)) {
            errno = ETIMEDOUT;
            return -1;
        }
        return 0;
    }
    thread* self = CURRENT;
    lock_.lock();
    while (!done_) {
        if (timeout.expired()) {
            waiter_ = nullptr;
            lock_.unlock();
            errno = ETIMEDOUT;
            return -1;
        }
        waiter_ = self;
        // Release lock_ only once committed to sleep, so resume() either sees
        // no waiter yet (and we see done_) or finds us asleep.
        thread_usleep_defer(
            timeout, [](void* l) { static_cast<spinlock*>(l)->unlock(); }, &lock_);
        lock_.lock();
    }
    waiter_ = nullptr;
    lock_.unlock();
    return 0;
}

void awaiter_base::resume() {
    if (!park_) {
        // Notify under the mutex: the waiter cannot return and destroy cv_
        // before notify_one() is done with it.
        std::lock_guard<std::mutex> l(mutex_);
        done_ = true;
        cv_.notify_one();
        return;
    }
    // Wake under lock_ for the same reason; the unlock is our last access.
    lock_.lock();
    done_ = true;
    if (waiter_) thread_interrupt(waiter_, 0);
    lock_.unlock();
}

}  // namespace detail
}  // namespace photon
