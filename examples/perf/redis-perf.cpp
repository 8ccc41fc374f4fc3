// redis-perf: a Redis load generator on photon's pipelined client
// (<photon/ecosystem/redis.h>), the counterpart of redis-benchmark in tools/redis-bench.py.
//
//   redis-perf [-ip 127.0.0.1] [-port 6379] [-op get|set|fill] [-conns 50] [-pipeline 16]
//              [-payload 64] [-keyspace 100000] [-vcpus 1] [-warmup 1] [-duration 10]
//              [-server_pid PID] [-event_engine epoll|io_uring|default] [-timeout_ms 10000]
//              [-batch 0]
//
// `conns` pipelined_clients (one connection each) spread over the vCPUs; `pipeline`
// coroutines per connection, each with one call in flight, so up to `pipeline` commands
// per connection travel together (the client's group commit), as redis-benchmark -P does.
// With -batch N: pipeline / N coroutines per connection (at least one), each sending
// batches of N commands (pipelined_client::commands(), one wake-up per batch); -batch 16
// -pipeline 16 is redis-benchmark -P 16's own pattern. Latency is then per batch.
// get: GET of a random key "key:%012d" below `keyspace` (a hit must bring `payload` bytes);
// set: SET of such a key to `payload` bytes. fill: SET of every key once, then exit (run it
// before get). The keys are redis-benchmark's with -r keyspace. Prints calls per second every
// second, then a summary line over a window of `duration` s after `warmup` s: calls/s,
// latency percentiles, its own CPU and, given -server_pid, the server's CPU per call.
#include <gflags/gflags.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <photon/common/alog.h>
#include <photon/ecosystem/redis.h>
#include <photon/photon.h>
#include <photon/thread/thread11.h>

#include "load_window.h"
#include "perf_util.h"

DEFINE_string(ip, "127.0.0.1", "redis-server address");
DEFINE_int32(port, 6379, "redis-server port");
DEFINE_string(op, "get", "get | set | fill");
DEFINE_uint64(conns, 50, "connections (one pipelined_client each)");
DEFINE_uint64(pipeline, 16, "calls in flight per connection (one coroutine each)");
DEFINE_uint64(payload, 64, "value bytes");
DEFINE_uint64(keyspace, 100000, "keys key:000000000000 .. keyspace-1");
DEFINE_int32(vcpus, 1, "vCPUs (OS threads); connections are spread over them");
DEFINE_string(event_engine, "default", "epoll | io_uring | default (io_uring, else epoll)");
DEFINE_uint64(warmup, 1, "seconds of load before the measured window");
DEFINE_uint64(duration, 10, "seconds measured");
DEFINE_int64(server_pid, 0, "sample this process's CPU time at the window's edges");
DEFINE_uint64(timeout_ms, 10000, "per-call timeout");
DEFINE_uint64(batch, 0, "commands per commands() call (0: one command() per call)");

namespace {

using namespace photon;
namespace redis = photon::redis;

struct alignas(64) vcpu_stats {
    std::atomic<uint64_t> calls{0}, errors{0}, misses{0};
    perf::latency_histogram lat;  // read only after the vCPU stopped

