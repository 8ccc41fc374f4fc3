// Sleeping coroutines of one vCPU ordered by deadline. Three parts, the
// front being the earliest of their fronts:
//   - a sorted list, linked through the control blocks, that takes every
//     sleeper whose deadline is not earlier than its tail's: sleepers that
//     share one timeout arrive in deadline order, and go in and out in O(1)
//     touching only their neighbours (a million of them cost no heap work);
//   - a binary heap of (deadline, coroutine) pairs in one array for the rest:
//     O(log n), its comparisons within the array;
//   - should that array fail to grow, a pairing heap linked through the
//     control blocks (O(1) insert, O(log n) amortized pop and remove), so
//     going to sleep never fails and never throws.
// Only the owning vCPU touches it. Private header.
#pragma once

#include <cstddef>
#include <cstdint>

namespace photon {

struct thread;

// Values of thread::in_sleepq.
constexpr uint8_t kNotQueued = 0, kInList = 1, kInHeap = 2, kInOverflow = 3;

class sleep_queue {
public:
    sleep_queue() = default;
    sleep_queue(const sleep_queue&) = delete;
    ~sleep_queue();

    thread* front() const;
    // Deadline of the front, UINT64_MAX if empty.
    uint64_t next_deadline() const;

    void push(thread* th);
    // Removes th if it is queued (th->in_sleepq).
    void erase(thread* th);
    thread* pop_front();

    // For tests: binary heaps hold at most `n` sleepers (the rest go to the
    // pairing heap, as when the array cannot grow). Returns the old limit.
    static uint32_t limit_heap_for_test(uint32_t n);

private:
    struct entry {
        uint64_t deadline;
        thread* th;
    };
    bool heap_push(thread* th);
    void heap_erase(thread* th);
    void sift_up(uint32_t i, entry e);
    void sift_down(uint32_t i, entry e);
    void list_erase(thread* th);
    void overflow_erase(thread* th);

    thread* head_ = nullptr;  // the list
    thread* tail_ = nullptr;
    entry* heap_ = nullptr;  // the binary heap
    uint32_t n_ = 0, cap_ = 0;
    thread* root_ = nullptr;  // the pairing heap
};

}  // namespace photon
