// rpc-perf: the RPC echo benchmark (photon/rpc/rpc.h over TCP).
//
//   rpc-perf [-mode server] [-ip 127.0.0.1] [-port 9529] [-vcpus 1] [-pool_size 128]
//            [-event_engine epoll|io_uring|default] [-socket_type tcp|io_uring] [-duration 0]
//   rpc-perf -mode client [-ip 127.0.0.1] [-port 9529] [-payload 64] [-conns 100]
//            [-inflight 1] [-vcpus 1] [-warmup 1] [-duration 10] [-server_pid PID] [-verify]
//
// The server registers one operation, Echo (a buffer in, the same bytes out:
// the reply points at the request's received memory), on an rpc::Skeleton
// per vCPU, served from a TCP socket server's handler (SO_REUSEPORT when
// vcpus > 1). The client opens `conns` stubs spread over its vCPUs and keeps
// `inflight` calls going on each (one coroutine per call in flight); each
// reply lands in the caller's buffer. Both print calls per second every
// second. The client measures a window of `duration` seconds after `warmup`
// and prints a summary line with calls/s, latency percentiles, its own CPU
// and, given -server_pid, the server's CPU per call (from /proc, sampled at
// the window's edges). The server runs until SIGINT / SIGTERM (or
// `duration`) and then prints its own summary.
#include <gflags/gflags.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <photon/common/alog.h>
#include <photon/net/socket.h>
#include <photon/photon.h>
#include <photon/rpc/rpc.h>
#include <photon/thread/thread11.h>

#include "load_window.h"
#include "perf_util.h"

DEFINE_string(mode, "server", "server | client");
DEFINE_string(ip, "127.0.0.1", "server address (client), or address to bind (server)");
DEFINE_int32(port, 9529, "server port");
DEFINE_uint64(payload, 64, "client: bytes echoed per call");
DEFINE_uint64(conns, 100, "client: connections (one stub each)");
DEFINE_uint64(inflight, 1, "client: calls in flight per connection");
DEFINE_int32(vcpus, 1, "vCPUs (OS threads); the server listens on each with SO_REUSEPORT");
DEFINE_uint32(pool_size, 128, "server: pooled coroutines per skeleton (new_skeleton)");
DEFINE_string(event_engine, "default", "epoll | io_uring | default (io_uring, else epoll)");
DEFINE_string(socket_type, "tcp", "tcp | io_uring");
DEFINE_uint64(warmup, 1, "client: seconds of load before the measured window");
DEFINE_uint64(duration, 0,
              "client: seconds measured (0 means 10); server: seconds to run, 0 = until a signal");
DEFINE_int64(server_pid, 0, "client: sample this process's CPU time at the window's edges");
DEFINE_uint64(timeout_ms, 10000, "client: per-call timeout");
DEFINE_bool(verify, false, "client: compare every reply with the request, byte by byte");

namespace {

using namespace photon;
using namespace photon::net;
namespace rpc = photon::rpc;

struct RpcPerf {
    const static uint32_t IID = 0x72706366;  // "rpcf"
};

struct Echo : RpcPerf {
    const static uint32_t FID = 1;
    struct Request : rpc::Message {
        rpc::buffer data;
        PROCESS_FIELDS(data);
    };
    struct Response : rpc::Message {
        rpc::buffer data;
        PROCESS_FIELDS(data);
    };
};

// One vCPU's counters: a single writer (its coroutines share one OS thread),
// read by the reporter. Apart, so vCPUs do not share a cache line.
struct alignas(64) vcpu_stats {
    std::atomic<uint64_t> calls{0}, errors{0};
    perf::latency_histogram lat;  // read only after the vCPU stopped

