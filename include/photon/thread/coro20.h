// C++20 coroutines inside photon coroutines (namespace photon::coro), as
// PhotonLibOS declares them. A C++20 coroutine here is a resumable function
// that runs on the stack of the photon coroutine that resumes it; blocking
// calls in it (socket I/O, thread_usleep) block that photon coroutine, as
// any call does. Needs C++20 (-std=c++20).
//
//  - Coro<T>: a task. co_await it (from another Coro) or run() it to
//    completion; async_run() starts one in a new photon coroutine. Its frame
//    is allocated with stackful_malloc() on the photon coroutine's stack.
//  - Generator<T> (frame on the heap) and FixedGenerator<T> (on the stack,
//    not movable): co_yield values, read them with operator() or as an input
//    range (begin()/end(), so std::ranges and views work). One that finishes
//    ends with co_return <value> (not yielded): as in Photon, the promise has
//    return_value and no return_void, so flowing off its end is undefined.
//  - usleep()/sleep() to co_await, timer(interval) yields photon::now every
//    `interval` us.
// co_yield and co_return also thread_yield(), letting the vCPU's other
// coroutines run, as in Photon.
//
// Differences from PhotonLibOS: doc/compat.md#threadcoro20h
// Floor: runtime (tools/floors.txt), above its folder's: it needs vCPUs and engines.
#pragma once

#if __cplusplus < 202002L || !defined(__cpp_impl_coroutine)
#error "photon/thread/coro20.h needs C++20 coroutines (-std=c++20)"
#endif

#include <array>
#include <atomic>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <new>
#include <optional>
#include <ranges>
#include <type_traits>
#include <utility>

#include <photon/common/alog.h>
#include <photon/common/timeout.h>
#include <photon/common/utility.h>
#include <photon/thread/thread-pool.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

namespace photon {
namespace coro {

// Frames from the photon coroutine's stack (LIFO), or from the heap when it
// has no room; a 16-byte tag in front says which.
class StackfulAlloc {
    static constexpr size_t kTag = 16;
    static constexpr uint64_t kOnStack = 0x5354414b;  // "STAK"
    static constexpr uint64_t kOnHeap = 0x48454150;   // "HEAP"

public:
    void* operator new(std::size_t size) {
        size_t n = size + kTag;
        void* p = nullptr;
        uint64_t where = kOnStack;
        if (CURRENT && n > size) {
            int e = errno;
            p = stackful_malloc(n);
            errno = e;
        }
        if (!p) {
            where = kOnHeap;
            p = ::operator new(n);  // throws bad_alloc as any operator new
        }
        *static_cast<uint64_t*>(p) = where;
        return static_cast<char*>(p) + kTag;
    }
    void operator delete(void* ptr) {
        if (!ptr) return;
        void* p = static_cast<char*>(ptr) - kTag;
        if (*static_cast<uint64_t*>(p) == kOnStack)
            stackful_free(p);
        else
            ::operator delete(p);
    }
};

// Frames from the heap.
class HeapAlloc {};

template <typename T, typename AllocType>
class CoroutinePromiseBase : public AllocType {
public:
    T get_value() { return current_value_.value(); }
    // Where the value is (nullptr before the first one); our addition.
    T* value_address() { return current_value_ ? &*current_value_ : nullptr; }
    static std::suspend_always initial_suspend() { return {}; }
    static std::suspend_always final_suspend() noexcept { return {}; }
    std::suspend_always yield_value(T t) {
        current_value_ = std::move(t);
        thread_yield();
        return {};
    }
    void return_value(T t) {
        current_value_ = std::move(t);
        thread_yield();
    }
    static void unhandled_exception() { throw; }

private:
    std::optional<T> current_value_;
};

template <typename AllocType>
class CoroutinePromiseBase<void, AllocType> : public AllocType {
public:
    static void get_value() {}
    static std::suspend_always initial_suspend() { return {}; }
    static std::suspend_always final_suspend() noexcept { return {}; }
    static std::suspend_always yield_void() {
        thread_yield();
        return {};
    }
    static void return_void() { thread_yield(); }
    static void unhandled_exception() { throw; }
};

using GeneratorSentinel = std::default_sentinel_t;

// An input iterator over a generator: ++ resumes it, * reads its value.
template <typename promise_type>
class GeneratorIterator {
public:
    using value_type = std::remove_cvref_t<decltype(std::declval<promise_type>().get_value())>;
    using reference = value_type&;
    using pointer = value_type*;
    using difference_type = std::ptrdiff_t;
    using iterator_category = std::input_iterator_tag;

