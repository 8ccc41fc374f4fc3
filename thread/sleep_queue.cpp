#include "sleep_queue.h"

#include <atomic>
#include <cstdlib>

#include "thread_control.h"

namespace photon {

namespace {

// Links two detached heaps: the one with the later deadline becomes the first
// child of the other (`a` stays on top on a tie).
thread* meld(thread* a, thread* b) {
    if (b->deadline < a->deadline) {
        thread* t = a;
        a = b;
        b = t;
    }
    b->sq_prev = a;
    b->sq_next = a->sq_child;
    if (a->sq_child) a->sq_child->sq_prev = b;
    a->sq_child = b;
    return a;
}

// Merges a list of sibling heaps into one: meld them in pairs left to right,
// then fold the pairs right to left (the two passes that bound the cost).
thread* merge_siblings(thread* first) {
    if (!first) return nullptr;
    thread* pairs = nullptr;  // the melded pairs, last first, linked by sq_next
    while (first) {
        thread* a = first;
        thread* b = a->sq_next;
        first = b ? b->sq_next : nullptr;
        a->sq_prev = a->sq_next = nullptr;
        if (b) {
            b->sq_prev = b->sq_next = nullptr;
            a = meld(a, b);
        }
        a->sq_next = pairs;
        pairs = a;
    }
    thread* root = pairs;
    pairs = pairs->sq_next;
    root->sq_next = nullptr;
    while (pairs) {
        thread* p = pairs;
        pairs = p->sq_next;
        p->sq_next = nullptr;
        root = meld(p, root);  // p is to the left of everything in root
    }
    return root;
}

std::atomic<uint32_t> g_heap_limit{UINT32_MAX};  // limit_heap_for_test

}  // namespace

uint32_t sleep_queue::limit_heap_for_test(uint32_t n) { return g_heap_limit.exchange(n); }

sleep_queue::~sleep_queue() { free(heap_); }

thread* sleep_queue::front() const {
    thread* f = head_;
    if (n_ && (!f || heap_[0].deadline < f->deadline)) f = heap_[0].th;
    if (root_ && (!f || root_->deadline < f->deadline)) f = root_;
    return f;
}

uint64_t sleep_queue::next_deadline() const {
    thread* f = front();
    return f ? f->deadline : UINT64_MAX;
}

void sleep_queue::push(thread* th) {
    th->sq_child = th->sq_next = th->sq_prev = nullptr;
    if (!tail_ || tail_->deadline <= th->deadline) {
        th->in_sleepq = kInList;
        th->sq_prev = tail_;
        if (tail_)
            tail_->sq_next = th;
        else
            head_ = th;
        tail_ = th;
        return;
    }
    if (heap_push(th)) return;
    th->in_sleepq = kInOverflow;
    root_ = root_ ? meld(root_, th) : th;
}

void sleep_queue::erase(thread* th) {
    switch (th->in_sleepq) {
        case kInList:
            list_erase(th);
            break;
        case kInHeap:
            heap_erase(th);
            break;
        case kInOverflow:
            overflow_erase(th);
            break;
        default:
            return;
    }
    th->in_sleepq = kNotQueued;
}

thread* sleep_queue::pop_front() {
    thread* th = front();
    if (th) erase(th);
    return th;
}

void sleep_queue::list_erase(thread* th) {
    if (th->sq_prev)
        th->sq_prev->sq_next = th->sq_next;
    else
        head_ = th->sq_next;
    if (th->sq_next)
        th->sq_next->sq_prev = th->sq_prev;
    else
        tail_ = th->sq_prev;
    th->sq_next = th->sq_prev = nullptr;
}

bool sleep_queue::heap_push(thread* th) {
    if (n_ >= g_heap_limit.load(std::memory_order_relaxed)) return false;
    if (n_ == cap_) {
        uint32_t cap = cap_ ? cap_ * 2 : 256;
        if (cap <= cap_) return false;
        auto p = static_cast<entry*>(realloc(heap_, (size_t)cap * sizeof(entry)));
        if (!p) return false;
        heap_ = p;
        cap_ = cap;
    }
    th->in_sleepq = kInHeap;
    sift_up(n_++, {th->deadline, th});
    return true;
}

void sleep_queue::sift_up(uint32_t i, entry e) {
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (heap_[parent].deadline <= e.deadline) break;
        heap_[i] = heap_[parent];
        heap_[i].th->heap_index = i;
        i = parent;
    }
    heap_[i] = e;
    e.th->heap_index = i;
}

void sleep_queue::sift_down(uint32_t i, entry e) {
    while (true) {
        uint32_t child = 2 * i + 1;
        if (child >= n_) break;
        if (child + 1 < n_ && heap_[child + 1].deadline < heap_[child].deadline) ++child;
        if (e.deadline <= heap_[child].deadline) break;
        heap_[i] = heap_[child];
        heap_[i].th->heap_index = i;
        i = child;
    }
    heap_[i] = e;
    e.th->heap_index = i;
}

void sleep_queue::heap_erase(thread* th) {
    uint32_t i = th->heap_index;
    entry last = heap_[--n_];
    if (i == n_) return;
    // The moved entry may belong above or below its new slot.
    if (i > 0 && heap_[(i - 1) / 2].deadline > last.deadline)
        sift_up(i, last);
    else
        sift_down(i, last);
}

void sleep_queue::overflow_erase(thread* th) {
    thread* sub = merge_siblings(th->sq_child);
    th->sq_child = nullptr;
    if (th == root_) {
        root_ = sub;
        return;
    }
    // Unlink th from its siblings: sq_prev is its parent if it is a first child.
    thread* prev = th->sq_prev;
    if (prev->sq_child == th)
        prev->sq_child = th->sq_next;
    else
        prev->sq_next = th->sq_next;
    if (th->sq_next) th->sq_next->sq_prev = prev;
    th->sq_next = th->sq_prev = nullptr;
    if (sub) root_ = meld(root_, sub);
}

}  // namespace photon
