// RangeLock: exclusive locks on byte ranges [offset, offset + length) of one
// object (a file, a cache). Ranges that overlap exclude each other; disjoint
// ones are held at once. A waiter sleeps (its coroutine, not the vCPU) until
// the range in its way is released or changed. Usable from coroutines of any
// vCPU; every call takes an internal spinlock briefly.
//
// Two styles: try_lock_wait() / unlock(offset, length) name ranges by value;
// lock() / try_lock_wait2() return a handle for adjust_range() and
// unlock(handle). offset + length saturates at 2^64 - 1.
//
// Differences from PhotonLibOS: doc/compat.md#commonrange-lockh
// Floor: runtime (tools/floors.txt), above its folder's: it needs vCPUs and engines.
#pragma once

#include <cinttypes>
#include <cstdint>
#include <set>
#include <unordered_map>

#include <photon/common/timeout.h>
#include <photon/common/utility.h>
#include <photon/thread/thread.h>

class RangeLock {
public:
    struct LockHandle;

    RangeLock() = default;
    RangeLock(const RangeLock&) = delete;
    RangeLock& operator=(const RangeLock&) = delete;
    // Frees the locks still held; nobody may wait on them any more.
    ~RangeLock();

    // Locks [offset, offset + length) and returns 0 if it is free. Otherwise
    // sets offset and length to the first lock in the way (length clipped to
    // the requested end), waits until that lock is released or changed and
    // returns -1 with errno EAGAIN: call again. -1 ETIMEDOUT if the timeout
    // came first, or the interrupter's errno.
    int try_lock_wait(uint64_t& offset, uint64_t& length, photon::Timeout timeout = {});

    // Releases every lock lying wholly within [offset, offset + length).
    void unlock(uint64_t offset, uint64_t length);

    // As try_lock_wait(), but returns the lock's handle, or nullptr after a
    // wait (errno as above).
    LockHandle* try_lock_wait2(uint64_t offset, uint64_t length, photon::Timeout timeout = {});

    // Waits until [offset, offset + length) is locked and returns its
    // handle; interruptions are ignored. nullptr with ETIMEDOUT if the
    // timeout expires first.
    LockHandle* lock(uint64_t offset, uint64_t length, photon::Timeout timeout = {});

    // Changes the range locked by h. 0, or -1 with EBUSY if the new range
    // overlaps another lock (h then keeps its range), EINVAL if h is null
    // or was released by unlock(offset, length).
    int adjust_range(LockHandle* h, uint64_t offset, uint64_t length);

    // Releases the lock of h; nothing if it is released already (by
    // unlock(offset, length)) or h is nullptr.
    void unlock(LockHandle* h);

protected:
    struct node;
    struct span {
        uint64_t offset, end;
    };
    // Orders disjoint non-empty ranges; a probe span is "equal" to every
    // range it overlaps.
    struct by_range {
        using is_transparent = void;
        bool operator()(const node* a, const node* b) const;
        bool operator()(const node* a, span b) const;
        bool operator()(span a, const node* b) const;
    };
    using index = std::set<node*, by_range>;

    // Locks r (recording a handle id in *id if id) or waits for what is in
    // its way (reported in *offset, *length if offset) and returns false.
    bool lock_or_wait(span r, uint64_t* id, uint64_t* offset, uint64_t* length,
                      photon::Timeout timeout);
    void wait_for(node* n, photon::Timeout timeout);
    index::iterator first_overlap(span r);
    node* find_handle(LockHandle* h);
    void release(node* n);

    photon::spinlock m_lock;                       // guards all below
    index m_index;                                 // the held non-empty locks
    std::unordered_map<uint64_t, node*> handles_;  // the handles given out, by id
    uint64_t next_id_ = 0;
};

// Holds [offset, offset + length) of `lock` for its lifetime.
class ScopedRangeLock {
public:
    ScopedRangeLock(RangeLock& lock, uint64_t offset, uint64_t length) : _lock(&lock) {
        _h = _lock->lock(offset, length);
    }
    ScopedRangeLock(const ScopedRangeLock&) = delete;
    ScopedRangeLock& operator=(const ScopedRangeLock&) = delete;
    ~ScopedRangeLock() { _lock->unlock(_h); }

protected:
    RangeLock* _lock;
    RangeLock::LockHandle* _h;
};
