// http-server: an HTTP/1.1 server with a handler of its own and a static
// directory.
//
//   http-server [PORT] [DIR]     (defaults 8080 and the current directory)
//   curl http://127.0.0.1:8080/hello?name=you
//   curl http://127.0.0.1:8080/files/README.md
//
// Keep-alive, pipelining, Range requests and the timeouts that stop slow
// clients come with the server (photon/net/http/server.h, ServerOptions).
#include <cstdio>
#include <cstdlib>
#include <string>

#include <photon/common/alog.h>
#include <photon/fs/localfs.h>
#include <photon/net/http/server.h>
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

int main(int argc, char** argv) {
    uint16_t port = argc > 1 ? (uint16_t)atoi(argv[1]) : 8080;
    const char* dir = argc > 2 ? argv[2] : ".";
    set_log_output_level(ALOG_WARN);  // photon logs INFO lines by default
    if (photon::init(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE) != 0) return 1;

    // Files under /files/ come from DIR (paths cannot leave it), read with psync.
    auto fs = photon::fs::new_localfs_adaptor(dir, photon::fs::ioengine_psync);
    auto http = new_http_server();
    http->add_handler(hello, "/hello");
    http->add_handler(new_fs_handler(fs), true, "/files/");  // the server owns the handler

    auto tcp = photon::net::new_tcp_socket_server();
    tcp->set_handler(http->get_connection_handler());
    if (!fs || tcp->bind_v4localhost(port) != 0 || tcp->listen() != 0) {
        perror("http-server: cannot start");
        return 1;
    }
    printf("http-server: http://127.0.0.1:%u/hello and /files/ (from %s)\n", port, dir);
    fflush(stdout);
    tcp->start_loop(true);  // serves until the process ends
    delete tcp;
    delete http;
    delete fs;
    photon::fini();
}
