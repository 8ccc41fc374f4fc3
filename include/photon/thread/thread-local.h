// thread_local_ptr<T, ARGS...>: one T per coroutine, created on first use
// with the constructor arguments given here and deleted when that coroutine
// ends. Use it on a vCPU (off one, or when the storage cannot grow, the
// process aborts, as Photon's does: there is nowhere to keep the object).
// Destroying the thread_local_ptr frees its key; objects of coroutines still
// alive then are not deleted (as pthread_key_delete).
#pragma once

#include <cstdlib>
#include <functional>
#include <memory>
#include <tuple>
#include <utility>

#include <photon/common/callback.h>
#include <photon/common/tuple-assistance.h>
#include <photon/common/utility.h>
#include <photon/thread/thread-key.h>

namespace photon {

template <typename T, typename... ARGS>
class thread_local_ptr {
public:
    explicit thread_local_ptr(ARGS&&... args) : args_(std::forward<ARGS>(args)...) {
        if (thread_key_create(&key_, [](void* p) { delete static_cast<T*>(p); }) != 0)
            abort();  // all THREAD_KEYS_MAX keys are taken
    }
    thread_local_ptr(const thread_local_ptr&) = delete;
    thread_local_ptr& operator=(const thread_local_ptr&) = delete;
    ~thread_local_ptr() { thread_key_delete(key_); }

    T* get() const {
        auto p = static_cast<T*>(thread_getspecific(key_));
        if (!p) {
            p = photon::detail::apply([](const auto&... a) { return new T(a...); }, args_);
            if (thread_setspecific(key_, p) != 0) abort();
        }
        return p;
    }
    T* operator->() const { return get(); }
    T& operator*() const { return *get(); }
    operator T*() const { return get(); }

private:
    thread_key_t key_ = 0;
    std::tuple<std::decay_t<ARGS>...> args_;
};

}  // namespace photon
