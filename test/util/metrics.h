// For the tests of the metrics: reading a scrape of the registry, and skipping the tests of
// counts in a build with PHOTON_METRICS=OFF (test/CMakeLists.txt defines PHOTON_METRICS_OFF for
// them then), which counts nothing on the hot paths.
#pragma once

#include <photon/common/metric-meter/prometheus.h>

#include <gtest/gtest.h>

#include <string>

#ifdef PHOTON_METRICS_OFF
#define PHOTON_TEST_SKIP_WITHOUT_COUNTING() \
    GTEST_SKIP() << "metrics counting compiled out (PHOTON_METRICS=OFF)"
#else
#define PHOTON_TEST_SKIP_WITHOUT_COUNTING() (void)0
#endif

namespace photon_test {

// The registry rendered now.
inline std::string scrape() {
    std::string body;
    EXPECT_EQ(0, photon::metrics::render_prometheus(&body));
    return body;
}

// The value of the sample whose line starts with `line_prefix` ("name{labels} ", the space
// included) in a scrape, or -1.
inline long long sample_value(const std::string& body, const std::string& line_prefix) {
    size_t p = body.find("\n" + line_prefix);
    if (p == std::string::npos) return -1;
    return std::stoll(body.substr(p + 1 + line_prefix.size()));
}

// The value of `label`, the first label of `metric`, in its last series: that of the collector
// registered last (collectors render in registration order); "" if none.
inline std::string last_label(const std::string& body, const std::string& metric,
                              const std::string& label) {
    const std::string key = metric + "{" + label + "=\"";
    size_t p = body.rfind(key);
    if (p == std::string::npos) return "";
    p += key.size();
    return body.substr(p, body.find('"', p) - p);
}

}  // namespace photon_test
