// http-perf: a static-file HTTP(S) server, and a keep-alive load client.
//
//   http-perf [-serve_dir .] [-ip 0.0.0.0] [-port 19876] [-vcpu_num 1]
//             [-socket_type tcp|et|io_uring] [-event_engine epoll|io_uring|default]
//             [-cert server.pem -key server.key] [-duration 0]
//   http-perf -client -url http://127.0.0.1:19876/4k.bin
//             [-client_connection_num 100] [-vcpu_num 1] [-duration 10]
//
// The server is new_http_server() + new_fs_handler() over a localfs rooted at
// serve_dir, on each of vcpu_num vCPUs (SO_REUSEPORT); with -cert/-key it
// speaks HTTPS. The client runs client_connection_num coroutines, each
// looping GET url and reading the body through one keep-alive pooled
// connection. Both print requests per second every second and a summary
// line when `duration` seconds are up (0: until SIGINT / SIGTERM).
#include <gflags/gflags.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <photon/common/alog.h>
#include <photon/fs/localfs.h>
#include <photon/io/fd-events.h>
#include <photon/net/http/client.h>
#include <photon/net/http/server.h>
#include <photon/net/security-context/tls-stream.h>
#include <photon/net/socket.h>
#include <photon/photon.h>
#include <photon/thread/thread11.h>

#include "perf_util.h"

DEFINE_bool(client, false, "run the load client (default: the server)");
DEFINE_string(serve_dir, ".", "server: directory to serve");
DEFINE_string(ip, "0.0.0.0", "server: address to bind");
DEFINE_int32(port, 19876, "server: port");
DEFINE_string(cert, "", "server: PEM certificate file (with -key: HTTPS)");
DEFINE_string(key, "", "server: PEM private key file");
DEFINE_string(url, "http://127.0.0.1:19876/", "client: URL to GET");
DEFINE_uint64(client_connection_num, 100, "client: concurrent keep-alive connections");
DEFINE_int32(vcpu_num, 1, "vCPUs (OS threads); the server listens on each with SO_REUSEPORT");
DEFINE_string(socket_type, "tcp", "server: tcp | et (both edge-triggered TCP) | io_uring");
DEFINE_string(event_engine, "default", "epoll | io_uring | default (io_uring, else epoll)");
DEFINE_uint64(duration, 0, "seconds to run, then print a summary and exit; 0 = until a signal");

