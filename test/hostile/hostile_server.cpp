// hostile_server: the HTTP(S) server that test/hostile/hostile_client.py
// attacks. Short deadlines (hundreds of milliseconds) so that every stall is
// cut quickly; handlers /echo (reads the body, answers its length), /text (a
// fixed body, the request body left unread), /big (8 MiB) and /ws (a
// WebSocket that echoes messages up to 64 KiB; test/hostile/hostile_websocket.py).
//
//   hostile_server [-d MS] [-w MS] [-m MS] [-b MIB] PORT [CERT KEY]
//     PORT 0: any; with CERT and KEY: HTTPS. -d: every deadline (head,
//     keep-alive, body, send, TLS handshake) MS milliseconds instead of the
//     suite's short ones, for tools/deadline-accuracy.py. -w / -m: the
//     WebSocket's idle_timeout / message_timeout (default: from the HTTP
//     deadlines). -b: a memory budget of MIB MiB (default: the process's).
//     HOSTILE_ENGINE (epoll|iouring) in the environment picks the event
//     engine. RLIMIT_NOFILE's soft limit is raised to the hard one.
//
// Logs to stderr. Prints "listening PORT", serves until SIGTERM or SIGINT, stops the server
// gracefully and prints "fds N" (its open descriptors, for a leak check)
// before exiting 0.
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include <photon/common/alog.h>
#include <photon/net/http/message.h>
#include <photon/common/memory_budget.h>
#include <photon/net/http/server.h>
#include <photon/net/http/websocket.h>
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

// /ws: echoes each message (up to 64 KiB) until the peer closes or fails.
struct ws_echo {
    int handle(IWebSocketStream* ws);
};

int ws_echo::handle(IWebSocketStream* ws) {
    std::unique_ptr<char[]> buf(new char[64 * 1024]);
    for (;;) {
        WebSocketOpcode op;
        ssize_t n = ws->recv_frame(buf.get(), 64 * 1024, &op);
        if (n < 0 || op == WebSocketOpcode::Close) return 0;
        if (op == WebSocketOpcode::Text && ws->send_text({buf.get(), (size_t)n}, 5'000 * kMs) < 0)
            return 0;
        if (op == WebSocketOpcode::Binary && ws->send_binary(buf.get(), n, 5'000 * kMs) < 0)
            return 0;
    }
}

struct Args {
    uint64_t deadline_ms = 0, ws_idle_ms = 0, ws_message_ms = 0, budget_mib = 0;
};

int serve(uint16_t port, const char* cert, const char* key, const Args& a) {
    uint64_t deadline_ms = a.deadline_ms;
    std::unique_ptr<photon::MemoryBudget> budget;
    if (a.budget_mib) budget.reset(new photon::MemoryBudget(a.budget_mib << 20));
    ServerOptions opt;
    opt.header_timeout = (deadline_ms ? deadline_ms : 500) * kMs;
    opt.keepalive_timeout = (deadline_ms ? deadline_ms : 500) * kMs;
    opt.body_timeout = (deadline_ms ? deadline_ms : 400) * kMs;
    opt.send_timeout = (deadline_ms ? deadline_ms : 400) * kMs;
    opt.body_min_rate = 1024;
    opt.send_min_rate = 1024;
    opt.memory_budget = budget.get();
    WebSocketOptions wso;
    wso.idle_timeout = a.ws_idle_ms * kMs;
    wso.message_timeout = a.ws_message_ms * kMs;
    std::unique_ptr<HTTPServer> http(new_http_server(opt));
    ws_echo echo;
    http->add_handler(new_websocket_handler({&echo, &ws_echo::handle}, wso), true, "=/ws");
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
    Args a;
    while (argc >= 3 && argv[1][0] == '-' && strlen(argv[1]) == 2 && atoi(argv[2]) > 0) {
        uint64_t v = (uint64_t)atoi(argv[2]);
        switch (argv[1][1]) {
            case 'd':
                a.deadline_ms = v;
                break;
            case 'w':
                a.ws_idle_ms = v;
                break;
            case 'm':
                a.ws_message_ms = v;
                break;
            case 'b':
                a.budget_mib = v;
                break;
            default:
                argc = 0;
                break;  // usage
        }
        if (argc == 0) break;
        argc -= 2;
        argv += 2;
    }
    if ((argc != 2 && argc != 4) || strspn(argv[1], "0123456789") != strlen(argv[1])) {
        fprintf(stderr, "usage: %s [-d MS] [-w MS] [-m MS] [-b MIB] PORT [CERT KEY]\n", prog);
        return 2;
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (int r = hostile::start("hostile_server")) return r;
    int r = serve((uint16_t)atoi(argv[1]), argc == 4 ? argv[2] : nullptr,
                  argc == 4 ? argv[3] : nullptr, a);
    printf("fds %d\n", photon_test::count_open_fds());
    fflush(stdout);
    photon::fini();
    return r < 0 ? 1 : 0;
}
