// Sleeping coroutines of one vCPU ordered by deadline: a binary min-heap whose
// entries know their index, so insert, remove and pop are O(log n). Only the
// owning vCPU touches it. Private header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace photon {

struct thread;

class sleep_queue {
public:
    bool empty() const { return heap_.empty(); }
    size_t size() const { return heap_.size(); }
    thread* front() const { return heap_.empty() ? nullptr : heap_[0]; }
    // Deadline of the front, UINT64_MAX if empty.
    uint64_t next_deadline() const;

    void push(thread* th);
    // Removes th if it is queued (heap_index >= 0).
    void erase(thread* th);
    thread* pop_front();

private:
    void sift_up(size_t i);
    void sift_down(size_t i);
    void place(size_t i, thread* th);

    std::vector<thread*> heap_;
};

}  // namespace photon
