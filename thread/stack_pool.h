// A vCPU's cache of free coroutine stacks, in front of the process-wide
// slabs (stack_slab.h). Ended coroutines' stacks are kept for reuse, pages
// and all, up to the trim threshold (pooled_stack_trim_threshold, bytes of
// stack) and the cache limit (set_pooled_stack_cache_limit, stacks); past
// either, the coldest go back to the slabs in a batch, which returns their
// memory to the kernel. Private header.
#pragma once

#include <cstddef>
#include <cstdint>

#include <photon/common/callback.h>

#include "stack_slab.h"

namespace photon {

// A user's stack allocator: where new stacks come from instead of the slabs.
struct user_stack_allocator {
    Delegate<void*, size_t> alloc;
    Delegate<void, void*, size_t> dealloc;
};
// Selects `a` for stacks made from now on (nullptr: the built-in allocator).
// `a` must stay valid for good: stacks made meanwhile may still be in use.
void select_stack_allocator(const user_stack_allocator* a);
// Bytes zeroed below the top of a stack taken from a vCPU cache (0: none).
void set_stack_wipe_bytes(uint32_t bytes);

// Counts of the built-in allocator's caches, summed over the OS threads.
struct stack_cache_counts {
    uint64_t hits, misses;
    size_t pooled_bytes;
};
stack_cache_counts get_stack_cache_counts();

class stack_pool {
public:
    stack_pool() = default;
    stack_pool(const stack_pool&) = delete;
    ~stack_pool() { trim(0); }

    // A stack with at least `size` usable bytes (page-rounded), or nullptr
    // with errno ENOMEM (logged).
    stack_block* get(size_t size);
    // Takes back a stack of any vCPU: cached, or past the limits given back.
    void put(stack_block* b);
    // Gives back cached stacks until at most `keep_bytes` of stack remain;
    // returns the bytes given back.
    size_t trim(size_t keep_bytes);

private:
    // A list per stack size, most recently used first.
    struct bucket {
        size_t usable;
        stack_block* head;
        stack_block* tail;
    };
    static constexpr int kBuckets = 8;

    // The bucket of that size; with add, a new one if there is room.
    bucket* find(size_t usable, bool add);
    stack_block* pop_tail(bucket* bk);
    // Gives back the coldest stacks until within both limits.
    void shrink(size_t max_bytes, size_t max_count);

    bucket buckets_[kBuckets] = {};
    int nbuckets_ = 0;
    size_t bytes_ = 0;
    size_t count_ = 0;
};

}  // namespace photon
