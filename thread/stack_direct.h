// The stacks Photon's pooled allocator functions hand out when called
// directly (stack_direct.cpp). Private header.
#pragma once

#include <cstddef>
#include <cstdint>

namespace photon {

// `stack_size` bytes (page-rounded), page-aligned, the lowest page a guard;
// nullptr with EINVAL (under two pages) or ENOMEM.
void* direct_stack_alloc(size_t stack_size);
// Takes back a stack of direct_stack_alloc(); anything else (a double free)
// is counted as a corruption, logged and ignored.
void direct_stack_dealloc(void* stack_ptr);
// The cache's bound in bytes (default 64 MiB), applied at once.
void direct_stack_cache_limit(size_t bytes);
// Gives back cached stacks until at most keep_bytes stay; the bytes given back.
size_t direct_stack_trim(size_t keep_bytes);

struct direct_stack_counts {
    uint64_t hits, misses, corruptions;
    size_t cached_bytes;
};
direct_stack_counts get_direct_stack_counts();

}  // namespace photon