    static void bump(std::atomic<uint64_t>& c) {
        c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
    static void add(std::atomic<uint64_t>& c, uint64_t n) {
        c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    }
};

std::vector<vcpu_stats> g_stats;
std::atomic<bool> g_stop{false};
std::atomic<bool> g_measuring{false};
std::atomic<uint64_t> g_fill_next{0};
std::string g_value;

uint64_t total(std::atomic<uint64_t> vcpu_stats::*field) {
    uint64_t n = 0;
    for (auto& s : g_stats) n += (s.*field).load(std::memory_order_relaxed);
    return n;
}

// "key:" and 12 digits, as redis-benchmark's __rand_int__.
void format_key(char* k, uint64_t n) {
    memcpy(k, "key:", 4);
    for (int i = 15; i >= 4; i--) k[i] = char('0' + n % 10), n /= 10;
}

uint64_t next_random(uint64_t* s) {  // xorshift64*
    *s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}

// The next key, or false once a fill has given out every key.
bool next_key(bool fill, uint64_t* rnd, uint64_t* n) {
    if (!fill) {
        *n = next_random(rnd) % FLAGS_keyspace;
        return true;
    }
    *n = g_fill_next++;
    return *n < FLAGS_keyspace;
}

// Counts one reply: a hit or stored value, a miss (GET of a key not filled), or an error.
void count_reply(vcpu_stats* st, bool get, const redis::reply& r) {
    bool ok = get ? (r.type == redis::reply::STRING && r.str.size() == FLAGS_payload) : r.ok();
    if (ok) return;
    if (get && r.is_nil()) return vcpu_stats::bump(st->misses);
    vcpu_stats::bump(st->errors);
    LOG_EVERY_T(1, LOG_ERROR("redis-perf: bad reply: type=` `", (int)r.type, r.str.c_str()));
}

void batch_loop(redis::pipelined_client* c, vcpu_stats* st, uint64_t seed) {
    std::vector<char> keys(FLAGS_batch * 16);
    std::vector<redis::reply> out(FLAGS_batch);
    redis::command_batch b;
    std::string_view v(g_value);
    bool get = FLAGS_op == "get", fill = FLAGS_op == "fill";
    uint64_t rnd = seed * 0x9E3779B97F4A7C15ULL + 1;
    uint64_t timeout = FLAGS_timeout_ms * 1000;
    while (!g_stop.load(std::memory_order_relaxed)) {
        b.clear();
        uint64_t n;
        for (uint64_t i = 0; i < FLAGS_batch && next_key(fill, &rnd, &n); i++) {
            char* key = &keys[i * 16];
            format_key(key, n);
            std::string_view k(key, 16);
            get ? b.add({"GET", k}) : b.add({"SET", k, v});
        }
        if (b.empty()) return;
        uint64_t t0 = perf::now_ns();
        if (c->commands(b, out.data(), timeout) < 0) {
            vcpu_stats::add(st->errors, b.size());
            LOG_EVERY_T(1, LOG_ERROR("redis-perf: batch failed: `", ERRNO()));
            if (errno == ECONNREFUSED) return;
        } else {
            for (size_t i = 0; i < b.size(); i++) count_reply(st, get, out[i]);
        }
        if (g_measuring.load(std::memory_order_relaxed)) st->lat.add(perf::now_ns() - t0);
        vcpu_stats::add(st->calls, b.size());
    }
}

void call_loop(redis::pipelined_client* c, vcpu_stats* st, uint64_t seed) {
    char key[16];
    std::string_view k(key, sizeof(key)), v(g_value);
    bool get = FLAGS_op == "get", fill = FLAGS_op == "fill";
    redis::reply r;
    uint64_t rnd = seed * 0x9E3779B97F4A7C15ULL + 1;
    uint64_t timeout = FLAGS_timeout_ms * 1000;
    while (!g_stop.load(std::memory_order_relaxed)) {
        uint64_t n;
        if (!next_key(fill, &rnd, &n)) return;
        format_key(key, n);
        uint64_t t0 = perf::now_ns();
        int ret =
            get ? c->command({"GET", k}, &r, timeout) : c->command({"SET", k, v}, &r, timeout);
        if (ret < 0) {
            vcpu_stats::bump(st->errors);
            LOG_EVERY_T(1, LOG_ERROR("redis-perf: call failed: `", ERRNO()));
            if (errno == ECONNREFUSED) return;
        } else {
            count_reply(st, get, r);
        }
        if (g_measuring.load(std::memory_order_relaxed)) st->lat.add(perf::now_ns() - t0);
        vcpu_stats::bump(st->calls);
    }
}

int run_client(int i, uint64_t nconns) {
    redis::client_options o;
    o.host = FLAGS_ip;
    o.port = (uint16_t)FLAGS_port;
    o.timeout_us = FLAGS_timeout_ms * 1000;
    std::vector<std::unique_ptr<redis::pipelined_client>> clients;
    for (uint64_t k = 0; k < nconns; k++) {
        clients.emplace_back(redis::new_pipelined_client(o));
        if (!clients.back()) return perror("redis-perf: client"), -1;
        redis::reply r;
        if (clients.back()->command({"PING"}, &r) < 0)  // connect before the load starts
            return perror("redis-perf: connect"), -1;
    }
    std::vector<join_handle*> loops;
    uint64_t seed = (uint64_t)i << 32;
    uint64_t per_conn =
        FLAGS_batch ? std::max<uint64_t>(1, FLAGS_pipeline / FLAGS_batch) : FLAGS_pipeline;
    auto loop = FLAGS_batch ? &batch_loop : &call_loop;
    for (auto& c : clients)
        for (uint64_t k = 0; k < per_conn; k++)
            loops.push_back(
                thread_enable_join(thread_create11(loop, c.get(), &g_stats[i], ++seed)));
    for (auto jh : loops) thread_join(jh);
    return 0;
}

// A line a second; the window's edges. Ends the run when it is over.
void report(perf::window_edge* begin, perf::window_edge* end) {
    uint64_t last_n = 0, ticks = 0;
    auto last = perf::now_ns();
    if (FLAGS_warmup == 0) {
        *begin = perf::window_edge::take(0, FLAGS_server_pid);
        g_measuring = true;
    }
    while (!g_stop.load()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(FLAGS_op == "fill" ? 10 : 1000));
        if (FLAGS_op == "fill") continue;
        ticks++;
        uint64_t n = total(&vcpu_stats::calls), t = perf::now_ns();
        printf("client: %.0f calls/s, %llu errors\n", (n - last_n) * 1e9 / (t - last),
               (unsigned long long)total(&vcpu_stats::errors));
        fflush(stdout);
        last_n = n, last = t;
        if (FLAGS_warmup && ticks == FLAGS_warmup) {
            *begin = perf::window_edge::take(n, FLAGS_server_pid);
            g_measuring = true;
        }
        if (ticks == FLAGS_warmup + FLAGS_duration) {
            g_measuring = false;
            *end = perf::window_edge::take(n, FLAGS_server_pid);
            g_stop = true;
        }
    }
}

void on_signal(int) { g_stop = true; }

}  // namespace

