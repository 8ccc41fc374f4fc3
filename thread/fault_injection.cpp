// The fault injector: the configuration, the per-vCPU PRNGs and the counts.
#include <photon/common/fault_injection.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include <photon/common/alog.h>
#include <photon/thread/thread.h>

#include "vcpu.h"

namespace photon {
namespace fault {

namespace detail {
uint32_t g_kinds = 0;
}  // namespace detail

namespace {

const char* const kNames[kKinds] = {"eagain",   "eintr",  "short", "delay",
                                    "spurious", "enomem", "eio",   "reset"};

std::mutex g_mu;  // serializes set()
Config g_config;
// Read by the draws without the lock: set() publishes them before g_kinds.
std::atomic<uint64_t> g_seed{0};
std::atomic<uint64_t> g_threshold{0};  // p scaled to 2^53
std::atomic<uint32_t> g_max_delay{1000};
std::atomic<uint64_t> g_generation{0};  // bumped by set(): every PRNG restarts
std::atomic<uint64_t> g_hits[kKinds];
std::atomic<uint64_t> g_draws{0};

uint64_t splitmix(uint64_t& x) {
    uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

// This OS thread's PRNG, restarted when the configuration or the vCPU changes.
struct prng {
    uint64_t generation = ~0ULL;
    int vcpu = -2;
    uint64_t state = 0;

    uint64_t next() {
        vcpu_t* v = current_vcpu();
        int id = v ? v->id : -1;
        uint64_t gen = g_generation.load(std::memory_order_acquire);
        if (gen != generation || id != vcpu) {
            generation = gen;
            vcpu = id;
            uint64_t s = g_seed.load(std::memory_order_relaxed);
            state = splitmix(s) ^ ((uint64_t)(int64_t)id * 0xD6E8FEB86659FD93ULL);
        }
        return splitmix(state);
    }
};
thread_local prng t_prng;

int bit_index(uint32_t k) { return __builtin_ctz(k); }

bool parse_kind(const std::string& name, uint32_t& kinds) {
    if (name == "transparent") return kinds |= kTransparent, true;
    if (name == "hard") return kinds |= kHard, true;
    if (name == "all") return kinds |= kAll, true;
    if (name == "econnreset") return kinds |= RESET, true;
    for (int i = 0; i < kKinds; i++)
        if (name == kNames[i]) return kinds |= 1u << i, true;
    return false;
}

bool parse_number(const std::string& s, double& out) {
    if (s.empty()) return false;
    char* end = nullptr;
    errno = 0;
    out = strtod(s.c_str(), &end);
    return errno == 0 && *end == 0;
}

bool parse_unsigned(const std::string& s, uint64_t& out) {
    if (s.empty() || s[0] == '-') return false;
    char* end = nullptr;
    errno = 0;
    out = strtoull(s.c_str(), &end, 0);
    return errno == 0 && *end == 0;
}

// "seed=7,p=0.01,kinds=short,eagain,delay": a word without '=' continues
// the kinds list.
int parse(const char* spec, Config& c) {
    c = Config();
    bool in_kinds = false;
    std::string all(spec);
    size_t pos = 0;
    while (pos <= all.size()) {
        size_t comma = all.find(',', pos);
        if (comma == std::string::npos) comma = all.size();
        std::string tok = all.substr(pos, comma - pos);
        pos = comma + 1;
        while (!tok.empty() && tok.front() == ' ') tok.erase(0, 1);
        while (!tok.empty() && tok.back() == ' ') tok.pop_back();
        if (tok.empty()) continue;
        size_t eq = tok.find('=');
        std::string key = eq == std::string::npos ? "" : tok.substr(0, eq);
        std::string val = eq == std::string::npos ? tok : tok.substr(eq + 1);
        uint64_t u;
        double d;
        if (key.empty() && in_kinds) {
            if (!parse_kind(val, c.kinds))
                LOG_ERROR_RETURN(EINVAL, -1, "PHOTON_FAULTS: kind `", val.c_str());
        } else if (key == "kinds") {
            in_kinds = true;
            if (!parse_kind(val, c.kinds))
                LOG_ERROR_RETURN(EINVAL, -1, "PHOTON_FAULTS: kind `", val.c_str());
        } else if (key == "seed" && parse_unsigned(val, u)) {
            in_kinds = false;
            c.seed = u;
        } else if (key == "p" && parse_number(val, d) && d >= 0 && d <= 1) {
            in_kinds = false;
            c.p = d;
        } else if (key == "delay_us" && parse_unsigned(val, u) && u > 0 && u <= 1000000) {
            in_kinds = false;
            c.max_delay_us = (uint32_t)u;
        } else {
            LOG_ERROR_RETURN(EINVAL, -1, "PHOTON_FAULTS: cannot use `", tok.c_str());
        }
    }
    return 0;
}

std::string kinds_text(uint32_t kinds) {
    std::string s;
    for (int i = 0; i < kKinds; i++)
        if (kinds & (1u << i)) s += std::string(s.empty() ? "" : ",") + kNames[i];
    return s.empty() ? "none" : s;
}

}  // namespace

namespace detail {

uint32_t draw_slow(uint32_t candidates) {
    uint32_t armed = __atomic_load_n(&g_kinds, __ATOMIC_ACQUIRE) & candidates;
    if (!armed) return 0;
    uint64_t x = t_prng.next();
    g_draws.fetch_add(1, std::memory_order_relaxed);
    if ((x >> 11) >= g_threshold.load(std::memory_order_relaxed)) return 0;
    // The low bits (unused by the comparison) pick one of the armed kinds.
    int n = __builtin_popcount(armed);
    int pick = (int)((x & 0x7ff) % (uint64_t)n);
    uint32_t k = armed;
    while (pick--) k &= k - 1;
    k &= -k;
    g_hits[bit_index(k)].fetch_add(1, std::memory_order_relaxed);
    return k;
}

uint64_t random_below(uint64_t n) { return n ? t_prng.next() % n : 0; }

int delay_slow() {
    if (!draw_slow(DELAY) || !CURRENT) return 0;
    uint64_t us = 1 + random_below(g_max_delay.load(std::memory_order_relaxed));
    return thread_usleep(us) < 0 && errno != EPERM ? -1 : 0;
}

}  // namespace detail

void set(const Config& c) {
    std::lock_guard<std::mutex> lock(g_mu);
    g_config = c;
    uint32_t kinds = (c.p > 0 && c.p <= 1) ? (c.kinds & kAll) : 0;
    __atomic_store_n(&detail::g_kinds, 0, __ATOMIC_RELEASE);
    g_seed.store(c.seed, std::memory_order_relaxed);
    g_threshold.store((uint64_t)(c.p * (double)(1ULL << 53)), std::memory_order_relaxed);
    g_max_delay.store(c.max_delay_us ? c.max_delay_us : 1, std::memory_order_relaxed);
    g_generation.fetch_add(1, std::memory_order_release);
    __atomic_store_n(&detail::g_kinds, kinds, __ATOMIC_RELEASE);
    if (kinds)
        LOG_INFO("fault injection on: seed=`, p=`, kinds=`, delay_us=`", c.seed, c.p,
                 kinds_text(kinds).c_str(), c.max_delay_us);
}

int configure(const char* spec) {
    if (!spec) LOG_ERROR_RETURN(EINVAL, -1, "fault::configure: null spec");
    Config c;
    if (parse(spec, c) < 0) return -1;
    set(c);
    return 0;
}

void disable() { set(Config()); }

Config current() {
    std::lock_guard<std::mutex> lock(g_mu);
    return g_config;
}

int init_from_env() {
    static int result = [] {
        const char* spec = getenv("PHOTON_FAULTS");
        if (!spec || !*spec) return 0;
        return configure(spec);
    }();
    if (result < 0) errno = EINVAL;
    return result;
}

Counts counts() {
    Counts c;
    for (int i = 0; i < kKinds; i++) c.hits[i] = g_hits[i].load(std::memory_order_relaxed);
    c.draws = g_draws.load(std::memory_order_relaxed);
    return c;
}

void reset_counts() {
    for (auto& h : g_hits) h.store(0, std::memory_order_relaxed);
    g_draws.store(0, std::memory_order_relaxed);
}

const char* kind_name(Kind k) {
    return (k && !(k & (k - 1)) && bit_index(k) < kKinds) ? kNames[bit_index(k)] : "?";
}

}  // namespace fault
}  // namespace photon
