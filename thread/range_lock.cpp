// RangeLock (photon/common/range-lock.h): an ordered index of held ranges,
// each with the queue of coroutines waiting for it, and a table from handle
// ids to the locks taken by handle.
#include <photon/common/range-lock.h>

#include <algorithm>
#include <cerrno>

#include <photon/common/alog.h>

// A held (or released but not yet freed) lock. Freed once released with no
// waiter left: a waiter wakes up after the release and still touches it.
struct RangeLock::node {
    uint64_t offset = 0, length = 0;
    uint64_t end() const { return photon::sat_add(offset, length); }
    bool empty() const { return end() == offset; }

    photon::condition_variable cond;  // waiters for a release or change
    uint32_t waiters = 0;
    bool held = true;  // not yet unlocked; in the index unless empty
    uint64_t id = 0;   // its handle's id, 0 if taken by try_lock_wait()
};

bool RangeLock::by_range::operator()(const node* a, const node* b) const {
    return a->end() <= b->offset;
}
bool RangeLock::by_range::operator()(const node* a, span b) const { return a->end() <= b.offset; }
bool RangeLock::by_range::operator()(span a, const node* b) const { return a.end <= b->offset; }

namespace {
// Handles are ids in pointer clothing, never 0 and never reused.
RangeLock::LockHandle* to_handle(uint64_t id) {
    return reinterpret_cast<RangeLock::LockHandle*>(static_cast<uintptr_t>(id));
}
uint64_t to_id(RangeLock::LockHandle* h) { return reinterpret_cast<uintptr_t>(h); }
}  // namespace

RangeLock::~RangeLock() {
    for (auto it = handles_.begin(); it != handles_.end(); ++it)
        if (it->second->empty()) delete it->second;  // the others are in the index
    for (auto n : m_index) {
        if (n->waiters) {
            // Its waiters would wake up in freed memory: leave it to them.
            LOG_ERROR("RangeLock destroyed with coroutines waiting for [`, `)", n->offset,
                      n->end());
            continue;
        }
        delete n;
    }
}

RangeLock::index::iterator RangeLock::first_overlap(span r) {
    auto it = m_index.lower_bound(r);  // the first lock ending after r.offset
    return (it != m_index.end() && (*it)->offset < r.end) ? it : m_index.end();
}

// Under m_lock: sleeps until n is released or changed, or the timeout;
// errno EAGAIN when woken for a retry.
void RangeLock::wait_for(node* n, photon::Timeout timeout) {
    n->waiters++;
    int ret = n->cond.wait(m_lock, timeout);
    int err = ret == 0 ? EAGAIN : errno;
    if (--n->waiters == 0 && !n->held) delete n;
    errno = err;
}

bool RangeLock::lock_or_wait(span r, uint64_t* id, uint64_t* offset, uint64_t* length,
                             photon::Timeout timeout) {
    SCOPED_LOCK(m_lock);
    auto it = r.end == r.offset ? m_index.end() : first_overlap(r);  // empty: nothing in its way
    if (it != m_index.end()) {
        node* in_way = *it;
        if (offset) {
            *offset = in_way->offset;
            *length = std::min(in_way->end(), r.end) - in_way->offset;
        }
        wait_for(in_way, timeout);
        return false;
    }
    auto n = new node;
    n->offset = r.offset;
    n->length = r.end - r.offset;
    if (id) {
        *id = n->id = ++next_id_;
        handles_.emplace(n->id, n);
    }
    if (!n->empty()) m_index.insert(n);
    return true;
}

int RangeLock::try_lock_wait(uint64_t& offset, uint64_t& length, photon::Timeout timeout) {
    span r{offset, photon::sat_add(offset, length)};
    if (r.end == r.offset) return 0;  // empty: not recorded, unlock() finds nothing
    return lock_or_wait(r, nullptr, &offset, &length, timeout) ? 0 : -1;
}

RangeLock::LockHandle* RangeLock::try_lock_wait2(uint64_t offset, uint64_t length,
                                                 photon::Timeout timeout) {
    span r{offset, photon::sat_add(offset, length)};
    uint64_t id;
    return lock_or_wait(r, &id, nullptr, nullptr, timeout) ? to_handle(id) : nullptr;
}

RangeLock::LockHandle* RangeLock::lock(uint64_t offset, uint64_t length, photon::Timeout timeout) {
    for (;;) {
        if (auto h = try_lock_wait2(offset, length, timeout)) return h;
        if (errno == ETIMEDOUT) return nullptr;
    }
}

void RangeLock::unlock(uint64_t offset, uint64_t length) {
    span r{offset, photon::sat_add(offset, length)};
    if (r.end == r.offset) return;
    SCOPED_LOCK(m_lock);
    for (auto it = m_index.lower_bound(r); it != m_index.end() && (*it)->offset < r.end;) {
        node* n = *it;
        if (n->offset >= r.offset && n->end() <= r.end) {
            it = m_index.erase(it);
            release(n);
        } else {
            ++it;
        }
    }
}

void RangeLock::unlock(LockHandle* h) {
    SCOPED_LOCK(m_lock);
    node* n = find_handle(h);
    if (!n) return;  // null, or released by range already
    if (!n->empty()) m_index.erase(n);
    release(n);
}

int RangeLock::adjust_range(LockHandle* h, uint64_t offset, uint64_t length) {
    span r{offset, photon::sat_add(offset, length)};
    SCOPED_LOCK(m_lock);
    node* n = find_handle(h);
    if (!n) {  // no log under the spinlock
        errno = EINVAL;
        return -1;
    }
    if (r.end != r.offset) {
        for (auto it = first_overlap(r); it != m_index.end() && (*it)->offset < r.end; ++it)
            if (*it != n) {
                errno = EBUSY;
                return -1;
            }
    }
    const bool covers_old = r.offset <= n->offset && r.end >= n->end();
    if (!n->empty()) m_index.erase(n);
    n->offset = r.offset;
    n->length = r.end - r.offset;
    if (!n->empty()) m_index.insert(n);
    if (!covers_old) n->cond.notify_all();  // what blocked them may be gone
    return 0;
}

// Under m_lock.
RangeLock::node* RangeLock::find_handle(LockHandle* h) {
    auto it = handles_.find(to_id(h));  // id 0 (nullptr) is never there
    return it == handles_.end() ? nullptr : it->second;
}

// Under m_lock, n out of the index: wakes its waiters to retry, and frees n
// unless they are still to wake up.
void RangeLock::release(node* n) {
    n->held = false;
    if (n->id) handles_.erase(n->id);
    n->cond.notify_all();
    if (n->waiters == 0) delete n;
}
