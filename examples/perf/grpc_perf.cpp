// grpc-perf: a gRPC unary echo server on photon's gRPC (photon/net/grpc/),
// the peer of tools/grpc-echo's grpc-echo-server under the same load client
// (grpc-echo-client) in tools/grpc-bench.py.
//
//   grpc-perf [-ip 127.0.0.1] [-port 9530] [-vcpus 1] [-event_engine epoll|io_uring|default]
//             [-duration 0]
//
// Serves /rpcbench.EchoService/Echo (tools/grpc-echo/echo.proto: EchoMessage
// { bytes payload = 1; }): the request is decoded (field 1, as protobuf's
// parser would find it) and a new EchoMessage with the same payload is
// encoded for the reply, the work grpc-echo-server does with generated code.
// One vCPU per -vcpus (SO_REUSEPORT when more than one). Prints calls per
// second every second; runs until SIGINT / SIGTERM (or `duration`) and then
// prints a summary line.
#include <gflags/gflags.h>
#include <signal.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <photon/common/alog.h>
#include <photon/net/grpc/server.h>
#include <photon/net/socket.h>
#include <photon/photon.h>
#include <photon/thread/thread.h>

#include "perf_util.h"

DEFINE_string(ip, "127.0.0.1", "address to bind");
DEFINE_int32(port, 9530, "port");
DEFINE_int32(vcpus, 1, "vCPUs (OS threads), each listening with SO_REUSEPORT");
DEFINE_string(event_engine, "default", "epoll | io_uring | default (io_uring, else epoll)");
DEFINE_uint64(duration, 0, "seconds to run; 0 = until SIGINT / SIGTERM");

namespace {

namespace grpc = photon::net::grpc;

std::atomic<uint64_t> g_calls{0};
std::atomic<bool> g_stop{false};

// A varint at p (at most 10 bytes before end); the bytes it took, 0 if malformed.
size_t get_varint(const char* p, const char* end, uint64_t* v) {
    *v = 0;
    for (size_t i = 0; i < 10 && p + i < end; i++) {
        *v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) return i + 1;
    }
    return 0;
}

// EchoMessage's payload (field 1, length-delimited; the last one wins, as in
// protobuf); false if the message is malformed or has other fields.
bool decode_payload(const std::string& m, const char** data, size_t* n) {
    const char *p = m.data(), *end = p + m.size();
    *data = p;
    *n = 0;
    while (p < end) {
        uint64_t key, len;
        size_t k = get_varint(p, end, &key);
        if (!k || key != (1 << 3 | 2)) return false;
        p += k;
        k = get_varint(p, end, &len);
        if (!k || len > (uint64_t)(end - p - k)) return false;
        p += k;
        *data = p;
        *n = len;
        p += len;
    }
    return true;
}

void encode_payload(const char* data, size_t n, std::string* out) {
    out->clear();
    if (n == 0) return;
    out->reserve(n + 11);
    out->push_back(1 << 3 | 2);
    for (uint64_t v = n;; v >>= 7) {
        if (v < 0x80) {
            out->push_back((char)v);
            break;
        }
        out->push_back((char)(v | 0x80));
    }
    out->append(data, n);
}

int serve_on_this_vcpu() {
    grpc::Server server;
    server.add_unary("/rpcbench.EchoService/Echo",
                     [](grpc::ServerCall&, const std::string& req, std::string* resp) {
                         const char* p;
                         size_t n;
                         if (!decode_payload(req, &p, &n))
                             return grpc::Status(grpc::StatusCode::INTERNAL, "bad EchoMessage");
                         encode_payload(p, n, resp);
                         g_calls.fetch_add(1, std::memory_order_relaxed);
                         return grpc::Status();
                     });
    std::unique_ptr<photon::net::ISocketServer> tcp(photon::net::new_tcp_socket_server());
    if (FLAGS_vcpus > 1) tcp->setsockopt<int>(SOL_SOCKET, SO_REUSEPORT, 1);
    if (tcp->bind(photon::net::EndPoint(photon::net::IPAddr(FLAGS_ip.c_str()),
                                        (uint16_t)FLAGS_port)) < 0 ||
        tcp->listen(1024) < 0)
        return perror("grpc-perf: bind/listen"), -1;
    tcp->set_handler(server.get_connection_handler());
    if (tcp->start_loop(false) < 0) return perror("grpc-perf: start_loop"), -1;
    while (!g_stop.load(std::memory_order_relaxed)) photon::thread_usleep(100 * 1000);
    tcp->terminate();
    server.stop(1000 * 1000);  // running calls get a second
    return 0;
}

void on_signal(int) { g_stop = true; }

}  // namespace

int main(int argc, char** argv) {
    gflags::SetUsageMessage("gRPC unary echo server on photon's gRPC");
    gflags::ParseCommandLineFlags(&argc, &argv, true);
    if (FLAGS_vcpus < 1) {
        fprintf(stderr, "grpc-perf: bad flags (see -help)\n");
        return 2;
    }
    signal(SIGINT, &on_signal);
    signal(SIGTERM, &on_signal);
    signal(SIGPIPE, SIG_IGN);
    set_log_output_level(ALOG_WARN);
    auto t0 = std::chrono::steady_clock::now();
    std::thread reporter([t0] {
        uint64_t last = 0;
        for (uint64_t s = 1; !g_stop; s++) {
            std::this_thread::sleep_for(std::chrono::seconds(1));
            uint64_t n = g_calls.load();
            printf("server: %llu calls/s\n", (unsigned long long)(n - last));
            fflush(stdout);
            last = n;
            if (FLAGS_duration && s >= FLAGS_duration) g_stop = true;
        }
        double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        printf("grpc-perf summary: role=server vcpus=%d calls=%llu seconds=%.1f\n", FLAGS_vcpus,
               (unsigned long long)g_calls.load(), secs);
        fflush(stdout);
    });
    int r = perf::on_vcpus("grpc-perf", FLAGS_vcpus, perf::engine_flag(FLAGS_event_engine),
                           [](int) { return serve_on_this_vcpu(); });
    g_stop = true;
    reporter.join();
    return r < 0 ? 1 : 0;
}
