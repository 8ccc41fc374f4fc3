// Where coroutine stacks come from.
//
// The built-in allocator carves stacks from large lazily-committed
// reservations ("slabs") shared by the process, each stack with a guard page
// below it, and each vCPU keeps a cache of free stacks for reuse; a stack
// freed on another vCPU (after thread_migrate) goes to that vCPU's cache. It
// is what PhotonLibOS calls the global pooled allocator, and it is also what
// its default and pooled allocators select here: installing any of the
// *_stack_alloc/dealloc functions below (or use_pooled_stack_allocator(),
// use_global_pooled_stack_allocator(), or PhotonOptions) selects it. Called
// directly, they keep their Photon contract: `stack_size` bytes, page-aligned,
// the lowest page PROT_NONE; the default ones are plain memory, the pooled and
// global pooled ones come from the slabs through a process-wide cache (bounded
// as a vCPU's), and a double free of theirs is detected, counted in
// `corruptions`, logged and ignored, as Photon's.
//
// A user allocator replaces it for coroutines created afterwards: its memory's
// lowest page is taken to be a guard (as Photon does) and is not used, and
// nothing is cached. Each stack goes back to the allocator that made it, even
// after another one was installed.
// Install allocators before creating coroutines, or while none is being
// created; the calls may be made from any thread.
//
// Differences from PhotonLibOS: doc/compat.md#threadstack-allocatorh
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <photon/common/callback.h>
#include <photon/common/delegates.h>
#include <photon/common/detail/std17.h>

