// Future<T, Context> and its Promise, as PhotonLibOS declares them: a
// one-shot value handed from one side (any vCPU or OS thread) to a waiter,
// built on Awaiter<Context> (awaiter.h says how each context waits). The
// Future is neither copyable nor movable, and must outlive its Promise's
// set_value(); set the value once. For T = void use Awaiter or a semaphore.
//
// Differences from PhotonLibOS: doc/compat.md#threadfutureh
#pragma once

#include <cassert>
#include <utility>

#include <photon/common/timeout.h>
#include <photon/thread/awaiter.h>
#include <photon/thread/thread.h>

namespace photon {

template <typename T, typename Context = AutoContext>
class Future {
    static_assert(sizeof(T) > 0, "for T = void, use Awaiter<Context> or a semaphore");

public:
    Future() = default;
    Future(const Future&) = delete;
    void operator=(const Future&) = delete;

    class Promise {
    public:
        Future* _fut;
        // Stores the value and wakes the waiter; once.
        template <typename P>
        void set_value(P&& value) {
            _fut->set_value(std::forward<P>(value));
        }
    };
    friend Promise;

    Promise get_promise() { return {this}; }

    // 0 once the value is set; -1 with errno ETIMEDOUT if the timeout comes first.
    int wait(Timeout timeout = {}) { return awaiter_.suspend(timeout); }
    int wait_for(Timeout timeout = {}) { return wait(timeout); }
    // Waits (without a timeout) and returns the value.
    T& get_value() {
        wait();
        return value_;
    }
    T& get() { return get_value(); }

private:
    template <typename P>
    void set_value(P&& rhs) {
        assert(!set_);  // once
        set_ = true;
        value_ = std::forward<P>(rhs);
        awaiter_.resume();
    }

    T value_{};
    Awaiter<Context> awaiter_;
    bool set_ = false;  // for the assertion
};

template <typename T>
using Promise = typename Future<T>::Promise;

}  // namespace photon
