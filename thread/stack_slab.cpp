#include "stack_slab.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <photon/common/alog.h>

#include "fiber_annotations.h"

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102  // Linux 6.13
#endif

namespace photon {

namespace {

// A class's first slab holds this many stacks; each new one as many as the
// class's slabs hold together by then (doubling its room), up to the caps (a
// default stack class reaches 512 stacks, 4 GiB of address space, per map
// after six slabs). Sized by the room the class has now, not by how many
// slabs it ever had: slabs emptied and unmapped (stacks ending on other
// vCPUs) then mapped again do not make each new one twice as large.
constexpr uint32_t kFirstSlabSlots = 16;
constexpr uint32_t kMaxSlabSlots = 4096;
constexpr size_t kMaxSlabBytes = size_t(4) << 30;
// give_back handles this many stacks per round: its scratch is on the stack
// of whichever coroutine runs the ended one's cleanup, maybe a small one.
constexpr size_t kGiveBackChunk = 32;

struct slab_class {
    slab_class* next;
    size_t slot_size;
    stack_slab* room;  // slabs with a free or fresh slot
    uint32_t nslabs;
    size_t capacity;  // slots of its mapped slabs
};

}  // namespace

struct stack_slab {
    stack_slab* prev;  // in cls->room while it has room
    stack_slab* next;
    slab_class* cls;
    char* base;
    uint32_t nslots;
    uint32_t fresh;  // slots [fresh, nslots) were never handed out
    uint32_t live;   // handed out and not given back
    uint32_t nfree;  // given back: their bits are set in free_bits
    uint32_t mprotect_guards;
    guard_method method;
    bool listed;  // in cls->room
    bool dying;   // emptied by a give_back that is unmapping it
    uint64_t* free_bits;
    uint64_t* guard_bits;
};

namespace {

struct slab_state {
    pthread_mutex_t mu;
    slab_class* classes;
    size_t slabs, maps, stacks_out;
    bool limits_read;      // strict and mprotect_maps below
    bool strict;           // vm.overcommit_memory=2: every reserved byte is charged
    size_t mprotect_maps;  // half of vm.max_map_count, unless a test says otherwise
    bool detected;         // method below
    guard_method method;
    bool warned;
    slab_usage usage = {};  // stacks_out is filled in by get_slab_usage()
    uint64_t map_failures = 0, bookkeeping_failures = 0, class_failures = 0;
};

slab_state g = {PTHREAD_MUTEX_INITIALIZER, nullptr, 0, 0, 0, false, false, 0, false,
                guard_method::none,        false};

struct lock_guard {
    lock_guard() { pthread_mutex_lock(&g.mu); }
    ~lock_guard() { pthread_mutex_unlock(&g.mu); }
};

bool test_bit(const uint64_t* w, uint32_t i) { return (w[i / 64] >> (i % 64)) & 1; }
void set_bit(uint64_t* w, uint32_t i) { w[i / 64] |= uint64_t(1) << (i % 64); }
void clear_bit(uint64_t* w, uint32_t i) { w[i / 64] &= ~(uint64_t(1) << (i % 64)); }

uint32_t first_set(const uint64_t* w, uint32_t nbits) {
    for (uint32_t k = 0; k * 64 < nbits; k++)
        if (w[k]) return k * 64 + (uint32_t)__builtin_ctzll(w[k]);
    return nbits;
}

// A number in a /proc/sys file, or `dflt`.
size_t read_sysctl(const char* path, size_t dflt) {
    size_t n = dflt;
    if (FILE* f = fopen(path, "re")) {
        unsigned long v;
        if (fscanf(f, "%lu", &v) == 1) n = v;
        fclose(f);
    }
    return n;
}

size_t half_max_map_count() {
    size_t n = read_sysctl("/proc/sys/vm/max_map_count", 65530);  // the kernel's default
    return (n ? n : 65530) / 2;
}

// Reads the kernel's limits once (locked).
void read_limits() {
    if (g.limits_read) return;
    g.limits_read = true;
    g.strict = read_sysctl("/proc/sys/vm/overcommit_memory", 0) == 2;
    g.mprotect_maps = half_max_map_count();
}

// True if reading `page` from the kernel faults: the guard is real. An
// emulator (qemu-user) may accept an madvise it does not implement.
bool guard_is_effective(char* page) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return true;  // no fds: trust madvise
    bool faulted = write(fds[1], page, 1) < 0 && errno == EFAULT;
    close(fds[0]);
    close(fds[1]);
    return faulted;
}

// Picks the guard method with the first slab's first guard page (locked).
void detect_method(char* first_guard) {
    g.detected = true;
    if (madvise(first_guard, page_size(), MADV_GUARD_INSTALL) == 0 &&
        guard_is_effective(first_guard)) {
        g.method = guard_method::marker;
        return;
    }
    g.method = guard_method::mprotect;
    LOG_INFO(
        "stack guard pages: no MADV_GUARD_INSTALL (Linux 6.13+); mprotect guards are set "
        "while they cost fewer than ` memory maps",
        g.mprotect_maps);
}

void list_room(slab_class* c, stack_slab* s) {
    s->prev = nullptr;
    s->next = c->room;
    if (c->room) c->room->prev = s;
    c->room = s;
    s->listed = true;
}

void unlist_room(slab_class* c, stack_slab* s) {
    if (!s->listed) return;
    if (s->prev)
        s->prev->next = s->next;
    else
        c->room = s->next;
    if (s->next) s->next->prev = s->prev;
    s->prev = s->next = nullptr;
    s->listed = false;
}

slab_class* find_class(size_t slot_size) {
    for (slab_class* c = g.classes; c; c = c->next)
        if (c->slot_size == slot_size) return c;
    auto c = static_cast<slab_class*>(calloc(1, sizeof(slab_class)));
    if (!c) return nullptr;
    c->slot_size = slot_size;
    c->next = g.classes;
    g.classes = c;
    return c;
}

size_t map_cost(const stack_slab* s) { return 1 + 2 * (size_t)s->mprotect_guards; }

stack_slab* new_slab(slab_class* c) {
    const size_t ss = c->slot_size;
    read_limits();
    // Under strict overcommit a reserved stack is charged whole, used or not.
    uint32_t n = g.strict ? 1
                          : (uint32_t)std::min<size_t>(
                                std::max<size_t>(c->capacity, kFirstSlabSlots), kMaxSlabSlots);
    n = (uint32_t)std::max<size_t>(1, std::min<size_t>(n, kMaxSlabBytes / ss));
    void* p;
    // Halve the reservation until the address space (or RLIMIT_AS) allows it.
    while ((p = mmap(nullptr, n * ss, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0)) ==
               MAP_FAILED &&
           n > 1)
        n /= 2;
    if (p == MAP_FAILED) {
        // Every coroutine creation fails alike (an RPC server under RLIMIT_AS
        // fails one per request): one line per cause every 10 s, with a count.
        const int e = errno;
        const uint64_t n = ++g.map_failures;
        LOG_EVERY_T(10, LOG_ERROR("cannot map a ` byte stack slab: ` (` times so far; logged at "
                                  "most every 10 s)",
                                  ss, ERRNO(e), n));
        errno = ENOMEM;
        return nullptr;
    }
    const size_t words = (n + 63) / 64;
    auto s = static_cast<stack_slab*>(calloc(1, sizeof(stack_slab) + 2 * words * 8));
    if (!s) {
        munmap(p, n * ss);
        const uint64_t k = ++g.bookkeeping_failures;
        LOG_EVERY_T(10, LOG_ERROR("no memory for a stack slab's bookkeeping (` times so far; "
                                  "logged at most every 10 s)",
                                  k));
        errno = ENOMEM;
        return nullptr;
    }
    // A full slab is off the room list: only its stacks' headers point at it.
    annotate_not_leaked(s);
    s->free_bits = reinterpret_cast<uint64_t*>(s + 1);
    s->guard_bits = s->free_bits + words;
    s->cls = c;
    s->base = static_cast<char*>(p);
    s->nslots = n;
    // A huge page would commit 2 MiB per stack; stacks must stay sparse.
    madvise(s->base, n * ss, MADV_NOHUGEPAGE);
    if (!g.detected) {
        detect_method(s->base);
        if (g.method == guard_method::marker) set_bit(s->guard_bits, 0);  // the probe's
    }
    s->method = g.method;
    c->capacity += n;
    c->nslabs++;
    g.slabs++;
    g.maps++;
    g.usage.mapped_bytes += n * ss;
    g.usage.maps++;
    list_room(c, s);
    return s;
}

// Sets up the guard page of a fresh slot (locked). True if it has one.
bool install_guard(stack_slab* s, uint32_t i) {
    char* page = s->base + (size_t)i * s->cls->slot_size;
    switch (s->method) {
        case guard_method::marker:
            if (madvise(page, page_size(), MADV_GUARD_INSTALL) == 0) return true;
            LOG_FIRST_N(1, LOG_WARN("a coroutine stack got no guard page: ` ", ERRNO()));
            return false;
        case guard_method::mprotect:
            // Splitting the slab's map around the guard costs up to two maps.
            if (g.maps + 2 > g.mprotect_maps) {
                if (!g.warned) {
                    g.warned = true;
                    LOG_WARN(
                        "stack guard pages: new coroutine stacks get none from now on: "
                        "their mprotect guards would pass ` of vm.max_map_count's memory "
                        "maps (this kernel lacks MADV_GUARD_INSTALL, Linux 6.13+)",
                        g.mprotect_maps);
                }
                return false;
            }
            if (mprotect(page, page_size(), PROT_NONE) != 0) return false;
            s->mprotect_guards++;
            g.maps += 2;
            return true;
        default:
            return false;
    }
}

// Takes a slot of a slab with room (locked): its address, its slab in *slab
// and whether it has a guard in *guarded.
char* take_slot(slab_class* c, stack_slab** slab, bool* guarded) {
    stack_slab* s = c->room;
    if (!s && !(s = new_slab(c))) return nullptr;
    uint32_t i;
    if (s->nfree) {  // a given-back slot first: its guard is in place
        i = first_set(s->free_bits, s->nslots);
        clear_bit(s->free_bits, i);
        s->nfree--;
    } else {
        i = s->fresh++;
        if (!test_bit(s->guard_bits, i) && install_guard(s, i)) set_bit(s->guard_bits, i);
    }
    if (s->nfree == 0 && s->fresh == s->nslots) unlist_room(c, s);
    s->live++;
    g.stacks_out++;
    g.usage.usable_out += c->slot_size - page_size();
    *slab = s;
    *guarded = test_bit(s->guard_bits, i);
    return s->base + (size_t)i * c->slot_size;
}

struct returned {
    stack_slab* slab;
    uint32_t index;
};

// Takes an emptied slab out of use (locked); its caller unmaps it.
void retire(stack_slab* s) {
    s->dying = true;
    unlist_room(s->cls, s);
    s->cls->nslabs--;
    s->cls->capacity -= s->nslots;
    g.slabs--;
    g.maps -= map_cost(s);
    g.usage.mapped_bytes -= (size_t)s->nslots * s->cls->slot_size;
    g.usage.unmaps++;
}

// Retires the slabs (of `r`, sorted by address) that this give-back empties,
// except a class's last slab, kept for reuse. Adds them to dead[*ndead].
void retire_emptied(const returned* r, size_t n, stack_slab** dead, size_t* ndead) {
    lock_guard lock;
    for (size_t i = 0; i < n;) {
        stack_slab* s = r[i].slab;
        size_t k = 0;
        while (i + k < n && r[i + k].slab == s) k++;
        if (s->live == k && s->cls->nslabs > 1) {
            retire(s);
            g.stacks_out -= k;
            g.usage.usable_out -= k * (s->cls->slot_size - page_size());
            dead[(*ndead)++] = s;
        }
        i += k;
    }
}

// Releases the pages of the returned slots of live slabs, one madvise per run
// of adjacent slots. The slots are still ours: nobody can take them, and no
// other give-back can retire their slabs (`dying` is ours to read).
void zap(const returned* r, size_t n) {
    const size_t ps = page_size();
    for (size_t i = 0; i < n;) {
        stack_slab* s = r[i].slab;
        size_t k = 1;
        while (i + k < n && r[i + k].slab == s && r[i + k].index == r[i].index + k) k++;
        if (!s->dying) {
            const size_t ss = s->cls->slot_size;
            char* lo = s->base + (size_t)r[i].index * ss + ps;  // guards stay as they are
            if (madvise(lo, k * ss - ps, MADV_DONTNEED) != 0)
                LOG_FIRST_N(1, LOG_WARN("stack memory not returned to the kernel: ` ", ERRNO()));
        }
        i += k;
    }
}

// Makes the returned slots of live slabs available again. Once the lock is
// dropped they are no longer ours, nor their slabs: another give-back may
// retire and free those. Slabs emptied here go to dead[*ndead].
void publish_free(const returned* r, size_t n, stack_slab** dead, size_t* ndead) {
    lock_guard lock;
    for (size_t i = 0; i < n; i++) {
        stack_slab* s = r[i].slab;
        if (s->dying) continue;
        set_bit(s->free_bits, r[i].index);
        s->nfree++;
        s->live--;
        g.stacks_out--;
        g.usage.usable_out -= s->cls->slot_size - page_size();
        if (!s->listed) list_room(s->cls, s);
        // Emptied only now: another vCPU's give-back saw our stacks still out.
        if (s->live == 0 && s->cls->nslabs > 1) {
            retire(s);
            dead[(*ndead)++] = s;
        }
    }
}

void unmap(stack_slab* s) {
    const size_t len = (size_t)s->nslots * s->cls->slot_size;
    // Unmapping part of a merged map splits it, which fails at vm.max_map_count:
    // then at least the memory goes back, and the address range stays reserved.
    if (munmap(s->base, len) != 0) {
        LOG_FIRST_N(1,
                    LOG_WARN("stack slab not unmapped (` ); its memory is released only", ERRNO()));
        madvise(s->base, len, MADV_DONTNEED);
    }
    free(s);
}

void give_back_chunk(stack_block** blocks, size_t n) {
    std::sort(blocks, blocks + n, [](stack_block* a, stack_block* b) { return a->base < b->base; });
    returned r[kGiveBackChunk];
    for (size_t i = 0; i < n; i++) {
        stack_block* b = blocks[i];
        annotate_stack_deregister(b->valgrind_id);
        r[i].slab = b->slab;
        r[i].index = (uint32_t)((size_t)(b->base - b->slab->base) / b->slab->cls->slot_size);
    }
    // The headers live in the pages about to be released: read above, not below.
    stack_slab* dead[kGiveBackChunk];
    size_t ndead = 0;
    retire_emptied(r, n, dead, &ndead);
    zap(r, n);
    publish_free(r, n, dead, &ndead);
    for (size_t i = 0; i < ndead; i++) unmap(dead[i]);
}

}  // namespace

