// photon/common/metric-meter/prometheus.h: the log2 histogram's buckets, the text exposition
// (families once, labels escaped, bad names refused, histograms cumulative with +Inf, _sum
// and _count), and the registry (order, duplicates, removal).
#include <photon/common/metric-meter/prometheus.h>
#include <photon/common/metric-meter/metrics.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <limits>
#include <string>

using namespace photon::metrics;

namespace {

TEST(Log2Histogram, BucketsAreBoundedAbovePowersOfTwo) {
    EXPECT_EQ(0, Log2Histogram::bucket_of(0));
    EXPECT_EQ(0, Log2Histogram::bucket_of(1));
    EXPECT_EQ(1, Log2Histogram::bucket_of(2));
    EXPECT_EQ(2, Log2Histogram::bucket_of(3));
    EXPECT_EQ(2, Log2Histogram::bucket_of(4));
    EXPECT_EQ(3, Log2Histogram::bucket_of(5));
    EXPECT_EQ(10, Log2Histogram::bucket_of(1024));
    EXPECT_EQ(11, Log2Histogram::bucket_of(1025));
    EXPECT_EQ(26, Log2Histogram::bucket_of(uint64_t(1) << 26));
    EXPECT_EQ(Log2Histogram::kBuckets - 1, Log2Histogram::bucket_of((uint64_t(1) << 26) + 1));
    EXPECT_EQ(Log2Histogram::kBuckets - 1,
              Log2Histogram::bucket_of(std::numeric_limits<uint64_t>::max()));

    Log2Histogram h, copy, both;
    for (uint64_t v : {0, 1, 2, 3, 100, 1000000}) h.put(v);
    h.snapshot(&copy);
    EXPECT_EQ(6u, copy.count);
    EXPECT_EQ(1000106u, copy.sum);
    EXPECT_EQ(2u, copy.buckets[0]);
    EXPECT_EQ(1u, copy.buckets[7]);   // 100 <= 128
    EXPECT_EQ(1u, copy.buckets[20]);  // 1e6 <= 2^20
    both.merge(copy);
    both.merge(copy);
    EXPECT_EQ(12u, both.count);
    EXPECT_EQ(4u, both.buckets[0]);
}

TEST(Exposition, WritesFamiliesOnceAndEscapesLabelValues) {
    std::string out;
    Exposition e(&out);
    e.family("app_requests_total", "Requests,\nby path \\ kind.", Exposition::COUNTER);
    e.family("app_requests_total", "again", Exposition::COUNTER);  // announced once
    Label l[2] = {{"path", "/a\"b\\c\nd"}, {"code", "200"}};
    e.sample("app_requests_total", uint64_t(7), l, 2);
    e.sample("app_temperature", -1.5);
    e.sample("app_delta", int64_t(-3));
    e.sample("app_nan", std::numeric_limits<double>::quiet_NaN());
    EXPECT_EQ(0, e.errors());
    EXPECT_EQ(
        "# HELP app_requests_total Requests,\\nby path \\\\ kind.\n"
        "# TYPE app_requests_total counter\n"
        "app_requests_total{path=\"/a\\\"b\\\\c\\nd\",code=\"200\"} 7\n"
        "app_temperature -1.5\n"
        "app_delta -3\n"
        "app_nan NaN\n",
        out);
}

TEST(Exposition, RefusesBadNamesAndCountsThem) {
    std::string out;
    Exposition e(&out);
    e.family("1starts_with_a_digit", "x", Exposition::GAUGE);
    e.sample("has-dash", uint64_t(1));
    e.sample("", uint64_t(1));
    e.sample(nullptr, uint64_t(1));
    Label bad{"bad label", "v"}, le{"le", "1"}, colon{"a:b", "v"};
    e.sample("ok_name", uint64_t(1), &bad, 1);
    e.sample("ok_name", uint64_t(1), &le, 1);  // le is the histograms' own
    e.sample("ok_name", uint64_t(1), &colon, 1);
    Label five[5] = {{"a", ""}, {"b", ""}, {"c", ""}, {"d", ""}, {"e", ""}};
    e.sample("ok_name", uint64_t(1), five, 5);
    EXPECT_EQ(8, e.errors());
    EXPECT_EQ("", out);
    EXPECT_TRUE(valid_metric_name("a:b_c9"));
    EXPECT_FALSE(valid_metric_name("9a"));
}

TEST(Exposition, HistogramsAreCumulativeWithInfSumAndCount) {
    Log2Histogram h;
    h.put(1);
    h.put(3);
    h.put(3);
    h.put(uint64_t(1) << 40);  // past the last bound: +Inf only
    std::string out;
    Exposition e(&out);
    Label l{"vcpu", "0"};
    e.histogram("x_seconds", h, 1e-6, &l, 1);
    EXPECT_EQ(0, e.errors());
    EXPECT_NE(std::string::npos, out.find("x_seconds_bucket{vcpu=\"0\",le=\"1e-06\"} 1\n")) << out;
    EXPECT_NE(std::string::npos, out.find("x_seconds_bucket{vcpu=\"0\",le=\"4e-06\"} 3\n")) << out;
    EXPECT_NE(std::string::npos, out.find("x_seconds_bucket{vcpu=\"0\",le=\"+Inf\"} 4\n")) << out;
    EXPECT_NE(std::string::npos, out.find("x_seconds_count{vcpu=\"0\"} 4\n")) << out;
    EXPECT_NE(std::string::npos, out.find("x_seconds_sum{vcpu=\"0\"} 1099511.627783")) << out;
    // Cumulative: no bucket counts fewer than the one before it.
    uint64_t last = 0;
    int buckets = 0;
    for (size_t p = out.find("_bucket"); p != std::string::npos; p = out.find("_bucket", p + 1)) {
        size_t sp = out.find("} ", p);
        uint64_t n = std::stoull(out.substr(sp + 2));
        EXPECT_GE(n, last);
        last = n;
        buckets++;
    }
    EXPECT_EQ(Log2Histogram::kBuckets, buckets);
}

void first(void* arg, Exposition& e) {
    e.family("t_first", "first", Exposition::GAUGE);
    e.sample("t_first", (uint64_t)(uintptr_t)arg);
}
void second(void*, Exposition& e) {
    e.family("t_second", "second", Exposition::GAUGE);
    e.sample("t_second", uint64_t(2));
}

TEST(Registry, RendersCollectorsInOrderAndForgetsRemovedOnes) {
    int a = register_collector(&first, (void*)1);
    ASSERT_GT(a, 0);
    int b = register_collector(&second, nullptr);
    ASSERT_GT(b, a);
    EXPECT_EQ(a, register_collector(&first, (void*)1));  // once
    int c = register_collector(&first, (void*)3);        // another arg: another collector
    ASSERT_GT(c, b);
    std::string out;
    ASSERT_EQ(0, render_prometheus(&out));
    size_t p1 = out.find("t_first 1\n"), p2 = out.find("t_second 2\n"),
           p3 = out.find("t_first 3\n");
    ASSERT_NE(std::string::npos, p1) << out;
    ASSERT_NE(std::string::npos, p2) << out;
    ASSERT_NE(std::string::npos, p3) << out;
    EXPECT_LT(p1, p2);
    EXPECT_LT(p2, p3);
    EXPECT_EQ(out.find("# TYPE t_first"), out.rfind("# TYPE t_first"));  // one family
    EXPECT_EQ(0, unregister_collector(a));
    EXPECT_EQ(0, unregister_collector(b));
    EXPECT_EQ(0, unregister_collector(c));
    EXPECT_EQ(-1, unregister_collector(b));
    EXPECT_EQ(ENOENT, errno);
    out.clear();
    ASSERT_EQ(0, render_prometheus(&out));
    EXPECT_EQ(std::string::npos, out.find("t_first")) << out;
    EXPECT_EQ(-1, register_collector(nullptr, nullptr));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, render_prometheus(nullptr));
    EXPECT_EQ(EINVAL, errno);
}

}  // namespace

