// Deterministic fault injection (extension; PhotonLibOS has none): the engine,
// socket and file layers fail chosen calls at a set probability, so that the
// suites run under failure (doc/fault-injection.md).
//
// Set with PHOTON_FAULTS in the environment, read by the first photon::init:
//   PHOTON_FAULTS="seed=7,p=0.01,kinds=short,eagain,delay"
// or from a program with fault::configure() / fault::set(). Each vCPU draws
// its decisions from a PRNG seeded from (seed, vCPU index) in call order, so
// a run with the same seed, vCPUs and calls fails the same calls.
//
// Off (the default), each hook costs one load of a global and one branch.
#pragma once

#include <cstdint>

namespace photon {
namespace fault {

// What a hook may make a call do.
enum Kind : uint32_t {
    // Transparent: a correct library hides them from its user.
    EAGAIN_STORM = 1u << 0,  // a non-blocking syscall reports EAGAIN: the caller waits
    EINTR_RETRY = 1u << 1,   // a syscall that the library retries reports EINTR
    SHORT_IO = 1u << 2,      // a socket transfer moves fewer bytes than asked
    DELAY = 1u << 3,         // an fd wake-up comes late
    SPURIOUS = 1u << 4,      // an fd wait returns without the fd being ready
    // Hard: outcomes change; callers see them as errors.
    NOMEM = 1u << 5,     // ENOMEM from a coroutine stack, a read-ahead buffer, a new stream
    IO_ERROR = 1u << 6,  // EIO from a local file's read, write or sync
    RESET = 1u << 7,     // ECONNRESET from a socket transfer
};
constexpr uint32_t kTransparent = EAGAIN_STORM | EINTR_RETRY | SHORT_IO | DELAY | SPURIOUS;
constexpr uint32_t kHard = NOMEM | IO_ERROR | RESET;
constexpr uint32_t kAll = kTransparent | kHard;
constexpr int kKinds = 8;

struct Config {
    uint64_t seed = 0;
    double p = 0;                  // probability that a hook fails its call, in [0, 1]
    uint32_t kinds = 0;            // Kind bits; 0: off
    uint32_t max_delay_us = 1000;  // a DELAY sleeps up to this long
};

// Turns injection on with c (kinds 0 or p 0: off), restarting every vCPU's
// PRNG. Not for use while other vCPUs run hooks that must stay in order.
void set(const Config& c);
// Parses a spec as PHOTON_FAULTS has it and set()s it: 0, or -1 EINVAL.
// Keys: seed=N, p=X, kinds=K[,K...] (K: eagain, eintr, short, delay,
// spurious, enomem, eio, reset, transparent, hard, all), delay_us=N.
int configure(const char* spec);
void disable();
Config current();
// Reads PHOTON_FAULTS once per process (photon::init calls it): 0, or -1
// EINVAL if it is set and malformed (injection then stays off).
int init_from_env();

// Faults injected so far, per kind (index: bit number of the Kind).
struct Counts {
    uint64_t hits[kKinds];
    uint64_t draws;
};
Counts counts();
void reset_counts();
const char* kind_name(Kind k);

namespace detail {
extern uint32_t g_kinds;  // Kind bits armed; written by set() only
uint32_t draw_slow(uint32_t candidates);
uint64_t random_below(uint64_t n);
int delay_slow();
}  // namespace detail

// True if any of `kinds` is armed: the hooks' one branch when off.
inline bool armed(uint32_t kinds) {
    return __builtin_expect((__atomic_load_n(&detail::g_kinds, __ATOMIC_RELAXED) & kinds) != 0, 0);
}

// One decision of this vCPU's PRNG: with probability p, one of the armed
// kinds among `candidates` (chosen uniformly), else 0.
inline uint32_t draw(uint32_t candidates) {
    return armed(candidates) ? detail::draw_slow(candidates) : 0;
}

// Whether this call gets fault k.
inline bool hit(Kind k) { return draw(k) != 0; }

// A number in [0, n) from this vCPU's PRNG (n > 0), for the size of a short
// transfer or the length of a delay.
inline uint64_t random_below(uint64_t n) { return detail::random_below(n); }

// A DELAY decision at a wake-up: if drawn, the coroutine sleeps up to
// max_delay_us. 0, or -1 with the errno of an interrupt that came meanwhile
// (the caller reports it as its wait's: an interrupt is never lost).
inline int late_wakeup() { return armed(DELAY) ? detail::delay_slow() : 0; }

// The length a short transfer of n bytes moves instead: in [1, n).
inline uint64_t short_length(uint64_t n) { return n > 1 ? 1 + random_below(n - 1) : n; }

}  // namespace fault
}  // namespace photon
