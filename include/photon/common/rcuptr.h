// RCUPtr<T>: a pointer read without locks and replaced by writers, with
// reclamation after a grace period (userspace quiescent-state-based RCU), as
// PhotonLibOS declares it (global namespace). Readers and writers are photon
// coroutines on any vCPUs; each coroutine is one reader of a domain.
//
// Readers either (QSBR style) call quiescent() between reads, once they hold
// no pointer read before it, or bracket reads with read_lock()/read_unlock().
// A coroutine must do one of these before its first read: until then it is
// not a reader of the domain and nothing waits for it. While a coroutine is
// online (quiescent() called, or inside read_lock) and holds no reference, it
// must keep calling quiescent(), or offline() before a long sleep: writers
// wait for every online reader. Writers call update(new) and then either
// synchronize() (blocks, yielding, until every reader that may hold the old
// pointer has passed a quiescent state) and delete the old object, or
// rcu_call(old), which does the same on a new coroutine of their vCPU.
// A domain must outlive the coroutines that use it and its pending rcu_calls.
//
// Differences from PhotonLibOS: doc/compat.md#commonrcuptrh
// Floor: thread (tools/floors.txt), above its folder's: it is built on photon's coroutines.
#pragma once
#include <assert.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include <photon/common/callback.h>
#include <photon/common/intrusive_list.h>
#include <photon/thread/thread-local.h>
#include <photon/thread/thread11.h>

struct RCUDomain;

// A coroutine's reader state in one domain.
struct RCUReader : public intrusive_list_node<RCUReader> {
    // 0: offline; else the domain count seen at the last quiescent state.
    std::atomic<uint64_t> ctr;
    RCUDomain* domain;  // nullptr once the domain is gone
    // read_lock() nesting, and whether the outermost one put us online. Only
    // the owning coroutine touches them.
    uint32_t section_depth = 0;
    bool section_online = false;

    explicit RCUReader(RCUDomain* domain);
    ~RCUReader();

    uint64_t get_gp() { return ctr.load(std::memory_order_acquire); }

    // Declares that no pointer read before this call is still in use.
    void quiescent();

    // Leaves the domain's readers until online(); hold no pointer meanwhile.
    void offline() { ctr.store(0, std::memory_order_release); }

    void online() { quiescent(); }
};

// The grace-period counter and the readers of a set of RCUPtrs.
struct RCUDomain {
    std::atomic<uint64_t> ctr;  // starts at 1: 0 in a reader means offline
    intrusive_list<RCUReader> tlist;
    photon::spinlock tlock;  // guards tlist
    photon::thread_local_ptr<RCUReader, RCUDomain*> reader;
    std::atomic<uint64_t> pending_calls{0};  // rcu_call()s not yet run

    RCUDomain() : ctr(1), tlock(), reader(this) {}

    ~RCUDomain() {
        if (!wait_pending_calls()) {
            tlist.release();  // a late call may still scan them: leak, not free
            return;
        }
        tlock.lock();
        while (auto r = tlist.pop_front()) {
            r->domain = nullptr;
            delete r;
        }
        tlock.unlock();
    }

    uint64_t get_gp() { return ctr.load(std::memory_order_acquire); }

    void register_reader(RCUReader* x) {
        tlock.lock();
        tlist.push_back(x);
        tlock.unlock();
    }

    void unregister_reader(RCUReader* x) {
        tlock.lock();
        tlist.pop(x);
        tlock.unlock();
    }

    // The calling coroutine's reader; nullptr outside a vCPU.
    RCUReader* current_reader() { return photon::CURRENT ? reader.get() : nullptr; }

    void online_cuurent() {  // Photon's spelling
        if (auto r = current_reader()) r->online();
    }
    void online_current() { online_cuurent(); }

    void offline_current() {
        if (auto r = current_reader()) r->offline();
    }

    // Waits until every reader has quiesced since the count was `ts` (the
    // value before the writer's increment) or is offline.
    void __do_synchronize(uint64_t ts) { __wait_readers(ts, current_reader()); }

    // Starts a grace period and waits for its end; yields (or, off a vCPU,
    // sleeps) meanwhile.
    void synchronize() {
        auto x = ctr.fetch_add(1, std::memory_order_seq_cst);
        __do_synchronize(x);
    }

    // Runs func(data) on a new coroutine once a grace period has passed; inline
    // (after waiting) when not on a vCPU or no coroutine can be created.
    template <typename T>
    void call_rcu(T* data, Delegate<void, T*> func) {
        auto x = ctr.fetch_add(1, std::memory_order_seq_cst);
        auto self = current_reader();
        // The caller's own reads are over; don't make the call wait for it.
        if (self && self->get_gp()) self->quiescent();
        pending_calls.fetch_add(1, std::memory_order_relaxed);
        photon::thread* th = nullptr;
        if (photon::CURRENT) {
            th = photon::thread_create11([x, data, func, this]() {
                __wait_readers(x, nullptr);  // needs no reader of its own
                func(data);
                pending_calls.fetch_sub(1, std::memory_order_release);  // last touch
            });
        }
        if (!th) {
            __wait_readers(x, self);
            func(data);
            pending_calls.fetch_sub(1, std::memory_order_release);
        }
    }

