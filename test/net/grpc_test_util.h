// The gRPC tests' server: our grpc::Server behind a TCP listener on
// 127.0.0.1 (port 0), served on the test's own vCPU, with the methods of
// the "test.Echo" service the tests call.
#pragma once

#include <photon/net/grpc/channel.h>
#include <photon/net/grpc/server.h>
#include <photon/net/socket.h>
#include <photon/thread/thread.h>

#include <memory>
#include <string>

namespace photon_test {

namespace grpc = photon::net::grpc;

inline std::string grpc_pattern(size_t n, uint32_t seed = 0) {
    std::string s(n, 0);
    for (size_t i = 0; i < n; i++) s[i] = (char)((i * 31 + seed * 7 + i / 4096) & 0xff);
    return s;
}

// What the handlers saw, for the tests to check.
struct EchoSeen {
    uint64_t deadline = 0;
    bool cancelled_after_sleep = false;
    int sleeping = 0;
};

// Registers test.Echo's methods:
//   Unary   echoes; metadata x-echo / x-echo-bin come back as initial and
//           trailing metadata, plus x-initial: i, x-trailing: t
//   Fail    request "CODE message": that status
//   Sleep   request: microseconds to sleep, then answers "slept"
//   Sum     client streaming: "<count> <bytes>"
//   Split   server streaming: request "<n> <size>": n messages of size bytes
//   Bidi    echoes each message as it comes
inline void register_echo(grpc::Server* s, EchoSeen* seen) {
    s->add_unary("/test.Echo/Unary",
                 [](grpc::ServerCall& call, const std::string& req, std::string* resp) {
                     for (auto& kv : call.client_metadata())
                         if (kv.first == "x-echo" || kv.first == "x-echo-bin") {
                             call.add_initial_metadata(kv.first, kv.second);
                             call.add_trailing_metadata(kv.first, kv.second);
                         }
                     call.add_initial_metadata("x-initial", "i");
                     call.add_trailing_metadata("x-trailing", "t");
                     *resp = req;
                     return grpc::Status();
                 });
    s->add_unary("/test.Echo/Fail", [](grpc::ServerCall&, const std::string& req, std::string*) {
        size_t sp = req.find(' ');
        return grpc::Status((grpc::StatusCode)std::stoi(req.substr(0, sp)),
                            sp == std::string::npos ? "" : req.substr(sp + 1));
    });
    s->add_unary("/test.Echo/Sleep",
                 [seen](grpc::ServerCall& call, const std::string& req, std::string* resp) {
                     seen->deadline = call.deadline();
                     seen->sleeping++;
                     photon::thread_usleep(std::stoull(req));
                     seen->sleeping--;
                     seen->cancelled_after_sleep = call.cancelled();
                     *resp = "slept";
                     return grpc::Status();
                 });
    s->add_streaming("/test.Echo/Sum", [](grpc::ServerCall& call) {
        std::string m;
        size_t count = 0, bytes = 0;
        int r;
        while ((r = call.read(&m)) == 1) count++, bytes += m.size();
        if (r < 0) return grpc::Status(grpc::StatusCode::INTERNAL, "read failed");
        call.write(std::to_string(count) + " " + std::to_string(bytes));
        return grpc::Status();
    });
    s->add_streaming("/test.Echo/Split", [](grpc::ServerCall& call) {
        std::string req;
        if (call.read(&req) != 1) return grpc::Status(grpc::StatusCode::INTERNAL, "no request");
        size_t n = std::stoul(req), size = std::stoul(req.substr(req.find(' ') + 1));
        for (size_t i = 0; i < n; i++)
            if (call.write(grpc_pattern(size, (uint32_t)i)) < 0)
                return grpc::Status(grpc::StatusCode::CANCELLED, "write failed");
        return grpc::Status();
    });
    s->add_streaming("/test.Echo/Bidi", [](grpc::ServerCall& call) {
        std::string m;
        int r;
        while ((r = call.read(&m)) == 1)
            if (call.write(m) < 0) return grpc::Status(grpc::StatusCode::CANCELLED, "write failed");
        return r == 0 ? grpc::Status() : grpc::Status(grpc::StatusCode::INTERNAL, "read failed");
    });
}

// A listener on 127.0.0.1:0 on this vCPU handing connections to `handler`.
class Listener {
public:
    explicit Listener(photon::net::ISocketServer::Handler handler,
                      photon::net::ISocketServer* base = nullptr)
        : tcp_(base ? base : photon::net::new_tcp_socket_server()) {
        tcp_->set_handler(handler);
        if (!base)
            ok_ = tcp_->bind_v4localhost(0) == 0 && tcp_->listen() == 0;
        else
            ok_ = true;
        ok_ = ok_ && tcp_->start_loop(false) == 0;
    }
    ~Listener() { tcp_->terminate(); }
    bool ok() const { return ok_; }
    uint16_t port() { return tcp_->getsockname().port; }
    std::string target() { return "127.0.0.1:" + std::to_string(port()); }
    void terminate() { tcp_->terminate(); }

private:
    std::unique_ptr<photon::net::ISocketServer> tcp_;
    bool ok_ = false;
};

}  // namespace photon_test
