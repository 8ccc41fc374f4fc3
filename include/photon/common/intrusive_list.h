// Intrusive circular doubly-linked lists, as PhotonLibOS's thread/list.h
// (this file; photon/thread/list.h and photon/common/list.h include it).
//
// An element embeds its links by deriving from intrusive_list_node<T>, so
// linking and unlinking never allocate. A lone node points at itself; a list
// is a ring of nodes and an intrusive_list is a handle on its front node
// (nullptr when empty). Nothing here locks: the owner of a list serializes
// access to it. Never yields; any vCPU or OS thread.
//
// Differences from PhotonLibOS: doc/compat.md#commonintrusive_listh
#pragma once

#include <cassert>
#include <cstddef>
#include <utility>

#include <photon/common/utility.h>

// The type-independent links. Photon code reaches __prev_ptr / __next_ptr
// directly, so they stay public.
class __intrusive_list_node {
public:
    __intrusive_list_node* __prev_ptr;
    __intrusive_list_node* __next_ptr;

    __intrusive_list_node() : __prev_ptr(this), __next_ptr(this) {}
    // A copy is a new, unlinked element.
    __intrusive_list_node(const __intrusive_list_node&) : __intrusive_list_node() {}
    __intrusive_list_node& operator=(const __intrusive_list_node&) { return *this; }

    // True if this node is in no ring (or is the only node of its list).
    bool single() const { return __prev_ptr == this || __next_ptr == this; }

    // Unlinks this node; returns its old successor, or nullptr if it was lone.
    __intrusive_list_node* remove_from_list() {
        if (single()) return nullptr;
        auto next = __next_ptr;
        __next_ptr->__prev_ptr = __prev_ptr;
        __prev_ptr->__next_ptr = __next_ptr;
        __prev_ptr = __next_ptr = this;
        return next;
    }

    // Link the lone node `ptr` just before / after this one (a node that is
    // already linked is left alone). insert_tail is insert_before: seen from
    // this node as the front of a ring, its predecessor is the tail.
    void insert_before(__intrusive_list_node* ptr) { ptr->insert_between(__prev_ptr, this); }
    void insert_tail(__intrusive_list_node* ptr) { insert_before(ptr); }
    void insert_after(__intrusive_list_node* ptr) { ptr->insert_between(this, __next_ptr); }

    // Link the whole ring that `ptr` heads (ptr first, ptr->__prev_ptr last)
    // just before / after this node. The two rings must be distinct.
    void insert_list_before(__intrusive_list_node* ptr) {
        ptr->insert_list_between(__prev_ptr, this);
    }
    void insert_list_tail(__intrusive_list_node* ptr) { insert_list_before(ptr); }
    void insert_list_after(__intrusive_list_node* ptr) {
        ptr->insert_list_between(this, __next_ptr);
    }

    // Cuts the ring at `ptr`, another node of it, into [this, ptr) and
    // [ptr, this): two rings headed by this and by ptr.
    void split(__intrusive_list_node* ptr) {
        assert(ptr != this);
        assert(!single());
        auto front_tail = ptr->__prev_ptr;
        auto back_tail = __prev_ptr;
        __prev_ptr = front_tail;
        front_tail->__next_ptr = this;
        ptr->__prev_ptr = back_tail;
        back_tail->__next_ptr = ptr;
    }

private:
    void insert_between(__intrusive_list_node* prev, __intrusive_list_node* next) {
        if (!single()) return;
        prev->__next_ptr = this;
        next->__prev_ptr = this;
        __prev_ptr = prev;
        __next_ptr = next;
    }
    void insert_list_between(__intrusive_list_node* prev, __intrusive_list_node* next) {
        auto tail = __prev_ptr;
        prev->__next_ptr = this;
        __prev_ptr = prev;
        next->__prev_ptr = tail;
        tail->__next_ptr = next;
    }
};

