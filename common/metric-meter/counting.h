// Whether the library counts its metrics (CMake option PHOTON_METRICS, ON by default). With it
// OFF, every `if (metrics::kCounting)` on a hot path compiles away and the collectors report
// what was never counted as 0: a build to measure the counting's cost against. Private.
#pragma once

namespace photon {
namespace metrics {

#ifdef PHOTON_METRICS_OFF
constexpr bool kCounting = false;
#else
constexpr bool kCounting = true;
#endif

}  // namespace metrics
}  // namespace photon
