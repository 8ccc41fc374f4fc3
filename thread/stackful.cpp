// stackful_malloc(): a bump allocator growing up from the low end of the
// coroutine's stack, towards the stack pointer coming down. Each block has
// a header linking it to the block below; while the coroutine is alive its
// control block's `retval` points at the last header (thread_control.h).
#include "stackful.h"

#include <cstdint>

#include <photon/common/alog.h>

namespace photon {

namespace {

struct block_header {
    block_header* prev;  // the block below, or nullptr
    uint32_t size;       // bytes after the header, a multiple of 16
    uint32_t freed;
};
static_assert(sizeof(block_header) == 16, "blocks must stay 16-byte aligned");

// Room kept between the blocks and the stack pointer, for the frames the
// caller still has to push.
constexpr uintptr_t kMargin = 8 * 1024;

block_header* last_block(const thread* th) { return static_cast<block_header*>(th->retval); }

char* block_end(const block_header* h) {
    return const_cast<char*>(reinterpret_cast<const char*>(h + 1)) + h->size;
}

void* fail(int err) {
    errno = err;
    return nullptr;
}

}  // namespace

char* stackful_end(const thread* th) {
    if ((th->flags & TF_MAIN) || th->state == DONE) return nullptr;
    const block_header* h = last_block(th);
    return h ? block_end(h) : nullptr;
}

// Failures are not logged: like malloc's, they are the caller's to handle
// (coro20.h's frames fall back to the heap).
void* stackful_malloc(size_t size) {
    thread* self = CURRENT;
    if (!self) return fail(ENOSYS);
    if ((self->flags & TF_MAIN) || !self->stack) return fail(ENOTSUP);
    if (size > UINT32_MAX - 15) return fail(ENOMEM);
    const uint32_t size16 = (uint32_t)((size + 15) & ~size_t(15));
    block_header* last = last_block(self);
    auto base = reinterpret_cast<uintptr_t>(last ? block_end(last) : self->stack_lo);
    base = (base + 15) & ~uintptr_t(15);
    const auto sp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
    const uintptr_t need = sizeof(block_header) + size16 + kMargin;
    if (sp < base || sp - base < need) return fail(ENOMEM);
    auto h = reinterpret_cast<block_header*>(base);
    h->prev = last;
    h->size = size16;
    h->freed = 0;
    self->retval = h;
    return h + 1;
}

void stackful_free(void* ptr) {
    thread* self = CURRENT;
    if (!ptr || !self || (self->flags & TF_MAIN)) return;
    block_header* h = last_block(self);
    while (h && h + 1 != ptr) h = h->prev;
    if (!h || h->freed) {
        LOG_ERROR("stackful_free: ` is not a live stackful_malloc block of this coroutine", ptr);
        return;
    }
    h->freed = 1;
    // Reclaim from the top down: a block freed out of order waits for those above.
    block_header* last = last_block(self);
    while (last && last->freed) last = last->prev;
    self->retval = last;
}

}  // namespace photon