    // The wait behind __do_synchronize: `self` (may be nullptr) is the
    // waiter's reader, kept quiescent so that it never waits for itself.
    void __wait_readers(uint64_t ts, RCUReader* self) {
        // Orders the writer's pointer exchange and count increment before
        // the reads of the readers' counters; pairs with quiescent()'s fence.
        std::atomic_thread_fence(std::memory_order_seq_cst);
        for (uint32_t round = 0;; round++) {
            tlock.lock();
            if (self && self->get_gp()) self->quiescent();
            bool all_released = true;
            for (auto t : tlist) {
                auto g = t->get_gp();
                if (g && g <= ts) {
                    all_released = false;
                    break;
                }
            }
            tlock.unlock();
            if (all_released) return;
            backoff(round);
        }
    }

private:
    static void backoff(uint32_t round) {
        constexpr uint32_t kYields = 64;
        constexpr uint64_t kSleepUs = 100;
        if (photon::CURRENT) {
            if (round < kYields)
                photon::thread_yield();
            else
                photon::thread_usleep(kSleepUs);
        } else if (round < kYields) {
            photon::spin_yield();
        } else {
            std::this_thread::sleep_for(std::chrono::microseconds(kSleepUs));
        }
    }

    // False if pending calls remain after a bounded wait off a vCPU (at
    // exit, a vCPU that was never finalized will not run them).
    bool wait_pending_calls() {
        constexpr uint32_t kMaxOffVcpuRounds = 64 + 10000;  // about 1 s of sleeps
        for (uint32_t round = 0; pending_calls.load(std::memory_order_acquire); round++) {
            if (!photon::CURRENT && round >= kMaxOffVcpuRounds) return false;
            backoff(round);
        }
        return true;
    }
};

inline RCUReader::RCUReader(RCUDomain* domain) : ctr(0), domain(domain) {
    domain->register_reader(this);
}

inline RCUReader::~RCUReader() {
    if (domain) domain->unregister_reader(this);
}

inline void RCUReader::quiescent() {
    // Release: the reads before this call are done before a writer sees it.
    ctr.store(domain->get_gp(), std::memory_order_release);
    // Publish the new count before reading any pointer again: a writer whose
    // scan missed it has its new pointer seen by our next read (pairs with
    // the fence in __wait_readers).
    std::atomic_thread_fence(std::memory_order_seq_cst);
}

inline RCUDomain* global_rcu_domain() {
    static RCUDomain domain;
    return &domain;
}

template <typename T>
struct RCUPtr {
    std::atomic<T*> ptr;

    RCUPtr() : ptr(nullptr) {}
    // The owner must have taken the object out (update(nullptr)) and freed it.
    ~RCUPtr() { assert(ptr.load() == nullptr); }

    static void __default_deleter(void*, T* x) { delete x; }

    // A read-side section for a coroutine that does not call quiescent():
    // it is a reader from read_lock() to the matching read_unlock(). Nests.
    // For a coroutine that is online already (QSBR style) both do nothing.
    void read_lock(RCUDomain* domain = nullptr) {
        auto r = of(domain)->current_reader();
        if (!r) return;
        if (r->section_depth++ == 0 && r->get_gp() == 0) {
            r->online();
            r->section_online = true;
        }
    }
    void read_unlock(RCUDomain* domain = nullptr) {
        auto r = of(domain)->current_reader();
        if (!r || r->section_depth == 0) return;
        if (--r->section_depth == 0 && r->section_online) {
            r->section_online = false;
            r->offline();
        }
    }

    // Marks the calling coroutine quiescent (and online): call it between
    // reads, when no pointer read before is still in use.
    void quiescent(RCUDomain* domain = nullptr) {
        if (auto r = of(domain)->current_reader()) r->quiescent();
    }
    // Publishes new_ptr; returns the old pointer, to reclaim after a grace period.
    T* update(T* new_ptr, RCUDomain* /*domain*/ = nullptr) {
        return ptr.exchange(new_ptr, std::memory_order_seq_cst);
    }
    // Waits for a grace period of the domain (yields meanwhile).
    void synchronize(RCUDomain* domain = nullptr) { of(domain)->synchronize(); }
    // Calls func(old) (default: delete old) after a grace period, without waiting.
    void rcu_call(T* old, RCUDomain* domain = nullptr,
                  Delegate<void, T*> func = {nullptr, &RCUPtr::__default_deleter}) {
        of(domain)->call_rcu(old, func);
    }
    T* dereference() const { return ptr.load(std::memory_order_acquire); }
    T& operator*() const { return *dereference(); }
    T* operator->() const { return &*dereference(); }

private:
    static RCUDomain* of(RCUDomain* domain) { return domain ? domain : global_rcu_domain(); }
};
