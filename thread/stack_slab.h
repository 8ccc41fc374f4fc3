// Coroutine stacks carved from large reservations ("slabs"): one memory map
// holds many stacks, committed lazily, each with a guard page below it that
// costs no map of its own where the kernel has MADV_GUARD_INSTALL. Slabs are
// process-wide (any vCPU may take or give back a stack); the per-vCPU caches
// in front of them are stack_pool's. Private header.
#pragma once

#include <cstddef>
#include <cstdint>

namespace photon {

struct stack_slab;

// Bookkeeping of one stack, kept in its top bytes.
struct stack_block {
    union {
        struct {  // a slab's stack: cache list links while pooled by a vCPU
            stack_block* next;
            stack_block* prev;
        };
        struct {  // a user allocator's stack (never pooled): how to free it
            void* dealloc_obj;
            void (*dealloc_fn)(void*, void*, size_t);
        };
    };
    stack_slab* slab;  // nullptr: from a user allocator, neither pooled nor guarded
    char* base;        // start of the slot (its guard page, if any)
    size_t total;      // bytes of the slot, guard included
    size_t usable;     // bytes above the guard
    unsigned valgrind_id;
    bool guarded;
};

// Every stack_block leaves this many bytes at its top for itself.
constexpr size_t kStackBlockBytes = 64;
static_assert(sizeof(stack_block) <= kStackBlockBytes, "stack_block outgrew its reserved bytes");

size_t page_size();

// A stack with `usable` bytes (a page multiple) above a guard page, from a
// slab with a free slot or a new one; nullptr with errno ENOMEM (logged).
stack_block* slab_take(size_t usable);

// Gives back n stacks of any slabs. Their memory returns to the kernel
// (adjacent stacks in one madvise), and slabs left empty are unmapped.
// Reorders `blocks`.
void slab_give_back(stack_block** blocks, size_t n);

// How new stacks are guarded: MADV_GUARD_INSTALL markers (Linux 6.13+),
// mprotect'ed pages (each costs up to two memory maps, so only while the
// process stays well under vm.max_map_count), or not at all.
enum class guard_method : uint8_t { none, marker, mprotect };

struct slab_stats {
    size_t slabs;         // slabs mapped
    size_t maps;          // memory maps they cost, at most (guards included)
    size_t stacks_out;    // stacks handed out and not given back
    guard_method method;  // for new slabs
};
slab_stats get_slab_stats();

// Process-wide byte and map counts of the slabs, for the allocator's stats.
struct slab_usage {
    size_t mapped_bytes;  // address space of all slabs
    size_t usable_out;    // usable bytes of the stacks handed out (pooled or in use)
    size_t stacks_out;    // how many those are
    uint64_t maps;        // slabs mapped so far
    uint64_t unmaps;      // slabs unmapped so far
};
slab_usage get_slab_usage();

// For tests: slabs created from now on use method `m`, and mprotect guards
// stay within `mprotect_maps` maps (0: half of vm.max_map_count).
void override_stack_guard(guard_method m, size_t mprotect_maps);

}  // namespace photon
