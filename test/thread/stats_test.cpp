// photon/thread/stats.h: each vCPU's counters move with what it does (switches, creations,
// timer and cross-thread wake-ups, migrations, engine polls and idle waits, sampled run-queue
// delays and lengths, the engines' I/O), and the registry exposes them per vCPU as
// photon_vcpu_*.
#include <photon/thread/stats.h>

#include <photon/photon.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>
#include <photon/io/aio-wrapper.h>
#include <photon/io/fd-events.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include <unistd.h>

#include "../util/metrics.h"
#include "test_util.h"

using namespace photon;

namespace {

// This vCPU's stats (the test's vCPU is the only one unless a test starts more).
VcpuStats mine(int id) {
    std::vector<VcpuStats> all;
    EXPECT_EQ(0, get_vcpu_stats(&all));
    for (auto& s : all)
        if (s.id == id) return s;
    ADD_FAILURE() << "no vCPU " << id;
    return {};
}

int my_id() {
    std::vector<VcpuStats> all;
    get_vcpu_stats(&all);
    return all.size() == 1 ? all[0].id : -1;
}

// Waits n times for a pipe that another thread writes a byte to every pause_ms: each wait
// parks the caller in the vCPU's event engine (or its idle wait).
void wait_for_pipe_writes(int n, int pause_ms) {
    int p[2];
    ASSERT_EQ(0, pipe(p));
    std::thread writer([&] {
        for (int i = 0; i < n; i++) {
            std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
            EXPECT_EQ(1, write(p[1], "x", 1));
        }
    });
    for (int i = 0; i < n; i++) {
        EXPECT_EQ(0, wait_for_fd_readable(p[0], 5 * 1000 * 1000));
        char c;
        EXPECT_EQ(1, read(p[0], &c, 1));
    }
    writer.join();
    close(p[0]);
    close(p[1]);
}

class VcpuStatsTest : public photon_test::VcpuTest {
protected:
    void SetUp() override {
        PHOTON_TEST_SKIP_WITHOUT_COUNTING();
        VcpuTest::SetUp();
    }
};

TEST_F(VcpuStatsTest, SwitchesAndCreationsAreCounted) {
    int id = my_id();
    ASSERT_GE(id, 0) << "one vCPU expected";
    VcpuStats a = mine(id);
    EXPECT_EQ(1u, a.coroutines);
    std::atomic<bool> stop{false};
    auto th = thread_create11([&] {
        while (!stop) thread_yield();
    });
    auto jh = thread_enable_join(th);
    EXPECT_EQ(2u, mine(id).coroutines);
    for (int i = 0; i < 1000; i++) thread_yield();
    stop = true;
    thread_join(jh);
    VcpuStats b = mine(id);
    EXPECT_EQ(a.created + 1, b.created);
    EXPECT_GE(b.switches - a.switches, 2000u);
    EXPECT_EQ(1u, b.coroutines);
    // Yields are not timed: the only run-queue delays are the new coroutine's first run and
    // this one's wake-up from the join.
    EXPECT_LE(b.run_queue_delay_us.count - a.run_queue_delay_us.count, 2u);
}

TEST_F(VcpuStatsTest, WokenRunsAreSampledWithTheirDelays) {
    int id = my_id();
    ASSERT_GE(id, 0);
    VcpuStats a = mine(id);
    // 200 coroutines woken by their timers at once, then each yields 20 times (4,000 switches,
    // about 60 samples): those sampled in the first round waited in the run queue.
    const int n = 200;
    std::vector<join_handle*> hs;
    for (int i = 0; i < n; i++)
        hs.push_back(thread_enable_join(thread_create11([] {
            thread_usleep(2000);
            for (int k = 0; k < 20; k++) thread_yield();
        })));
    for (auto h : hs) thread_join(h);
    VcpuStats b = mine(id);
    uint64_t timed = b.run_queue_delay_us.count - a.run_queue_delay_us.count;
    EXPECT_GE(timed, 2u);  // the first runs and the timer wake-ups, a sample of them
    EXPECT_LE(timed, 2u * n + 10);
    EXPECT_GE(b.timer_wakeups - a.timer_wakeups, (uint64_t)n);
    uint64_t in_buckets = 0;
    for (auto k : b.run_queue_delay_us.buckets) in_buckets += k;
    EXPECT_EQ(b.run_queue_delay_us.count, in_buckets);
}

// Alone, a coroutine waits 30 ms for a pipe 5 times: the event engine wakes it at the end of
// an idle wait and it runs at once. Stamped with the clock from before the wait, it would read
// about 30 ms each time.
class VcpuStatsEngine : public ::testing::Test {
protected:
    void SetUp() override {
        PHOTON_TEST_SKIP_WITHOUT_COUNTING();
        ASSERT_EQ(0, photon::init(INIT_EVENT_DEFAULT, INIT_IO_NONE));
    }
    void TearDown() override { photon_test::fini_vcpu(); }
};

TEST_F(VcpuStatsEngine, AnIdleWaitIsNotCountedAsRunQueueDelay) {
    {
        int id = my_id();
        ASSERT_GE(id, 0);
        VcpuStats a = mine(id);
        wait_for_pipe_writes(5, 30);
        VcpuStats b = mine(id);
        ASSERT_GE(b.run_queue_delay_us.count - a.run_queue_delay_us.count, 3u);
        uint64_t over_8ms = 0;
        for (int i = 14; i < metrics::Log2Histogram::kBuckets; i++)
            over_8ms += b.run_queue_delay_us.buckets[i] - a.run_queue_delay_us.buckets[i];
        EXPECT_EQ(0u, over_8ms);
    }
}

TEST_F(VcpuStatsTest, TimerWakeupsIdleWaitsAndLoneYieldsAreCounted) {
    int id = my_id();
    ASSERT_GE(id, 0);
    VcpuStats a = mine(id);
    for (int i = 0; i < 5; i++) thread_usleep(2000);
    for (int i = 0; i < 10; i++) thread_yield();  // nothing else to run
    VcpuStats b = mine(id);
    EXPECT_GE(b.timer_wakeups - a.timer_wakeups, 5u);
    EXPECT_GE(b.idle_waits - a.idle_waits, 5u);
    EXPECT_GE(b.idle_wait_hist_us.count - a.idle_wait_hist_us.count, 5u);
    // Five waits of about 2 ms each (the coarse clock may shave a little off each).
    EXPECT_GE(b.idle_wait_us - a.idle_wait_us, 5u * 1000);
    EXPECT_GE(b.lone_yields - a.lone_yields, 10u);
}

TEST_F(VcpuStatsTest, WakeupsFromAnotherThreadAreCounted) {
    int id = my_id();
    ASSERT_GE(id, 0);
    VcpuStats a = mine(id);
    thread* self = CURRENT;
    std::thread waker([self] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        thread_interrupt(self, EINTR);
    });
    EXPECT_EQ(-1, thread_usleep(10 * 1000 * 1000));
    EXPECT_EQ(EINTR, errno);
    waker.join();
    VcpuStats b = mine(id);
    EXPECT_EQ(a.cross_wakeups + 1, b.cross_wakeups);
    EXPECT_EQ(a.timer_wakeups, b.timer_wakeups);
}

