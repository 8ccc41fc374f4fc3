// hostile_server: the HTTP(S) server that test/hostile/hostile_client.py
// attacks. Short deadlines (hundreds of milliseconds) so that every stall is
// cut quickly; handlers /echo (reads the body, answers its length), /text (a
// fixed body, the request body left unread) and /big (8 MiB).
//
//   hostile_server [-d MS] PORT [CERT KEY]
//     PORT 0: any; with CERT and KEY: HTTPS. -d: every deadline (head,
//     keep-alive, body, send, TLS handshake) MS milliseconds instead of the
//     suite's short ones, for tools/deadline-accuracy.py. HOSTILE_ENGINE
//     (epoll|iouring) in the environment picks the event engine.
//
// Logs to stderr. Prints "listening PORT", serves until SIGTERM or SIGINT, stops the server
// gracefully and prints "fds N" (its open descriptors, for a leak check)
// before exiting 0.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include <photon/common/alog.h>
#include <photon/net/http/message.h>
#include <photon/net/http/server.h>
#include <photon/net/security-context/tls-stream.h>
#include <photon/net/socket.h>
#include <photon/photon.h>
#include <photon/thread/thread.h>

#include "../util/fd_count.h"
#include "hostile_util.h"

namespace {

using namespace photon::net;
using namespace photon::net::http;

constexpr uint64_t kMs = 1000;
constexpr size_t kBigSize = 8 << 20;

class hostile_handlers : public HTTPHandler {
public:
    int handle_request(Request& req, Response& resp, std::string_view pattern) override {
        if (pattern == "=/echo") return echo(req, resp);
        if (pattern == "=/big") return big(resp);
        return answer(resp, "hostile server says hello\n");
    }

private:
    static int answer(Response& resp, const std::string& body) {
        resp.headers.content_length(body.size());
        return resp.write(body.data(), body.size()) == (ssize_t)body.size() ? 0 : -1;
    }
    static int echo(Request& req, Response& resp) {
        char buf[16384];
        uint64_t total = 0;
        ssize_t n;
        while ((n = req.read(buf, sizeof(buf))) > 0) total += n;
        if (n < 0) return -1;  // the server answers the body's error (400, 408, 413)
        return answer(resp, "length " + std::to_string(total) + "\n");
    }
    static int big(Response& resp) {
        static const std::string chunk(64 * 1024, 'x');
        resp.headers.content_length(kBigSize);
        for (size_t sent = 0; sent < kBigSize; sent += chunk.size())
            if (resp.write(chunk.data(), chunk.size()) != (ssize_t)chunk.size()) return -1;
        return 0;
    }
};

int serve(uint16_t port, const char* cert, const char* key, uint64_t deadline_ms) {
    ServerOptions opt;
    opt.header_timeout = (deadline_ms ? deadline_ms : 500) * kMs;
    opt.keepalive_timeout = (deadline_ms ? deadline_ms : 500) * kMs;
    opt.body_timeout = (deadline_ms ? deadline_ms : 400) * kMs;
    opt.send_timeout = (deadline_ms ? deadline_ms : 400) * kMs;
    opt.body_min_rate = 1024;
    opt.send_min_rate = 1024;
    std::unique_ptr<HTTPServer> http(new_http_server(opt));
    hostile_handlers handlers;
    http->add_handler(&handlers, false, "=/echo");
    http->add_handler(&handlers, false, "=/big");
    http->add_handler(&handlers, false, "");

    std::unique_ptr<TLSContext> tls;
    std::unique_ptr<ISocketServer> server(new_tcp_socket_server());
    if (!server) return perror("hostile_server: tcp server"), -1;
    if (cert) {
        tls.reset(new_tls_context_from_files(cert, key));
        if (!tls) return perror("hostile_server: TLS context"), -1;
        if (tls->set_handshake_timeout((deadline_ms ? deadline_ms : 500) * kMs) < 0)
            return perror("hostile_server: set_handshake_timeout"), -1;
        server.reset(new_tls_server(tls.get(), server.release(), true));
        if (!server) return perror("hostile_server: TLS server"), -1;
    }
    if (server->bind_v4localhost(port) < 0 || server->listen(1024) < 0)
        return perror("hostile_server: bind/listen"), -1;
    server->set_handler(http->get_connection_handler());
    if (server->start_loop(false) < 0) return perror("hostile_server: start_loop"), -1;
    printf("listening %u\n", (unsigned)server->getsockname().port);
    fflush(stdout);

    while (!hostile::g_stop.load(std::memory_order_relaxed)) photon::thread_usleep(50 * kMs);
    server->terminate();
    if (http->stop(5'000 * kMs) < 0) perror("hostile_server: stop");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const char* prog = argv[0];
    uint64_t deadline_ms = 0;
    if (argc >= 3 && !strcmp(argv[1], "-d") && atoi(argv[2]) > 0) {
        deadline_ms = (uint64_t)atoi(argv[2]);
        argc -= 2;
        argv += 2;
    }
    if ((argc != 2 && argc != 4) || strspn(argv[1], "0123456789") != strlen(argv[1])) {
        fprintf(stderr, "usage: %s [-d MS] PORT [CERT KEY]\n", prog);
        return 2;
    }
    if (int r = hostile::start("hostile_server")) return r;
    int r = serve((uint16_t)atoi(argv[1]), argc == 4 ? argv[2] : nullptr,
                  argc == 4 ? argv[3] : nullptr, deadline_ms);
    printf("fds %d\n", photon_test::count_open_fds());
    fflush(stdout);
    photon::fini();
    return r < 0 ? 1 : 0;
}
