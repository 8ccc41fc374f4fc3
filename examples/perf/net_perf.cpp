// net-perf: the TCP echo benchmark, with PhotonLibOS's flags.
//
//   net-perf [-port 9527] [-vcpu_num 1] [-socket_type tcp|et|io_uring]
//            [-event_engine epoll|io_uring|default] [-buf_size 512] [-duration 0]
//   net-perf -client [-client_mode streaming|ping-pong] [-client_connection_num 100]
//            [-ip 127.0.0.1] [-port 9527] [-buf_size 512] [-duration 10]
//            [-stream_window_kib 256]
//
// The server echoes what it receives (one recv of up to buf_size, then a
// write of it) on each of vcpu_num vCPUs (SO_REUSEPORT). The client opens
// the connections and either streams (a writer and a reader coroutine per
// connection, the writer at most stream_window_kib ahead of what came back)
// or plays ping-pong (write one buffer, read it back). Both
// print messages per second and bandwidth every second, and a summary line
// when `duration` seconds are up (0: run until SIGINT / SIGTERM).
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

#include <photon/io/fd-events.h>
#include <photon/net/socket.h>
#include <photon/photon.h>
#include <photon/thread/semaphore.h>
#include <photon/thread/thread11.h>

#include "perf_util.h"

DEFINE_bool(client, false, "run the client (default: the server)");
DEFINE_string(client_mode, "streaming", "streaming | ping-pong (or pingpong)");
DEFINE_uint64(client_connection_num, 100, "client connections");
DEFINE_string(ip, "127.0.0.1", "server address (client), or address to bind (server)");
DEFINE_int32(port, 9527, "server port");
DEFINE_uint64(buf_size, 512, "bytes per message");
DEFINE_int32(vcpu_num, 1, "vCPUs (OS threads); the server listens on each with SO_REUSEPORT");
DEFINE_string(socket_type, "tcp", "tcp | et (both edge-triggered TCP) | io_uring");
DEFINE_string(event_engine, "default", "epoll | io_uring | default (io_uring, else epoll)");
DEFINE_uint64(duration, 0, "seconds to run, then print a summary and exit; 0 = until a signal");
DEFINE_uint64(stream_window_kib, 256,
              "streaming: KiB a connection's writer may be ahead of its reader (at least one "
              "message); bounds what is still in flight when the client stops");

