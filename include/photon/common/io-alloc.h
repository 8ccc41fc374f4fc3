// Allocators of I/O buffers, as PhotonLibOS declares them (global namespace).
// An IOAlloc is a pair of callbacks: allocate({min, max}, &ptr) gives a
// buffer of at least min and at most max bytes and returns its size (the more
// the better), or a negative value with errno on failure; deallocate(ptr)
// frees it. The default is malloc/free; AlignedAlloc aligns; PooledAllocator
// keeps freed power-of-two buffers (4 KiB-aligned by default) for reuse, in
// IdentityPools, so any vCPU may use it.
//
// Differences from PhotonLibOS: doc/compat.md#commonio-alloch
// Floor: thread (tools/floors.txt), above its folder's: it is built on photon's coroutines.
#pragma once

#include <malloc.h>

#include <cassert>
#include <cerrno>
#include <cinttypes>
#include <cstdlib>

#include <photon/common/callback.h>
#include <photon/common/identity-pool.h>
#include <photon/common/utility.h>

struct IOAlloc {
    struct RangeSize {
        int min, max;  // non-negative, min <= max
    };
    typedef Callback<RangeSize, void**> Allocator;
    typedef Callback<void*> Deallocator;

    Allocator allocate;
    Deallocator deallocate;

    IOAlloc() : allocate(nullptr, &default_allocator), deallocate(nullptr, &default_deallocator) {}
    IOAlloc(Allocator alloc, Deallocator dealloc) : allocate(alloc), deallocate(dealloc) {}

    // A buffer of exactly `size` bytes or more; nullptr with errno.
    void* alloc(size_t size) {
        if (size > INT32_MAX) return errno = ENOMEM, nullptr;
        void* ptr = nullptr;
        int ret = allocate({(int)size, (int)size}, &ptr);
        return ret > 0 ? ptr : nullptr;
    }
    int dealloc(void* ptr) { return deallocate(ptr); }
    // Back to malloc/free.
    void reset() {
        allocate.bind(nullptr, &default_allocator);
        deallocate.bind(nullptr, &default_deallocator);
    }

    static int default_allocator(void*, RangeSize size, void** ptr) {
        assert(size.max >= size.min);
        *ptr = ::malloc(size.max > 0 ? (size_t)size.max : 1);
        if (!*ptr) return errno = ENOMEM, -1;
        return size.max;
    }
    static int default_deallocator(void*, void* ptr) {
        ::free(ptr);
        return 0;
    }
};

// Buffers aligned to `alignment` (a power of two, a multiple of sizeof(void*)).
struct AlignedAlloc : public IOAlloc {
    AlignedAlloc(size_t alignment)
        : IOAlloc(Allocator{(void*)alignment, &aligned_allocator},
                  Deallocator{(void*)alignment, &default_deallocator}) {}
    void reset() {
        auto alignment = allocate._obj;
        allocate.bind(alignment, &aligned_allocator);
        deallocate.bind(alignment, &default_deallocator);
    }

protected:
    static int aligned_allocator(void* alignment, RangeSize size, void** ptr) {
        assert(size.max >= size.min);
        int err = ::posix_memalign(ptr, (size_t)alignment, size.max > 0 ? (size_t)size.max : 1);
        if (err) return errno = err, -1;
        return size.max;
    }
};

// Buffers of 4 KiB (ALIGNMENT) to MAX_ALLOCATION_SIZE, a power of two each,
// kept after deallocation, SLOT_CAPACITY per size, for the next allocation.
// A request is served from the size class that holds its max (capped at
// MAX_ALLOCATION_SIZE); deallocate only its buffers.
template <size_t MAX_ALLOCATION_SIZE = 1024 * 1024, size_t SLOT_CAPACITY = 32,
          size_t ALIGNMENT = 4096>
class PooledAllocator {
    static_assert(is_power_of_2(ALIGNMENT), "must be 2^n");
    static_assert(is_power_of_2(MAX_ALLOCATION_SIZE), "must be 2^n");
    static_assert(MAX_ALLOCATION_SIZE >= ALIGNMENT, "...");
    static const size_t N_SLOTS = log2_truncate(MAX_ALLOCATION_SIZE / ALIGNMENT) + 1;

public:
    PooledAllocator() {
        size_t size = ALIGNMENT;
        for (auto& slot : slots) {
            slot.set_alloc_size((uint32_t)size);
            size *= 2;
        }
    }
    IOAlloc get_io_alloc() {
        return IOAlloc{{this, &PooledAllocator::allocator}, {this, &PooledAllocator::deallocator}};
    }
    int enable_autoscale() {
        for (auto& x : slots) x.enable_autoscale();
        return 0;
    }
    int disable_autoscale() {
        for (auto& x : slots) x.disable_autoscale();
        return 0;
    }

protected:
    class Slot : public IdentityPool<void, SLOT_CAPACITY> {
    public:
        Slot()
            : IdentityPool<void, SLOT_CAPACITY>({this, &Slot::myalloc},
                                                {this, &IOAlloc::default_deallocator}) {}
        uint32_t get_alloc_size() { return (uint32_t)(uint64_t)(this->m_reserved); }
        void set_alloc_size(uint32_t alloc_size) { this->m_reserved = (void*)(uint64_t)alloc_size; }
        int myalloc(void** ptr) {
            int ret = ::posix_memalign(ptr, ALIGNMENT, get_alloc_size());
            if (ret != 0) return errno = ret, -1;
            return (int)get_alloc_size();
        }
    };

    // The size class of x bytes: the smallest that holds them, or (round
    // down) the largest they fill.
    int get_slot(size_t x, bool round_up = true) {
        int i = round_up ? log2_round_up(x) : log2_truncate(x);
        int base = log2_truncate(ALIGNMENT);
        return i < base ? 0 : i - base;
    }

    Slot slots[N_SLOTS];

    int allocator(IOAlloc::RangeSize size, void** ptr) {
        if (size.min > (int64_t)MAX_ALLOCATION_SIZE || size.max < 0) return errno = ENOMEM, -1;
        if (size.max > (int64_t)MAX_ALLOCATION_SIZE) size.max = (int)MAX_ALLOCATION_SIZE;
        if (size.max < 1) size.max = 1;
        *ptr = slots[get_slot((size_t)size.max, true)].get();
        return *ptr ? size.max : -1;
    }
    int deallocator(void* ptr) {
        if (!ptr) return 0;
        // posix_memalign's usable size lies within the buffer's power of two.
        size_t size = malloc_usable_size(ptr);
        int i = get_slot(size, false);
        slots[i < (int)N_SLOTS ? i : (int)N_SLOTS - 1].put(ptr);
        return 0;
    }
};
