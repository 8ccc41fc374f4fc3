// photon::throttle shared by flows, as PhotonLibOS's own priority test runs
// it: flows of the same priority share the limit evenly, and
// together stay at it. The flows ask without pause, so that the throttle, not
// the machine's speed (a loaded CI machine, sanitizers), sets their pace.
#include <photon/common/throttle.h>
#include <photon/photon.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "../util/engine_fixture.h"

namespace {

class ThrottleSemantics : public photon_test::VcpuTest {};

struct flow {
    uint64_t bw, bs;
    photon::throttle::Priority prio;
};

// Runs the two flows through one throttle of `limit` per second for `secs`;
// returns what each got, as fractions of limit * secs.
std::pair<double, double> run_flows(uint64_t limit, flow f1, flow f2, double secs) {
    photon::throttle t(limit);
    uint64_t got[2] = {0, 0};
    bool running = true;
    photon::semaphore done;
    flow fs[2] = {f1, f2};
    for (int i = 0; i < 2; i++) {
        photon::thread_create11([&, i] {
            const flow f = fs[i];
            // bw 0: no pause between requests.
            const uint64_t interval = f.bw ? 1000000ULL / (f.bw / f.bs) : 0;
            while (running) {
                if (interval) photon::thread_usleep(interval);
                if (t.consume(f.bs, f.prio) != 0) break;
                got[i] += f.bs;
            }
            done.signal(1);
        });
    }
    // The first second spends the bucketful a throttle starts with: not counted.
    photon::thread_usleep(1000 * 1000);
    const uint64_t start[2] = {got[0], got[1]};
    const auto t0 = std::chrono::steady_clock::now();
    photon::thread_usleep((uint64_t)(secs * 1e6));
    running = false;
    got[0] -= start[0];
    got[1] -= start[1];
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(0, done.wait(2, 30ULL * 1000 * 1000));  // each ends within its next unit
    const double total = double(limit) * elapsed;
    return {got[0] / total, got[1] / total};
}

// Both flows always want more (the throttle is what paces them, however slow the machine):
// shared by units, not by requests, though one asks for twice as much at a time. Taken in
// request order they got 1/3 and 2/3.
TEST_F(ThrottleSemantics, TwoBusyFlowsOfOnePriorityShareTheLimitEvenly) {
    const auto High = photon::throttle::Priority::High;
    auto r = run_flows(100000000, {0, 1000000, High}, {0, 2000000, High}, 3);
    printf("shares: %.3f %.3f, sum %.3f\n", r.first, r.second, r.first + r.second);
    EXPECT_GE(r.first, 0.4);
    EXPECT_LE(r.first, 0.6);
    EXPECT_GE(r.second, 0.4);
    EXPECT_LE(r.second, 0.6);
    // The limit, plus at most the bucketful left from the first second.
    EXPECT_LE(r.first + r.second, 1.0 + 1.0 / 3 + 0.02);
}

TEST_F(ThrottleSemantics, TwoEqualBusyFlowsOfOnePriorityGetHalfEach) {
    const auto High = photon::throttle::Priority::High;
    auto r = run_flows(100000000, {0, 500000, High}, {0, 500000, High}, 3);
    printf("shares: %.3f %.3f, sum %.3f\n", r.first, r.second, r.first + r.second);
    EXPECT_GE(r.first, 0.4);
    EXPECT_LE(r.first, 0.6);
    EXPECT_GE(r.second, 0.4);
    EXPECT_LE(r.second, 0.6);
}

}  // namespace