namespace {

using namespace photon;
using namespace photon::net;
using clock_type = std::chrono::steady_clock;

std::atomic<uint64_t> g_messages{0};
std::atomic<bool> g_stop{false};

ISocketServer* new_server() {
    if (FLAGS_socket_type == "io_uring") return new_iouring_tcp_server();
    return new_tcp_socket_server();
}

ISocketClient* new_client() {
    if (FLAGS_socket_type == "io_uring") return new_iouring_tcp_client();
    return new_tcp_socket_client();
}

// Counts locally and publishes in batches: one shared atomic per message
// would cost more than the echo on a many-vCPU server.
struct counter {
    uint64_t n = 0;
    void add() {
        if (++n == 64) flush();
    }
    void flush() {
        g_messages.fetch_add(n, std::memory_order_relaxed);
        n = 0;
    }
};

int echo(void*, ISocketStream* s) {
    std::unique_ptr<char[]> buf(new char[FLAGS_buf_size]);
    counter c;
    while (true) {
        ssize_t n = s->recv(buf.get(), FLAGS_buf_size);
        if (n <= 0 || s->write(buf.get(), n) != n) break;
        c.add();
    }
    c.flush();
    return 0;
}

int serve_on_this_vcpu(bool reuseport) {
    std::unique_ptr<ISocketServer> server(new_server());
    if (!server) return perror("net-perf: server"), -1;
    if (reuseport) server->setsockopt<int>(SOL_SOCKET, SO_REUSEPORT, 1);
    if (server->bind(EndPoint(IPAddr(FLAGS_ip.c_str()), (uint16_t)FLAGS_port)) < 0 ||
        server->listen(1024) < 0)
        return perror("net-perf: bind/listen"), -1;
    server->set_handler({nullptr, &echo});
    if (server->start_loop(false) < 0) return -1;
    while (!g_stop.load(std::memory_order_relaxed)) thread_usleep(100 * 1000);
    server->terminate();
    return 0;
}

// The writer sends while it has credit (one message each); the reader gives a credit back for
// each message echoed. Without the window, the socket buffers of 100 connections held seconds of
// echoes: the client had stopped, and the server was still echoing them.
void stream_connection(ISocketStream* s) {
    std::unique_ptr<char[]> out(new char[FLAGS_buf_size]());
    uint64_t window = std::max<uint64_t>(2, (FLAGS_stream_window_kib << 10) / FLAGS_buf_size);
    photon::semaphore credits(0);
    bool reading = true;
    auto writer = thread_enable_join(thread_create11([&] {
        // Out of credit, it waits for half a window back at once: a wake-up per message
        // (the writer and the reader taking turns) halved the throughput.
        uint64_t have = window;
        while (!g_stop.load(std::memory_order_relaxed) && reading) {
            if (have == 0) {
                if (credits.wait(window / 2, 100 * 1000) < 0) continue;  // (the flags again)
                have = window / 2;
            }
            if (s->write(out.get(), FLAGS_buf_size) != (ssize_t)FLAGS_buf_size) break;
            have--;
        }
        s->shutdown(ShutdownHow::Write);  // the server echoes what is in flight, then closes
    }));
    std::unique_ptr<char[]> in(new char[FLAGS_buf_size]);
    counter c;
    while (s->read(in.get(), FLAGS_buf_size) == (ssize_t)FLAGS_buf_size) {
        c.add();
        credits.signal(1);
    }
    reading = false;
    c.flush();
    thread_join(writer);
}

void pingpong_connection(ISocketStream* s) {
    std::unique_ptr<char[]> buf(new char[FLAGS_buf_size]());
    counter c;
    while (!g_stop.load(std::memory_order_relaxed)) {
        if (s->write(buf.get(), FLAGS_buf_size) != (ssize_t)FLAGS_buf_size) break;
        if (s->read(buf.get(), FLAGS_buf_size) != (ssize_t)FLAGS_buf_size) break;
        c.add();
    }
    c.flush();
}

int run_connections(uint64_t n) {
    std::unique_ptr<ISocketClient> client(new_client());
    if (!client) return perror("net-perf: client"), -1;
    bool streaming = FLAGS_client_mode == "streaming";
    EndPoint server(IPAddr(FLAGS_ip.c_str()), (uint16_t)FLAGS_port);
    std::vector<join_handle*> conns;
    for (uint64_t i = 0; i < n; i++) {
        ISocketStream* s = client->connect(server);
        if (!s) return perror("net-perf: connect"), -1;
        conns.push_back(thread_enable_join(thread_create11([s, streaming] {
            streaming ? stream_connection(s) : pingpong_connection(s);
            delete s;
        })));
    }
    for (auto jh : conns) thread_join(jh);
    return 0;
}

// The engine the vCPUs got (-event_engine default picks one).
std::atomic<const char*> g_engine{"none"};
void note_engine() {
    g_engine =
        photon::master_event_engine_kind() == photon::INIT_EVENT_IOURING ? "io_uring" : "epoll";
}

// Prints a line a second and the summary; stops everything at the end. The
// summary's rate is over the window in which messages moved (a server idles
// before its client comes and after it leaves), found by sampling the count
// every 10 ms.
void report() {
    using std::chrono::duration;
    auto t0 = clock_type::now(), last = t0, sample_t = t0;
    uint64_t last_n = 0, sample_n = 0, first_n = 0;
    clock_type::time_point first{}, last_move{};  // the window: [first, last_move]
    bool loaded = false;
    auto sample = [&] {
        auto t = clock_type::now();
        uint64_t n = g_messages.load(std::memory_order_relaxed);
        if (n != sample_n) {
            if (!loaded) loaded = true, first = sample_t, first_n = sample_n;
            last_move = t;
        }
        sample_t = t, sample_n = n;
    };
    while (!g_stop.load()) {
        for (int i = 0; i < 100 && !g_stop.load(); i++) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
            sample();
        }
        auto t = sample_t;
        uint64_t n = sample_n;
        double qps = (n - last_n) / duration<double>(t - last).count();
        printf("%s: %.0f msg/s, %.2f MiB/s\n", FLAGS_client ? "client" : "server", qps,
               qps * FLAGS_buf_size / (1 << 20));
        fflush(stdout);
        last = t;
        last_n = n;
        if (FLAGS_duration && duration<double>(t - t0).count() >= FLAGS_duration) g_stop = true;
    }
    sample();
    uint64_t n = sample_n;
    double loaded_s = loaded ? duration<double>(last_move - first).count() : 0;
    double qps = loaded_s > 0 ? (n - first_n) / loaded_s : 0;
    double total_s = duration<double>(sample_t - t0).count();
    printf(
        "net-perf summary: role=%s mode=%s connections=%llu buf_size=%llu vcpus=%d "
        "socket_type=%s event_engine=%s seconds=%.1f messages=%llu qps=%.0f MiB/s=%.2f "
        "(over the %.1f s with messages, of %.1f s)\n",
        FLAGS_client ? "client" : "server", FLAGS_client ? FLAGS_client_mode.c_str() : "echo",
        (unsigned long long)FLAGS_client_connection_num, (unsigned long long)FLAGS_buf_size,
        FLAGS_vcpu_num, FLAGS_socket_type.c_str(), g_engine.load(), loaded_s, (unsigned long long)n,
        qps, qps * FLAGS_buf_size / (1 << 20), loaded_s, total_s);
    fflush(stdout);
    // A server waits for its clients to hang up; don't let one that never
    // does keep the process alive.
    if (!FLAGS_client) {
        std::this_thread::sleep_for(std::chrono::seconds(2));
        _exit(0);
    }
}

