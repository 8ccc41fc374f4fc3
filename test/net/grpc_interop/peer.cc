// grpc_interop_peer: grpc C++ (Debian's libgrpc++) on the other side of
// test/net/grpc_interop_test.cpp.
//
//   grpc_interop_peer server PORT_FILE   serves interop.Peer on 127.0.0.1:0,
//                                        writes the port to PORT_FILE, runs until killed
//   grpc_interop_peer client TARGET      calls our server at TARGET; prints a
//                                        line per check, exits 0 if all passed
//
// Server semantics (ours mirror them): Unary answers Status(code, text) when
// code != 0, else sleeps sleep_us (or until cancelled) and echoes the
// message; client metadata x-echo / x-echo-bin come back in the initial and
// trailing metadata; a request with metadata x-gzip is answered gzipped.
// ClientStream answers count = messages received and payload = their
// payloads joined; ServerStream sends `count` copies of the request; Bidi
// echoes each message.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "interop.grpc.pb.h"

using grpc::ServerContext;
using grpc::Status;
using grpc::StatusCode;
using interop::Msg;

namespace {

void echo_metadata(ServerContext* ctx) {
    for (auto& kv : ctx->client_metadata()) {
        std::string k(kv.first.data(), kv.first.size()), v(kv.second.data(), kv.second.size());
        if (k == "x-echo" || k == "x-echo-bin") {
            ctx->AddInitialMetadata(k, v);
            ctx->AddTrailingMetadata(k, v);
        }
        if (k == "x-gzip") ctx->set_compression_algorithm(GRPC_COMPRESS_GZIP);
    }
}

class PeerService final : public interop::Peer::Service {
    Status Unary(ServerContext* ctx, const Msg* req, Msg* resp) override {
        echo_metadata(ctx);
        if (req->code() != 0) return Status((StatusCode)req->code(), req->text());
        auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(req->sleep_us());
        while (std::chrono::steady_clock::now() < end && !ctx->IsCancelled())
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        if (ctx->IsCancelled()) return Status(StatusCode::CANCELLED, "cancelled");
        *resp = *req;
        // The deadline the client sent, in ms left (roughly), for the test to check.
        auto left = ctx->deadline() - std::chrono::system_clock::now();
        if (ctx->deadline() != std::chrono::system_clock::time_point::max())
            resp->set_text(
                "deadline-ms " +
                std::to_string(
                    std::chrono::duration_cast<std::chrono::milliseconds>(left).count()));
        return Status::OK;
    }
    Status ClientStream(ServerContext* ctx, grpc::ServerReader<Msg>* reader, Msg* resp) override {
        echo_metadata(ctx);
        Msg m;
        int n = 0;
        std::string all;
        while (reader->Read(&m)) n++, all += m.payload();
        resp->set_count(n);
        resp->set_payload(all);
        return Status::OK;
    }
    Status ServerStream(ServerContext* ctx, const Msg* req, grpc::ServerWriter<Msg>* w) override {
        echo_metadata(ctx);
        for (int i = 0; i < req->count(); i++)
            if (!w->Write(*req)) return Status(StatusCode::CANCELLED, "write failed");
        return Status::OK;
    }
    Status Bidi(ServerContext* ctx, grpc::ServerReaderWriter<Msg, Msg>* rw) override {
        echo_metadata(ctx);
        Msg m;
        while (rw->Read(&m))
            if (!rw->Write(m)) return Status(StatusCode::CANCELLED, "write failed");
        return Status::OK;
    }
};

int run_server(const char* port_file) {
    PeerService svc;
    grpc::ServerBuilder b;
    int port = 0;
    b.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    b.RegisterService(&svc);
    b.SetMaxReceiveMessageSize(16 << 20);
    auto server = b.BuildAndStart();
    if (!server || port == 0) return 1;
    {
        std::ofstream f(std::string(port_file) + ".tmp");
        f << port << "\n";
    }
    rename((std::string(port_file) + ".tmp").c_str(), port_file);
    server->Wait();
    return 0;
}

int failures = 0;
void check(bool ok, const char* what, const std::string& detail = "") {
    printf("%s: %s %s\n", ok ? "PASS" : "FAIL", what, detail.c_str());
    fflush(stdout);
    if (!ok) failures++;
}

std::string md(const grpc::ClientContext& ctx,
               const std::multimap<grpc::string_ref, grpc::string_ref>& m, const char* key) {
    auto it = m.find(key);
    return it == m.end() ? "<none>" : std::string(it->second.data(), it->second.size());
}

using Stub = interop::Peer::Stub;

std::chrono::system_clock::time_point deadline(int ms) {
    return std::chrono::system_clock::now() + std::chrono::milliseconds(ms);
}

// unary, metadata both ways
void check_unary_metadata(Stub* stub) {
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline(10000));
    ctx.AddMetadata("x-echo", "hello");
    ctx.AddMetadata("x-echo-bin", std::string("\0\x01\xfe", 3));
    Msg req, resp;
    req.set_payload("ping");
    Status st = stub->Unary(&ctx, req, &resp);
    check(st.ok() && resp.payload() == "ping", "unary echo", st.error_message());
    check(md(ctx, ctx.GetServerInitialMetadata(), "x-echo") == "hello", "initial metadata");
    check(md(ctx, ctx.GetServerTrailingMetadata(), "x-echo-bin") == std::string("\0\x01\xfe", 3),
          "binary trailing metadata");
    check(resp.text().rfind("deadline-ms ", 0) == 0, "the handler saw the deadline", resp.text());
}