    static void bump(std::atomic<uint64_t>& c) {
        c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
};

std::vector<vcpu_stats> g_stats;
std::atomic<bool> g_stop{false};
std::atomic<bool> g_measuring{false};
bool g_client = false;

uint64_t total(std::atomic<uint64_t> vcpu_stats::*field) {
    uint64_t n = 0;
    for (auto& s : g_stats) n += (s.*field).load(std::memory_order_relaxed);
    return n;
}

struct EchoService {
    vcpu_stats* stats;
    int do_rpc_service(Echo::Request* req, Echo::Response* resp, IOVector*, IStream*) {
        resp->data = req->data;  // the received bytes go back as they lie
        vcpu_stats::bump(stats->calls);
        return 0;
    }
};

int serve_connection(void* sk, ISocketStream* s) { return ((rpc::Skeleton*)sk)->serve(s); }

int serve_on_this_vcpu(int i) {
    std::unique_ptr<rpc::Skeleton> sk(rpc::new_skeleton(FLAGS_pool_size));
    EchoService svc{&g_stats[i]};
    if (!sk || sk->register_service<Echo>(&svc) < 0) return perror("rpc-perf: skeleton"), -1;
    std::unique_ptr<ISocketServer> server(
        FLAGS_socket_type == "io_uring" ? new_iouring_tcp_server() : new_tcp_socket_server());
    if (!server) return perror("rpc-perf: server"), -1;
    if (FLAGS_vcpus > 1) server->setsockopt<int>(SOL_SOCKET, SO_REUSEPORT, 1);
    if (server->bind(EndPoint(IPAddr(FLAGS_ip.c_str()), (uint16_t)FLAGS_port)) < 0 ||
        server->listen(1024) < 0)
        return perror("rpc-perf: bind/listen"), -1;
    server->set_handler({sk.get(), &serve_connection});
    if (server->start_loop(false) < 0) return perror("rpc-perf: start_loop"), -1;
    while (!g_stop.load(std::memory_order_relaxed)) thread_usleep(100 * 1000);
    server->terminate();
    sk->shutdown(true, 1000 * 1000);  // running calls get a second, then are cut
    return 0;
}

// Keeps one call in flight on stub until the run stops or the connection
// breaks. The request and the reply buffer are this coroutine's own.
void call_loop(rpc::Stub* stub, vcpu_stats* st) {
    std::vector<char> out(FLAGS_payload), in(FLAGS_payload);
    for (size_t i = 0; i < out.size(); i++) out[i] = (char)(i * 7 + 1);
    Echo::Request req;
    req.data.assign(out.data(), out.size());
    Echo::Response resp;
    while (!g_stop.load(std::memory_order_relaxed)) {
        resp.data.assign(in.data(), in.size());
        uint64_t t0 = perf::now_ns();
        int r = stub->call<Echo>(req, resp, Timeout(FLAGS_timeout_ms * 1000));
        bool ok = r >= 0 && resp.data.size() == FLAGS_payload &&
                  (!FLAGS_verify || memcmp(resp.data.addr(), out.data(), out.size()) == 0);
        if (!ok) {
            vcpu_stats::bump(st->errors);
            LOG_EVERY_T(1, LOG_ERROR("rpc-perf: call failed ", ERRNO()));
            if (r < 0 && errno == ECONNRESET) return;  // the stub is done for
            continue;
        }
        if (g_measuring.load(std::memory_order_relaxed)) st->lat.add(perf::now_ns() - t0);
        vcpu_stats::bump(st->calls);
    }
}

int run_client(int i, uint64_t nconns) {
    std::unique_ptr<ISocketClient> client(
        FLAGS_socket_type == "io_uring" ? new_iouring_tcp_client() : new_tcp_socket_client());
    if (!client) return perror("rpc-perf: client"), -1;
    EndPoint ep(IPAddr(FLAGS_ip.c_str()), (uint16_t)FLAGS_port);
    std::vector<std::unique_ptr<rpc::Stub>> stubs;
    for (uint64_t k = 0; k < nconns; k++) {
        ISocketStream* s = client->connect(ep);
        if (!s) return perror("rpc-perf: connect"), -1;
        stubs.emplace_back(rpc::new_rpc_stub(s, true));
    }
    std::vector<join_handle*> loops;
    for (auto& stub : stubs)
        for (uint64_t k = 0; k < FLAGS_inflight; k++)
            loops.push_back(
                thread_enable_join(thread_create11(&call_loop, stub.get(), &g_stats[i])));
    for (auto jh : loops) thread_join(jh);
    return 0;
}

// A line a second; the client's window edges. Ends the run when it is over.
void report(perf::window_edge* begin, perf::window_edge* end) {
    uint64_t measured = FLAGS_duration ? FLAGS_duration : 10;
    uint64_t last_n = 0, ticks = 0;
    auto last = perf::now_ns();
    if (g_client && FLAGS_warmup == 0) {
        *begin = perf::window_edge::take(0, FLAGS_server_pid);
        g_measuring = true;
    }
    while (!g_stop.load()) {
        std::this_thread::sleep_for(std::chrono::seconds(1));
        ticks++;
        uint64_t n = total(&vcpu_stats::calls), t = perf::now_ns();
        printf("%s: %.0f calls/s, %llu errors\n", g_client ? "client" : "server",
               (n - last_n) * 1e9 / (t - last), (unsigned long long)total(&vcpu_stats::errors));
        fflush(stdout);
        last_n = n;
        last = t;
        if (g_client && FLAGS_warmup && ticks == FLAGS_warmup) {
            *begin = perf::window_edge::take(n, FLAGS_server_pid);
            g_measuring = true;
        }
        if (g_client && ticks == FLAGS_warmup + measured) {
            g_measuring = false;
            *end = perf::window_edge::take(n, FLAGS_server_pid);
            g_stop = true;
        }
        if (!g_client && FLAGS_duration && ticks >= FLAGS_duration) g_stop = true;
    }
}

void print_summary(const perf::window_edge& begin, const perf::window_edge& end,
                   double server_seconds) {
    printf("rpc-perf summary: role=%s", g_client ? "client" : "server");
    if (g_client)
        printf(" conns=%llu inflight=%llu payload=%llu", (unsigned long long)FLAGS_conns,
               (unsigned long long)FLAGS_inflight, (unsigned long long)FLAGS_payload);
    printf(" vcpus=%d event_engine=%s socket_type=%s errors=%llu", FLAGS_vcpus,
           FLAGS_event_engine.c_str(), FLAGS_socket_type.c_str(),
           (unsigned long long)total(&vcpu_stats::errors));
    if (g_client) {
        perf::latency_histogram lat;
        for (auto& s : g_stats) lat.merge(s.lat);
        printf("%s\n", end.t_ns ? perf::window_fields(begin, end, FLAGS_payload, lat).c_str()
                                : " (stopped before the window ended)");
    } else {
        uint64_t n = total(&vcpu_stats::calls);
        printf(" seconds=%.1f calls=%llu qps=%.0f\n", server_seconds, (unsigned long long)n,
               n / server_seconds);
    }
    fflush(stdout);
}

void on_signal(int) { g_stop = true; }

}  // namespace

int main(int argc, char** argv) {
    gflags::SetUsageMessage("RPC echo benchmark: -mode server, or -mode client");
    gflags::ParseCommandLineFlags(&argc, &argv, true);
    g_client = FLAGS_mode == "client";
    if ((!g_client && FLAGS_mode != "server") || FLAGS_vcpus < 1 || FLAGS_conns == 0 ||
        FLAGS_inflight == 0 || FLAGS_payload == 0 ||
        FLAGS_payload > rpc::DEFAULT_MAX_MESSAGE_SIZE / 2 ||
        (FLAGS_socket_type != "tcp" && FLAGS_socket_type != "io_uring")) {
        fprintf(stderr, "rpc-perf: bad flags (see -help)\n");
        return 2;
    }
    signal(SIGINT, &on_signal);
    signal(SIGTERM, &on_signal);
    signal(SIGPIPE, SIG_IGN);
    set_log_output_level(ALOG_WARN);
    g_stats = std::vector<vcpu_stats>(FLAGS_vcpus);
    perf::window_edge begin, end;
    auto t0 = perf::now_ns();
    std::thread reporter(&report, &begin, &end);
    int r;
    if (g_client) {
        uint64_t per = FLAGS_conns / FLAGS_vcpus;
        r = perf::on_vcpus("rpc-perf", FLAGS_vcpus, perf::engine_flag(FLAGS_event_engine),
                           [per](int i) {
                               uint64_t extra = i == 0 ? FLAGS_conns % FLAGS_vcpus : 0;
                               return run_client(i, per + extra);
                           });
    } else {
        r = perf::on_vcpus("rpc-perf", FLAGS_vcpus, perf::engine_flag(FLAGS_event_engine),
                           [](int i) { return serve_on_this_vcpu(i); });
    }
    g_stop = true;  // a failed side ends the run
    reporter.join();
    print_summary(begin, end, (perf::now_ns() - t0) / 1e9);
    return r < 0 || (g_client && !end.t_ns) ? 1 : 0;
}
