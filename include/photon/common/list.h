// Intrusive circular doubly-linked lists: the element embeds its links, so
// insertion and removal never allocate. Not thread-safe by itself.
#pragma once

#include <cassert>

// A node of a circular list; a lone node points at itself.
template <typename T>
struct intrusive_list_node {
    T* __prev_ptr = static_cast<T*>(this);
    T* __next_ptr = static_cast<T*>(this);

    T* prev() const { return __prev_ptr; }
    T* next() const { return __next_ptr; }
    bool single() const { return __next_ptr == this; }

    // Inserts `x` (a lone node) right before this node.
    void insert_before(T* x) {
        x->__prev_ptr = __prev_ptr;
        x->__next_ptr = static_cast<T*>(this);
        __prev_ptr->__next_ptr = x;
        __prev_ptr = x;
    }
    // Inserts `x` (a lone node) right after this node.
    void insert_after(T* x) { __next_ptr->insert_before(x); }
    // Unlinks this node; returns its successor, or nullptr if it was alone.
    T* remove_from_list() {
        if (single()) return nullptr;
        T* n = __next_ptr;
        __prev_ptr->__next_ptr = n;
        n->__prev_ptr = __prev_ptr;
        __prev_ptr = __next_ptr = static_cast<T*>(this);
        return n;
    }
};

// A list handle: nullptr when empty, else the front node of the ring.
template <typename T>
class intrusive_list {
public:
    intrusive_list() = default;
    intrusive_list(const intrusive_list&) = delete;
    intrusive_list& operator=(const intrusive_list&) = delete;
    intrusive_list(intrusive_list&& r) : node(r.node) { r.node = nullptr; }
    ~intrusive_list() { assert(node == nullptr); }

    bool empty() const { return node == nullptr; }
    T* front() const { return node; }
    T* back() const { return node ? node->prev() : nullptr; }

    void push_back(T* x) {
        if (node)
            node->insert_before(x);
        else
            node = x;
    }
    void push_front(T* x) {
        push_back(x);
        node = x;
    }
    T* pop_front() {
        T* x = node;
        if (x) node = x->remove_from_list();
        return x;
    }
    T* pop_back() {
        T* x = back();
        if (x) erase(x);
        return x;
    }
    void erase(T* x) {
        T* n = x->remove_from_list();
        if (x == node) node = n;
    }
    // Moves all of `r` to the end of this list.
    void splice(intrusive_list& r) {
        if (!r.node) return;
        if (!node) {
            node = r.node;
        } else {
            T* a_tail = node->prev();
            T* b_tail = r.node->prev();
            a_tail->__next_ptr = r.node;
            r.node->__prev_ptr = a_tail;
            b_tail->__next_ptr = node;
            node->__prev_ptr = b_tail;
        }
        r.node = nullptr;
    }
    T* release() {
        T* x = node;
        node = nullptr;
        return x;
    }

    T* node = nullptr;
};