size_t page_size() {
    static const size_t ps = (size_t)sysconf(_SC_PAGESIZE);
    return ps;
}

stack_block* slab_take(size_t usable) {
    const size_t ps = page_size();
    const size_t slot_size = usable + ps;
    char* slot;
    stack_slab* slab;
    bool guarded = false;
    {
        lock_guard lock;
        slab_class* c = find_class(slot_size);
        if (!c) {
            const uint64_t k = ++g.class_failures;
            LOG_EVERY_T(10, LOG_ERROR("no memory for a stack slab class (` times so far; logged "
                                      "at most every 10 s)",
                                      k));
            errno = ENOMEM;
            return nullptr;
        }
        slot = take_slot(c, &slab, &guarded);
        if (!slot) return nullptr;  // logged, errno = ENOMEM
    }
    auto b = reinterpret_cast<stack_block*>(slot + slot_size - kStackBlockBytes);
    b->next = b->prev = nullptr;
    b->base = slot;
    b->total = slot_size;
    b->usable = usable;
    b->guarded = guarded;
    b->valgrind_id = annotate_stack_register(slot + ps, slot + slot_size);
    b->slab = slab;
    return b;
}

void slab_give_back(stack_block** blocks, size_t n) {
    for (size_t i = 0; i < n; i += kGiveBackChunk)
        give_back_chunk(blocks + i, std::min(kGiveBackChunk, n - i));
}

slab_stats get_slab_stats() {
    lock_guard lock;
    return {g.slabs, g.maps, g.stacks_out, g.method};
}

slab_usage get_slab_usage() {
    lock_guard lock;
    slab_usage u = g.usage;
    u.stacks_out = g.stacks_out;
    return u;
}

void override_stack_guard(guard_method m, size_t mprotect_maps) {
    lock_guard lock;
    read_limits();
    g.detected = true;
    g.method = m;
    g.mprotect_maps = mprotect_maps ? mprotect_maps : half_max_map_count();
    g.warned = false;
}

}  // namespace photon
