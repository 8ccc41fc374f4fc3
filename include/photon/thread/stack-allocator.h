// Where coroutine stacks come from. By default stacks are carved from large
// lazily-committed reservations shared by the process, each with a guard page
// below it, and each vCPU keeps a pool of free ones for reuse; a custom
// allocator replaces that for coroutines created afterwards (its stacks get
// no guard page and are not pooled). Set it before creating coroutines. See
// doc/thread.md for the guard page policy.
#pragma once

#include <cstddef>
#include <cstdint>

#include <photon/common/callback.h>

namespace photon {

const uint8_t STACK_ALLOCATOR_DEFAULT = 0;
const uint8_t STACK_ALLOCATOR_POOLED = 1;
const uint8_t STACK_ALLOCATOR_GLOBAL_POOLED = 2;

// alloc(size) returns `size` bytes (16-byte aligned) or nullptr; dealloc(ptr,
// size) frees them. Empty delegates restore the default pooled allocator.
void set_photon_thread_stack_allocator(Delegate<void*, size_t> alloc = {},
                                       Delegate<void, void*, size_t> dealloc = {});
// Selects the default per-vCPU pooled allocator. Returns 0.
int use_pooled_stack_allocator();
// How many free stacks each vCPU keeps for reuse (default 1024); past it,
// the coldest quarter returns its memory to the kernel. Returns the previous
// value.
size_t set_pooled_stack_cache_limit(size_t stacks);

// How many bytes of free stacks (their full sizes) each vCPU keeps for reuse
// (default 1 GiB: 128 default stacks); past it, the coldest quarter returns
// its memory to the kernel. Returns `threshold`.
size_t pooled_stack_trim_threshold(size_t threshold);
// Returns the memory of the calling vCPU's free stacks to the kernel until at
// most `keep_size` bytes of stack stay pooled. Returns the bytes released
// (0 outside a vCPU).
size_t pooled_stack_trim_current_vcpu(size_t keep_size);

}  // namespace photon