TEST_F(VcpuStatsEngine, EnginePollsAndIntervalsAreCountedOnABusyVcpu) {
    {
        int id = my_id();
        ASSERT_GE(id, 0);
        VcpuStats a = mine(id);
        // Two coroutines switching for 30 ms: the vCPU looks at its engine every 50 us or so.
        std::atomic<bool> stop{false};
        auto th = thread_create11([&] {
            while (!stop) thread_yield();
        });
        auto jh = thread_enable_join(th);
        auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(30);
        while (std::chrono::steady_clock::now() < end) thread_yield();
        stop = true;
        thread_join(jh);
        thread_usleep(1000);  // one idle wait in the engine
        VcpuStats b = mine(id);
        EXPECT_GE(b.engine_polls - a.engine_polls, 10u);
        EXPECT_GE(b.engine_interval_us.count - a.engine_interval_us.count,
                  b.engine_polls - a.engine_polls + 1);
        // The polls keep to their pace: most intervals are under 1 ms.
        uint64_t under_1ms = 0;
        for (int i = 0; i <= 10; i++)
            under_1ms += b.engine_interval_us.buckets[i] - a.engine_interval_us.buckets[i];
        EXPECT_GE(under_1ms * 2, b.engine_interval_us.count - a.engine_interval_us.count);
    }
}

TEST_F(VcpuStatsTest, TheRunQueueIsCountedAndItsLengthSampled) {
    int id = my_id();
    ASSERT_GE(id, 0);
    VcpuStats a = mine(id);
    EXPECT_EQ(1u, a.run_queue);  // this coroutine, running
    // 40 coroutines made ready and not yet run, then 40 x 10 yields: the 1-in-64 samples of the
    // length see all 41 (bucket [32, 64)).
    const int n = 40;
    std::vector<join_handle*> hs;
    for (int i = 0; i < n; i++)
        hs.push_back(thread_enable_join(thread_create11([] {
            for (int k = 0; k < 10; k++) thread_yield();
        })));
    EXPECT_EQ(1u + n, mine(id).run_queue);
    for (int k = 0; k < 10; k++) thread_yield();
    VcpuStats mid = mine(id);
    EXPECT_EQ(1u + n, mid.run_queue);
    for (auto h : hs) thread_join(h);
    VcpuStats b = mine(id);
    EXPECT_EQ(1u, b.run_queue);
    uint64_t samples = b.run_queue_length.count - a.run_queue_length.count;
    EXPECT_GE(samples, (uint64_t)(n * 10 / 64 - 1));
    uint64_t at_41 = b.run_queue_length.buckets[6] - a.run_queue_length.buckets[6];
    EXPECT_GE(at_41 * 2, samples) << "most samples see the 41 ready coroutines";
}