// The bridge from PhotonLibOS's Metric:: counters: each is read at every render, with its
// labels, until it is unregistered.
TEST(Registry, ExposesMetricCountersUntilUnregistered) {
    Metric::AddCounter requests;
    Metric::ValueCounter depth;
    Metric::MaxCounter peak;
    Label l{"pool", "a\"b"};
    int a = expose_counter("app_requests_total", "Requests.", Exposition::COUNTER, &requests);
    int b = expose_counter("app_queue_depth", "Depth.", Exposition::GAUGE, &depth, &l, 1);
    int c = expose_counter("app_queue_peak", "Peak.", Exposition::GAUGE, &peak);
    ASSERT_GT(a, 0);
    ASSERT_GT(b, 0);
    ASSERT_GT(c, 0);
    for (int i = 0; i < 3; i++) requests.inc();
    depth.set(-7);
    peak.put(5);
    peak.put(2);
    std::string out;
    ASSERT_EQ(0, render_prometheus(&out));
    EXPECT_NE(std::string::npos,
              out.find("# TYPE app_requests_total counter\napp_requests_total 3\n"))
        << out;
    EXPECT_NE(std::string::npos, out.find("app_queue_depth{pool=\"a\\\"b\"} -7\n")) << out;
    EXPECT_NE(std::string::npos, out.find("app_queue_peak 5\n")) << out;
    requests.inc();
    out.clear();
    ASSERT_EQ(0, render_prometheus(&out));
    EXPECT_NE(std::string::npos, out.find("app_requests_total 4\n")) << out;
    for (int id : {a, b, c}) EXPECT_EQ(0, unregister_collector(id));
    out.clear();
    ASSERT_EQ(0, render_prometheus(&out));
    EXPECT_EQ(std::string::npos, out.find("app_")) << out;
    EXPECT_EQ(-1, unregister_collector(a));
    EXPECT_EQ(ENOENT, errno);
}