    GeneratorIterator() = default;
    explicit GeneratorIterator(std::coroutine_handle<promise_type> g) : handle_(g) {}
    GeneratorIterator(GeneratorIterator&& rhs) noexcept : handle_(rhs.handle_) { rhs.handle_ = {}; }
    GeneratorIterator& operator=(GeneratorIterator&& rhs) noexcept {
        handle_ = rhs.handle_;
        rhs.handle_ = {};
        return *this;
    }

    GeneratorIterator& operator++() {
        handle_.resume();
        return *this;
    }
    void operator++(int) { ++(*this); }

    bool operator==(const GeneratorSentinel&) const { return !handle_ || handle_.done(); }
    bool operator!=(const GeneratorSentinel& s) const { return !(*this == s); }
    bool operator==(const GeneratorIterator&) const { return true; }
    bool operator!=(const GeneratorIterator&) const { return false; }

    // A copy of the current value (value_type{} without a generator).
    value_type operator*() const {
        if (!handle_) return {};
        return handle_.promise().get_value();
    }
    pointer operator->() const { return handle_ ? handle_.promise().value_address() : nullptr; }

private:
    std::coroutine_handle<promise_type> handle_;
};

template <typename T>
class Coro {
public:
    class promise_type : public CoroutinePromiseBase<T, StackfulAlloc> {
    public:
        auto get_return_object() { return Coro(handle_type::from_promise(*this)); }
    };
    using handle_type = std::coroutine_handle<promise_type>;
    handle_type handle;

    Coro(handle_type&& t) : handle(std::move(t)) {}
    Coro(const Coro&) = delete;
    Coro& operator=(const Coro&) = delete;
    Coro(Coro&& other) noexcept : handle{other.handle} { other.handle = {}; }
    Coro& operator=(Coro&& other) noexcept {
        if (this != &other) {
            if (handle) handle.destroy();
            handle = other.handle;
            other.handle = {};
        }
        return *this;
    }
    ~Coro() {
        if (handle) handle.destroy();
    }

    // co_await runs the task to its end on the awaiting one's stack.
    bool await_ready() { return false; }
    bool await_suspend(std::coroutine_handle<>) {
        while (!handle.done()) handle.resume();
        return false;  // resume the awaiting coroutine at once
    }
    T await_resume() { return handle.promise().get_value(); }
};

// The generator classes share all but their frame's home and movability.
template <typename T, typename AllocType>
class GeneratorBase {
public:
    class promise_type : public CoroutinePromiseBase<T, AllocType> {
    public:
        auto get_return_object() {
            return std::coroutine_handle<promise_type>::from_promise(*this);
        }
        // Generators cannot co_await.
        void await_transform() = delete;
        static void unhandled_exception() { throw; }
    };
    using handle_type = std::coroutine_handle<promise_type>;

