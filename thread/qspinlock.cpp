// qspinlock: an MCS queue lock. Each waiter spins on the `granted` flag of a
// queue node of its own, so a handover touches one waiter's cache line only.
// Nodes come from a small per-OS-thread array (so a thread may hold several
// qspinlocks at once) or, past it, from the heap.
#include <photon/thread/thread.h>

namespace photon {

struct qspinlock::holder {
    std::atomic<holder*> next{nullptr};
    std::atomic<bool> granted{false};
    std::atomic<bool> busy{false};  // taken by a lock(); cleared by its unlock()
    bool heap = false;
};

namespace {

constexpr int kNodesPerThread = 8;
// Spins on the node before giving the CPU away: the holder may be preempted.
constexpr uint32_t kSpinsBeforeYield = 256;

}  // namespace

qspinlock::holder* qspinlock::take_node() {
    static thread_local holder t_nodes[kNodesPerThread];
    for (auto& h : t_nodes)
        if (!h.busy.load(std::memory_order_relaxed) &&
            !h.busy.exchange(true, std::memory_order_acquire))
            return &h;
    auto h = new holder;  // nested more than kNodesPerThread deep
    h->heap = true;
    return h;
}

// The last use of `h` by its lock: after this, another lock() may take it.
void qspinlock::put_node(holder* h) {
    if (h->heap)
        delete h;
    else
        h->busy.store(false, std::memory_order_release);
}

int qspinlock::try_lock() {
    if (_owner_tail.load(std::memory_order_relaxed)) return -1;
    holder* h = take_node();
    h->next.store(nullptr, std::memory_order_relaxed);
    holder* expected = nullptr;
    if (!_owner_tail.compare_exchange_strong(expected, h, std::memory_order_acquire,
                                             std::memory_order_relaxed)) {
        put_node(h);
        return -1;
    }
    owner_ = h;
    return 0;
}

int qspinlock::lock() {
    holder* h = take_node();
    h->next.store(nullptr, std::memory_order_relaxed);
    h->granted.store(false, std::memory_order_relaxed);
    // acq_rel: acquire the previous holder's critical section if there is
    // none to wait for, release our node's initialisation to our successor.
    holder* prev = _owner_tail.exchange(h, std::memory_order_acq_rel);
    if (prev) {
        prev->next.store(h, std::memory_order_release);
        for (uint32_t i = 0; !h->granted.load(std::memory_order_acquire); i++) {
            if (i < kSpinsBeforeYield)
                spin_wait();
            else
                spin_yield();
        }
    }
    owner_ = h;
    return 0;
}

void qspinlock::unlock() {
    holder* h = owner_;
    if (!h) return;  // not held
    owner_ = nullptr;
    holder* next = h->next.load(std::memory_order_acquire);
    if (!next) {
        holder* expected = h;
        if (_owner_tail.compare_exchange_strong(expected, nullptr, std::memory_order_release,
                                                std::memory_order_relaxed)) {
            put_node(h);
            return;
        }
        // A newcomer swapped itself in as the tail; wait until it links to us.
        while (!(next = h->next.load(std::memory_order_acquire))) spin_wait();
    }
    next->granted.store(true, std::memory_order_release);
    put_node(h);
}

}  // namespace photon