TEST(Registry, RefusesAValueWithABadNameOrType) {
    Metric::AddCounter c;
    Label bad{"0bad", "x"};
    EXPECT_EQ(-1, expose_counter("1app", "", Exposition::COUNTER, &c));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, expose_counter("app_h", "", Exposition::HISTOGRAM, &c));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, expose_counter("app_l", "", Exposition::GAUGE, &c, &bad, 1));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, register_value("app_n", "", Exposition::GAUGE, nullptr, nullptr));
    EXPECT_EQ(EINVAL, errno);
}

TEST(Exposition, MetricByWritesOneSeriesPerKindAndRefusesTooManyLabels) {
    std::string out;
    Exposition e(&out);
    const char* const kinds[] = {"a", "b"};
    const uint64_t values[] = {3, 4};
    Label base{"server", "s1"};
    e.metric_by("x_total", "X.", Exposition::COUNTER, "kind", kinds, values, 2, &base, 1);
    EXPECT_EQ(
        "# HELP x_total X.\n# TYPE x_total counter\n"
        "x_total{server=\"s1\",kind=\"a\"} 3\nx_total{server=\"s1\",kind=\"b\"} 4\n",
        out);
    EXPECT_EQ(0, e.errors());
    Label four[4] = {{"a", "1"}, {"b", "2"}, {"c", "3"}, {"d", "4"}};
    e.metric_by("y_total", "Y.", Exposition::COUNTER, "kind", kinds, values, 2, four, 4);
    EXPECT_EQ(1, e.errors());  // a fifth label would not fit
    EXPECT_EQ(std::string::npos, out.find("y_total{"));
    Log2Histogram h;
    h.put(3);
    out.clear();
    e.histogram_metric("z_seconds", "Z.", h, 1, &base, 1);
    EXPECT_NE(std::string::npos, out.find("z_seconds_count{server=\"s1\"} 1\n")) << out;
}