namespace photon {

// Values of PhotonOptions::use_pooled_stack_allocator (photon.h). All select
// the built-in allocator.
const uint8_t STACK_ALLOCATOR_DEFAULT = 0;
const uint8_t STACK_ALLOCATOR_POOLED = 1;
const uint8_t STACK_ALLOCATOR_GLOBAL_POOLED = 2;

// What any pooling stack allocator can report.
struct StackPoolStats {
    size_t pooled_bytes = 0;  // idle stacks kept for reuse
    size_t live_bytes = 0;    // stacks in use by coroutines
    uint64_t hits = 0;        // stacks served from a cache
    uint64_t misses = 0;      // stacks that needed new memory
};

// The stack allocator facade: binds an object's
//     void* alloc(size_t stack_size);
//     void dealloc(void* stack_ptr, size_t stack_size);
//     size_t trim(size_t keep_bytes);
//     StackPoolStats stats();
// together, so that stacks are always freed by the allocator that made them.
// Unbound methods return zeroes.
DEFINE_DELEGATE_FUNCTION(DStackAlloc, alloc);
DEFINE_DELEGATE_FUNCTION(DStackDealloc, dealloc);
DEFINE_DELEGATE_FUNCTION(DStackTrim, trim);
DEFINE_DELEGATE_FUNCTION(DStackStats, stats);

using StackAllocator = Delegates<DFeature::Feature<DStackAlloc, void*(size_t)>,
                                 DFeature::Feature<DStackDealloc, void(void*, size_t)>,
                                 DFeature::Feature<DStackTrim, size_t(size_t)>,
                                 DFeature::Feature<DStackStats, StackPoolStats()>>;

// Plain guarded stack memory (see above); nullptr with errno ENOMEM (logged)
// or EINVAL (a size under two pages). The first argument is ignored.
void* default_photon_thread_stack_alloc(void*, size_t stack_size);
void default_photon_thread_stack_dealloc(void*, void* stack_ptr, size_t stack_size);

// The same memory as above when called directly; installed, the built-in
// allocator.
void* pooled_stack_alloc(void*, size_t stack_size);
void pooled_stack_dealloc(void*, void* stack_ptr, size_t stack_size);

// Returns the memory of the calling vCPU's cached stacks to the kernel until
// at most `keep_size` bytes of stack stay cached. Returns the bytes released
// (0 outside a vCPU).
size_t pooled_stack_trim_current_vcpu(size_t keep_size);
// How many bytes of free stacks (their full sizes) each vCPU keeps (default
// 1 GiB: 128 default stacks); past it, the coldest quarter returns its memory
// to the kernel. Returns `threshold`.
size_t pooled_stack_trim_threshold(size_t threshold);
// How many free stacks each vCPU keeps (default 1024). Returns the previous
// limit. (Photon extension.)
size_t set_pooled_stack_cache_limit(size_t stacks);

// Installs an allocator pair for coroutines created from now on. Photon's
// functions above (any pairing of them) select the built-in allocator, which
// the default arguments therefore restore. An unbound delegate is refused:
// logged, errno EINVAL, nothing changes.
void set_photon_thread_stack_allocator(
    Delegate<void*, size_t> photon_thread_alloc = {&default_photon_thread_stack_alloc, nullptr},
    Delegate<void, void*, size_t> photon_thread_dealloc = {&default_photon_thread_stack_dealloc,
                                                           nullptr});

// Installs a facade (alloc and dealloc at least). 0, or -1 with EINVAL if it
// lacks either. The facade returned by get_photon_thread_stack_allocator()
// before any change stands for the built-in allocator.
int set_photon_thread_stack_allocator(StackAllocator allocator);

namespace detail {

template <typename T, typename = void>
struct has_stack_trim : std::false_type {};
template <typename T>
struct has_stack_trim<T, photon::detail::void_t<decltype(std::declval<T&>().trim(size_t()))>>
    : std::true_type {};
template <typename T, typename = void>
struct has_stack_stats : std::false_type {};
template <typename T>
struct has_stack_stats<T,
                       photon::detail::void_t<decltype(StackPoolStats(std::declval<T&>().stats()))>>
    : std::true_type {};

template <typename T>
void bind_stack_trim(StackAllocator& sa, std::true_type) {
    DUtils::bind_func_delegate<DStackTrim, size_t(size_t)>(
        sa, {nullptr, [](void* o, size_t k) -> size_t { return static_cast<T*>(o)->trim(k); }});
}
template <typename T>
void bind_stack_trim(StackAllocator&, std::false_type) {}
template <typename T>
void bind_stack_stats(StackAllocator& sa, std::true_type) {
    DUtils::bind_func_delegate<DStackStats, StackPoolStats()>(
        sa, {nullptr, [](void* o) -> StackPoolStats { return static_cast<T*>(o)->stats(); }});
}
template <typename T>
void bind_stack_stats(StackAllocator&, std::false_type) {}

// A facade over obj: alloc and dealloc, and trim and stats if it has them.
template <typename T>
StackAllocator make_stack_allocator(T& obj) {
    StackAllocator sa;
    DUtils::bind_obj(sa, &obj);
    DUtils::bind_func_delegate<DStackAlloc, void*(size_t)>(
        sa, {nullptr, [](void* o, size_t n) -> void* { return static_cast<T*>(o)->alloc(n); }});
    DUtils::bind_func_delegate<DStackDealloc, void(void*, size_t)>(
        sa, {nullptr, [](void* o, void* p, size_t n) { static_cast<T*>(o)->dealloc(p, n); }});
    bind_stack_trim<T>(sa, has_stack_trim<T>());
    bind_stack_stats<T>(sa, has_stack_stats<T>());
    return sa;
}

}  // namespace detail

// Installs obj (which must outlive the stacks it makes) as the allocator:
// its alloc and dealloc, and its trim and stats if it has them.
template <typename T,
          typename = typename std::enable_if<!std::is_base_of<DelegatesBase, T>::value>::type>
inline int set_photon_thread_stack_allocator(T& obj) {
    return set_photon_thread_stack_allocator(detail::make_stack_allocator(obj));
}

// The installed allocator's facade, for trim()/stats() whichever it is (the
// built-in one's trim the calling vCPU's cache and report process-wide
// numbers). Changing it does not install anything.
StackAllocator& get_photon_thread_stack_allocator();

// Selects the built-in allocator. Returns 0.
int use_pooled_stack_allocator();

// Photon's process-wide pooled allocator, which the built-in one is. The
// options here: per_vcpu_cache_bytes (and max_pooled_bytes, if smaller)
// bound each vCPU's cache, as pooled_stack_trim_threshold(); wipe_bytes zero
// the top of a stack taken from a cache; guard_pages is 1 (0 is taken as 1).
struct GlobalStackPoolOptions {
    size_t max_pooled_bytes = 1ULL << 30;
    size_t per_vcpu_cache_bytes = 64ULL << 20;
    size_t max_pending_bytes = 256ULL << 20;
    size_t max_cold_bytes = 4ULL << 30;
    uint32_t guard_pages = 1;
    uint32_t wipe_bytes = 0;
    bool paranoid = false;
    bool no_huge_page = true;
};

struct GlobalStackPoolStats : StackPoolStats {
    size_t mapped_bytes = 0;   // address space of the slabs
    size_t pending_bytes = 0;  // always 0: freed stacks are released at once
    size_t cold_bytes = 0;     // free slab slots, released but still mapped
    uint64_t os_maps = 0;      // slabs mapped
    uint64_t os_unmaps = 0;    // slabs unmapped
    uint64_t corruptions = 0;  // double frees of directly called pooled allocators
};

// Plain guarded memory called directly; installed, the built-in allocator.
void* global_pooled_stack_alloc(void*, size_t stack_size);
void global_pooled_stack_dealloc(void*, void* stack_ptr, size_t stack_size);

// Selects the built-in allocator with `options`. 0, or -1 with ENOTSUP
// (guard_pages > 1, paranoid) or EINVAL (per_vcpu_cache_bytes or
// max_pooled_bytes 0), changing nothing.
int use_global_pooled_stack_allocator(const GlobalStackPoolOptions& options = {});

// Releases the calling vCPU's cached stacks until at most `keep_bytes` stay
// cached (other vCPUs' caches are theirs to trim). Returns the bytes released.
size_t global_pooled_stack_trim(size_t keep_bytes = 0);

GlobalStackPoolStats global_pooled_stack_stats();

}  // namespace photon
