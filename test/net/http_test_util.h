// Upstreams for the HTTP client and proxy tests: a scripted HTTP server on
// our message layer (counts connections, any ISocketServer: TCP, unix, TLS),
// and child servers (python3, nginx) on 127.0.0.1 with their output in a
// temporary directory.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <photon/net/http/client.h>
#include <photon/net/http/message.h>
#include <photon/net/socket.h>
#include <photon/thread/thread.h>

#include "../thread/test_util.h"
#include "net_test_util.h"
#include "tls_test_util.h"

#include "../util/temp_dir.h"

namespace photon_test {

// Whether something listens on 127.0.0.1:port within max_ms. Plain POSIX
// sockets: a refused photon connect would leave engine state behind for the
// reused fd number (see the report of the client helper).
inline bool wait_until_listening(uint16_t port, int max_ms = 10000) {
    for (int i = 0; i < max_ms / 10; i++) {
        int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a = {};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons(port);
        int r = ::connect(fd, (sockaddr*)&a, sizeof(a));
        ::close(fd);
        if (r == 0) return true;
        photon::thread_usleep(10 * 1000);
    }
    return false;
}

// Serves HTTP/1.1 on `server` (bound and listening) with handler(req,
// resp, stream) per request; the handler fills resp (the server completes
// it) and returns 0, or returns -1 to close the connection without further
// ado. Keep-alive unless either side says close.
class scripted_server {
public:
    using Handler = std::function<int(photon::net::http::Request&, photon::net::http::Response&,
                                      photon::net::ISocketStream*)>;

    scripted_server(photon::net::ISocketServer* server, Handler h)
        : server_(server), handler_(std::move(h)) {
        server_->set_handler({this, &scripted_server::serve});
        server_->start_loop(false);
    }
    // A TCP server on 127.0.0.1, ephemeral port.
    explicit scripted_server(Handler h) : scripted_server(listening_tcp(), std::move(h)) {}
    ~scripted_server() {
        server_->terminate();
        for (auto s : streams_) s->shutdown(ShutdownHow::ReadWrite);
        wait_for([&] { return streams_.empty(); }, 5000);
        server_.reset();
    }
    uint16_t port() { return server_->getsockname().port; }
    std::string url(const std::string& path = "/") {
        return "http://127.0.0.1:" + std::to_string(port()) + path;
    }
    int accepts = 0;   // connections served so far
    int requests = 0;  // requests received so far

    static photon::net::ISocketServer* listening_tcp() {
        auto s = photon::net::new_tcp_socket_server();
        if (s && (s->bind_v4localhost(0) < 0 || s->listen() < 0)) {
            delete s;
            return nullptr;
        }
        return s;
    }

private:
    int serve(photon::net::ISocketStream* s) {
        using namespace photon::net::http;
        accepts++;
        streams_.insert(s);
        InputBuffer in(s);
        Request req;
        req.reset(&in, s);
        while (req.receive_header() == 0) {
            requests++;
            Response resp;
            resp.reset(&in, s);
            resp.for_request(req.verb(), req.minor_version());
            if (handler_(req, resp, s) < 0 || resp.send() < 0) break;
            if (!req.keep_alive() || !resp.keep_alive() ||
                list_has_token(resp.headers["Connection"], "close"))
                break;
        }
        streams_.erase(s);
        return 0;
    }