// The links of an element of type T (T derives from intrusive_list_node<T>).
template <typename T>
class intrusive_list_node : public __intrusive_list_node {
public:
    T* remove_from_list() { return static_cast<T*>(__intrusive_list_node::remove_from_list()); }

    void insert_before(T* ptr) { __intrusive_list_node::insert_before(ptr); }
    void insert_tail(T* ptr) { __intrusive_list_node::insert_tail(ptr); }
    void insert_after(T* ptr) { __intrusive_list_node::insert_after(ptr); }
    void insert_list_before(T* ptr) { __intrusive_list_node::insert_list_before(ptr); }
    void insert_list_tail(T* ptr) { __intrusive_list_node::insert_list_tail(ptr); }
    void insert_list_after(T* ptr) { __intrusive_list_node::insert_list_after(ptr); }
    void insert_before(T& ptr) { insert_before(&ptr); }
    void insert_tail(T& ptr) { insert_tail(&ptr); }
    void insert_after(T& ptr) { insert_after(&ptr); }
    void insert_list_before(T& ptr) { insert_list_before(&ptr); }
    void insert_list_tail(T& ptr) { insert_list_tail(&ptr); }
    void insert_list_after(T& ptr) { insert_list_after(&ptr); }
    void split(T* ptr) { __intrusive_list_node::split(ptr); }

    T* next() const { return static_cast<T*>(__next_ptr); }
    T* prev() const { return static_cast<T*>(__prev_ptr); }

    // Walks the ring once, starting at the node it was taken from; *it is a
    // T*. Follows __next_ptr (iterator) or __prev_ptr (reverse_iterator).
    template <bool Forward>
    struct ring_iterator {
        __intrusive_list_node* ptr;
        __intrusive_list_node* end;
        T* operator*() const { return static_cast<T*>(ptr); }
        ring_iterator& operator++() {
            ptr = Forward ? ptr->__next_ptr : ptr->__prev_ptr;
            if (ptr == end) ptr = nullptr;
            return *this;
        }
        ring_iterator operator++(int) {
            auto old = *this;
            ++*this;
            return old;
        }
        bool operator==(const ring_iterator& rhs) const { return ptr == rhs.ptr; }
        bool operator!=(const ring_iterator& rhs) const { return ptr != rhs.ptr; }
    };
    using iterator = ring_iterator<true>;
    using reverse_iterator = ring_iterator<false>;

    iterator begin() { return {this, this}; }
    iterator end() { return {nullptr, nullptr}; }
    // From the node before this one (the tail, if this is a list's front).
    reverse_iterator rbegin() { return {__prev_ptr, __prev_ptr}; }
    reverse_iterator rend() { return {nullptr, nullptr}; }
};

// A handle on a ring of NodeType: `node` is its front, nullptr when empty.
// With AssertAtDestruction, destroying a non-empty handle is a debug assertion
// (the elements are not owned; delete_all() deletes them).
template <typename NodeType, bool AssertAtDestruction = true>
class intrusive_list {
public:
    NodeType* node = nullptr;

    intrusive_list() = default;
    explicit intrusive_list(NodeType* node) : node(node) {}
    intrusive_list(intrusive_list&& rhs) : node(rhs.node) { rhs.node = nullptr; }
    intrusive_list(const intrusive_list&) = delete;
    intrusive_list& operator=(const intrusive_list&) = delete;
    ~intrusive_list() {
        // NodeType must derive from intrusive_list_node<...>.
        const __intrusive_list_node* links = node;
        if (AssertAtDestruction) assert(links == nullptr);
        _unused(links);
    }

    void push_back(NodeType* ptr) {
        if (!node)
            node = ptr;
        else
            node->insert_tail(ptr);
    }
    // Moves all of `lst` to the back / front of this list.
    void push_back(intrusive_list&& lst) {
        if (!lst.node) return;
        if (!node)
            node = lst.node;
        else
            node->insert_list_tail(lst.node);
        lst.node = nullptr;
    }
    void push_front(NodeType* ptr) {
        if (node) node->insert_before(ptr);
        node = ptr;
    }
    void push_front(intrusive_list&& lst) {
        if (!lst.node) return;
        if (node) node->insert_list_before(lst.node);
        node = lst.node;
        lst.node = nullptr;
    }
    // Photon extension (earlier photon/common/list.h): push_back(std::move(lst)).
    void splice(intrusive_list& lst) { push_back(std::move(lst)); }

