// photon::Timeout: a deadline on photon's coarse clock `photon::now` (us).
// Functions that take a Timeout accept plain microseconds implicitly:
// `{}` or -1 means never, 0 means already expired. Any vCPU or OS thread may use it.
//
// Differences from PhotonLibOS: doc/compat.md#commontimeouth
#pragma once

#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <limits>

#include <photon/common/utility.h>

namespace photon {

// Coarse monotonic clock in microseconds, refreshed by the schedulers
// (every few dozen switches and whenever a vCPU goes idle).
extern volatile uint64_t now;
// Refreshes `now` from CLOCK_MONOTONIC and returns it (thread/vcpu.cpp).
uint64_t __update_now();

class Timeout {
public:
    Timeout() = default;
    // Implicit from microseconds by design; 0 gives expiration() == 0, as in Photon.
    Timeout(uint64_t x) { m_expiration = x ? deadline(x) : 0; }  // NOLINT

    // Re-arms to x microseconds from now (saturating); returns the expiration.
    // A finite deadline counts from a fresh clock read: `now` may lag by up to
    // a scheduling round, which would end the wait that much early.
    uint64_t timeout(uint64_t x) { return m_expiration = deadline(x); }
    // Time left, 0 once expired.
    uint64_t timeout() const {
        uint64_t t = clock();
        return m_expiration > t ? m_expiration - t : 0;
    }
    operator uint64_t() const { return timeout(); }
    uint64_t timeout_us() const { return timeout(); }
    // Time left in other units, rounded to the nearest; MS and S divide by 1024 (fast).
    uint64_t timeout_ms() const { return divide(timeout(), 1000); }
    uint64_t timeout_MS() const { return divide(timeout(), 1024); }
    uint64_t timeout_s() const { return divide(timeout(), 1000 * 1000); }
    uint64_t timeout_S() const { return divide(timeout(), 1024 * 1024); }
    bool expired() const { return m_expiration <= clock(); }
    uint64_t expiration() const { return m_expiration; }
    uint64_t expiration(uint64_t x) { return m_expiration = x; }
    // PhotonLibOS 0.6's names for expiration(), still used by its programs.
    uint64_t expire() const { return m_expiration; }
    uint64_t expire(uint64_t x) { return m_expiration = x; }
    Timeout& operator=(uint64_t x) {
        timeout(x);
        return *this;
    }
    // Shortens the deadline to at most x microseconds from now.
    Timeout& timeout_at_most(uint64_t x) {
        uint64_t e = deadline(x);
        if (e < m_expiration) m_expiration = e;
        return *this;
    }
    // Time left; microseconds::max() for a deadline beyond its range (never).
    std::chrono::microseconds std_duration() const {
        using us = std::chrono::microseconds;
        if (m_expiration > (uint64_t)std::numeric_limits<us::rep>::max()) return us::max();
        return us(timeout());
    }

    bool operator<(const Timeout& r) const { return m_expiration < r.m_expiration; }
    bool operator<=(const Timeout& r) const { return m_expiration < r.m_expiration; }  // as Photon
    bool operator>(const Timeout& r) const { return m_expiration > r.m_expiration; }
    bool operator>=(const Timeout& r) const { return m_expiration >= r.m_expiration; }
    bool operator==(const Timeout& r) const { return m_expiration == r.m_expiration; }

    explicit operator bool() const = delete;  // a Timeout is not a condition; use expired()

protected:
    static uint64_t divide(uint64_t x, uint64_t d) { return x / d + (x % d >= d - d / 2); }
    // `now` is written by several vCPUs (atomically, forward only).
    static uint64_t clock() {
        return __atomic_load_n(const_cast<const uint64_t*>(&now), __ATOMIC_RELAXED);
    }
    static uint64_t deadline(uint64_t x) {
        if (x == UINT64_MAX) return UINT64_MAX;
        return add_sat(x ? __update_now() : clock(), x);  // 0: expired on any clock
    }
    static uint64_t add_sat(uint64_t a, uint64_t b) { return sat_add(a, b); }

    uint64_t m_expiration = UINT64_MAX;  // time of expiration on `now`, in us
};

}  // namespace photon

// PhotonLibOS 0.6 declared Timeout in the global namespace; its programs still name it so.
// The same type, so code that also says `using namespace photon` is not ambiguous.
// Define PHOTON_NO_GLOBAL_TIMEOUT where a program has a ::Timeout of its own.
#ifndef PHOTON_NO_GLOBAL_TIMEOUT
using Timeout = photon::Timeout;
#endif
