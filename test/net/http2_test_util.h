// The HTTP/2 tests' server: a TCP listener on 127.0.0.1 on a vCPU of its own
// thread, serving every connection as HTTP/2 (net/http2/server_connection.h)
// with a few paths: /hello, /echo (the body back as it comes), /big/N (N
// bytes of h2_pattern()), /trailers, / (128 KiB, past the initial window),
// /refuse (the stream reset with REFUSED_STREAM), and /wait-hello (its handler
// blocks until a /hello has been answered, at most 5 s: "released" or "timed out").
#pragma once

#include <photon/net/socket.h>
#include <photon/photon.h>
#include <photon/thread/thread.h>

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "../../net/http2/server_connection.h"
#include "../util/wait.h"

namespace photon_test {

using namespace photon::net::http2;

// How long a test server on a thread of its own may take to listen (the
// first TLS one makes the test PKI first): only a broken one takes this long.
constexpr int kServerStartMs = 60'000;

// Runs a shell command: its exit status (-1 if it did not run), its stdout
// appended to *out.
inline int run_command(const std::string& cmd, std::string* out) {
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return -1;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out->append(buf, n);
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// Why curl cannot take part in an HTTP/2 test here ("" if it can).
inline std::string curl_http2_missing() {
    std::string out;
    run_command("curl -V 2>/dev/null", &out);
    return out.find("HTTP2") != std::string::npos ? "" : "curl without HTTP/2 (or no curl)";
}

// The h2spec to run (on PATH, or in ~/go/bin), "" if none is installed.
inline std::string h2spec_path() {
    std::string out;
    if (run_command("command -v h2spec 2>/dev/null", &out) == 0) return "h2spec";
    const char* home = getenv("HOME");
    std::string p = home ? std::string(home) + "/go/bin/h2spec" : "";
    return !p.empty() && access(p.c_str(), X_OK) == 0 ? p : "";
}

// Runs h2spec against 127.0.0.1:port (with `flags`, e.g. "-t -k" for TLS):
// every case of RFC 9113 and 7541 it has must pass.
inline void expect_h2spec_passes(uint16_t port, const std::string& flags = "") {
    std::string out;
    int st = run_command(
        h2spec_path() + " -h 127.0.0.1 -p " + std::to_string(port) + " -o 3 " + flags + " 2>&1",
        &out);
    auto tail = out.size() > 3000 ? out.substr(out.size() - 3000) : out;
    EXPECT_EQ(0, st) << tail;
    EXPECT_NE(std::string::npos, out.find(" 0 failed")) << tail;
}

inline std::string h2_pattern(size_t n) {
    std::string s(n, 0);
    for (size_t i = 0; i < n; i++) s[i] = (char)('a' + (i * 7 + i / 1000) % 26);
    return s;
}

inline std::atomic<int>& hellos_answered() {
    static std::atomic<int> n{0};
    return n;
}

inline void serve_stream(Stream& s) {
    std::string path(s.field(":path"));
    if (path == "/hello") {
        s.respond({{":status", "200"}, {"content-type", "text/plain"}});
        s.write("hello\n", 6);
        hellos_answered()++;
    } else if (path == "/wait-hello") {
        int seen = hellos_answered();
        bool released = false;
        for (int i = 0; i < 500 && !released; i++) {
            photon::thread_usleep(10 * 1000);
            released = hellos_answered() != seen;
        }
        s.respond({{":status", "200"}});
        std::string body = released ? "released" : "timed out";
        s.write(body.data(), body.size());
    } else if (path == "/echo") {  // the body back, as it comes
        s.respond({{":status", "200"}});
        char buf[16384];
        ssize_t n;
        while ((n = s.read(buf, sizeof(buf))) > 0)
            if (s.write(buf, n) != n) return;
    } else if (path.rfind("/big/", 0) == 0) {
        std::string body = h2_pattern(std::stoul(path.substr(5)));
        s.respond({{":status", "200"}, {"content-length", std::to_string(body.size())}});
        s.write(body.data(), body.size());
    } else if (path == "/trailers") {
        s.respond({{":status", "200"}});
        s.write("body", 4);
        std::vector<header_field> t = {{"x-checksum", "1234"}};
        s.finish(&t);
    } else if (path == "/refuse") {
        s.reset(ErrorCode::REFUSED_STREAM);
    } else if (path == "/") {  // h2spec's: a body past the initial window keeps the stream open
        std::string body = h2_pattern(128 << 10);
        s.respond({{":status", "200"}});
        s.write(body.data(), body.size());
    } else {
        s.respond({{":status", "404"}}, true);
    }
}

// A TCP server on its own vCPU serving every connection as HTTP/2.
class H2Server {
public:
    explicit H2Server(connection_options opt = {}) : opt_(opt) {
        if (opt_.idle_timeout == connection_options().idle_timeout) opt_.idle_timeout = 10'000'000;
        th_ = std::thread([this] {
            if (photon::init(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE) != 0) {
                failed_ = true;
                return;
            }
            auto tcp = photon::net::new_tcp_socket_server();
            tcp->set_handler({this, &H2Server::serve});
            if (tcp->bind_v4localhost(0) == 0 && tcp->listen() == 0 && tcp->start_loop(false) == 0)
                port_ = tcp->getsockname().port;
            else
                failed_ = true;
            while (!stop_ && !failed_) photon::thread_usleep(10 * 1000);
            tcp->terminate();
            delete tcp;
            photon::fini();
        });
        // (An OS thread's wait: the caller need not be a vCPU.)
        EXPECT_TRUE(wait_for_off_vcpu([this] { return port_ != 0 || failed_; }, kServerStartMs))
            << "the server never listened";
    }
    ~H2Server() {
        stop_ = true;
        th_.join();
    }
    uint16_t port() const { return port_; }
    bool failed() const { return failed_; }

private:
    int serve(photon::net::ISocketStream* sock) {
        server_connection c(sock, opt_, serve_stream);
        return c.serve();
    }
    connection_options opt_;
    std::thread th_;
    std::atomic<uint16_t> port_{0};
    std::atomic<bool> failed_{false}, stop_{false};
};

}  // namespace photon_test
