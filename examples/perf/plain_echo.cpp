// plain-echo: the plainest echo server a user would write against the public
// API, measured beside net-perf (see doc/performance.md).
//
//   plain-echo [port=9527] [epoll|io_uring|default]
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <photon/net/socket.h>
#include <photon/photon.h>
#include <photon/thread/thread.h>

static int echo(void*, photon::net::ISocketStream* s) {
    char buf[512];
    ssize_t n;
    while ((n = s->recv(buf, sizeof(buf))) > 0)
        if (s->write(buf, n) != n) break;
    return 0;
}

int main(int argc, char** argv) {
    uint16_t port = argc > 1 ? (uint16_t)atoi(argv[1]) : 9527;
    const char* engine = argc > 2 ? argv[2] : "default";
    uint64_t ev = !strcmp(engine, "epoll")      ? photon::INIT_EVENT_EPOLL
                  : !strcmp(engine, "io_uring") ? photon::INIT_EVENT_IOURING
                                                : photon::INIT_EVENT_DEFAULT;
    if (photon::init(ev, photon::INIT_IO_NONE) < 0) return perror("photon::init"), 1;
    auto server = photon::net::new_tcp_socket_server();
    if (server->bind_v4localhost(port) < 0 || server->listen() < 0) return perror("bind/listen"), 1;
    server->set_handler({nullptr, &echo});
    server->start_loop(true);  // until killed
    return 0;
}