    NodeType* pop_front() {
        if (!node) return nullptr;
        auto front = node;
        node = node->remove_from_list();
        return front;
    }
    NodeType* pop_back() {
        if (!node) return nullptr;
        auto back = node->prev();
        if (back == node)
            node = nullptr;
        else
            back->remove_from_list();
        return back;
    }
    // Unlinks `ptr`, an element of this list; returns its successor, or
    // nullptr if it was the only one.
    NodeType* erase(NodeType* ptr) {
        auto next = ptr->remove_from_list();
        if (ptr == node) node = next;
        return next;
    }
    void pop(NodeType* ptr) { erase(ptr); }
    // Photon extension: forgets the elements (still linked to each other)
    // and returns the former front.
    NodeType* release() {
        auto front = node;
        node = nullptr;
        return front;
    }

    NodeType* front() const { return node; }
    NodeType* back() const { return node ? node->prev() : nullptr; }
    operator bool() const { return node != nullptr; }
    bool empty() const { return node == nullptr; }

    typedef typename NodeType::iterator iterator;
    typedef typename NodeType::reverse_iterator reverse_iterator;
    iterator begin() { return node ? node->begin() : end(); }
    iterator end() { return {nullptr, nullptr}; }
    reverse_iterator rbegin() { return node ? node->rbegin() : rend(); }
    reverse_iterator rend() { return {nullptr, nullptr}; }

    bool contains(NodeType* x) {
        for (auto y : *this)
            if (x == y) return true;
        return false;
    }

    // Splits off and returns the front part up to and including `ptr` (an
    // element); nullptr ptr or an empty list: returns an empty list.
    intrusive_list split_front_inclusive(NodeType* ptr) {
        if (!node || !ptr) return intrusive_list();
        auto front = node;
        if (ptr->__next_ptr == node) {  // ptr is the tail: take everything
            node = nullptr;
            return intrusive_list(front);
        }
        auto rest = ptr->next();
        node->split(rest);
        node = rest;
        return intrusive_list(front);
    }
    // Splits off and returns the front part before `ptr` (an element);
    // nullptr ptr takes everything, ptr == front takes nothing.
    intrusive_list split_front_exclusive(NodeType* ptr) {
        auto front = node;
        if (!ptr) {
            node = nullptr;
            return intrusive_list(front);
        }
        if (!node || ptr == node) return intrusive_list();
        node->split(ptr);
        node = ptr;
        return intrusive_list(front);
    }
    // Splits off the longest front run whose elements satisfy pred(x).
    template <typename Predicate>
    intrusive_list split_by_predicate(Predicate&& pred) {
        if (!node) return intrusive_list();
        NodeType* first_not_fit = nullptr;
        for (auto x : *this) {
            if (!pred(x)) {
                first_not_fit = x;
                break;
            }
        }
        return split_front_exclusive(first_not_fit);
    }

    // Deletes every element (they must come from `new`); returns how many.
    size_t delete_all() {
        size_t n = 0;
        while (auto x = pop_front()) {
            delete x;
            n++;
        }
        return n;
    }

    // Returns the front and makes its successor / predecessor the front.
    NodeType* round_robin_next() {
        auto x = node;
        if (x) node = x->next();
        return x;
    }
    NodeType* round_robin_prev() {
        auto x = node;
        if (x) node = x->prev();
        return x;
    }

    size_t count_by_loop() const {
        size_t n = 0;
        for (auto x : const_cast<intrusive_list&>(*this)) (void)x, ++n;
        return n;
    }
};
