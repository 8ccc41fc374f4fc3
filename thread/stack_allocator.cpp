// stack-allocator.h: Photon's allocator functions, the facade, and choosing
// between the built-in allocator (stack_pool.cpp, stack_slab.cpp) and a
// user's.
#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include <photon/common/alog.h>
#include <photon/thread/stack-allocator.h>

#include "stack_direct.h"
#include "stack_pool.h"
#include "stack_slab.h"

namespace photon {

// ---- plain guarded memory, for direct calls -------------------------------

void* default_photon_thread_stack_alloc(void*, size_t stack_size) {
    const size_t ps = page_size();
    if (stack_size < 2 * ps)
        LOG_ERROR_RETURN(EINVAL, nullptr, "stack alloc: ` bytes leave no room above the guard",
                         stack_size);
    void* p = nullptr;
    if (int err = posix_memalign(&p, ps, stack_size)) {  // one line per 10 s: see stack_slab.cpp
        LOG_EVERY_T(10, LOG_ERROR("stack alloc: no memory for ` bytes", stack_size));
        errno = err;
        return nullptr;
    }
    madvise(p, stack_size, MADV_NOHUGEPAGE);  // a huge page would commit 2 MiB per stack
    if (mprotect(p, ps, PROT_NONE) != 0) {
        int err = errno;
        free(p);
        LOG_ERROR_RETURN(err == EINVAL ? ENOMEM : err, nullptr, "stack alloc: no guard page ",
                         ERRNO(err));
    }
    return p;
}

// The size is not needed: free() knows it (Photon's madvise of `stack_size`
// bytes would discard a neighbour's pages given a wrong size).
void default_photon_thread_stack_dealloc(void*, void* stack_ptr, size_t) {
    if (!stack_ptr) return;
    mprotect(stack_ptr, page_size(), PROT_READ | PROT_WRITE);
    free(stack_ptr);
}

// The pooled ones, called directly, pool as Photon's do (stack_direct.cpp).
void* pooled_stack_alloc(void*, size_t stack_size) { return direct_stack_alloc(stack_size); }
void pooled_stack_dealloc(void*, void* stack_ptr, size_t) { direct_stack_dealloc(stack_ptr); }
void* global_pooled_stack_alloc(void*, size_t stack_size) { return direct_stack_alloc(stack_size); }
void global_pooled_stack_dealloc(void*, void* stack_ptr, size_t) {
    direct_stack_dealloc(stack_ptr);
}

namespace {

// ---- the built-in allocator as a facade ---------------------------------------

struct builtin_allocator {
    void* alloc(size_t n) { return default_photon_thread_stack_alloc(nullptr, n); }
    void dealloc(void* p, size_t n) { default_photon_thread_stack_dealloc(nullptr, p, n); }
    size_t trim(size_t keep) { return global_pooled_stack_trim(keep); }
    StackPoolStats stats() { return global_pooled_stack_stats(); }
} g_builtin;

StackAllocator& current_facade() {
    static StackAllocator sa = detail::make_stack_allocator(g_builtin);
    return sa;
}

bool is_builtin_alloc(const Delegate<void*, size_t>& d) {
    return d._func == &default_photon_thread_stack_alloc || d._func == &pooled_stack_alloc ||
           d._func == &global_pooled_stack_alloc;
}
bool is_builtin_dealloc(const Delegate<void, void*, size_t>& d) {
    return d._func == &default_photon_thread_stack_dealloc || d._func == &pooled_stack_dealloc ||
           d._func == &global_pooled_stack_dealloc;
}

// Installed user allocators, kept for good (their stacks may outlive the
// installation) and shared when the same pair comes again.
std::mutex g_install_mutex;
struct installed : user_stack_allocator {
    installed* next;
};
installed* g_installed = nullptr;

const user_stack_allocator* intern(const Delegate<void*, size_t>& a,
                                   const Delegate<void, void*, size_t>& d) {
    for (installed* i = g_installed; i; i = i->next)
        if (i->alloc == a && i->dealloc == d) return i;
    auto i = new installed{{a, d}, g_installed};
    g_installed = i;
    return i;
}

// Installs under g_install_mutex; `facade` becomes what get_ returns.
void install(const Delegate<void*, size_t>& a, const Delegate<void, void*, size_t>& d,
             const StackAllocator& facade) {
    if (is_builtin_alloc(a) && is_builtin_dealloc(d)) {
        select_stack_allocator(nullptr);
        current_facade() = detail::make_stack_allocator(g_builtin);
        return;
    }
    select_stack_allocator(intern(a, d));
    current_facade() = facade;
}

}  // namespace

void set_photon_thread_stack_allocator(Delegate<void*, size_t> alloc,
                                       Delegate<void, void*, size_t> dealloc) {
    if (!alloc || !dealloc)
        LOG_ERROR_RETURN(EINVAL, , "set_photon_thread_stack_allocator: an unbound delegate");
    StackAllocator facade;
    DUtils::bind_func_delegate<DStackAlloc, void*(size_t)>(facade, alloc);
    // A dealloc of another object cannot join the facade's one object; the
    // installed pair still uses it (Photon refused the pair).
    DUtils::bind_func_delegate<DStackDealloc, void(void*, size_t)>(facade, dealloc);
    std::lock_guard<std::mutex> lock(g_install_mutex);
    install(alloc, dealloc, facade);
}

int set_photon_thread_stack_allocator(StackAllocator allocator) {
    auto a = DUtils::get_func<DStackAlloc, void*(size_t)>(allocator);
    auto d = DUtils::get_func<DStackDealloc, void(void*, size_t)>(allocator);
    if (!a._func || !d._func)
        LOG_ERROR_RETURN(EINVAL, -1,
                         "set_photon_thread_stack_allocator: no alloc() or no dealloc()");
    std::lock_guard<std::mutex> lock(g_install_mutex);
    if (a._obj == &g_builtin) {  // a saved get_photon_thread_stack_allocator()
        select_stack_allocator(nullptr);
        current_facade() = allocator;
        return 0;
    }
    install(a, d, allocator);
    return 0;
}

StackAllocator& get_photon_thread_stack_allocator() { return current_facade(); }

int use_pooled_stack_allocator() {
    set_photon_thread_stack_allocator();
    return 0;
}

int use_global_pooled_stack_allocator(const GlobalStackPoolOptions& o) {
    if (o.guard_pages > 1 || o.paranoid)
        LOG_ERROR_RETURN(ENOTSUP, -1,
                         "global pooled stacks: guard_pages ` or paranoid: not supported",
                         o.guard_pages);
    if (!o.per_vcpu_cache_bytes || !o.max_pooled_bytes)
        LOG_ERROR_RETURN(EINVAL, -1, "global pooled stacks: a cache bound of 0 bytes");
    pooled_stack_trim_threshold(std::min(o.per_vcpu_cache_bytes, o.max_pooled_bytes));
    direct_stack_cache_limit(std::min(o.per_vcpu_cache_bytes, o.max_pooled_bytes));
    set_stack_wipe_bytes(o.wipe_bytes);
    set_photon_thread_stack_allocator();
    return 0;
}

size_t global_pooled_stack_trim(size_t keep_bytes) {
    size_t direct = get_direct_stack_counts().cached_bytes;
    size_t freed = direct_stack_trim(keep_bytes);
    size_t left = direct - freed;  // what the direct cache keeps counts against keep_bytes
    return freed + pooled_stack_trim_current_vcpu(keep_bytes > left ? keep_bytes - left : 0);
}

GlobalStackPoolStats global_pooled_stack_stats() {
    GlobalStackPoolStats s;
    stack_cache_counts c = get_stack_cache_counts();
    direct_stack_counts d = get_direct_stack_counts();
    slab_usage u = get_slab_usage();
    s.hits = c.hits + d.hits;
    s.misses = c.misses + d.misses;
    s.pooled_bytes = c.pooled_bytes + d.cached_bytes;
    s.corruptions = d.corruptions;
    // Pooled stacks are out of the slabs too; the two are read apart, so
    // clamp rather than wrap.
    s.live_bytes = u.usable_out > s.pooled_bytes ? u.usable_out - s.pooled_bytes : 0;
    s.mapped_bytes = u.mapped_bytes;
    const size_t out_slots = u.usable_out + u.stacks_out * page_size();  // guards too
    s.cold_bytes = u.mapped_bytes > out_slots ? u.mapped_bytes - out_slots : 0;
    s.os_maps = u.maps;
    s.os_unmaps = u.unmaps;
    return s;
}

}  // namespace photon