void on_signal(int) { g_stop = true; }

}  // namespace

int main(int argc, char** argv) {
    gflags::SetUsageMessage("TCP echo benchmark (server, or -client)");
    gflags::ParseCommandLineFlags(&argc, &argv, true);
    if (FLAGS_client_mode == "pingpong") FLAGS_client_mode = "ping-pong";
    if ((FLAGS_client_mode != "streaming" && FLAGS_client_mode != "ping-pong") ||
        FLAGS_buf_size == 0 || FLAGS_vcpu_num < 1 || FLAGS_client_connection_num == 0) {
        fprintf(stderr, "net-perf: bad flags (see -help)\n");
        return 2;
    }
    signal(SIGINT, &on_signal);
    signal(SIGTERM, &on_signal);
    std::thread reporter(&report);
    int r;
    if (FLAGS_client) {
        uint64_t per = FLAGS_client_connection_num / FLAGS_vcpu_num;
        r = perf::on_vcpus(
            "net-perf", FLAGS_vcpu_num, perf::engine_flag(FLAGS_event_engine), [per](int i) {
                note_engine();
                uint64_t extra = i == 0 ? FLAGS_client_connection_num % FLAGS_vcpu_num : 0;
                return run_connections(per + extra);
            });
    } else {
        r = perf::on_vcpus("net-perf", FLAGS_vcpu_num, perf::engine_flag(FLAGS_event_engine),
                           [](int) {
                               note_engine();
                               return serve_on_this_vcpu(FLAGS_vcpu_num > 1);
                           });
    }
    g_stop = true;  // a failed side ends the run
    reporter.join();
    return r < 0 ? 1 : 0;
}
