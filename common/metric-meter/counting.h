// Whether the library counts its metrics (CMake option PHOTON_METRICS, ON by default). With it
// OFF, every `if (metrics::kCounting)` on a hot path compiles away and the collectors report
// what was never counted as 0: a build to measure the counting's cost against. Private.
#pragma once

#include <chrono>
#include <cstdint>

namespace photon {
namespace metrics {

#ifdef PHOTON_METRICS_OFF
constexpr bool kCounting = false;
#else
constexpr bool kCounting = true;
#endif

// Times one call in 16 of a call site on each OS thread (none when not counting), for a
// histogram of handler times: two clock reads and a shared histogram on every call were 0.5% of
// a 4 KiB HTTP request and 1.4% of a small RPC call (doc/performance-notebook.md). `seq` is the
// site's own thread_local count, so that sites sharing a thread do not skew each other's sample.
class sampled_timer {
public:
    explicit sampled_timer(uint32_t& seq) : sampled_(kCounting && (++seq & 15) == 0) {
        if (sampled_) t0_ = std::chrono::steady_clock::now();
    }
    bool sampled() const { return sampled_; }
    uint64_t elapsed_us() const {
        return (uint64_t)std::chrono::duration_cast<std::chrono::microseconds>(
                   std::chrono::steady_clock::now() - t0_)
            .count();
    }

private:
    bool sampled_;
    std::chrono::steady_clock::time_point t0_;
};

}  // namespace metrics
}  // namespace photon