TEST_F(VcpuStatsTest, AYieldToKeepsTheCount) {
    int id = my_id();
    ASSERT_GE(id, 0);
    auto th = thread_create11([] { thread_yield(); });
    auto jh = thread_enable_join(th);
    ASSERT_EQ(0, thread_yield_to(th));
    EXPECT_EQ(2u, mine(id).run_queue);
    thread_join(jh);
    EXPECT_EQ(1u, mine(id).run_queue);
}

// Five waits for a pipe, each after the writer's pause: each parks in the master engine.
void check_master_engine_io(const char* engine) {
    {
        int id = my_id();
        ASSERT_GE(id, 0);
        VcpuStats a = mine(id);
        EXPECT_STREQ(engine, a.engine);
        wait_for_pipe_writes(5, 5);
        VcpuStats b = mine(id);
        // At least one registration (epoll) or one entry per wait (io_uring), and one event or
        // completion per wait that parked.
        EXPECT_GE(b.io_submitted[0] - a.io_submitted[0], 1u);
        EXPECT_GE(b.io_completed[0] - a.io_completed[0], 1u);
        std::string out;
        ASSERT_EQ(0, metrics::render_prometheus(&out));
        std::string l = "{vcpu=\"" + std::to_string(id) + "\",engine=\"" + b.engine + "\"} ";
        EXPECT_NE(std::string::npos, out.find("photon_vcpu_io_submissions_total" + l)) << out;
        EXPECT_NE(std::string::npos, out.find("photon_vcpu_io_completions_total" + l)) << out;
    }
}

class VcpuStatsEngines : public photon_test::EngineTest {
protected:
    void SetUp() override {
        PHOTON_TEST_SKIP_WITHOUT_COUNTING();
        EngineTest::SetUp();
    }
};

TEST_P(VcpuStatsEngines, TheMasterEngineCountsWhatItHandsTheKernelAndGetsBack) {
    check_master_engine_io(GetParam() == INIT_EVENT_EPOLL ? "epoll" : "io_uring");
}

PHOTON_INSTANTIATE_ENGINE_TESTS(VcpuStatsEngines);

TEST_F(VcpuStatsTest, PosixAioRequestsAreCounted) {
    int id = my_id();
    ASSERT_GE(id, 0);
    char path[] = "/tmp/photon-stats-XXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    unlink(path);
    ASSERT_EQ(4, write(fd, "abcd", 4));
    VcpuStats a = mine(id);
    char c[4];
    for (int i = 0; i < 3; i++) ASSERT_EQ(4, posixaio_pread(fd, c, 4, 0));
    VcpuStats b = mine(id);
    EXPECT_EQ(a.io_submitted[2] + 3, b.io_submitted[2]);
    EXPECT_EQ(a.io_completed[2] + 3, b.io_completed[2]);
    close(fd);
}

TEST_F(VcpuStatsTest, TheRegistryExposesEachVcpu) {
    int id = my_id();
    ASSERT_GE(id, 0);
    std::string out;
    ASSERT_EQ(0, metrics::render_prometheus(&out));
    std::string label = "{vcpu=\"" + std::to_string(id) + "\"}";
    for (const char* name :
         {"photon_vcpu_coroutines", "photon_vcpu_switches_total", "photon_vcpu_idle_waits_total",
          "photon_vcpu_cross_wakeups_total", "photon_vcpu_run_queue_delay_seconds_count",
          "photon_vcpu_run_queue", "photon_vcpu_run_queue_length_count"})
        EXPECT_NE(std::string::npos, out.find(name + label + " ")) << name << "\n" << out;
    EXPECT_NE(std::string::npos, out.find("photon_vcpus 1\n")) << out;
    EXPECT_NE(std::string::npos, out.find("# TYPE photon_vcpu_run_queue_delay_seconds histogram"))
        << out;
    EXPECT_NE(std::string::npos, out.find("photon_stack_cache_hits_total ")) << out;
}

TEST_F(VcpuStatsTest, TheStacksInUseAndTheirSlabsAreExposed) {
    std::atomic<bool> stop{false};
    std::vector<join_handle*> hs;
    for (int i = 0; i < 10; i++)
        hs.push_back(thread_enable_join(thread_create11([&] {
            while (!stop) thread_usleep(1000);
        })));
    std::string out;
    ASSERT_EQ(0, metrics::render_prometheus(&out));
    stop = true;
    for (auto h : hs) thread_join(h);
    // Ten default (8 MiB) stacks are out of the slabs, and the slabs hold them.
    EXPECT_GE(photon_test::sample_value(out, "photon_stack_live_bytes "),
              10.0 * 8 * 1024 * 1024 * 0.9)
        << out;
    EXPECT_GE(photon_test::sample_value(out, "photon_stack_slab_mapped_bytes "),
              photon_test::sample_value(out, "photon_stack_live_bytes "));
    EXPECT_GE(photon_test::sample_value(out, "photon_stack_slab_maps_total "), 1);
    EXPECT_GE(photon_test::sample_value(out, "photon_stack_slab_cold_bytes "), 0);
}

}  // namespace
