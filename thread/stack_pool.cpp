#include "stack_pool.h"

#include <atomic>
#include <cerrno>

#include <photon/common/alog.h>
#include <photon/thread/stack-allocator.h>

#include "fiber_annotations.h"
#include "vcpu.h"

namespace photon {

namespace {

// PhotonLibOS's default: 1 GiB of stack (128 default stacks) per vCPU.
std::atomic<size_t> g_trim_threshold{size_t(1) << 30};
std::atomic<size_t> g_cache_limit{1024};
Delegate<void*, size_t> g_custom_alloc;
Delegate<void, void*, size_t> g_custom_dealloc;
// Stacks given back to the slabs per madvise round, at most.
constexpr size_t kGiveBackBatch = 32;

stack_block* custom_block(char* p, size_t usable) {
    auto b = reinterpret_cast<stack_block*>(p + usable - kStackBlockBytes);
    *b = stack_block{nullptr, nullptr, nullptr, p, usable, usable, 0, false};
    b->valgrind_id = annotate_stack_register(p, p + usable);
    return b;
}

void free_custom(stack_block* b) {
    annotate_stack_deregister(b->valgrind_id);
    g_custom_dealloc(b->base, b->total);
}

}  // namespace

stack_pool::bucket* stack_pool::find(size_t usable, bool add) {
    for (int i = 0; i < nbuckets_; i++)
        if (buckets_[i].usable == usable) return &buckets_[i];
    if (!add || nbuckets_ == kBuckets) return nullptr;  // rare sizes are not cached
    buckets_[nbuckets_] = {usable, nullptr, nullptr};
    return &buckets_[nbuckets_++];
}

stack_block* stack_pool::get(size_t size) {
    const size_t ps = page_size();
    const size_t usable = (size + ps - 1) & ~(ps - 1);
    if (g_custom_alloc) {
        auto p = static_cast<char*>(g_custom_alloc(usable));
        if (!p)
            LOG_ERROR_RETURN(ENOMEM, nullptr, "custom stack allocator failed for ` bytes", usable);
        return custom_block(p, usable);
    }
    bucket* bk = find(usable, false);
    if (!bk || !bk->head) return slab_take(usable);
    stack_block* b = bk->head;
    bk->head = b->next;
    if (bk->head)
        bk->head->prev = nullptr;
    else
        bk->tail = nullptr;
    bytes_ -= usable;
    count_--;
    return b;
}

void stack_pool::put(stack_block* b) {
    if (!b->slab) return free_custom(b);
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
    return before - bytes_;
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

size_t pooled_stack_trim_threshold(size_t threshold) {
    g_trim_threshold.store(threshold);
    return threshold;
}

size_t pooled_stack_trim_current_vcpu(size_t keep_size) {
    vcpu_t* v = current_vcpu();
    return v ? v->stacks.trim(keep_size) : 0;
}

}  // namespace photon
