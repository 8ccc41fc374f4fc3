#include "stack_pool.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include <photon/common/alog.h>
#include <photon/thread/stack-allocator.h>

#include "fiber_annotations.h"

namespace photon {

namespace {

std::atomic<size_t> g_cache_limit{1024};
Delegate<void*, size_t> g_custom_alloc;
Delegate<void, void*, size_t> g_custom_dealloc;

stack_block* init_block(char* base, size_t total, size_t usable, bool guarded, bool custom) {
    auto b = reinterpret_cast<stack_block*>(base + total - kStackBlockBytes);
    *b = stack_block{base, total, usable, nullptr, 0, guarded, custom};
    b->valgrind_id = annotate_stack_register(base + total - usable, base + total);
    return b;
}

stack_block* map_stack(size_t usable) {
    const size_t guard = page_size();
    const size_t total = usable + guard;
    void* p = mmap(nullptr, total, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (p == MAP_FAILED)
        LOG_ERRNO_RETURN(ENOMEM, nullptr, "failed to map a coroutine stack of ` bytes", usable);
    auto base = static_cast<char*>(p);
    // A huge page would commit 2 MiB per coroutine; stacks must stay sparse.
    madvise(base, total, MADV_NOHUGEPAGE);
    bool guarded = mprotect(base, guard, PROT_NONE) == 0;
    if (!guarded) {
        // Each guard page costs a memory map; past vm.max_map_count it fails.
        LOG_FIRST_N(1, LOG_WARN("stack guard page not set (` ): raise vm.max_map_count; "
                                "continuing without guard pages",
                                ERRNO()));
    }
    return init_block(base, total, usable, guarded, false);
}

void unmap_stack(stack_block* b) {
    annotate_stack_deregister(b->valgrind_id);
    if (b->custom) {
        g_custom_dealloc(b->base, b->total);
    } else {
        munmap(b->base, b->total);
    }
}

}  // namespace

size_t page_size() {
    static const size_t ps = (size_t)sysconf(_SC_PAGESIZE);
    return ps;
}

stack_pool::bucket* stack_pool::find(size_t usable) {
    for (auto& b : buckets_)
        if (b.usable == usable) return &b;
    return nullptr;
}

stack_block* stack_pool::get(size_t size) {
    const size_t ps = page_size();
    const size_t usable = (size + ps - 1) & ~(ps - 1);
    if (g_custom_alloc) {
        auto p = static_cast<char*>(g_custom_alloc(usable));
        if (!p)
            LOG_ERROR_RETURN(ENOMEM, nullptr, "custom stack allocator failed for ` bytes", usable);
        return init_block(p, usable, usable, false, true);
    }
    if (bucket* bk = find(usable)) {
        if (stack_block* b = bk->head) {
            bk->head = b->next;
            cached_--;
            return b;
        }
    }
    return map_stack(usable);
}

void stack_pool::put(stack_block* b) {
    if (b->custom || cached_ >= g_cache_limit.load(std::memory_order_relaxed)) {
        unmap_stack(b);
        return;
    }
    bucket* bk = find(b->usable);
    if (!bk) {
        buckets_.push_back({b->usable, nullptr});
        bk = &buckets_.back();
    }
    b->next = bk->head;
    bk->head = b;
    cached_++;
}

void stack_pool::trim(size_t keep) {
    for (auto& bk : buckets_) {
        while (cached_ > keep && bk.head) {
            stack_block* b = bk.head;
            bk.head = b->next;
            cached_--;
            unmap_stack(b);
        }
    }
}

void set_photon_thread_stack_allocator(Delegate<void*, size_t> alloc,
                                       Delegate<void, void*, size_t> dealloc) {
    if (alloc && dealloc) {
        g_custom_alloc = alloc;
        g_custom_dealloc = dealloc;
    } else {
        g_custom_alloc.clear();
        g_custom_dealloc.clear();
    }
}

int use_pooled_stack_allocator() {
    set_photon_thread_stack_allocator();
    return 0;
}

size_t set_pooled_stack_cache_limit(size_t stacks) { return g_cache_limit.exchange(stacks); }

}  // namespace photon
