#include "sleep_queue.h"

#include "thread_control.h"

namespace photon {

uint64_t sleep_queue::next_deadline() const {
    return heap_.empty() ? UINT64_MAX : heap_[0]->deadline;
}

void sleep_queue::place(size_t i, thread* th) {
    heap_[i] = th;
    th->heap_index = (int32_t)i;
}

void sleep_queue::sift_up(size_t i) {
    thread* th = heap_[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (heap_[parent]->deadline <= th->deadline) break;
        place(i, heap_[parent]);
        i = parent;
    }
    place(i, th);
}

void sleep_queue::sift_down(size_t i) {
    thread* th = heap_[i];
    const size_t n = heap_.size();
    while (true) {
        size_t child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && heap_[child + 1]->deadline < heap_[child]->deadline) ++child;
        if (th->deadline <= heap_[child]->deadline) break;
        place(i, heap_[child]);
        i = child;
    }
    place(i, th);
}

void sleep_queue::push(thread* th) {
    heap_.push_back(th);
    sift_up(heap_.size() - 1);
}

void sleep_queue::erase(thread* th) {
    if (th->heap_index < 0) return;
    size_t i = (size_t)th->heap_index;
    th->heap_index = -1;
    thread* last = heap_.back();
    heap_.pop_back();
    if (last == th) return;
    place(i, last);
    // The moved entry may belong above or below its new slot.
    if (i > 0 && heap_[(i - 1) / 2]->deadline > last->deadline)
        sift_up(i);
    else
        sift_down(i);
}

thread* sleep_queue::pop_front() {
    if (heap_.empty()) return nullptr;
    thread* th = heap_[0];
    erase(th);
    return th;
}

}  // namespace photon
