// A server-wide budget of the bytes held for requests and replies in flight,
// shared by all of a server's connections (and by every server of the
// process that uses the process-wide one). Extension; PhotonLibOS has none.
//
// Each connection holds an Account. A connection holding no more than its
// share (limit / open accounts, but at most a 64th of the limit or 64 KiB,
// whichever is more) may take bytes up to the limit; one holding more (a
// heavy one) only up to limit - reserve, the reserve (a quarter of the limit)
// staying for the light ones. A taker's wait may end with bytes its own
// connection gives back (its other requests finishing). A taker that finds no
// room waits (its server stops reading from that connection: backpressure)
// until bytes are released or its deadline passes; then it fails and the
// server sheds the request with an error. So a peer that pins memory stalls
// itself, not the well-behaved clients, and the total never passes the limit.
//
// The process-wide budget's limit is a quarter of the physical memory, or of
// the cgroup's memory.max when that is lower; PHOTON_MEMORY_BUDGET (bytes,
// with an optional K, M or G suffix) in the environment sets it instead.
// Accounts may be used from any vCPU.
// Floor: thread (tools/floors.txt), above its folder's: it is built on photon's coroutines.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include <photon/common/timeout.h>
#include <photon/thread/thread.h>

namespace photon {

class MemoryBudget {
public:
    // limit 0: default_limit().
    explicit MemoryBudget(size_t limit = 0);
    ~MemoryBudget();
    MemoryBudget(const MemoryBudget&) = delete;
    MemoryBudget& operator=(const MemoryBudget&) = delete;

    // The process-wide budget, which servers use unless given their own.
    static MemoryBudget* process();
    // A quarter of physical memory (or of the cgroup's limit, if lower), or
    // PHOTON_MEMORY_BUDGET.
    static size_t default_limit();
    // "4096", "64K", "512M", "2G" as bytes; 0 if s is not such a size.
    static size_t parse_size(const char* s);

    size_t limit() const { return limit_.load(std::memory_order_relaxed); }
    void set_limit(size_t limit);  // 0: default_limit()
    size_t used() const { return used_.load(std::memory_order_relaxed); }
    size_t accounts() const { return accounts_.load(std::memory_order_relaxed); }
    // Bytes one account may hold before it counts as heavy: the fair share,
    // capped at max(limit / 64, 64 KiB).
    size_t share() const;
    // Takers that waited for room, and takers refused (shed), so far.
    uint64_t waits() const { return waits_.load(std::memory_order_relaxed); }
    uint64_t sheds() const { return sheds_.load(std::memory_order_relaxed); }

    // One connection's part of a budget. Not copyable. Its calls may come
    // from several coroutines and vCPUs at once (a connection's reader taking
    // bytes while its requests take and give back theirs): they are
    // serialized by the budget's lock. A null budget makes an account that
    // grants everything (and is for one coroutine at a time).
    class Account {
    public:
        explicit Account(MemoryBudget* budget);
        ~Account();  // gives back what is still held
        Account(const Account&) = delete;
        Account& operator=(const Account&) = delete;

        // Takes n bytes, waiting while there is no room for them: 0, or -1
        // with errno ENOMEM (n can never fit: more than the limit, or a heavy
        // taker's more than limit - reserve), ETIMEDOUT (no room before the
        // deadline), EINTR (interrupted).
        int acquire(size_t n, Timeout timeout = {});
        // Takes n bytes only if there is room now: 0, or -1 ENOMEM.
        int try_acquire(size_t n);
        void release(size_t n);
        size_t held() const { return held_.load(std::memory_order_relaxed); }
        MemoryBudget* budget() const { return budget_; }

    private:
        friend class MemoryBudget;
        MemoryBudget* budget_;
        std::atomic<size_t> held_{0};
    };

private:
    friend class Account;
    // 1 granted, 0 no room now, -1 never.
    int grant_locked(Account* a, size_t n);
    void give_back(Account* a, size_t n);

    std::atomic<size_t> limit_;
    std::atomic<size_t> used_{0};
    std::atomic<size_t> accounts_{0};
    std::atomic<uint64_t> waits_{0}, sheds_{0};
    size_t waiting_ = 0;          // takers in acquire(), under lock_
    size_t min_wait_ = SIZE_MAX;  // the smallest of their asks (since the last wake-up)
    mutex lock_;
    condition_variable room_;
};

// Bytes of an account held for one scope (a request's body, a reply).
class BudgetHold {
public:
    BudgetHold() = default;
    explicit BudgetHold(MemoryBudget::Account* a) : account_(a) {}
    ~BudgetHold() { reset(); }
    BudgetHold(BudgetHold&& o) noexcept : account_(o.account_), n_(o.n_) { o.n_ = 0; }
    BudgetHold& operator=(BudgetHold&& o) noexcept {
        if (this != &o) {
            reset();
            account_ = o.account_;
            n_ = o.n_;
            o.n_ = 0;
        }
        return *this;
    }

    // Takes n more bytes (as Account::acquire); 0 or -1.
    int acquire(size_t n, Timeout timeout = {}) {
        if (!account_ || account_->acquire(n, timeout) < 0) return account_ ? -1 : 0;
        n_ += n;
        return 0;
    }
    int try_acquire(size_t n) {
        if (!account_ || account_->try_acquire(n) < 0) return account_ ? -1 : 0;
        n_ += n;
        return 0;
    }
    void reset() {
        if (account_ && n_) account_->release(n_);
        n_ = 0;
    }
    size_t held() const { return n_; }

private:
    MemoryBudget::Account* account_ = nullptr;
    size_t n_ = 0;
};

}  // namespace photon
