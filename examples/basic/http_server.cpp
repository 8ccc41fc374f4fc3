// http-server: an HTTP server (HTTP/1.1 and HTTP/2) with a handler of its
// own and a static directory.
//
//   http-server [PORT] [DIR] [--cert CERT.pem --key KEY.pem] [--debug]
//                                (defaults 8080 and the current directory)
//   --debug also serves /metrics (Prometheus text) and /debug/coroutines (the coroutine dump);
//   tools/photon-top.py http://127.0.0.1:8080/metrics shows them live.
//   curl http://127.0.0.1:8080/hello?name=you
//   curl --http2-prior-knowledge http://127.0.0.1:8080/files/README.md   (h2c)
//   curl -k https://127.0.0.1:8080/hello          (with --cert/--key: h2 by ALPN)
//
// Keep-alive, pipelining, HTTP/2 streams, Range requests and the timeouts
// that stop slow clients come with the server (photon/net/http/server.h,
// ServerOptions).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include <photon/common/alog.h>
#include <photon/fs/localfs.h>
#include <photon/net/http/server.h>
#include <photon/net/security-context/tls-stream.h>
#include <photon/net/socket.h>
#include <photon/photon.h>

using namespace photon::net::http;

// GET /hello?name=X answers "hello, X". Runs in the connection's coroutine:
// blocking calls here park it, not the server.
static int hello(Request& req, Response& resp, std::string_view /* pattern */) {
    std::string_view query = req.query();
    std::string name = query.substr(0, 5) == "name=" ? std::string(query.substr(5)) : "world";
    std::string body = "hello, " + name + "\n";
    resp.set_result(200);
    resp.headers.insert("Content-Type", "text/plain");
    resp.headers.content_length(body.size());
    return resp.write(body.data(), body.size()) == (ssize_t)body.size() ? 0 : -1;
}

static std::string slurp(const char* path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

int main(int argc, char** argv) {
    const char *cert = nullptr, *key = nullptr;
    bool debug = false;
    const char* args[2] = {"8080", "."};
    for (int i = 1, n = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--cert") && i + 1 < argc)
            cert = argv[++i];
        else if (!strcmp(argv[i], "--key") && i + 1 < argc)
            key = argv[++i];
        else if (!strcmp(argv[i], "--debug"))
            debug = true;
        else if (n < 2)
            args[n++] = argv[i];
    }
    uint16_t port = (uint16_t)atoi(args[0]);
    const char* dir = args[1];
    set_log_output_level(ALOG_WARN);  // photon logs INFO lines by default
    if (photon::init(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE) != 0) return 1;

    // Files under /files/ come from DIR (paths cannot leave it), read with psync.
    auto fs = photon::fs::new_localfs_adaptor(dir, photon::fs::ioengine_psync);
    auto http = new_http_server();
    http->add_handler(hello, "/hello");
    http->add_handler(new_fs_handler(fs), true, "/files/");  // the server owns the handler
    if (debug) {  // what the process is doing: for operators (this server is on 127.0.0.1)
        http->add_handler(new_metrics_handler(), true, "/metrics");
        http->add_handler(new_thread_dump_handler(), true, "/debug/coroutines");
    }

    // With a certificate: TLS, offering h2 and http/1.1 by ALPN. Without: plain
    // HTTP/1.1, and h2c for clients that start with the HTTP/2 preface.
    std::unique_ptr<photon::net::TLSContext> tls;
    photon::net::ISocketServer* tcp = photon::net::new_tcp_socket_server();
    if (cert && key) {
        tls.reset(photon::net::new_tls_context(slurp(cert).c_str(), slurp(key).c_str()));
        if (!tls || tls->set_alpn_protos({"h2", "http/1.1"}) != 0) {
            fprintf(stderr, "http-server: cannot use the certificate %s and key %s\n", cert, key);
            return 1;
        }
        tcp = photon::net::new_tls_server(tls.get(), tcp, true);
    }
    tcp->set_handler(http->get_connection_handler());
    if (!fs || tcp->bind_v4localhost(port) != 0 || tcp->listen() != 0) {
        perror("http-server: cannot start");
        return 1;
    }
    printf("http-server: %s://127.0.0.1:%u/hello and /files/ (from %s)\n", tls ? "https" : "http",
           port, dir);
    fflush(stdout);
    tcp->start_loop(true);  // serves until the process ends
    delete tcp;
    delete http;
    delete fs;
    photon::fini();
}
