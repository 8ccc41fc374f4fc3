// deadline_client: how late the HTTP client's deadline fires, for
// tools/deadline-accuracy.py. Runs TRIALS GET requests to URL (an origin that
// accepts and never answers, or answers too slowly), each with a whole-call
// deadline of MS milliseconds, and prints one line per trial:
//   elapsed_us N errno E
// measured with CLOCK_MONOTONIC around call(), independently of photon::now.
// With DRIP_URL, another coroutine meanwhile fetches DRIP_URL over and over
// (an origin that sends its answer a byte at a time), so that the vCPU wakes
// every few hundred milliseconds while the measured call waits.
//
//   deadline_client [-e epoll|iouring] MS TRIALS URL [DRIP_URL]
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <photon/net/http/client.h>
#include <photon/photon.h>
#include <photon/thread/thread11.h>

namespace {

using namespace photon::net::http;

uint64_t mono_us() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

bool g_dripping = true;

void drip_loop(Client* client, const char* url) {
    char buf[256];
    while (g_dripping) {
        std::unique_ptr<Client::Operation, void (*)(Client::Operation*)> op(
            client->new_operation(Verb::GET, url), [](Client::Operation* o) { delete o; });
        op->timeout = photon::Timeout(60'000'000);
        if (op->call() == 0)
            while (op->resp.read(buf, sizeof(buf)) > 0) {
            }
        photon::thread_usleep(10'000);
    }
}

}  // namespace

int main(int argc, char** argv) {
    const char* prog = argv[0];
    uint64_t engine = photon::INIT_EVENT_DEFAULT;
    if (argc >= 3 && !strcmp(argv[1], "-e")) {
        engine =
            !strcmp(argv[2], "iouring") ? photon::INIT_EVENT_IOURING : photon::INIT_EVENT_EPOLL;
        argc -= 2;
        argv += 2;
    }
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: %s [-e epoll|iouring] MS TRIALS URL [DRIP_URL]\n", prog);
        return 2;
    }
    uint64_t ms = strtoull(argv[1], nullptr, 10);
    int trials = atoi(argv[2]);
    if (photon::init(engine, photon::INIT_IO_NONE) < 0) return perror("photon::init"), 1;
    std::unique_ptr<Client> client(new_http_client());
    std::unique_ptr<Client> drip_client;
    if (argc == 5) {
        drip_client.reset(new_http_client());
        photon::thread_create11(drip_loop, drip_client.get(), argv[4]);
        photon::thread_usleep(50'000);  // the drip is under way
    }
    for (int i = 0; i < trials; i++) {
        auto op = client->new_operation(Verb::GET, argv[3]);
        op->timeout = photon::Timeout(ms * 1000);
        uint64_t t0 = mono_us();
        int r = op->call();
        int e = r < 0 ? errno : 0;
        uint64_t t1 = mono_us();
        delete op;
        printf("elapsed_us %llu errno %d\n", (unsigned long long)(t1 - t0), e);
        fflush(stdout);
    }
    // The drip coroutine may be parked in a long call: leave without joining.
    _exit(0);
}
