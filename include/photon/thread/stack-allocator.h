// Where coroutine stacks come from. By default each vCPU keeps a pool of
// mmap'ed stacks with a guard page below each; a custom allocator replaces it
// for coroutines created afterwards (its stacks get no guard page and are
// not pooled). Set it before creating coroutines.
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
// How many free stacks each vCPU keeps for reuse (default 1024); surplus
// stacks are unmapped. Returns the previous value.
size_t set_pooled_stack_cache_limit(size_t stacks);

}  // namespace photon
