// Coroutine-local values. A key is the index of its slot, the lowest free one,
// as Photon's (programs index arrays by it). Each slot counts generations (odd
// while in use) and each coroutine keeps a small array of (generation, value)
// indexed by slot, so a value set under a deleted key is never seen through a
// new key that reuses its slot. Results are pthread-style error numbers, also
// stored in errno.
#include <photon/thread/thread-key.h>

#include <cerrno>
#include <cstdlib>
#include <mutex>

#include "vcpu.h"

namespace photon {

namespace {

constexpr uint32_t kMaxKeys = THREAD_KEYS_MAX;
constexpr int kDestructorRounds = 4;  // as PTHREAD_DESTRUCTOR_ITERATIONS

struct key_slot {
    uint32_t generation = 0;  // odd while in use
    void (*dtor)(void*) = nullptr;
};

struct tls_entry {
    uint32_t generation;
    void* value;
};

struct tls_block {
    uint32_t size;
    tls_entry entries[1];
};

std::mutex g_keys_lock;
key_slot g_keys[kMaxKeys];

int fail(int err) { return errno = err; }

// The slot of a key in use, and its current generation.
bool decode(thread_key_t key, uint32_t* slot, uint32_t* gen) {
    if (key >= kMaxKeys) return false;
    *slot = (uint32_t)key;
    *gen = __atomic_load_n(&g_keys[key].generation, __ATOMIC_ACQUIRE);
    return *gen & 1;
}

tls_block* grow(thread* th, uint32_t slot) {
    auto b = static_cast<tls_block*>(th->tls);
    uint32_t old = b ? b->size : 0;
    if (slot < old) return b;
    uint32_t size = old ? old : 8;
    while (size <= slot) size *= 2;
    auto nb =
        static_cast<tls_block*>(realloc(b, sizeof(tls_block) + sizeof(tls_entry) * (size - 1)));
    if (!nb) return nullptr;
    for (uint32_t i = old; i < size; i++) nb->entries[i] = {0, nullptr};
    nb->size = size;
    th->tls = nb;
    return nb;
}

}  // namespace

int thread_key_create(thread_key_t* key, void (*dtor)(void*)) {
    std::lock_guard<std::mutex> lock(g_keys_lock);
    for (uint32_t i = 0; i < kMaxKeys; i++) {
        if (g_keys[i].generation & 1) continue;
        g_keys[i].dtor = dtor;
        __atomic_store_n(&g_keys[i].generation, g_keys[i].generation + 1, __ATOMIC_RELEASE);
        *key = i;
        return 0;
    }
    return fail(EAGAIN);
}

int thread_key_delete(thread_key_t key) {
    uint32_t slot, gen;
    std::lock_guard<std::mutex> lock(g_keys_lock);
    if (!decode(key, &slot, &gen)) return fail(EINVAL);
    __atomic_store_n(&g_keys[slot].generation, gen + 1, __ATOMIC_RELEASE);
    g_keys[slot].dtor = nullptr;
    return 0;
}

void* thread_getspecific(thread_key_t key) {
    uint32_t slot, gen;
    thread* th = CURRENT;
    if (!th || !decode(key, &slot, &gen)) return nullptr;
    auto b = static_cast<tls_block*>(th->tls);
    // A value set under an earlier generation of the slot is a deleted key's.
    if (!b || slot >= b->size || b->entries[slot].generation != gen) return nullptr;
    return b->entries[slot].value;
}

int thread_setspecific(thread_key_t key, const void* value) {
    uint32_t slot, gen;
    thread* th = CURRENT;
    if (!th) return fail(ENOSYS);
    if (!decode(key, &slot, &gen)) return fail(EINVAL);
    tls_block* b = grow(th, slot);
    if (!b) return fail(ENOMEM);
    b->entries[slot] = {gen, const_cast<void*>(value)};
    return 0;
}

// At coroutine exit: destroys values of live keys, repeating while
// destructors set new values, then frees the block.
void thread_key_run_destructors(thread* th) { deallocate_tls(&th->tls); }

void deallocate_tls(void** tls) {
    if (!tls) {
        if (!CURRENT) return;
        tls = &CURRENT->tls;
    }
    auto b = static_cast<tls_block*>(*tls);
    if (!b) return;
    for (int round = 0; round < kDestructorRounds; round++) {
        bool any = false;
        for (uint32_t i = 0; i < b->size; i++) {
            tls_entry& e = b->entries[i];
            if (!e.value) continue;
            void* v = e.value;
            uint32_t gen = e.generation;
            e.value = nullptr;
            auto dtor = __atomic_load_n(&g_keys[i].generation, __ATOMIC_ACQUIRE) == gen
                            ? g_keys[i].dtor
                            : nullptr;
            if (dtor) {
                dtor(v);
                any = true;
            }
            b = static_cast<tls_block*>(*tls);  // a destructor may have grown it
        }
        if (!any) break;
    }
    free(*tls);
    *tls = nullptr;
}

}  // namespace photon
