#include "stack_pool.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include <photon/common/alog.h>
#include <photon/common/fault_injection.h>
#include <photon/thread/stack-allocator.h>

#include "fiber_annotations.h"
#include "vcpu.h"

namespace photon {

namespace {

// PhotonLibOS's default: 1 GiB of stack (128 default stacks) per vCPU.
std::atomic<size_t> g_trim_threshold{size_t(1) << 30};
std::atomic<size_t> g_cache_limit{1024};
std::atomic<uint32_t> g_wipe_bytes{0};
// The user allocator in force, or nullptr for the built-in one. Records are
// never freed, so a vCPU reading an old one while another is installed is
// safe, and each stack keeps its own way back (stack_block::dealloc_*).
std::atomic<const user_stack_allocator*> g_user{nullptr};
// Stacks given back to the slabs per madvise round, at most.
constexpr size_t kGiveBackBatch = 32;

// ---- counters, per OS thread, summed by get_stack_cache_counts() -----------

// Written only by the OS thread that claimed it (plain load + store, no
// locked instruction on the hot path); read by anyone. Never freed: a thread
// that ends gives it up to the next one, which keeps counting on top.
struct cache_counters {
    std::atomic<uint64_t> hits{0}, misses{0};
    std::atomic<size_t> pooled{0};
    std::atomic<bool> claimed{false};
    cache_counters* next = nullptr;  // in g_counters, for good
};
std::atomic<cache_counters*> g_counters{nullptr};

cache_counters* claim_counters() {
    for (auto c = g_counters.load(std::memory_order_acquire); c; c = c->next)
        if (!c->claimed.load(std::memory_order_relaxed) &&
            !c->claimed.exchange(true, std::memory_order_acquire))
            return c;
    auto c = new cache_counters;
    c->claimed.store(true, std::memory_order_relaxed);
    c->next = g_counters.load(std::memory_order_relaxed);
    while (!g_counters.compare_exchange_weak(c->next, c, std::memory_order_release)) {
    }
    return c;
}

struct counters_holder {
    cache_counters* c = claim_counters();
    ~counters_holder() { c->claimed.store(false, std::memory_order_release); }
};

cache_counters* my_counters() {
    static thread_local counters_holder h;
    return h.c;
}

void bump(std::atomic<uint64_t>& x) {
    x.store(x.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

// ---- user allocators -----------------------------------------------------------

// Their memory's lowest page is taken to be a guard (as in Photon), the
// header sits at the top, and the block remembers how to free it.
stack_block* user_block(const user_stack_allocator* u, size_t size) {
    const size_t ps = page_size();
    auto p = static_cast<char*>(u->alloc(size));
    if (!p) {  // one line per 10 s, as the slabs' (stack_slab.cpp)
        LOG_EVERY_T(10, LOG_ERROR("custom stack allocator failed for ` bytes", size));
        errno = ENOMEM;
        return nullptr;
    }
    auto b = reinterpret_cast<stack_block*>(p + size - kStackBlockBytes);
    b->dealloc_obj = u->dealloc._obj;
    b->dealloc_fn = u->dealloc._func;
    b->slab = nullptr;
    b->base = p;
    b->total = size;
    b->usable = size - ps;
    b->guarded = false;
    b->valgrind_id = annotate_stack_register(p + ps, p + size);
    return b;
}

void free_user_block(stack_block* b) {
    annotate_stack_deregister(b->valgrind_id);
    Delegate<void, void*, size_t>(b->dealloc_obj, b->dealloc_fn)(b->base, b->total);
}

}  // namespace

void select_stack_allocator(const user_stack_allocator* a) {
    g_user.store(a, std::memory_order_release);
}

void set_stack_wipe_bytes(uint32_t bytes) { g_wipe_bytes.store(bytes, std::memory_order_relaxed); }

stack_cache_counts get_stack_cache_counts() {
    stack_cache_counts n{0, 0, 0};
    for (auto c = g_counters.load(std::memory_order_acquire); c; c = c->next) {
        n.hits += c->hits.load(std::memory_order_relaxed);
        n.misses += c->misses.load(std::memory_order_relaxed);
        n.pooled_bytes += c->pooled.load(std::memory_order_relaxed);
    }
    return n;
}

stack_pool::bucket* stack_pool::find(size_t usable, bool add) {
    for (int i = 0; i < nbuckets_; i++)
        if (buckets_[i].usable == usable) return &buckets_[i];
    if (!add || nbuckets_ == kBuckets) return nullptr;  // rare sizes are not cached
    buckets_[nbuckets_] = {usable, nullptr, nullptr};
    return &buckets_[nbuckets_++];
}

stack_block* stack_pool::get(size_t size) {
    if (fault::hit(fault::NOMEM)) {  // injected (fault_injection.h): as a failed map
        LOG_EVERY_T(10,
                    LOG_ERROR("no coroutine stack: injected ENOMEM (logged at most every 10 s)"));
        errno = ENOMEM;
        return nullptr;
    }
    const size_t ps = page_size();
    const size_t usable = (size + ps - 1) & ~(ps - 1);
    if (const user_stack_allocator* u = g_user.load(std::memory_order_acquire))
        return user_block(u, usable);
    cache_counters* n = my_counters();
    bucket* bk = find(usable, false);
    if (!bk || !bk->head) {
        bump(n->misses);
        return slab_take(usable);
    }
    bump(n->hits);
    stack_block* b = bk->head;
    bk->head = b->next;
    if (bk->head)
        bk->head->prev = nullptr;
    else
        bk->tail = nullptr;
    bytes_ -= usable;
    count_--;
    n->pooled.store(bytes_, std::memory_order_relaxed);
    // Against leaks between coroutines: the top is where the last one's
    // frames and control block were.
    if (size_t w = g_wipe_bytes.load(std::memory_order_relaxed)) {
        w = std::min(w, usable - kStackBlockBytes);
        memset(reinterpret_cast<char*>(b) - w, 0, w);
    }
    return b;
}

void stack_pool::put(stack_block* b) {
    if (!b->slab) return free_user_block(b);
    bucket* bk = find(b->usable, true);
    if (!bk) return slab_give_back(&b, 1);
    b->prev = nullptr;
    b->next = bk->head;
    if (bk->head)
        bk->head->prev = b;
    else
        bk->tail = b;
    bk->head = b;
    bytes_ += b->usable;
    count_++;
    const size_t max_bytes = g_trim_threshold.load(std::memory_order_relaxed);
    const size_t max_count = g_cache_limit.load(std::memory_order_relaxed);
    // Past a limit, shrink to 3/4 of it: one batch of madvises, not one per put.
    if (bytes_ > max_bytes || count_ > max_count)
        shrink(max_bytes - max_bytes / 4, max_count - max_count / 4);
    my_counters()->pooled.store(bytes_, std::memory_order_relaxed);
}

stack_block* stack_pool::pop_tail(bucket* bk) {
    stack_block* b = bk->tail;
    bk->tail = b->prev;
    if (bk->tail)
        bk->tail->next = nullptr;
    else
        bk->head = nullptr;
    bytes_ -= b->usable;
    count_--;
    return b;
}

void stack_pool::shrink(size_t max_bytes, size_t max_count) {
    stack_block* batch[kGiveBackBatch];
    size_t n = 0;
    int i = 0;
    while (bytes_ > max_bytes || count_ > max_count) {
        // Round-robin over the sizes, coldest first within each.
        while (!buckets_[i].tail) i = (i + 1) % nbuckets_;
        batch[n++] = pop_tail(&buckets_[i]);
        i = (i + 1) % nbuckets_;
        if (n == kGiveBackBatch) {
            slab_give_back(batch, n);
            n = 0;
        }
    }
    if (n) slab_give_back(batch, n);
}

size_t stack_pool::trim(size_t keep_bytes) {
    size_t before = bytes_;
    if (bytes_ > keep_bytes) shrink(keep_bytes, SIZE_MAX);
    if (before != bytes_) my_counters()->pooled.store(bytes_, std::memory_order_relaxed);
    return before - bytes_;
}

size_t set_pooled_stack_cache_limit(size_t stacks) { return g_cache_limit.exchange(stacks); }

size_t pooled_stack_trim_threshold(size_t threshold) {
    g_trim_threshold.store(threshold);
    return threshold;
}

size_t pooled_stack_trim_current_vcpu(size_t keep_size) {
    vcpu_t* v = current_vcpu();
    return v ? v->stacks.trim(keep_size) : 0;
}

}  // namespace photon
