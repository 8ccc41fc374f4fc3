// photon/common/perf_counter.h: with -DPERF, the three counter kinds reach
// ./perf.log with the right values (TOTAL running, ACCUMULATE per interval,
// AVERAGE the mean, also past 2^24 samples).
#define PERF
#include <photon/common/perf_counter.h>

#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "../util/temp_dir.h"
#include "../util/wait.h"

namespace {

// The log lines "date time name : value" for `name`, values only.
std::vector<std::string> values_of(const std::string& path, const std::string& name) {
    std::ifstream in(path);
    std::vector<std::string> out;
    std::string line;
    const std::string tag = ' ' + name + " : ";
    while (std::getline(in, line)) {
        auto p = line.find(tag);
        if (p != std::string::npos) out.push_back(line.substr(p + tag.size()));
    }
    return out;
}

bool contains(const std::vector<std::string>& v, const std::string& x) {
    for (auto& s : v)
        if (s == x) return true;
    return false;
}

TEST(PerfCounter, CountersReachThePerfLogWithTheirValues) {
    photon_test::temp_dir dir("perf_counter_test");
    ASSERT_TRUE(dir.ok());
    ASSERT_EQ(0, chdir(dir.path().c_str()));  // ./perf.log goes here
    const std::string log = dir / "perf.log";

    // Function-local: registered (and the log opened) now, after the chdir.
    REGISTER_PERF(pc_total, TOTAL, 1)
    REGISTER_PERF(pc_acc, ACCUMULATE, 1)
    REGISTER_PERF(pc_avg, AVERAGE, 1)
    for (int i = 0; i < 5; i++) REPORT_PERF(pc_total, 2)
    REPORT_PERF(pc_acc, 3)
    REPORT_PERF(pc_acc, 4)
    REPORT_PERF(pc_avg, 10)
    REPORT_PERF(pc_avg, 20)
    REPORT_PERF(pc_avg, 30)

    // One line per second each; allow a slow machine several.
    EXPECT_TRUE(photon_test::wait_for_off_vcpu(
        [&] { return contains(values_of(log, "pc_total"), "10"); }, 10000));
    EXPECT_TRUE(photon_test::wait_for_off_vcpu(
        [&] { return contains(values_of(log, "pc_acc"), "7"); }, 10000));
    EXPECT_TRUE(photon_test::wait_for_off_vcpu(
        [&] { return contains(values_of(log, "pc_avg"), "20"); }, 10000));
    // ACCUMULATE and AVERAGE start over after each line.
    EXPECT_TRUE(photon_test::wait_for_off_vcpu(
        [&] { return contains(values_of(log, "pc_acc"), "0"); }, 10000));
    EXPECT_TRUE(photon_test::wait_for_off_vcpu(
        [&] { return contains(values_of(log, "pc_avg"), "0"); }, 10000));
    EXPECT_FALSE(contains(values_of(log, "pc_total"), "0"));

    // More samples than Photon's 24-bit count could hold, in one interval.
    REGISTER_PERF(pc_many, AVERAGE, 1)
    const int n = (1 << 24) + 1000;
    for (int i = 0; i < n; i++) REPORT_PERF(pc_many, 3)
    EXPECT_TRUE(photon_test::wait_for_off_vcpu(
        [&] { return contains(values_of(log, "pc_many"), "3"); }, 10000));

    init_perf_counter(nullptr);  // ignored
    EXPECT_EQ(0, chdir("/"));    // before the directory goes
}

}  // namespace
