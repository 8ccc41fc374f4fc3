// hostile_rpc_server: the RPC server (a Skeleton on a TCP server) that
// test/hostile/hostile_rpc.py attacks. Short deadlines so that every stall is
// cut quickly: 1 s frame timeout, 2 s idle timeout, 1 MiB message limit.
// Three operations: Sum (interface 0x4057, method 1): its request is a buffer,
// its reply the buffer's length and the sum of its bytes; Sleep (method 2):
// its request a u64 of milliseconds (at most 2,000) slept before an empty
// reply; Hold (method 3): a u64 of milliseconds and a buffer, held that long
// (memory without work, for tools/rpc-budget-bench.py). The wire layout is
// spelled out in hostile_rpc.py.
//
//   hostile_rpc_server PORT [BUDGET]   (PORT 0: any; BUDGET: the skeleton's
//                                      memory budget, bytes with an optional
//                                      K, M or G; the process-wide one if none)
//
// HOSTILE_ENGINE=epoll|iouring in the environment picks the event engine;
// where io_uring is refused it prints "io_uring not available" and exits 77.
//
// Prints "listening PORT", serves until SIGTERM or SIGINT, shuts the skeleton
// down (at most 5 s for running calls), prints "fds N" (its open
// descriptors, for a leak check) and exits 0.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <memory>

#include <photon/common/alog.h>
#include <photon/common/memory_budget.h>
#include <photon/net/socket.h>
#include <photon/photon.h>
#include <photon/rpc/rpc.h>
#include <photon/thread/thread.h>

#include "../util/fd_count.h"
#include "hostile_util.h"

namespace {

namespace rpc = photon::rpc;
using namespace photon::net;

constexpr uint64_t kMs = 1000;

struct Sum {
    const static uint32_t IID = 0x4057;
    const static uint32_t FID = 1;
    struct Request : rpc::Message {
        rpc::buffer data;
        PROCESS_FIELDS(data);
    };
    struct Response : rpc::Message {
        uint64_t length = 0;
        uint64_t sum = 0;
    };
};
struct Sleep {
    const static uint32_t IID = 0x4057;
    const static uint32_t FID = 2;
    struct Request : rpc::Message {
        uint64_t ms = 0;
    };
    struct Response : rpc::Message {};
};
// Hold (method 3): a buffer held for up to 2 s without work: memory, not CPU.
struct Hold {
    const static uint32_t IID = 0x4057;
    const static uint32_t FID = 3;
    struct Request : rpc::Message {
        uint64_t ms = 0;
        rpc::buffer data;
        PROCESS_FIELDS(data);
    };
    struct Response : rpc::Message {};
};
static_assert(sizeof(Hold::Request) == 24, "rpc-budget-bench.py sends 24 bytes of struct");
static_assert(sizeof(Sum::Request) == 16, "hostile_rpc.py sends 16 bytes of struct");
static_assert(sizeof(Sum::Response) == 16, "hostile_rpc.py reads 16 bytes of reply");

struct Service {
    int do_rpc_service(Sum::Request* req, Sum::Response* resp, IOVector*, IStream*) {
        auto p = (const unsigned char*)req->data.addr();
        resp->length = req->data.size();
        for (size_t i = 0; i < req->data.size(); i++) resp->sum += p[i];
        return 0;
    }
    int do_rpc_service(Sleep::Request* req, Sleep::Response*, IOVector*, IStream*) {
        photon::thread_usleep(std::min<uint64_t>(req->ms, 2000) * kMs);
        return 0;
    }
    int do_rpc_service(Hold::Request* req, Hold::Response*, IOVector*, IStream*) {
        photon::thread_usleep(std::min<uint64_t>(req->ms, 2000) * kMs);
        return 0;
    }
};

int serve(uint16_t port, size_t budget_bytes) {
    Service service;
    std::unique_ptr<rpc::Skeleton> sk(rpc::new_skeleton());
    if (!sk) return perror("hostile_rpc_server: skeleton"), -1;
    std::unique_ptr<photon::MemoryBudget> budget;
    if (budget_bytes) {
        budget.reset(new photon::MemoryBudget(budget_bytes));
        sk->set_memory_budget(budget.get());
    }
    sk->register_service<Sum, Sleep, Hold>(&service);
    sk->set_frame_timeout(1000 * kMs);
    sk->set_idle_timeout(2000 * kMs);
    sk->set_max_message_size(1 << 20);
    std::unique_ptr<ISocketServer> server(new_tcp_socket_server());
    if (!server) return perror("hostile_rpc_server: tcp server"), -1;
    if (server->bind_v4localhost(port) < 0 || server->listen(1024) < 0)
        return perror("hostile_rpc_server: bind/listen"), -1;
    server->set_handler(
        {sk.get(), [](void* sk, ISocketStream* s) { return ((rpc::Skeleton*)sk)->serve(s); }});
    if (server->start_loop(false) < 0) return perror("hostile_rpc_server: start_loop"), -1;
    printf("listening %u\n", (unsigned)server->getsockname().port);
    fflush(stdout);

    while (!hostile::g_stop.load(std::memory_order_relaxed)) photon::thread_usleep(50 * kMs);
    server->terminate();
    if (sk->shutdown(true, 5'000 * kMs) < 0) perror("hostile_rpc_server: shutdown");
    if (budget)
        printf("budget waits %llu sheds %llu\n", (unsigned long long)budget->waits(),
               (unsigned long long)budget->sheds());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    size_t budget = argc == 3 ? photon::MemoryBudget::parse_size(argv[2]) : 0;
    if (argc < 2 || argc > 3 || strspn(argv[1], "0123456789") != strlen(argv[1]) ||
        (argc == 3 && !budget)) {
        fprintf(stderr, "usage: %s PORT [BUDGET]\n", argv[0]);
        return 2;
    }
    if (int r = hostile::start("hostile_rpc_server")) return r;
    int r = serve((uint16_t)atoi(argv[1]), budget);
    printf("fds %d\n", photon_test::count_open_fds());
    fflush(stdout);
    photon::fini();
    return r < 0 ? 1 : 0;
}
