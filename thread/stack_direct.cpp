// Photon's pooled allocator functions called directly (not installed), as
// PhotonLibOS's own tests and tools call them: stacks come from the slabs
// with a process-wide cache in front, and their bookkeeping is kept aside,
// since the whole `stack_size` bytes are the caller's. A free of a pointer
// that is not out (a double free) is counted as a corruption and ignored.
#include "stack_direct.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <photon/common/alog.h>

#include "stack_slab.h"

namespace photon {

namespace {

struct direct_stack {
    stack_block header;  // as slab_take() wrote it
    stack_block* at;     // where it goes back before slab_give_back()
};

struct direct_pool {
    std::mutex lock;
    std::unordered_map<void*, direct_stack> out;                   // by base
    std::unordered_map<size_t, std::vector<direct_stack>> cached;  // by usable bytes
    size_t cached_bytes = 0;
    uint64_t hits = 0, misses = 0, corruptions = 0;
};

direct_pool& pool() {
    static auto p = new direct_pool;  // never destroyed: frees may come during exit
    return *p;
}

std::atomic<size_t> g_cache_bytes{size_t(64) << 20};  // Photon's per_vcpu_cache_bytes

void give_back(direct_stack& s) {
    memcpy(static_cast<void*>(s.at), &s.header, sizeof(s.header));
    slab_give_back(&s.at, 1);
}

// Gives back cached stacks until at most `keep` bytes stay; under the lock.
size_t shrink_locked(direct_pool& p, size_t keep) {
    size_t freed = 0;
    for (auto it = p.cached.begin(); it != p.cached.end() && p.cached_bytes > keep; ++it) {
        auto& v = it->second;
        while (!v.empty() && p.cached_bytes > keep) {
            give_back(v.front());  // the oldest first
            v.erase(v.begin());
            p.cached_bytes -= it->first;
            freed += it->first;
        }
    }
    return freed;
}

}  // namespace

void* direct_stack_alloc(size_t stack_size) {
    const size_t ps = page_size();
    const size_t total = (stack_size + ps - 1) & ~(ps - 1);
    if (stack_size < 2 * ps || total < stack_size)
        LOG_ERROR_RETURN(EINVAL, nullptr, "stack alloc: ` bytes leave no room above the guard",
                         stack_size);
    const size_t usable = total - ps;
    direct_pool& p = pool();
    std::lock_guard<std::mutex> guard(p.lock);
    direct_stack s;
    auto it = p.cached.find(usable);
    if (it != p.cached.end() && !it->second.empty()) {
        s = it->second.back();  // the warmest
        it->second.pop_back();
        p.cached_bytes -= usable;
        p.hits++;
    } else {
        stack_block* b = slab_take(usable);
        if (!b) return nullptr;  // logged, ENOMEM
        s = {*b, b};
        p.misses++;
    }
    p.out.emplace(s.header.base, s);
    return s.header.base;
}

void direct_stack_dealloc(void* stack_ptr) {
    if (!stack_ptr) return;
    direct_pool& p = pool();
    std::lock_guard<std::mutex> guard(p.lock);
    auto it = p.out.find(stack_ptr);
    if (it == p.out.end()) {
        p.corruptions++;
        LOG_ERROR("stack dealloc: ` is not an allocated stack (a double free?)", stack_ptr);
        return;
    }
    direct_stack s = it->second;
    p.out.erase(it);
    const size_t usable = s.header.usable;
    if (p.cached_bytes + usable > g_cache_bytes.load(std::memory_order_relaxed)) {
        give_back(s);
        return;
    }
    p.cached[usable].push_back(s);
    p.cached_bytes += usable;
}

void direct_stack_cache_limit(size_t bytes) {
    g_cache_bytes.store(bytes, std::memory_order_relaxed);
    direct_pool& p = pool();
    std::lock_guard<std::mutex> guard(p.lock);
    shrink_locked(p, bytes);
}

size_t direct_stack_trim(size_t keep_bytes) {
    direct_pool& p = pool();
    std::lock_guard<std::mutex> guard(p.lock);
    return shrink_locked(p, keep_bytes);
}

direct_stack_counts get_direct_stack_counts() {
    direct_pool& p = pool();
    std::lock_guard<std::mutex> guard(p.lock);
    return {p.hits, p.misses, p.corruptions, p.cached_bytes};
}

}  // namespace photon