// error status with a message that needs percent-encoding
void check_error_status(Stub* stub) {
    grpc::ClientContext ctx;
    Msg req, resp;
    req.set_code(9);
    req.set_text("precondition 100% \xc3\xa9");
    Status st = stub->Unary(&ctx, req, &resp);
    check(st.error_code() == StatusCode::FAILED_PRECONDITION &&
              st.error_message() == "precondition 100% \xc3\xa9",
          "error status", st.error_message());
}

void check_deadline_exceeded(Stub* stub) {
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline(200));
    Msg req, resp;
    req.set_sleep_us(5 * 1000 * 1000);
    Status st = stub->Unary(&ctx, req, &resp);
    check(st.error_code() == StatusCode::DEADLINE_EXCEEDED, "deadline exceeded",
          st.error_message());
}

void check_unknown_method(Stub* stub) {
    grpc::ClientContext ctx;
    Msg req, resp;
    Status st = stub->Missing(&ctx, req, &resp);
    check(st.error_code() == StatusCode::UNIMPLEMENTED, "unimplemented", st.error_message());
}

void check_client_streaming(Stub* stub) {
    grpc::ClientContext ctx;
    Msg resp;
    auto w = stub->ClientStream(&ctx, &resp);
    Msg m;
    std::string all;
    for (int i = 0; i < 20; i++) {
        m.set_payload(std::string(1000 + i, 'a' + i));
        all += m.payload();
        w->Write(m);
    }
    w->WritesDone();
    Status st = w->Finish();
    check(st.ok() && resp.count() == 20 && resp.payload() == all, "client streaming",
          st.error_message());
}

// server streaming, 1 MiB messages
void check_server_streaming(Stub* stub) {
    grpc::ClientContext ctx;
    Msg req;
    req.set_count(8);
    req.set_payload(std::string(1 << 20, 'x'));
    auto r = stub->ServerStream(&ctx, req);
    Msg m;
    int n = 0;
    while (r->Read(&m)) n += m.payload() == req.payload();
    Status st = r->Finish();
    check(st.ok() && n == 8, "server streaming", st.error_message() + " n=" + std::to_string(n));
}

void check_bidi(Stub* stub) {
    grpc::ClientContext ctx;
    auto rw = stub->Bidi(&ctx);
    Msg m, back;
    int ok = 0;
    for (int i = 0; i < 50; i++) {
        m.set_payload(std::string(i * 100, (char)i));
        rw->Write(m);
        if (rw->Read(&back) && back.payload() == m.payload()) ok++;
    }
    rw->WritesDone();
    Status st = rw->Finish();
    check(st.ok() && ok == 50, "bidi", st.error_message());
}

// gzip both ways
void check_gzip(Stub* stub) {
    grpc::ClientContext ctx;
    ctx.set_compression_algorithm(GRPC_COMPRESS_GZIP);
    ctx.AddMetadata("x-gzip", "1");
    Msg req, resp;
    req.set_payload(std::string(100000, 'z'));
    Status st = stub->Unary(&ctx, req, &resp);
    check(st.ok() && resp.payload() == req.payload(), "gzip", st.error_message());
}

int run_client(const std::string& target) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(16 << 20);
    auto ch = grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
    auto stub = interop::Peer::NewStub(ch);
    check_unary_metadata(stub.get());
    check_error_status(stub.get());
    check_deadline_exceeded(stub.get());
    check_unknown_method(stub.get());
    check_client_streaming(stub.get());
    check_server_streaming(stub.get());
    check_bidi(stub.get());
    check_gzip(stub.get());
    printf("%d failures\n", failures);
    return failures ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 3 && std::string(argv[1]) == "server") return run_server(argv[2]);
    if (argc == 3 && std::string(argv[1]) == "client") return run_client(argv[2]);
    fprintf(stderr, "usage: %s server PORT_FILE | client TARGET\n", argv[0]);
    return 2;
}
