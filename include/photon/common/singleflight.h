// photon::SingleFlight: request coalescing for one key, as PhotonLibOS
// declares it. While one caller of Do(func) runs func, every other caller of
// Do() on the same SingleFlight waits and then returns a copy of that run's
// result instead of running its own func; a caller that arrives after the run
// ended starts a new one. Callers may be coroutines of any vCPU; on an OS
// thread that is not a vCPU a waiter blocks the thread. Waiting yields (the
// caller's vCPU keeps running its other coroutines). Lock-free: callers push
// a node that lives on their own stack, so Do() never allocates.
//
// use_sem picks how a waiter waits: false (default) yields a bounded number of
// rounds first, for short functions, then parks; true parks at once, for long
// ones. Results are copied to the waiters, so RetType must be copyable (and
// not a reference). Destroying a SingleFlight waits until no run is pending.
//
// Differences from PhotonLibOS: doc/compat.md#commonsingleflighth
// Floor: thread (tools/floors.txt), above its folder's: it is built on photon's coroutines.
#pragma once

#include <atomic>
#include <type_traits>
#include <utility>

#include <photon/common/detail/std17.h>
#include <photon/thread/awaiter.h>
#include <photon/thread/thread.h>

namespace photon {

class SingleFlight {
    struct WaitLink {
        // A caller's entry in the current run's list; lives on its stack.
        struct Node {
            enum : int { WAITING = 0, PARKED = 1, DONE = 2 };
            Node* next = nullptr;
            void* result_ptr;      // std::optional<R>* of the caller, nullptr for void
            const void* type_tag;  // identifies R; a result is taken only if it matches
            bool use_sem;
            bool has_result = false;  // written by the executor before DONE
            std::atomic<int> state{WAITING};
            Awaiter<AutoContext> awaiter;  // made on the caller's thread

            Node(void* result_ptr, const void* type_tag, bool use_sem)
                : result_ptr(result_ptr), type_tag(type_tag), use_sem(use_sem) {}

            // Returns once the executor is done with this node.
            void wait() {
                if (!use_sem && CURRENT) {
                    for (int i = 0; i < kYieldRounds; i++) {
                        if (state.load(std::memory_order_acquire) == DONE) return;
                        thread_yield();
                    }
                }
                int expected = WAITING;
                // Failing means DONE: the executor has already let go of us.
                if (state.compare_exchange_strong(expected, PARKED, std::memory_order_acq_rel))
                    awaiter.suspend();
            }

            // By the executor: stores the result (nullptr: the run failed, the
            // waiter runs again), then releases the node. The exchange is the
            // last touch unless the waiter parked; then resume() is, which the
            // Awaiter allows.
            void finish(const void* result, const void* tag, void (*copy)(void*, const void*)) {
                if (result && tag == type_tag && deliver(result, copy)) has_result = true;
                if (state.exchange(DONE, std::memory_order_acq_rel) == PARKED) awaiter.resume();
            }

            bool deliver(const void* result, void (*copy)(void*, const void*)) {
                if (!copy) return true;  // void: completion is the result
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
                try {
                    copy(result_ptr, result);
                } catch (...) {
                    return false;  // this waiter runs again instead
                }
#else
                copy(result_ptr, result);
#endif
                return true;
            }
        };

        std::atomic<Node*> head{};  // the current run's callers; nullptr: no run

        // Pushes node; the caller that finds the list empty is the executor
        // (returns false), the others wait for it (true).
        bool ready(Node& node) {
            node.next = head.load(std::memory_order_acquire);
            while (!head.compare_exchange_weak(node.next, &node, std::memory_order_acq_rel,
                                               std::memory_order_acquire))
                spin_wait();
            if (!node.next) return false;
            node.wait();
            return true;
        }

        // Ends the run: detaches the list, so later callers start a new run,
        // and hands every waiter the result (nullptr: none, they run again).
        void done(Node* self, const void* result, void (*copy)(void*, const void*)) {
            auto n = head.exchange(nullptr, std::memory_order_acq_rel);
            while (n) {
                auto next = n->next;  // read first: a released node may vanish
                if (n != self) n->finish(result, self->type_tag, copy);
                n = next;
            }
        }
    } wl;

    static constexpr int kYieldRounds = 64;

    template <typename T>
    struct type_tag {
        static constexpr char id = 0;  // its address tells T apart
    };

    template <typename T>
    static void copy_into(void* dst, const void* src) {
        static_cast<photon::detail::maybe<T>*>(dst)->emplace(*static_cast<const T*>(src));
    }

    // Ends the executor's run even if func throws (then with no result).
    class run_guard {
    public:
        run_guard(WaitLink& wl, WaitLink::Node& self) : wl_(wl), self_(self) {}
        run_guard(const run_guard&) = delete;
        run_guard& operator=(const run_guard&) = delete;
        ~run_guard() {
            if (!finished_) wl_.done(&self_, nullptr, nullptr);
        }
        void finish(const void* result, void (*copy)(void*, const void*)) {
            finished_ = true;
            wl_.done(&self_, result, copy);
        }

    private:
        WaitLink& wl_;
        WaitLink::Node& self_;
        bool finished_ = false;
    };

public:
    SingleFlight() = default;
    SingleFlight(const SingleFlight&) = delete;
    SingleFlight& operator=(const SingleFlight&) = delete;

    // Runs func() unless a run is pending, then waits for that run instead.
    template <typename Func, typename RetType = decltype(std::declval<Func>()())>
    std::enable_if_t<std::is_void<RetType>::value, void> Do(Func&& func, bool use_sem = false) {
        for (;;) {
            WaitLink::Node node(nullptr, &type_tag<void>::id, use_sem);
            if (wl.ready(node)) {
                if (node.has_result) return;
                continue;  // the run failed, or was of another type
            }
            run_guard guard(wl, node);
            func();
            int done_marker = 0;  // any non-null pointer says "completed"
            guard.finish(&done_marker, nullptr);
            return;
        }
    }

    // Runs func() unless a run is pending, then returns a copy of that run's
    // result instead.
    template <typename Func, typename RetType = decltype(std::declval<Func>()())>
    std::enable_if_t<!std::is_void<RetType>::value, RetType> Do(Func&& func, bool use_sem = false) {
        static_assert(
            !std::is_reference<RetType>::value,
            "SingleFlight copies results to its waiters: return a value, not a reference");
        for (;;) {
            photon::detail::maybe<RetType> shared;
            WaitLink::Node node(&shared, &type_tag<RetType>::id, use_sem);
            if (wl.ready(node)) {
                if (node.has_result) return std::move(*shared);
                continue;
            }
            run_guard guard(wl, node);
            RetType result = func();
            guard.finish(&result, &copy_into<RetType>);
            return result;
        }
    }

    // Waits until no run is pending.
    ~SingleFlight() {
        while (wl.head.load(std::memory_order_acquire)) {
            if (CURRENT)
                thread_yield();
            else
                spin_yield();
        }
    }
};

// Its address is taken: before C++17 (no inline variables) it needs a definition.
#if __cplusplus < 201703L
template <typename T>
constexpr char SingleFlight::type_tag<T>::id;
#endif

}  // namespace photon
