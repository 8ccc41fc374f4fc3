// Coroutine stacks: mmap'ed (lazily committed) with a PROT_NONE guard page
// below, cached per vCPU for reuse. Private header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace photon {

// Bookkeeping of one stack allocation, kept in its top bytes.
struct stack_block {
    char* base;         // start of the allocation (the guard page, if any)
    size_t total;       // bytes allocated, guard included
    size_t usable;      // bytes above the guard
    stack_block* next;  // free-list link while pooled
    unsigned valgrind_id;
    bool guarded;
    bool custom;  // from a user allocator: neither pooled nor unmapped
};

// Every stack_block leaves this many bytes at its top for itself.
constexpr size_t kStackBlockBytes = 64;

// A vCPU's cache of free stacks. Only its vCPU touches it.
class stack_pool {
public:
    stack_pool() = default;
    stack_pool(const stack_pool&) = delete;
    ~stack_pool() { trim(0); }

    // A stack with at least `size` usable bytes (page-rounded), or nullptr
    // with errno ENOMEM (logged).
    stack_block* get(size_t size);
    // Takes back a stack of any vCPU: cached, or freed past the cache limit.
    void put(stack_block* b);
    // Frees cached stacks until at most `keep` remain.
    void trim(size_t keep);

private:
    struct bucket {
        size_t usable;
        stack_block* head;
    };
    bucket* find(size_t usable);
    std::vector<bucket> buckets_;
    size_t cached_ = 0;
};

size_t page_size();

}  // namespace photon
