// steal-perf: work stealing under skewed and balanced load.
//
//   steal-perf [--vcpus V] [--rate R] [--work-us W] [--seconds S] [--rounds N]
//              [--only open|closed]
//
// open    Tasks of W µs of computation arrive at R per second in all, for S seconds, each at
//         its due time (an open loop: latency counts from the due time, so a late producer
//         shows). Balanced: every vCPU produces 1/V of them; skewed: vCPU 0 produces all.
//         Each with work stealing off and on (every vCPU active and passive, tasks stealable):
//         completions per second, latency p50 / p99 / max.
// closed  Every vCPU runs batches of 64 tasks back to back for S seconds (balanced and
//         saturated): tasks per second with stealing off and on.
//
// Defaults: 4 vCPUs, 60,000 tasks/s of 20 µs (1.2 cores of work), 3 s, 3 rounds; medians and
// ranges are printed. See doc/performance.md.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <photon/photon.h>
#include <photon/thread/slow_turn.h>
#include <photon/thread/thread.h>

#include "perf_util.h"

namespace {

struct config {
    int vcpus = 4;
    double rate = 60000;
    int work_us = 20;
    double seconds = 3;
    int rounds = 3;
    std::string only;
};

uint64_t now_ns() {
    return (uint64_t)std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// Computation of a fixed size (not a time: a task preempted by the OS still owes its work).
volatile uint64_t g_sink;
uint64_t g_loops_per_us = 1, g_work_loops = 1;  // a task's work: work_us of loops

__attribute__((noinline)) void compute(uint64_t loops) {
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    for (uint64_t i = 0; i < loops; i++) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    g_sink = x;
}

void calibrate() {
    uint64_t loops = 1 << 20, best = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t t0 = now_ns();
        compute(loops);
        best = std::min(best, now_ns() - t0);
    }
    g_loops_per_us = std::max<uint64_t>(1, loops * 1000 / best);
}

struct task_slot {
    uint64_t due;
    photon::vcpu_base* from;  // the producer's vCPU
    uint32_t latency_us;
    bool moved;  // ran on another vCPU
};

// One run: body(index) on V vCPUs (perf::on_vcpus), with work stealing on every one or none;
// photon::fini then waits for whatever a vCPU still runs, stolen work included.
template <typename Body>
void run_vcpus(int n, bool stealing, Body body) {
    photon::PhotonOptions opt;
    if (stealing)
        opt.vcpu_flags =
            photon::VCPU_ENABLE_ACTIVE_WORK_STEALING | photon::VCPU_ENABLE_PASSIVE_WORK_STEALING;
    auto run = [&](int i) {
        body(i);
        return 0;
    };
    if (perf::on_vcpus("steal-perf", n, photon::INIT_EVENT_EPOLL, run, opt) < 0) exit(1);
}

struct open_result {
    double per_sec, p50_us, p99_us, max_us;
    double moved_share, p99_stayed_us, p99_moved_us;  // tasks that ran on another vCPU
};

std::vector<task_slot> g_slots;
std::atomic<uint64_t> g_done, g_last_done;

void* open_task(void* arg) {
    auto s = static_cast<task_slot*>(arg);
    compute(g_work_loops);
    uint64_t t = now_ns();
    s->latency_us = (uint32_t)std::min<uint64_t>((t - s->due) / 1000, UINT32_MAX);
    s->moved = photon::get_vcpu() != s->from;
    g_done++;
    uint64_t last = g_last_done.load();
    while (t > last && !g_last_done.compare_exchange_weak(last, t)) {
    }
    return nullptr;
}

open_result run_open(const config& c, bool skewed, bool stealing) {
    size_t total = (size_t)(c.rate * c.seconds);
    g_slots.assign(total, task_slot{0, nullptr, 0, false});
    g_done = 0;
    g_last_done = 0;
    uint64_t gap_ns = (uint64_t)(1e9 / c.rate);
    uint64_t t0 = now_ns() + 20 * 1000 * 1000;  // every vCPU is up by then
    uint64_t flags = stealing ? photon::THREAD_ENABLE_WORK_STEALING : 0;
    run_vcpus(c.vcpus, stealing, [&](int index) {
        int producers = skewed ? 1 : c.vcpus;
        // Task k belongs to producer k % producers and is due at t0 + k * gap.
        for (size_t k = index; index < producers && k < total;) {
            uint64_t t = now_ns();
            for (; k < total && t0 + k * gap_ns <= t; k += producers) {
                g_slots[k].due = t0 + k * gap_ns;
                g_slots[k].from = photon::get_vcpu();
                if (!photon::thread_create(&open_task, &g_slots[k], 64 * 1024, 0, flags)) {
                    perror("thread_create");
                    exit(1);
                }
            }
            if (k < total) {
                uint64_t due = t0 + k * gap_ns;
                photon::thread_usleep(due > t ? (due - t) / 1000 : 0);
            }
        }
        // Every vCPU stays up (and may take work) until all tasks are done.
        while (g_done < total) photon::thread_usleep(1000);
    });
    std::vector<uint32_t> lat(total), stayed, moved;
    for (size_t i = 0; i < total; i++) {
        lat[i] = g_slots[i].latency_us;
        (g_slots[i].moved ? moved : stayed).push_back(lat[i]);
    }
    std::sort(lat.begin(), lat.end());
    std::sort(stayed.begin(), stayed.end());
    std::sort(moved.begin(), moved.end());
    open_result r;
    r.moved_share = double(moved.size()) / double(total);
    r.p99_stayed_us = stayed.empty() ? 0 : stayed[stayed.size() * 99 / 100];
    r.p99_moved_us = moved.empty() ? 0 : moved[moved.size() * 99 / 100];
    r.per_sec = double(g_done) / (double(g_last_done - t0) / 1e9);
    r.p50_us = lat[total / 2];
    r.p99_us = lat[total * 99 / 100];
    r.max_us = lat[total - 1];
    return r;
}

void* closed_task(void*) {
    compute(g_work_loops);
    return nullptr;
}

// Tasks per second, every vCPU running batches of 64 until the time is up.
double run_closed(const config& c, bool stealing) {
    std::atomic<uint64_t> done{0};
    uint64_t flags = photon::THREAD_JOINABLE | (stealing ? photon::THREAD_ENABLE_WORK_STEALING : 0);
    uint64_t t0 = now_ns() + 20 * 1000 * 1000, end = t0 + (uint64_t)(c.seconds * 1e9);
    run_vcpus(c.vcpus, stealing, [&](int) {
        while (now_ns() < t0) photon::thread_usleep(1000);
        photon::join_handle* jh[64];
        uint64_t n = 0;
        while (now_ns() < end) {
            for (auto& h : jh)
                h = photon::thread_enable_join(
                    photon::thread_create(&closed_task, nullptr, 64 * 1024, 0, flags));
            for (auto h : jh) photon::thread_join(h);
            n += 64;
        }
        done += n;
    });
    return double(done) / (double(now_ns() - t0) / 1e9);
}

template <typename T>
void print_range(const char* what, std::vector<T> v, const char* unit) {
    std::sort(v.begin(), v.end());
    printf("  %-10s median %10.1f %s (%.1f-%.1f)\n", what, double(v[v.size() / 2]), unit,
           double(v.front()), double(v.back()));
}

void open_case(const config& c, bool skewed, bool stealing) {
    std::vector<double> rate, p50, p99, mx, share, p99s, p99m;
    for (int i = 0; i < c.rounds; i++) {
        auto r = run_open(c, skewed, stealing);
        rate.push_back(r.per_sec);
        p50.push_back(r.p50_us);
        p99.push_back(r.p99_us);
        mx.push_back(r.max_us);
        share.push_back(r.moved_share * 100);
        p99s.push_back(r.p99_stayed_us);
        p99m.push_back(r.p99_moved_us);
    }
    printf("open, %s, stealing %s:\n", skewed ? "skewed" : "balanced", stealing ? "on" : "off");
    print_range("tasks/s", rate, "");
    print_range("p50", p50, "us");
    print_range("p99", p99, "us");
    print_range("max", mx, "us");
    if (stealing) {
        print_range("moved", share, "%");
        print_range("p99 stay", p99s, "us");
        print_range("p99 moved", p99m, "us");
    }
    fflush(stdout);
}

void closed_case(const config& c, bool stealing) {
    std::vector<double> rate;
    for (int i = 0; i < c.rounds; i++) rate.push_back(run_closed(c, stealing));
    printf("closed, balanced, stealing %s:\n", stealing ? "on" : "off");
    print_range("tasks/s", rate, "");
    fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    config c;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string k = argv[i];
        const char* v = argv[i + 1];
        if (k == "--vcpus")
            c.vcpus = atoi(v);
        else if (k == "--rate")
            c.rate = atof(v);
        else if (k == "--work-us")
            c.work_us = atoi(v);
        else if (k == "--seconds")
            c.seconds = atof(v);
        else if (k == "--rounds")
            c.rounds = atoi(v);
        else if (k == "--only")
            c.only = v;
        else {
            fprintf(stderr,
                    "usage: %s [--vcpus V] [--rate R] [--work-us W] [--seconds S] [--rounds N] "
                    "[--only open|closed]\n",
                    argv[0]);
            return 2;
        }
    }
    if (c.vcpus < 1 || c.rate <= 0 || c.work_us < 1 || c.seconds <= 0 || c.rounds < 1) {
        fprintf(stderr, "steal-perf: every figure must be positive\n");
        return 2;
    }
    // More vCPUs than cores: the OS preempts them mid-turn, which the slow-turn detector would
    // report as coroutines that hold their vCPU.
    photon::SlowTurnOptions quiet;
    quiet.threshold_us = 0;
    photon::set_slow_turn_options(quiet);
    calibrate();
    g_work_loops = g_loops_per_us * (uint64_t)c.work_us;
    printf("steal-perf: %d vCPUs on %u cores, tasks of %d us (%lu loops), %.0f s, %d rounds\n",
           c.vcpus, std::thread::hardware_concurrency(), c.work_us, (unsigned long)g_work_loops,
           c.seconds, c.rounds);
    if (c.only.empty() || c.only == "open") {
        printf("open loop: %.0f tasks/s in all (%.2f cores of work)\n", c.rate,
               c.rate * c.work_us / 1e6);
        for (bool skewed : {false, true})
            for (bool stealing : {false, true}) open_case(c, skewed, stealing);
    }
    if (c.only.empty() || c.only == "closed")
        for (bool stealing : {false, true}) closed_case(c, stealing);
    return 0;
}
