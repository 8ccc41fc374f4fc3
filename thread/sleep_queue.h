// Sleeping coroutines of one vCPU ordered by deadline, linked through their
// control blocks, so the queue never allocates (and never fails) however
// many sleep. Two parts:
//   - a sorted list that takes every sleeper whose deadline is not earlier
//     than its tail's: sleepers that share one timeout arrive in deadline
//     order, and go in and out in O(1) touching only their neighbours;
//   - a pairing heap for the rest: insert O(1), pop and remove O(log n)
//     amortized.
// The front is the earlier of the two fronts. Only the owning vCPU touches it.
// Private header.
#pragma once

#include <cstddef>
#include <cstdint>

namespace photon {

struct thread;

// Values of thread::in_sleepq.
constexpr uint8_t kNotQueued = 0, kInList = 1, kInHeap = 2;

class sleep_queue {
public:
    bool empty() const { return size_ == 0; }
    size_t size() const { return size_; }
    thread* front() const;
    // Deadline of the front, UINT64_MAX if empty.
    uint64_t next_deadline() const;

    void push(thread* th);
    // Removes th if it is queued (th->in_sleepq).
    void erase(thread* th);
    thread* pop_front();

private:
    void heap_erase(thread* th);
    void list_erase(thread* th);

    thread* root_ = nullptr;  // of the heap
    thread* head_ = nullptr;  // of the list
    thread* tail_ = nullptr;
    size_t size_ = 0;
};

}  // namespace photon