    std::unique_ptr<photon::net::ISocketServer> server_;
    Handler handler_;
    std::set<photon::net::ISocketStream*> streams_;
};

// A child server that prints its port on its first output line; the
// port() is 0 if it did not start within 10 s.
class child_server {
public:
    child_server(std::vector<std::string> argv, const std::string& out)
        : out_(out), proc_(std::move(argv), "", out) {
        for (int i = 0; i < 1000 && proc_.started() && port_ == 0; i++) {
            std::ifstream f(out_);
            std::string line;
            if (std::getline(f, line) && !f.eof()) port_ = (uint16_t)atoi(line.c_str());
            if (port_ == 0) photon::thread_usleep(10 * 1000);
        }
    }
    uint16_t port() const { return port_; }
    std::string output() const { return slurp(out_); }

private:
    std::string out_;
    child_process proc_;
    uint16_t port_ = 0;
};

// python3's http.server on 127.0.0.1 serving `root`, speaking `protocol`
// (HTTP/1.0 or HTTP/1.1, keep-alive); prints "conn" per connection after the
// port line. idle_close_s > 0: closes connections idle that long.
inline std::vector<std::string> python_http_server(const temp_dir& tmp, const std::string& root,
                                                   const std::string& protocol,
                                                   double idle_close_s = 0) {
    tmp.write("server.py", R"(import http.server, os, sys
os.chdir(sys.argv[1])
class H(http.server.SimpleHTTPRequestHandler):
    protocol_version = sys.argv[2]
    timeout = float(sys.argv[3]) or None
    def setup(self):
        super().setup()
        print("conn", flush=True)
    def log_message(self, *args):
        pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print(srv.server_address[1], flush=True)
srv.serve_forever()
)");
    return {"python3", "-u", tmp.path("server.py"), root, protocol, std::to_string(idle_close_s)};
}

// Lines of text that hold `what`.
inline int count_lines(const std::string& text, const std::string& what) {
    int n = 0;
    size_t pos = 0;
    while ((pos = text.find(what, pos)) != std::string::npos) n++, pos += what.size();
    return n;
}

// nginx (no daemon, no master) on 127.0.0.1:port() with `server_body`
// inside its server block, root tmp/www; access.log lines are
// "$connection $request $status".
class nginx_server {
public:
    nginx_server(const temp_dir& tmp, const std::string& server_body) : tmp_(tmp) {
        port_ = free_loopback_port();
        std::filesystem::create_directories(tmp.path("www"));
        std::string t = tmp.path();
        tmp.write("nginx.conf",
                  "daemon off; master_process off; worker_processes 1;\n"
                  "error_log " +
                      t + "/error.log; pid " + t +
                      "/nginx.pid;\n"
                      "events { worker_connections 64; }\n"
                      "http {\n"
                      "  log_format conn '$connection $request $status';\n"
                      "  access_log " +
                      t +
                      "/access.log conn;\n"
                      "  client_body_temp_path " +
                      t + "/body; proxy_temp_path " + t +
                      "/proxy;\n"
                      "  fastcgi_temp_path " +
                      t + "/fcgi; uwsgi_temp_path " + t +
                      "/uwsgi;\n"
                      "  scgi_temp_path " +
                      t +
                      "/scgi;\n"
                      "  server {\n"
                      "    listen 127.0.0.1:" +
                      std::to_string(port_) +
                      ";\n"
                      "    root " +
                      t + "/www;\n" + server_body + "\n  }\n}\n");
        proc_.reset(
            new child_process({"nginx", "-e", t + "/error.log", "-p", t, "-c", t + "/nginx.conf"},
                              "", t + "/nginx.out"));
        ok_ = proc_->started() && wait_until_listening(port_);
    }
    bool ok() const { return ok_; }
    uint16_t port() const { return port_; }
    std::string url(const std::string& path) const {
        return "http://127.0.0.1:" + std::to_string(port_) + path;
    }
    std::string access_log() const { return slurp(tmp_.path("access.log")); }
    std::string error_log() const { return slurp(tmp_.path("error.log")); }
    // The distinct $connection numbers of the access log lines holding `what`.
    std::set<std::string> connections(const std::string& what) const {
        std::set<std::string> conns;
        std::istringstream log(access_log());
        std::string line;
        while (std::getline(log, line))
            if (line.find(what) != std::string::npos) conns.insert(line.substr(0, line.find(' ')));
        return conns;
    }

private:
    const temp_dir& tmp_;
    uint16_t port_ = 0;
    bool ok_ = false;
    std::unique_ptr<child_process> proc_;
};

// Reads the rest of op's body; "<error N>" on failure.
inline std::string body_of(photon::net::http::Client::Operation* op) {
    std::string out;
    char buf[16384];
    while (true) {
        ssize_t n = op->resp.read(buf, sizeof(buf));
        if (n < 0) return "<error " + std::to_string(errno) + ">";
        if (n == 0) return out;
        out.append(buf, n);
    }
}

// A handler's answer: `status` with `body` (Content-Length). 0, or -1.
inline int reply(photon::net::http::Response& resp, const std::string& body, int status = 200) {
    resp.set_result(status);
    resp.headers.content_length(body.size());
    return resp.write(body.data(), body.size()) == (ssize_t)body.size() ? 0 : -1;
}

// The rest of a request's body.
inline std::string read_all(photon::net::http::Request& req) {
    std::string s;
    char buf[16384];
    ssize_t n;
    while ((n = req.read(buf, sizeof(buf))) > 0) s.append(buf, n);
    return s;
}

}  // namespace photon_test
