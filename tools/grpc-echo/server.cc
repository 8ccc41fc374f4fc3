// grpc-echo-server: the gRPC peer of `rpc-perf -mode server`, a unary Echo
// on gRPC's asynchronous API, served by one completion-queue thread (main).
//
//   grpc-echo-server [-ip 127.0.0.1] [-port 9530] [-posted 256] [-duration 0]
//
// `posted` calls are requested up front and each answered call requests a
// new one, so an arriving call never waits for the server to ask for it.
// The reply takes the request's bytes by swap (no copy). A second thread
// only waits for SIGINT / SIGTERM and prints calls per second, then the
// summary, and exits the process at once (a benchmark server needs no
// graceful shutdown). gRPC's own helper threads (timer manager, executor)
// stay idle under this load (tools/rpc-bench.py checks that with
// /proc/PID/task).
#include <gflags/gflags.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "echo.grpc.pb.h"

DEFINE_string(ip, "127.0.0.1", "address to bind");
DEFINE_int32(port, 9530, "port");
DEFINE_uint32(posted, 256, "calls requested from gRPC ahead of their arrival");
DEFINE_uint64(duration, 0, "seconds to run; 0 = until SIGINT / SIGTERM");

namespace {

using rpcbench::EchoMessage;
using rpcbench::EchoService;

std::atomic<uint64_t> g_calls{0};  // written by the completion-queue thread only

// One call: requested from gRPC, then answered, then deleted.
class EchoCall {
public:
    EchoCall(EchoService::AsyncService* svc, grpc::ServerCompletionQueue* cq)
        : svc_(svc), cq_(cq), responder_(&ctx_) {
        svc_->RequestEcho(&ctx_, &req_, &responder_, cq_, cq_, this);
    }

    // The completion-queue event for this call (ok = false: it failed).
    void proceed(bool ok) {
        if (!ok || answered_) {
            delete this;
            return;
        }
        new EchoCall(svc_, cq_);  // keep `posted` requests outstanding
        resp_.mutable_payload()->swap(*req_.mutable_payload());
        answered_ = true;
        responder_.Finish(resp_, grpc::Status::OK, this);
        g_calls.store(g_calls.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }

private:
    EchoService::AsyncService* svc_;
    grpc::ServerCompletionQueue* cq_;
    grpc::ServerContext ctx_;
    EchoMessage req_, resp_;
    grpc::ServerAsyncResponseWriter<EchoMessage> responder_;
    bool answered_ = false;
};

// Prints calls per second until a signal or the duration; then the summary,
// and ends the process.
void watch(sigset_t signals) {
    auto t0 = std::chrono::steady_clock::now(), last = t0;
    uint64_t last_n = 0;
    timespec second{1, 0};
    for (uint64_t ticks = 1;; ticks++) {
        int sig = sigtimedwait(&signals, nullptr, &second);
        auto t = std::chrono::steady_clock::now();
        uint64_t n = g_calls.load(std::memory_order_relaxed);
        double s = std::chrono::duration<double>(t - last).count();
        printf("server: %.0f calls/s\n", (n - last_n) / s);
        fflush(stdout);
        last = t;
        last_n = n;
        if (sig > 0 || (FLAGS_duration && ticks >= FLAGS_duration)) break;
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    uint64_t n = g_calls.load();
    printf("grpc-echo-server summary: role=server seconds=%.1f calls=%llu qps=%.0f\n", secs,
           (unsigned long long)n, n / secs);
    fflush(stdout);
    _exit(0);
}

}  // namespace

int main(int argc, char** argv) {
    gflags::SetUsageMessage("gRPC unary echo server (async API, one completion-queue thread)");
    gflags::ParseCommandLineFlags(&argc, &argv, true);
    if (FLAGS_posted == 0) {
        fprintf(stderr, "grpc-echo-server: -posted must be at least 1\n");
        return 2;
    }
    // Every thread, gRPC's included, inherits the mask: only sigtimedwait takes these.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);

    EchoService::AsyncService service;
    grpc::ServerBuilder builder;
    std::string addr = FLAGS_ip + ":" + std::to_string(FLAGS_port);
    int bound = 0;
    builder.AddListeningPort(addr, grpc::InsecureServerCredentials(), &bound);
    builder.RegisterService(&service);
    auto cq = builder.AddCompletionQueue();
    auto server = builder.BuildAndStart();
    if (!server || bound == 0) {
        fprintf(stderr, "grpc-echo-server: cannot listen on %s\n", addr.c_str());
        return 1;
    }
    fprintf(stderr, "grpc-echo-server: gRPC %s on %s\n", grpc::Version().c_str(), addr.c_str());
    for (uint32_t i = 0; i < FLAGS_posted; i++) new EchoCall(&service, cq.get());
    std::thread watcher(&watch, signals);
    void* tag;
    bool ok;
    while (cq->Next(&tag, &ok)) static_cast<EchoCall*>(tag)->proceed(ok);
    return 1;  // the queue never shuts down: watch() ends the process
}
