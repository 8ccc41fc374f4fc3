// Awaiter<Context>: a one-shot "wait until resumed" for the caller of a task
// that runs elsewhere (WorkPool::call, future.h). The context tag says how
// the waiter waits:
//   PhotonContext: parks the calling coroutine (its vCPU runs others); on an
//                  OS thread that is not a vCPU there is no coroutine to park,
//                  so it blocks the OS thread instead;
//   StdContext:    blocks the OS thread (the whole vCPU, if it is one);
//   AutoContext:   PhotonContext on a vCPU, StdContext elsewhere.
// The mode is fixed at construction: construct on the waiting thread.
// resume() may be called from any vCPU or OS thread, once; suspend() returns
// 0 after it, and the awaiter may then be destroyed at once. suspend(timeout)
// returns -1 with errno ETIMEDOUT if the timeout comes first; a later
// suspend() still sees a resume() that came after.
#pragma once

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <future>
#include <mutex>

#include <photon/common/timeout.h>
#include <photon/thread/thread.h>

namespace photon {

struct PhotonContext {};
struct StdContext {};
struct AutoContext {};

namespace detail {

class awaiter_base {
public:
    awaiter_base(const awaiter_base&) = delete;
    awaiter_base& operator=(const awaiter_base&) = delete;
    int suspend(Timeout timeout = {});
    void resume();

protected:
    explicit awaiter_base(bool park_coroutine) : park_(park_coroutine) {}

private:
    const bool park_;
    bool done_ = false;  // under lock_ (park_) or mutex_
    thread* waiter_ = nullptr;
    spinlock lock_;
    std::mutex mutex_;
    std::condition_variable cv_;
};

}  // namespace detail

template <typename Context>
class Awaiter;

template <>
class Awaiter<PhotonContext> : public detail::awaiter_base {
public:
    Awaiter() : awaiter_base(CURRENT != nullptr) {}
};

template <>
class Awaiter<AutoContext> : public detail::awaiter_base {
public:
    Awaiter() : awaiter_base(CURRENT != nullptr) {}
};

template <>
class Awaiter<StdContext> : public detail::awaiter_base {
public:
    Awaiter() : awaiter_base(false) {}
};

}  // namespace photon
