#include "sleep_queue.h"

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

}  // namespace

thread* sleep_queue::front() const {
    if (!root_) return head_;
    if (!head_) return root_;
    return head_->deadline <= root_->deadline ? head_ : root_;
}

uint64_t sleep_queue::next_deadline() const {
    thread* f = front();
    return f ? f->deadline : UINT64_MAX;
}

void sleep_queue::push(thread* th) {
    th->sq_child = th->sq_next = th->sq_prev = nullptr;
    size_++;
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
    th->in_sleepq = kInHeap;
    root_ = root_ ? meld(root_, th) : th;
}

void sleep_queue::erase(thread* th) {
    if (th->in_sleepq == kInList)
        list_erase(th);
    else if (th->in_sleepq == kInHeap)
        heap_erase(th);
    else
        return;
    th->in_sleepq = kNotQueued;
    size_--;
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

void sleep_queue::heap_erase(thread* th) {
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

thread* sleep_queue::pop_front() {
    thread* th = front();
    if (th) erase(th);
    return th;
}

}  // namespace photon
