// thread_local_ptr<T>: one T per coroutine, created on first use with the
// constructor arguments given here and deleted when that coroutine ends.
#pragma once

#include <functional>
#include <memory>
#include <tuple>
#include <utility>

#include <photon/thread/thread-key.h>

namespace photon {

template <typename T, typename... ARGS>
class thread_local_ptr {
public:
    explicit thread_local_ptr(ARGS&&... args) : m_args(std::forward<ARGS>(args)...) {
        thread_key_create(&m_key, [](void* p) { delete static_cast<T*>(p); });
    }
    thread_local_ptr(const thread_local_ptr&) = delete;
    thread_local_ptr& operator=(const thread_local_ptr&) = delete;
    ~thread_local_ptr() { thread_key_delete(m_key); }

    T* get() const {
        auto p = static_cast<T*>(thread_getspecific(m_key));
        if (!p) {
            p = std::apply([](const auto&... a) { return new T(a...); }, m_args);
            thread_setspecific(m_key, p);
        }
        return p;
    }
    T* operator->() const { return get(); }
    T& operator*() const { return *get(); }
    operator T*() const { return get(); }

private:
    thread_key_t m_key = 0;
    std::tuple<std::decay_t<ARGS>...> m_args;
};

}  // namespace photon
