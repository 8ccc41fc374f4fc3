// echo-server: a TCP echo server, one coroutine per connection.
//
//   echo-server [PORT]          (default 9527; stop it with Ctrl-C)
//
// The handler is written as blocking code (recv, then send it back); each
// connection runs it in a coroutine of its own, and a blocked recv parks
// only that coroutine while the vCPU serves the others.
#include <cstdio>
#include <cstdlib>

#include <photon/common/alog.h>
#include <photon/net/socket.h>
#include <photon/photon.h>

// Called in a new coroutine for each accepted connection; the server deletes
// the stream when it returns.
static int echo(photon::net::ISocketStream* stream) {
    char buf[4096];
    while (true) {
        ssize_t n = stream->recv(buf, sizeof(buf));
        if (n <= 0) return 0;  // the peer closed (0) or the connection failed (-1)
        if (stream->write(buf, n) != n) return 0;  // write() sends all n bytes or fails
    }
}

int main(int argc, char** argv) {
    uint16_t port = argc > 1 ? (uint16_t)atoi(argv[1]) : 9527;
    // This thread becomes a vCPU: a scheduler with an event engine.
    set_log_output_level(ALOG_WARN);  // photon logs INFO lines by default
    if (photon::init(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE) != 0) return 1;

    auto server = photon::net::new_tcp_socket_server();
    if (!server || server->bind_v4localhost(port) != 0 || server->listen() != 0) {
        perror("echo-server: cannot listen");
        return 1;
    }
    printf("echo-server: listening on 127.0.0.1:%u\n", port);
    fflush(stdout);
    server->set_handler(echo);
    server->start_loop(true);  // accepts until the process ends
    delete server;
    photon::fini();
}
