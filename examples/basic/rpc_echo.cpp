// rpc-echo: an RPC service and its callers in one program, PhotonLibOS's
// rpc API over TCP on 127.0.0.1.
//
//   rpc-echo [CALLERS] [CALLS]      (defaults 8 and 1000)
//
// An operation is a struct with an interface id, a function id, and a
// Request and Response message; the server registers a class whose
// do_rpc_service() answers it. Many calls share one connection at once: the
// stub matches each reply to its caller.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <photon/common/alog.h>
#include <photon/net/socket.h>
#include <photon/photon.h>
#include <photon/rpc/rpc.h>
#include <photon/thread/thread11.h>

namespace rpc = photon::rpc;

// The operation: Greet(name) -> "hello, <name>".
struct Greet {
    const static uint32_t IID = 0x4701;  // the interface
    const static uint32_t FID = 1;       // the function in it
    struct Request : rpc::Message {
        uint32_t number = 0;
        rpc::string name;
        PROCESS_FIELDS(name);  // the variable-size fields; PODs travel as they are
    };
    struct Response : rpc::Message {
        uint32_t number = 0;
        rpc::string greeting;
        PROCESS_FIELDS(greeting);
    };
};

// The server side: one method per operation it serves.
struct Greeter {
    int do_rpc_service(Greet::Request* req, Greet::Response* resp, IOVector* iov, IStream*) {
        std::string text = "hello, " + std::string(req->name.sv());
        // The reply is sent after we return: its bytes go in `iov`'s buffers.
        char* out = (char*)iov->malloc(text.size() + 1);
        memcpy(out, text.c_str(), text.size() + 1);
        resp->greeting = std::string_view(out, text.size());
        resp->number = req->number;
        return 0;
    }
};

// The socket server's handler: the skeleton answers the connection's calls
// until the peer closes it.
static int serve_connection(rpc::Skeleton* skeleton, photon::net::ISocketStream* stream) {
    return skeleton->serve(stream);
}

int main(int argc, char** argv) {
    int callers = argc > 1 ? atoi(argv[1]) : 8;
    int calls = argc > 2 ? atoi(argv[2]) : 1000;
    set_log_output_level(ALOG_WARN);
    if (photon::init(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE) != 0) return 1;

    // Server: each connection is served by the skeleton in its own coroutine.
    Greeter greeter;
    auto skeleton = rpc::new_skeleton();
    skeleton->register_service<Greet>(&greeter);
    auto server = photon::net::new_tcp_socket_server();
    server->set_handler({skeleton, &serve_connection});
    if (server->bind_v4localhost(0) != 0 || server->listen() != 0) return perror("listen"), 1;
    server->start_loop(false);  // accepts in a coroutine of its own

    // Client: one connection, one stub, `callers` coroutines calling at once.
    auto factory = photon::net::new_tcp_socket_client();
    auto stub = rpc::new_rpc_stub(factory->connect(server->getsockname()), true);
    if (!stub) return perror("connect"), 1;
    int ok = 0, failed = 0;
    std::vector<photon::join_handle*> running;
    for (int c = 0; c < callers; c++) {
        auto th = photon::thread_create11([&, c] {
            std::string name = "caller " + std::to_string(c);
            for (int i = 0; i < calls; i++) {
                Greet::Request req;
                req.number = i;
                req.name = std::string_view(name);  // points at name's bytes: no copy
                Greet::Response resp;
                char buf[128];
                resp.greeting.assign(buf, sizeof(buf));             // the reply's text lands here
                int r = stub->call<Greet>(req, resp, 1000 * 1000);  // 1 s
                bool good =
                    r >= 0 && resp.number == (uint32_t)i && resp.greeting.sv() == "hello, " + name;
                good ? ok++ : failed++;
            }
        });
        running.push_back(photon::thread_enable_join(th));
    }
    for (auto jh : running) photon::thread_join(jh);
    printf("rpc-echo: %d calls answered, %d failed\n", ok, failed);

    delete stub;
    delete factory;
    server->terminate();
    skeleton->shutdown();
    delete server;
    delete skeleton;
    photon::fini();
    return failed == 0 && ok == callers * calls ? 0 : 1;
}
