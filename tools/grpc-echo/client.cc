// grpc-echo-client: the gRPC peer of `rpc-perf -mode client`, on gRPC's
// asynchronous API with one completion-queue thread.
//
//   grpc-echo-client [-ip 127.0.0.1] [-port 9530] [-payload 64] [-conns 100] [-inflight 1]
//                    [-warmup 1] [-duration 10] [-server_pid PID] [-verify]
//
// `conns` channels, each its own TCP connection (a local subchannel pool and
// distinct channel arguments, so gRPC does not share one connection among
// them), with `inflight` unary calls kept going on each. Prints calls per
// second every second and, after `warmup` + `duration` seconds, the same
// summary line as rpc-perf's client (load_window.h), server CPU per call
// included when given -server_pid.
#include <gflags/gflags.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "echo.grpc.pb.h"
#include "load_window.h"

DEFINE_string(ip, "127.0.0.1", "server address");
DEFINE_int32(port, 9530, "server port");
DEFINE_uint64(payload, 64, "bytes echoed per call");
DEFINE_uint64(conns, 100, "channels, one TCP connection each");
DEFINE_uint64(inflight, 1, "calls in flight per channel");
DEFINE_uint64(warmup, 1, "seconds of load before the measured window");
DEFINE_uint64(duration, 10, "seconds measured");
DEFINE_int64(server_pid, 0, "sample this process's CPU time at the window's edges");
DEFINE_uint64(timeout_ms, 10000, "per-call deadline");
DEFINE_bool(verify, false, "compare every reply with the request, byte by byte");

namespace {

using rpcbench::EchoMessage;
using rpcbench::EchoService;

// Written by the completion-queue thread only, read by the reporter.
std::atomic<uint64_t> g_calls{0}, g_errors{0};
std::atomic<bool> g_stop{false}, g_measuring{false};

void bump(std::atomic<uint64_t>& c) {
    c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

// One call slot of one channel: started again as soon as it completes.
struct Call {
    EchoService::Stub* stub;
    const EchoMessage* req;
    std::unique_ptr<grpc::ClientContext> ctx;  // gRPC wants a fresh one per call
    std::unique_ptr<grpc::ClientAsyncResponseReader<EchoMessage>> reader;
    EchoMessage resp;
    grpc::Status status;
    uint64_t t0 = 0;

    void start(grpc::CompletionQueue* cq) {
        ctx.reset(new grpc::ClientContext);
        ctx->set_deadline(std::chrono::system_clock::now() +
                          std::chrono::milliseconds(FLAGS_timeout_ms));
        t0 = perf::now_ns();
        reader = stub->AsyncEcho(ctx.get(), *req, cq);
        reader->Finish(&resp, &status, this);
    }
    bool succeeded() const {
        return status.ok() && resp.payload().size() == req->payload().size() &&
               (!FLAGS_verify || resp.payload() == req->payload());
    }
};

// A line a second; the window's edges; sets g_stop when the window is over.
void report(perf::window_edge* begin, perf::window_edge* end) {
    uint64_t last_n = 0, last = perf::now_ns();
    if (FLAGS_warmup == 0) {
        *begin = perf::window_edge::take(0, FLAGS_server_pid);
        g_measuring = true;
    }
    for (uint64_t ticks = 1; !g_stop.load(); ticks++) {
        std::this_thread::sleep_for(std::chrono::seconds(1));
        uint64_t n = g_calls.load(std::memory_order_relaxed), t = perf::now_ns();
        printf("client: %.0f calls/s, %llu errors\n", (n - last_n) * 1e9 / (t - last),
               (unsigned long long)g_errors.load());
        fflush(stdout);
        last_n = n;
        last = t;
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

std::vector<std::shared_ptr<grpc::Channel>> connect_channels() {
    std::string target = FLAGS_ip + ":" + std::to_string(FLAGS_port);
    std::vector<std::shared_ptr<grpc::Channel>> channels;
    for (uint64_t i = 0; i < FLAGS_conns; i++) {
        grpc::ChannelArguments args;
        args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
        args.SetInt("rpcbench.channel_index", (int)i);  // distinct args: no shared subchannel
        auto ch = grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
        if (!ch->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(5))) {
            fprintf(stderr, "grpc-echo-client: cannot connect to %s\n", target.c_str());
            return {};
        }
        channels.push_back(std::move(ch));
    }
    return channels;
}

}  // namespace

int main(int argc, char** argv) {
    gflags::SetUsageMessage("gRPC unary echo load client (async API, one thread)");
    gflags::ParseCommandLineFlags(&argc, &argv, true);
    if (FLAGS_conns == 0 || FLAGS_inflight == 0 || FLAGS_payload == 0 || FLAGS_duration == 0 ||
        FLAGS_payload > 4u << 20) {  // gRPC's default receive limit is 4 MiB
        fprintf(stderr, "grpc-echo-client: bad flags (see -help)\n");
        return 2;
    }
    auto channels = connect_channels();
    if (channels.empty()) return 1;
    std::vector<std::unique_ptr<EchoService::Stub>> stubs;
    for (auto& ch : channels) stubs.push_back(EchoService::NewStub(ch));
    EchoMessage req;
    req.mutable_payload()->resize(FLAGS_payload);
    for (size_t i = 0; i < FLAGS_payload; i++) (*req.mutable_payload())[i] = (char)(i * 7 + 1);

    grpc::CompletionQueue cq;
    std::vector<Call> calls(FLAGS_conns * FLAGS_inflight);
    for (size_t i = 0; i < calls.size(); i++) {
        calls[i].stub = stubs[i / FLAGS_inflight].get();
        calls[i].req = &req;
    }
    perf::window_edge begin, end;
    std::thread reporter(&report, &begin, &end);
    perf::latency_histogram lat;
    for (auto& c : calls) c.start(&cq);
    size_t running = calls.size();
    void* tag;
    bool ok;
    while (running && cq.Next(&tag, &ok)) {
        auto c = static_cast<Call*>(tag);
        if (ok && c->succeeded()) {
            if (g_measuring.load(std::memory_order_relaxed)) lat.add(perf::now_ns() - c->t0);
            bump(g_calls);
        } else {
            bump(g_errors);
        }
        if (g_stop.load(std::memory_order_relaxed))
            running--;
        else
            c->start(&cq);
    }
    reporter.join();
    printf(
        "grpc-echo-client summary: role=client conns=%llu inflight=%llu payload=%llu "
        "errors=%llu%s\n",
        (unsigned long long)FLAGS_conns, (unsigned long long)FLAGS_inflight,
        (unsigned long long)FLAGS_payload, (unsigned long long)g_errors.load(),
        perf::window_fields(begin, end, FLAGS_payload, lat).c_str());
    fflush(stdout);
    cq.Shutdown();
    while (cq.Next(&tag, &ok)) {
    }
    return g_errors.load() ? 1 : 0;
}
