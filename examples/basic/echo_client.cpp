// echo-client: sends messages to an echo server and checks every reply.
//
//   echo-client [PORT] [CONNECTIONS] [MESSAGES]     (defaults 9527 8 1000)
//
// Each connection is a coroutine that sends a message, waits for its echo and
// compares, MESSAGES times; all of them run at once on one vCPU.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <photon/net/socket.h>
#include <photon/common/alog.h>
#include <photon/photon.h>
#include <photon/thread/thread11.h>

struct totals {
    int ok = 0, failed = 0;
};

static void client(photon::net::ISocketClient* factory, photon::net::EndPoint ep, int id,
                   int messages, totals* t) {
    // connect() blocks this coroutine only; the stream closes when deleted.
    photon::net::ISocketStream* s = factory->connect(ep);
    if (!s) {
        t->failed += messages;
        return;
    }
    char out[64], in[64];
    for (int i = 0; i < messages; i++) {
        int n = snprintf(out, sizeof(out), "connection %d, message %d", id, i);
        // read() waits for all n bytes, as write() sends all of them.
        if (s->write(out, n) != n || s->read(in, n) != n || memcmp(in, out, n) != 0) {
            t->failed += messages - i;
            break;
        }
        t->ok++;
    }
    delete s;
}

int main(int argc, char** argv) {
    uint16_t port = argc > 1 ? (uint16_t)atoi(argv[1]) : 9527;
    int connections = argc > 2 ? atoi(argv[2]) : 8;
    int messages = argc > 3 ? atoi(argv[3]) : 1000;
    set_log_output_level(ALOG_WARN);  // photon logs INFO lines by default
    if (photon::init(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE) != 0) return 1;

    auto factory = photon::net::new_tcp_socket_client();
    photon::net::EndPoint ep(photon::net::IPAddr("127.0.0.1"), port);
    totals t;
    auto t0 = std::chrono::steady_clock::now();
    std::vector<photon::join_handle*> running;
    for (int id = 0; id < connections; id++) {
        // thread_create11 starts a coroutine with arguments, as std::thread would.
        auto th = photon::thread_create11(client, factory, ep, id, messages, &t);
        running.push_back(photon::thread_enable_join(th));
    }
    for (auto jh : running) photon::thread_join(jh);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    printf("echo-client: %d replies checked, %d failed, %.0f round trips/s\n", t.ok, t.failed,
           t.ok / s);
    delete factory;
    photon::fini();
    return t.failed == 0 && t.ok > 0 ? 0 : 1;
}
