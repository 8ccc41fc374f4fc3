// The coroutine control block. It lives at the top of the coroutine's own
// stack (no separate allocation), just below a random gap that keeps the hot
// fields of different coroutines out of the same cache sets. Private header.
#pragma once

#include <atomic>
#include <cstdint>

#include <photon/common/list.h>
#include <photon/thread/thread.h>

namespace photon {

struct vcpu_t;
struct stack_block;

// Flag bits of thread::flags.
constexpr uint32_t TF_JOINABLE = 1;
constexpr uint32_t TF_SHUTDOWN = 2;
constexpr uint32_t TF_MAIN = 4;  // the OS thread's own stack: not freed
// In its new vCPU's standby list, to be adopted; a sleeper (still SLEEPING)
// then sleeps on there, one woken meanwhile (STANDBY) runs.
constexpr uint32_t TF_MIGRATING = 8;
constexpr uint32_t TF_DAEMON = 16;        // THREAD_DAEMON: not in nthreads
constexpr uint32_t TF_STEAL = 32;         // THREAD_ENABLE_WORK_STEALING
constexpr uint32_t TF_STEAL_PAUSED = 64;  // thread_pause_work_stealing(true)

// An atomic with relaxed loads and stores, for fields that other vCPUs peek
// at without ordering needs (the lock that guards transitions orders them).
template <typename T>
class relaxed {
public:
    relaxed(T v = T()) : v_(v) {}
    operator T() const { return v_.load(std::memory_order_relaxed); }
    relaxed& operator=(T v) {
        v_.store(v, std::memory_order_relaxed);
        return *this;
    }
    // Read-modify-write for fields whose writers hold the guarding lock.
    relaxed& operator|=(T v) { return *this = T(*this | v); }
    relaxed& operator&=(T v) { return *this = T(*this & v); }

private:
    std::atomic<T> v_;
};

struct thread : intrusive_list_node<thread> {  // run queue / standby links
    void* sp = nullptr;                        // saved context while not running
    vcpu_t* vcpu = nullptr;
    // READY while in a run queue (running or not), else SLEEPING, STANDBY
    // (being handed to its vCPU) or DONE.
    relaxed<states> state = READY;
    // Pending interrupt errno (-1 = none). Written under `lock` or by the owner.
    relaxed<int> error_number = -1;
    relaxed<uint32_t> flags = 0;  // TF_*; written under `lock` once shared
    uint32_t pins = 0;            // thread_pin_current(); only its own vCPU reads it
    spinlock lock;                // guards state transitions against other vCPUs
    // `now` when it was last made ready (woken or created), and whether it has not run since:
    // its run-queue delay (stats.h). Set by its waker, cleared by its vCPU when it runs.
    uint64_t ready_at = 0;
    bool woken = false;

    // Sleep queue: absolute deadline on `now`, where the sleeper is queued
    // (sleep_queue.h: kNotQueued, kInList, kInHeap, kInOverflow) and its
    // place there: in the list, its neighbours; in the binary heap, its
    // index; in the pairing heap, its first child, next sibling, and previous
    // sibling or, for a first child, its parent.
    uint64_t deadline = UINT64_MAX;
    thread* sq_child = nullptr;
    thread* sq_next = nullptr;
    thread* sq_prev = nullptr;
    uint32_t heap_index = 0;
    uint8_t in_sleepq = 0;

    // Wait queue links (a sleeping lock's waitq), and what the waiter wants
    // from it (semaphore units, rwlock mode).
    waitq* wq = nullptr;
    thread* wq_prev = nullptr;
    thread* wq_next = nullptr;
    uint64_t wait_arg = 0;

    thread_entry start = nullptr;
    void* arg = nullptr;
    // The entry's result once DONE; while alive, the last stackful_malloc()
    // block (stackful.cpp): nothing else reads it before the end.
    void* retval = nullptr;
    thread* joiner = nullptr;

    // Stack: the usable range [stack_lo, stack_hi) and the allocation.
    char* stack_lo = nullptr;
    char* stack_hi = nullptr;
    stack_block* stack = nullptr;
    char* reserved = nullptr;
    uint32_t reserved_size = 0;

    void* tls = nullptr;  // coroutine-local values (thread-key.cpp)

    // For dumps (dump.cpp): when it last went to sleep, and what it waits on
    // when its waiter said so (wait_note.h; 0: not said).
    uint64_t slept_at = 0;
    uint64_t wait_note = 0;

    // Its vCPU's list of every coroutine it has, for debuggers
    // (tools/photon-gdb.py); changed by that vCPU only (vcpu.h).
    thread* all_prev = nullptr;
    thread* all_next = nullptr;

#if defined(__SANITIZE_ADDRESS__) || defined(PHOTON_ASAN)
    void* asan_fake_stack = nullptr;
#endif
#if defined(__SANITIZE_THREAD__) || defined(PHOTON_TSAN)
    void* tsan_fiber = nullptr;
#endif
};

}  // namespace photon
