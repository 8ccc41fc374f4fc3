#include "waitq.h"

namespace photon {

int condition_variable::wait_defer(Timeout timeout, defer_func unlock, void* lock) {
    q.lock.lock();
    int ret = waitq_sleep(&q, timeout, unlock, lock);
    q.lock.unlock();
    return ret;
}

int condition_variable::wait_no_lock(Timeout timeout) {
    return wait_defer(timeout, nullptr, nullptr);
}

thread* condition_variable::signal() {
    if (!q.head) return nullptr;  // racy peek; a missed waiter came after us
    q.lock.lock();
    thread* th = waitq_wake_one(&q);
    q.lock.unlock();
    return th;
}

int condition_variable::notify_all() {
    if (!q.head) return 0;
    int n = 0;
    q.lock.lock();
    while (waitq_wake_one(&q)) n++;
    q.lock.unlock();
    return n;
}

}  // namespace photon