int main(int argc, char** argv) {
    gflags::SetUsageMessage("Redis GET/SET load on photon's pipelined client");
    gflags::ParseCommandLineFlags(&argc, &argv, true);
    if ((FLAGS_op != "get" && FLAGS_op != "set" && FLAGS_op != "fill") || FLAGS_vcpus < 1 ||
        FLAGS_conns < (uint64_t)FLAGS_vcpus || FLAGS_pipeline == 0 || FLAGS_keyspace == 0 ||
        FLAGS_keyspace > 1000000000000ULL || FLAGS_duration == 0) {
        fprintf(stderr, "redis-perf: bad flags (see -help)\n");
        return 2;
    }
    signal(SIGINT, &on_signal);
    signal(SIGTERM, &on_signal);
    signal(SIGPIPE, SIG_IGN);
    set_log_output_level(ALOG_WARN);
    g_value.assign(FLAGS_payload, 'x');
    g_stats = std::vector<vcpu_stats>(FLAGS_vcpus);
    perf::window_edge begin, end;
    auto t0 = perf::now_ns();
    std::thread reporter(&report, &begin, &end);
    uint64_t per = FLAGS_conns / FLAGS_vcpus;
    int r = perf::on_vcpus("redis-perf", FLAGS_vcpus, perf::engine_flag(FLAGS_event_engine),
                           [per](int i) {
                               uint64_t extra = i == 0 ? FLAGS_conns % FLAGS_vcpus : 0;
                               return run_client(i, per + extra);
                           });
    g_stop = true;
    reporter.join();
    printf(
        "redis-perf summary: op=%s conns=%llu pipeline=%llu batch=%llu payload=%llu vcpus=%d "
        "event_engine=%s errors=%llu misses=%llu",
        FLAGS_op.c_str(), (unsigned long long)FLAGS_conns, (unsigned long long)FLAGS_pipeline,
        (unsigned long long)FLAGS_batch, (unsigned long long)FLAGS_payload, FLAGS_vcpus,
        FLAGS_event_engine.c_str(), (unsigned long long)total(&vcpu_stats::errors),
        (unsigned long long)total(&vcpu_stats::misses));
    if (FLAGS_op == "fill") {
        uint64_t n = total(&vcpu_stats::calls);
        double s = (perf::now_ns() - t0) / 1e9;
        printf(" seconds=%.2f calls=%llu qps=%.0f\n", s, (unsigned long long)n, n / s);
        fflush(stdout);
        return r < 0 || total(&vcpu_stats::errors) ? 1 : 0;
    }
    perf::latency_histogram lat;
    for (auto& s : g_stats) lat.merge(s.lat);
    printf("%s\n", end.t_ns ? perf::window_fields(begin, end, FLAGS_payload, lat).c_str()
                            : " (stopped before the window ended)");
    fflush(stdout);
    return r < 0 || !end.t_ns ? 1 : 0;
}