    // The next value (resuming the generator unless it is done).
    T operator()() {
        if (handle && !handle.done()) handle.resume();
        return std::move(handle.promise().get_value());
    }
    GeneratorIterator<promise_type> begin() {
        if (handle && !handle.done()) handle.resume();
        return GeneratorIterator<promise_type>(handle);
    }
    GeneratorSentinel end() { return {}; }

protected:
    GeneratorBase() = default;
    explicit GeneratorBase(handle_type h) : handle(h) {}
    ~GeneratorBase() {
        if (handle) handle.destroy();
    }
    handle_type handle;
};

template <std::movable T>
class Generator : public GeneratorBase<T, HeapAlloc> {
    using base = GeneratorBase<T, HeapAlloc>;

public:
    using promise_type = typename base::promise_type;
    using handle_type = typename base::handle_type;

    Generator() = default;
    Generator(handle_type h) : base(h) {}
    Generator(const Generator&) = delete;
    Generator& operator=(const Generator&) = delete;
    Generator(Generator&& other) noexcept : base(other.handle) { other.handle = {}; }
    Generator& operator=(Generator&& other) noexcept {
        if (this != &other) {
            if (this->handle) this->handle.destroy();
            this->handle = other.handle;
            other.handle = {};
        }
        return *this;
    }
};

// A generator whose frame lives on the photon coroutine's stack: it must
// not outlive the scope (nor the photon coroutine) that made it.
template <std::movable T>
class FixedGenerator : public GeneratorBase<T, StackfulAlloc> {
    using base = GeneratorBase<T, StackfulAlloc>;

public:
    using promise_type = typename base::promise_type;
    using handle_type = typename base::handle_type;

    FixedGenerator() = default;
    FixedGenerator(handle_type h) : base(h) {}
    FixedGenerator(const FixedGenerator&) = delete;
    FixedGenerator& operator=(const FixedGenerator&) = delete;
    FixedGenerator(FixedGenerator&&) = delete;
    FixedGenerator& operator=(FixedGenerator&&) = delete;
};

// Runs func(args...) (a Coro) to its end in a new photon coroutine. The
// arguments are used before async_run returns (the new coroutine runs
// first), so references to the caller's temporaries are fine as long as
// the Coro takes its parameters by value.
template <typename T, typename... Args>
inline void async_run(T func, Args&&... args) {
    thread* th = thread_create11(
        [&](thread* parent) {
            auto task = func(std::forward<Args>(args)...);
            thread_yield_to(parent);
            while (!task.handle.done()) task.handle.resume();
        },
        CURRENT);
    if (!th) {
        LOG_ERROR("coro::async_run: no photon coroutine for the task ", ERRNO());
        return;
    }
    thread_yield_to(th);
}

// An awaitable that ran f(args...) already (co_await gives its result).
template <typename F, typename... Args>
struct Wrapper {
    std::optional<std::invoke_result_t<F, Args...>> ret;
    Wrapper(F&& f, Args&&... args) { ret = f(std::forward<Args>(args)...); }
    bool await_ready() { return true; }
    void await_suspend(std::coroutine_handle<> awaiting) { awaiting.resume(); }
    auto await_resume() { return std::move(ret.value()); }
};

template <typename F, typename... Args>
Wrapper<F, Args...> wrapper(F&& f, Args&&... args) {
    return {std::forward<F>(f), std::forward<Args>(args)...};
}

// Runs the Coro f(args...) to its end here; returns its result.
template <typename F, typename... Args>
auto run(F&& f, Args&&... args) {
    auto task = f(std::forward<Args>(args)...);
    while (!task.handle.done()) task.handle.resume();
    return task.await_resume();
}

inline auto usleep(uint64_t time) {
    return wrapper([](uint64_t us) { return thread_usleep(us); }, time);
}

inline auto sleep(uint64_t time) {
    return wrapper([](uint64_t s) { return thread_sleep(s); }, time);
}

// Yields photon::now about every `interval` us, for ever.
inline Generator<uint64_t> timer(uint64_t interval) {
    auto next = photon::now;
    for (;;) {
        thread_usleep(sat_sub(next, photon::now));
        co_yield (uint64_t) photon::now;
        next = sat_add(photon::now, interval);
    }
}

}  // namespace coro
}  // namespace photon