namespace {

using namespace photon;
using namespace photon::net;
using clock_type = std::chrono::steady_clock;

std::atomic<uint64_t> g_requests{0};
std::atomic<uint64_t> g_bytes{0};
std::atomic<uint64_t> g_errors{0};
std::atomic<bool> g_stop{false};

ISocketServer* new_server() {
    if (FLAGS_socket_type == "io_uring") return new_iouring_tcp_server();
    return new_tcp_socket_server();
}

int serve_on_this_vcpu(bool reuseport) {
    std::unique_ptr<fs::IFileSystem> fs(
        fs::new_localfs_adaptor(FLAGS_serve_dir.c_str(), fs::ioengine_psync));
    if (!fs) return perror("http-perf: serve_dir"), -1;
    std::unique_ptr<http::HTTPServer> http(http::new_http_server());
    http->add_handler(http::new_fs_handler(fs.get()), true, "/");
    std::unique_ptr<ISocketServer> tcp(new_server());
    if (!tcp) return perror("http-perf: server"), -1;
    std::unique_ptr<TLSContext> tls;
    std::unique_ptr<ISocketServer> server;
    if (!FLAGS_cert.empty()) {
        tls.reset(new_tls_context_from_files(FLAGS_cert.c_str(), FLAGS_key.c_str()));
        if (!tls) return perror("http-perf: TLS context"), -1;
        server.reset(new_tls_server(tls.get(), tcp.release(), true));
    } else {
        server = std::move(tcp);
    }
    if (reuseport) server->setsockopt<int>(SOL_SOCKET, SO_REUSEPORT, 1);
    if (server->bind(EndPoint(IPAddr(FLAGS_ip.c_str()), (uint16_t)FLAGS_port)) < 0 ||
        server->listen(1024) < 0)
        return perror("http-perf: bind/listen"), -1;
    server->set_handler(http->get_connection_handler());
    if (server->start_loop(false) < 0) return -1;
    while (!g_stop.load(std::memory_order_relaxed)) thread_usleep(100 * 1000);
    server->terminate();
    http->stop(1000 * 1000);
    return 0;
}

// Counts locally and publishes in batches, as net-perf does.
struct counter {
    uint64_t n = 0, bytes = 0;
    void add(uint64_t b) {
        bytes += b;
        if (++n == 64) flush();
    }
    void flush() {
        g_requests.fetch_add(n, std::memory_order_relaxed);
        g_bytes.fetch_add(bytes, std::memory_order_relaxed);
        n = bytes = 0;
    }
};

void load_connection(http::Client* client) {
    std::unique_ptr<char[]> buf(new char[64 * 1024]);
    counter c;
    while (!g_stop.load(std::memory_order_relaxed)) {
        auto op = client->new_operation(http::Verb::GET, FLAGS_url);
        uint64_t got = 0;
        bool ok = op->call() == 0 && op->status_code / 100 == 2;
        for (ssize_t n; ok && (n = op->resp.read(buf.get(), 64 * 1024)) != 0; got += n)
            if (n < 0) ok = false;
        client->destroy_operation(op);
        if (!ok) {
            g_errors++;
            thread_usleep(10 * 1000);  // don't spin on a server that is down
            continue;
        }
        c.add(got);
    }
    c.flush();
}

int run_connections(uint64_t n) {
    std::unique_ptr<http::Client> client(http::new_http_client());
    if (!client) return perror("http-perf: client"), -1;
    std::vector<join_handle*> conns;
    for (uint64_t i = 0; i < n; i++)
        conns.push_back(
            thread_enable_join(thread_create11([&] { load_connection(client.get()); })));
    for (auto jh : conns) thread_join(jh);
    return 0;
}

// Prints a line a second (client) and the summary; stops everything at the end.
void report() {
    auto t0 = clock_type::now(), last = t0;
    uint64_t last_n = 0;
    while (!g_stop.load()) {
        std::this_thread::sleep_for(std::chrono::seconds(1));
        auto t = clock_type::now();
        uint64_t n = g_requests.load(std::memory_order_relaxed);
        double s = std::chrono::duration<double>(t - last).count();
        if (FLAGS_client) {
            printf("client: %.0f req/s, %llu errors\n", (n - last_n) / s,
                   (unsigned long long)g_errors.load());
            fflush(stdout);
        }
        last = t;
        last_n = n;
        double total = std::chrono::duration<double>(t - t0).count();
        if (FLAGS_duration && total >= FLAGS_duration) g_stop = true;
    }
    if (!FLAGS_client) return;
    double total = std::chrono::duration<double>(clock_type::now() - t0).count();
    uint64_t n = g_requests.load();
    printf(
        "http-perf summary: url=%s connections=%llu vcpus=%d event_engine=%s seconds=%.1f "
        "requests=%llu errors=%llu qps=%.0f MiB/s=%.2f\n",
        FLAGS_url.c_str(), (unsigned long long)FLAGS_client_connection_num, FLAGS_vcpu_num,
        FLAGS_event_engine.c_str(), total, (unsigned long long)n,
        (unsigned long long)g_errors.load(), n / total, g_bytes.load() / total / (1 << 20));
    fflush(stdout);
}

void on_signal(int) { g_stop = true; }

}  // namespace

int main(int argc, char** argv) {
    gflags::SetUsageMessage("static-file HTTP(S) server, or -client load generator");
    gflags::ParseCommandLineFlags(&argc, &argv, true);
    if (FLAGS_vcpu_num < 1 || FLAGS_client_connection_num == 0 ||
        FLAGS_cert.empty() != FLAGS_key.empty()) {
        fprintf(stderr, "http-perf: bad flags (see -help)\n");
        return 2;
    }
    signal(SIGINT, &on_signal);
    signal(SIGTERM, &on_signal);
    signal(SIGPIPE, SIG_IGN);
    set_log_output_level(ALOG_INFO);  // no per-request debug lines (a 404's open failure)
    std::thread reporter(&report);
    int r;
    if (FLAGS_client) {
        uint64_t per = FLAGS_client_connection_num / FLAGS_vcpu_num;
        r = perf::on_vcpus(
            "http-perf", FLAGS_vcpu_num, perf::engine_flag(FLAGS_event_engine), [per](int i) {
                uint64_t extra = i == 0 ? FLAGS_client_connection_num % FLAGS_vcpu_num : 0;
                return run_connections(per + extra);
            });
    } else {
        fprintf(stderr, "http-perf: serving %s on %s:%d%s\n", FLAGS_serve_dir.c_str(),
                FLAGS_ip.c_str(), FLAGS_port, FLAGS_cert.empty() ? "" : " (HTTPS)");
        r = perf::on_vcpus("http-perf", FLAGS_vcpu_num, perf::engine_flag(FLAGS_event_engine),
                           [](int) { return serve_on_this_vcpu(FLAGS_vcpu_num > 1); });
    }
    g_stop = true;  // a failed side ends the run
    reporter.join();
    return r < 0 ? 1 : 0;
}
