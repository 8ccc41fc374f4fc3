// PhotonLibOS socket-server semantics its own programs rely on:
// each test is written the way a Photon program uses the server, and names
// what differed before. Servers listen on 127.0.0.1 only.
#include <photon/photon.h>
#include <photon/common/alog.h>
#include <photon/fs/filesystem.h>
#include <photon/io/fd-events.h>
#include <photon/fs/localfs.h>
#include <photon/net/http/client.h>
#include <photon/net/http/server.h>
#include <photon/net/security-context/tls-stream.h>
#include <photon/net/socket.h>
#include <photon/rpc/rpc.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

#include <gtest/gtest.h>

#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../util/engine_fixture.h"
#include "../util/fds.h"
#include "../util/temp_dir.h"
#include "../util/tls_pair.h"
#include "../util/wait.h"

namespace {

using photon::net::ISocketServer;
using photon::net::ISocketStream;

double thread_cpu_seconds() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

// How to make one kind of server on the server's vCPU, and how to stop what
// serves its connections (HTTP, RPC) from another vCPU.
struct ServerKind {
    ServerKind(std::function<ISocketServer*()> m, bool u = false) : make(std::move(m)), uds(u) {}
    std::function<ISocketServer*()> make;
    bool uds;
    // Made on the server's vCPU: sets the handler; returns the object that
    // serves connections (or nullptr), deleted there after the loop.
    std::function<Object*(ISocketServer*)> serve_with;
    // Called from the terminating vCPU after terminate().
    std::function<void(Object*)> stop_serving;
};

int no_op_handler(void*, ISocketStream*) { return 0; }

// A server on its own OS thread and vCPU, running start_loop(true) until
// terminated, as PhotonLibOS's net-perf server runs each of its servers.
class ServerThread {
public:
    ServerThread(uint64_t engine, const ServerKind& kind) : engine_(engine), kind_(kind) {
        if (kind.uds) {
            snprintf(path_, sizeof(path_), "/tmp/photon-net-semantics-%d-%p.sock", (int)getpid(),
                     (void*)this);
            unlink(path_);
        }
        th_ = std::thread([this] { run(); });
    }
    ~ServerThread() {
        if (th_.joinable()) th_.join();
        if (path_[0]) unlink(path_);
    }
    // Waits (off the photon scheduler's clock) until the loop runs; false if
    // the server could not be set up.
    bool wait_running() {
        photon_test::wait_for_off_vcpu([&] { return state_.load() != 0; }, 20000);
        return state_.load() == 1;
    }
    ISocketServer* server() { return server_; }
    Object* serving() { return serving_; }
    ISocketStream* connect() {
        if (path_[0]) {
            std::unique_ptr<photon::net::ISocketClient> cli(photon::net::new_uds_client());
            return cli->connect(path_);
        }
        std::unique_ptr<photon::net::ISocketClient> cli(photon::net::new_tcp_socket_client());
        return cli->connect(photon::net::EndPoint(photon::net::IPAddr::V4Loopback(), port_));
    }
    bool loop_returned() const { return returned_.load(); }
    int loop_result() const { return result_; }
    // Lets the server's vCPU delete the server and what serves it.
    void release() { released_ = true; }
    void join() { th_.join(); }

private:
    void run() {
        if (photon::init(engine_, photon::INIT_IO_NONE) < 0) {
            state_ = 2;
            return;
        }
        server_ = kind_.make();
        photon::net::EndPoint ep;
        int bound = !server_ ? -1 : path_[0] ? server_->bind(path_) : server_->bind_v4localhost();
        if (bound < 0 || server_->listen() < 0 || (!path_[0] && server_->getsockname(ep) < 0)) {
            state_ = 2;
        } else {
            port_ = ep.port;
            server_->set_handler({nullptr, &no_op_handler});
            if (kind_.serve_with) serving_ = kind_.serve_with(server_);
            // Runs at start_loop's first switch, when the loop is registered:
            // a terminate() before that finds no loop to stop, and the loop
            // that starts after it would accept forever.
            photon::thread_create11([this] { state_ = 1; });
            result_ = server_->start_loop(true);
            returned_ = true;
            // What serves the connections is deleted once it is stopped.
            photon_test::wait_for([&] { return released_.load(); }, 60000);
        }
        delete server_;
        delete serving_;
        photon::fini();
    }

    uint64_t engine_;
    ServerKind kind_;
    char path_[108] = {};
    std::thread th_;
    ISocketServer* server_ = nullptr;
    Object* serving_ = nullptr;
    uint16_t port_ = 0;
    std::atomic<int> state_{0};  // 1 running, 2 failed
    std::atomic<bool> returned_{false}, released_{false};
    int result_ = -1;
};

class NetSemantics : public photon_test::EngineTest {};

// Runs f in a coroutine of this vCPU and waits at most max_ms for it. The
// watch is an OS thread of its own (a spinning f holds this vCPU), and a hang
// cannot be cleaned up (the server thread is stuck with it), so it ends the
// test program with a message instead of blocking ctest.
template <typename F>
void bounded(const char* what, F f, int max_ms = 30000) {
    std::atomic<bool> done{false};
    std::thread watch([&] {
        if (!photon_test::wait_for_off_vcpu([&] { return done.load(); }, max_ms)) {
            fprintf(stderr, "FAILED: %s did not return within %d ms\n", what, max_ms);
            _exit(1);
        }
    });
    f();
    done = true;
    watch.join();
}

// net-perf's shutdown: a watcher on the main vCPU terminates servers that
// each run start_loop(true) on a vCPU of their own, then stops what serves
// their connections. terminate() spun in waitq_sleep on a freed server.
void terminate_from_another_vcpu(uint64_t engine, const ServerKind& kind) {
    ServerThread st(engine, kind);
    ASSERT_TRUE(st.wait_running());
    // A connection held open across the stop: the loop has been in accept().
    std::unique_ptr<ISocketStream> conn(st.connect());
    if (!conn) st.release();
    ASSERT_NE(nullptr, conn);
    double cpu0 = thread_cpu_seconds();
    auto t0 = std::chrono::steady_clock::now();
    bounded("terminate()", [&] {
        st.server()->terminate();
        if (kind.stop_serving) kind.stop_serving(st.serving());
    });
    auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
            .count();
    double cpu = thread_cpu_seconds() - cpu0;
    EXPECT_TRUE(photon_test::wait_for([&] { return st.loop_returned(); }, 10000));
    EXPECT_EQ(0, st.loop_result());
    conn.reset();
    st.release();
    bounded("the server's exit", [&] { st.join(); });
    EXPECT_LT(ms, 10000);
    // A sleeping waiter burns next to nothing; a spinning one a core.
    EXPECT_LT(cpu, 0.5 + ms / 1000.0 * 0.3) << "terminate took " << ms << " ms";
    printf("terminate: %lld ms, %.3f s CPU\n", (long long)ms, cpu);
}

ServerKind tcp_kind() {
    return {[] { return photon::net::new_tcp_socket_server(); }};
}

TEST_P(NetSemantics, TerminateFromAnotherVcpuStopsABlockingTcpLoop) {
    terminate_from_another_vcpu(GetParam(), tcp_kind());
}

TEST_P(NetSemantics, TerminateFromAnotherVcpuStopsABlockingUdsLoop) {
    ServerKind k{[] { return photon::net::new_uds_server(true); }, true};
    terminate_from_another_vcpu(GetParam(), k);
}

TEST_P(NetSemantics, TerminateFromAnotherVcpuStopsABlockingIouringLoop) {
    std::string why;
    if (!photon_test::iouring_available(&why)) GTEST_SKIP() << why;
    terminate_from_another_vcpu(GetParam(),
                                ServerKind([] { return photon::net::new_iouring_tcp_server(); }));
}

TEST_P(NetSemantics, TerminateFromAnotherVcpuStopsABlockingTlsLoop) {
#if !PHOTON_HAVE_TLS
    GTEST_SKIP() << "photon was built without TLS (OpenSSL)";
#endif
    ServerKind k{[] {
        static auto ctx = photon::net::new_tls_context();
        return ctx ? photon::net::new_tls_server(ctx, photon::net::new_tcp_socket_server(), true)
                   : nullptr;
    }};
    terminate_from_another_vcpu(GetParam(), k);
}

// An HTTP server's kept-alive connection, stopped by stop() from the
// terminating vCPU.
TEST_P(NetSemantics, TerminateAndStopFromAnotherVcpuEndAnHttpServer) {
    ServerKind k = tcp_kind();
    k.serve_with = [](ISocketServer* s) -> Object* {
        auto http = photon::net::http::new_http_server();
        s->set_handler(http->get_connection_handler());
        return http;
    };
    k.stop_serving = [](Object* o) {
        EXPECT_EQ(0, static_cast<photon::net::http::HTTPServer*>(o)->stop(5000 * 1000));
    };
    terminate_from_another_vcpu(GetParam(), k);
}

int serve_rpc(void* sk, ISocketStream* s) {
    return static_cast<photon::rpc::Skeleton*>(sk)->serve(s);
}

// An RPC skeleton serving an idle connection, shut down from the
// terminating vCPU.
TEST_P(NetSemantics, TerminateAndShutdownFromAnotherVcpuEndAnRpcSkeleton) {
    ServerKind k = tcp_kind();
    k.serve_with = [](ISocketServer* s) -> Object* {
        auto sk = photon::rpc::new_skeleton();
        s->set_handler({sk, &serve_rpc});
        return sk;
    };
    k.stop_serving = [](Object* o) {
        EXPECT_EQ(0, static_cast<photon::rpc::Skeleton*>(o)->shutdown());
    };
    terminate_from_another_vcpu(GetParam(), k);
}

TEST_P(NetSemantics, TerminateJoinsABackgroundLoopFromAnotherVcpu) {
    std::atomic<ISocketServer*> srv{nullptr};
    std::atomic<bool> stop{false}, done{false};
    uint64_t engine = GetParam();
    std::thread t([&] {
        ASSERT_EQ(0, photon::init(engine, photon::INIT_IO_NONE));
        auto s = photon::net::new_tcp_socket_server();
        s->set_handler({nullptr, [](void*, ISocketStream*) { return 0; }});
        EXPECT_EQ(0, s->bind_v4localhost());
        EXPECT_EQ(0, s->listen());
        EXPECT_EQ(0, s->start_loop(false));
        srv = s;
        while (!stop) photon::thread_usleep(1000);
        delete s;
        photon::fini();
        done = true;
    });
    ASSERT_TRUE(photon_test::wait_for([&] { return srv.load() != nullptr; }, 20000));
    double cpu0 = thread_cpu_seconds();
    bounded("terminate()", [&] { srv.load()->terminate(); });
    EXPECT_LT(thread_cpu_seconds() - cpu0, 2.0);
    stop = true;
    t.join();
    EXPECT_TRUE(done);
}

// Photon's KernelSocketServer reads its handler for each connection: a
// server may start its loop first and be given the handler after.
TEST_P(NetSemantics, StartLoopBeforeSetHandlerIsAccepted) {
    auto srv = photon::net::new_tcp_socket_server();
    ASSERT_NE(nullptr, srv);
    ASSERT_EQ(0, srv->bind_v4localhost());
    ASSERT_EQ(0, srv->listen());
    photon::net::EndPoint ep;
    ASSERT_EQ(0, srv->getsockname(ep));
    ASSERT_EQ(0, srv->start_loop(false));
    static std::atomic<int> handled;
    handled = 0;
    srv->set_handler({nullptr, [](void*, ISocketStream* s) {
                          handled++;
                          char c = 'x';
                          return (int)s->write(&c, 1);
                      }});
    auto cli = photon::net::new_tcp_socket_client();
    auto conn = cli->connect(ep);
    ASSERT_NE(nullptr, conn);
    char c = 0;
    EXPECT_EQ(1, conn->read(&c, 1));
    EXPECT_EQ('x', c);
    EXPECT_EQ(1, handled.load());
    delete conn;
    delete cli;
    delete srv;
}

// A bind that fails (the port is taken) leaves the server as it was: a
// retry on a free port works.
TEST_P(NetSemantics, BindRetriesAfterAFailedBind) {
    auto taken = photon::net::new_tcp_socket_server();
    ASSERT_EQ(0, taken->bind_v4localhost());
    ASSERT_EQ(0, taken->listen());
    photon::net::EndPoint ep;
    ASSERT_EQ(0, taken->getsockname(ep));
    auto srv = photon::net::new_tcp_socket_server();
    EXPECT_EQ(-1, srv->bind(ep));
    EXPECT_EQ(EADDRINUSE, errno);
    EXPECT_EQ(0, srv->bind_v4localhost()) << strerror(errno);
    EXPECT_EQ(0, srv->listen());
    photon::net::EndPoint ep2;
    EXPECT_EQ(0, srv->getsockname(ep2));
    EXPECT_NE(ep.port, ep2.port);
    delete srv;
    delete taken;
}

// An output that keeps the levels of the lines written to it.
class Levels : public ILogOutput {
public:
    std::mutex mu;
    std::vector<int> levels;
    std::vector<std::string> lines;
    void write(int level, const char* begin, const char* end) override {
        std::lock_guard<std::mutex> g(mu);
        levels.push_back(level);
        lines.emplace_back(begin, end);
    }
    int get_log_file_fd() override { return -1; }
    uint64_t set_throttle(uint64_t t = -1ULL) override { return t; }
    uint64_t get_throttle() override { return -1ULL; }
    void destruct() override {}
};

// A server with an accept timeout and no clients: each timeout is a failed
// call the loop handles, not an error in the log.
TEST_P(NetSemantics, AcceptTimeoutsAreNotLoggedAsErrors) {
    auto srv = photon::net::new_tcp_socket_server();
    ASSERT_EQ(0, srv->bind_v4localhost());
    ASSERT_EQ(0, srv->listen());
    srv->timeout(2000);  // 2 ms
    srv->set_handler({nullptr, [](void*, ISocketStream*) { return 0; }});
    Levels out;
    auto saved = default_logger.log_output;
    auto saved_level = default_logger.log_level;
    set_log_output(&out);
    set_log_output_level(ALOG_DEBUG);
    ASSERT_EQ(0, srv->start_loop(false));
    photon::thread_usleep(50 * 1000);  // some 25 timeouts
    delete srv;
    set_log_output(saved);
    set_log_output_level(saved_level);
    for (size_t i = 0; i < out.levels.size(); i++)
        EXPECT_LT(out.levels[i], ALOG_ERROR) << out.lines[i];
}

// A plain-text peer instead of a TLS client: Photon's server-role
// new_tls_stream returns a stream whose I/O fails; handlers written for it
// use the stream without a check (it returned nullptr, and they crashed).
TEST_P(NetSemantics, ATlsStreamOverAFailedHandshakeFailsItsIo) {
#if !PHOTON_HAVE_TLS
    GTEST_SKIP() << "photon was built without TLS (OpenSSL)";
#endif
    std::unique_ptr<photon::net::TLSContext> ctx(photon::net::new_tls_context());
    ASSERT_NE(nullptr, ctx);
    std::unique_ptr<ISocketServer> srv(photon::net::new_tcp_socket_server());
    ASSERT_EQ(0, srv->bind_v4localhost());
    ASSERT_EQ(0, srv->listen());
    photon::net::EndPoint ep;
    ASSERT_EQ(0, srv->getsockname(ep));
    std::unique_ptr<photon::net::ISocketClient> cli(photon::net::new_tcp_socket_client());
    std::unique_ptr<ISocketStream> plain(cli->connect(ep));
    ASSERT_NE(nullptr, plain);
    const char req[] = "GET / HTTP/1.0\r\n\r\n";
    ASSERT_EQ((ssize_t)sizeof(req) - 1, plain->write(req, sizeof(req) - 1));
    std::unique_ptr<ISocketStream> raw(srv->accept());
    ASSERT_NE(nullptr, raw);
    raw->timeout(10 * 1000 * 1000);
    std::unique_ptr<ISocketStream> tls(
        photon::net::new_tls_stream(ctx.get(), raw.get(), photon::net::SecurityRole::Server));
    ASSERT_NE(nullptr, tls);
    char buf[8];
    EXPECT_EQ(-1, tls->read(buf, sizeof(buf)));
    EXPECT_NE(0, errno);
    EXPECT_EQ(-1, tls->write("x", 1));
    struct iovec none[1] = {{buf, 0}};
    EXPECT_GE(0, tls->writev(none, 1));
}

// Photon's TLS writev of an empty vector writes nothing and returns 0.
TEST_P(NetSemantics, TlsWritevOfAnEmptyVectorReturnsZero) {
#if !PHOTON_HAVE_TLS
    GTEST_SKIP() << "photon was built without TLS (OpenSSL)";
#endif
    photon_test::tls_pair pair;
    PHOTON_TEST_MAKE_TLS_PAIR(pair);
    std::unique_ptr<ISocketServer> srv(photon::net::new_tcp_socket_server());
    ASSERT_EQ(0, srv->bind_v4localhost());
    ASSERT_EQ(0, srv->listen());
    photon::net::EndPoint ep;
    ASSERT_EQ(0, srv->getsockname(ep));
    std::unique_ptr<ISocketStream> raw, stls;
    auto th = photon::thread_enable_join(photon::thread_create11([&] {
        raw.reset(srv->accept());
        if (!raw) return;
        raw->timeout(10 * 1000 * 1000);
        stls.reset(photon::net::new_tls_stream(pair.server.get(), raw.get(),
                                               photon::net::SecurityRole::Server));
        char c;
        if (stls && stls->read(&c, 1) == 1) stls->write(&c, 1);
    }));
    std::unique_ptr<photon::net::ISocketClient> cli(
        photon::net::new_tls_client(pair.client.get(), photon::net::new_tcp_socket_client(), true));
    cli->timeout(10 * 1000 * 1000);
    std::unique_ptr<ISocketStream> s(cli->connect(ep));
    ASSERT_NE(nullptr, s);
    ASSERT_EQ(0, photon::net::tls_stream_set_hostname(s.get(), "localhost"));
    char b = 'y';
    struct iovec empty1[1] = {{nullptr, 0}};
    struct iovec empty2[2] = {{&b, 0}, {nullptr, 0}};
    EXPECT_EQ(0, s->writev(empty1, 0));  // before the handshake
    EXPECT_EQ(0, s->writev(empty1, 1));
    EXPECT_EQ(0, s->writev(empty2, 2));
    EXPECT_EQ(0, s->writev(nullptr, 0));
    EXPECT_EQ(1, s->write("z", 1));
    EXPECT_EQ(0, s->writev(empty1, 1));  // after it
    EXPECT_EQ(0, s->writev(empty2, 2));
    char c = 0;
    EXPECT_EQ(1, s->read(&c, 1));
    EXPECT_EQ('z', c);
    photon::thread_join(th);
}

// An HTTP server with Photon's fs handler over a directory holding "f"
// (100 bytes), and a client, on this vCPU.
class FsHandlerServer {
public:
    FsHandlerServer() {
        std::string data(100, 'a');
        for (size_t i = 0; i < data.size(); i++) data[i] = 'a' + i % 26;
        data_ = data;
        FILE* f = fopen((dir_.path() + "/f").c_str(), "w");
        if (f) {
            fwrite(data.data(), 1, data.size(), f);
            fclose(f);
        }
        fs_.reset(photon::fs::new_localfs_adaptor(dir_.path().c_str()));
        http_.reset(photon::net::http::new_http_server());
        http_->add_handler(photon::net::http::new_fs_handler(fs_.get()), true, "/");
        tcp_.reset(photon::net::new_tcp_socket_server());
        tcp_->set_handler(http_->get_connection_handler());
        photon::net::EndPoint ep;
        if (tcp_->bind_v4localhost() == 0 && tcp_->listen() == 0 && tcp_->getsockname(ep) == 0 &&
            tcp_->start_loop(false) == 0)
            url_ = "http://127.0.0.1:" + std::to_string(ep.port) + "/f";
        client_.reset(photon::net::http::new_http_client());
    }
    ~FsHandlerServer() {
        client_.reset();
        tcp_->terminate();
        http_.reset();
        tcp_.reset();
    }
    bool ok() const { return !url_.empty() && fs_ && client_; }
    // status, Content-Range, Content-Length and the body of a call
    struct answer {
        int ret = -1, status = -1;
        std::string content_range, content_length, body;
    };
    answer call(photon::net::http::Verb v, const char* range, bool with_content_length = false) {
        answer a;
        auto op = client_->new_operation(v, url_);
        op->timeout = photon::Timeout(10 * 1000 * 1000);
        if (range) op->req.headers.insert("Range", range);
        if (with_content_length) op->req.headers.content_length(100);
        a.ret = op->call();
        if (a.ret == 0) {
            a.status = op->status_code;
            a.content_range = std::string(op->resp.headers["Content-Range"]);
            a.content_length = std::string(op->resp.headers["Content-Length"]);
            char buf[256];
            ssize_t n;
            while (v != photon::net::http::Verb::HEAD && (n = op->resp.read(buf, sizeof(buf))) > 0)
                a.body.append(buf, n);
        }
        op->destroy();
        return a;
    }
    const std::string& data() const { return data_; }

private:
    photon_test::temp_dir dir_;
    std::string data_, url_;
    std::unique_ptr<photon::fs::IFileSystem> fs_;
    std::unique_ptr<photon::net::http::HTTPServer> http_;
    std::unique_ptr<ISocketServer> tcp_;
    std::unique_ptr<photon::net::http::Client> client_;
};

// Photon's fs handler answers 200 when the range covers the whole file.
TEST_P(NetSemantics, FsHandlerAnswersARangeOfTheWholeFileWith200) {
    FsHandlerServer s;
    ASSERT_TRUE(s.ok());
    for (const char* r : {"bytes=0-", "bytes=0-99", "bytes=-100", "bytes=-1000", "bytes=0-1000"}) {
        SCOPED_TRACE(r);
        auto a = s.call(photon::net::http::Verb::GET, r);
        ASSERT_EQ(0, a.ret);
        EXPECT_EQ(200, a.status);
        EXPECT_EQ("", a.content_range);
        EXPECT_EQ(s.data(), a.body);
    }
    auto a = s.call(photon::net::http::Verb::GET, "bytes=1-");
    EXPECT_EQ(206, a.status);
    EXPECT_EQ("bytes 1-99/100", a.content_range);
}

// Photon's fs handler answers HEAD with a Range as it answers GET: 206 and
// the Content-Range and Content-Length of the range.
TEST_P(NetSemantics, FsHandlerAnswersHeadWithARangeWith206) {
    FsHandlerServer s;
    ASSERT_TRUE(s.ok());
    auto a = s.call(photon::net::http::Verb::HEAD, "bytes=10-19");
    ASSERT_EQ(0, a.ret);
    EXPECT_EQ(206, a.status);
    EXPECT_EQ("bytes 10-19/100", a.content_range);
    EXPECT_EQ("10", a.content_length);
    auto b = s.call(photon::net::http::Verb::GET, "bytes=10-19");  // the connection still works
    EXPECT_EQ(206, b.status);
    EXPECT_EQ(s.data().substr(10, 10), b.body);
}

// Photon programs set Content-Length on every request, HEAD included.
TEST_P(NetSemantics, HeadWithARequestContentLengthSucceeds) {
    FsHandlerServer s;
    ASSERT_TRUE(s.ok());
    auto a = s.call(photon::net::http::Verb::HEAD, nullptr, true);
    ASSERT_EQ(0, a.ret) << strerror(errno);
    EXPECT_EQ(200, a.status);
    EXPECT_EQ("100", a.content_length);
    auto b = s.call(photon::net::http::Verb::HEAD, "bytes=0-9", true);
    ASSERT_EQ(0, b.ret) << strerror(errno);
    EXPECT_EQ(206, b.status);
}

// Photon's Operation::set_proxy turns the request line to absolute form at
// once when the operation had no proxy; with one already, it leaves it.
class NetSemanticsHttp : public photon_test::VcpuTest {};

TEST_F(NetSemanticsHttp, OperationSetProxyRewritesTheTargetAtOnce) {
    std::unique_ptr<photon::net::http::Client> client(photon::net::http::new_http_client());
    auto op = client->new_operation(photon::net::http::Verb::GET, "http://example.com/path?q=1");
    EXPECT_FALSE(op->enable_proxy);
    EXPECT_EQ("/path?q=1", op->req.target());
    EXPECT_EQ(0, op->set_proxy("http://myproxy:3128"));
    EXPECT_TRUE(op->enable_proxy);
    EXPECT_EQ("http://example.com/path?q=1", op->req.target());
    EXPECT_EQ("example.com", op->req.headers["Host"]);
    op->clear_proxy();
    EXPECT_TRUE(op->enable_proxy);
    EXPECT_EQ("http://example.com/path?q=1", op->req.target());
    op->destroy();

    client->set_proxy("http://default-proxy:8080");
    op = client->new_operation(photon::net::http::Verb::GET, "http://example.com/path");
    EXPECT_TRUE(op->enable_proxy);
    std::string before(op->req.target());
    EXPECT_EQ(0, op->set_proxy("http://op-proxy:9090"));
    EXPECT_EQ(before, op->req.target());
    op->clear_proxy();
    EXPECT_EQ(before, op->req.target());
    op->destroy();
}

int answer_ok(void*, photon::net::http::Request&, photon::net::http::Response& resp,
              std::string_view) {
    resp.set_result(200);
    resp.headers.content_length(2);
    return resp.write("ok", 2) == 2 ? 0 : -1;
}

// A Photon program shares one http::Client among its vCPUs and deletes it
// on yet another after they are gone: every call succeeded, and the delete
// hung joining the pool's reaper on the vCPU of the first call, ended.
// home_first: the first call is this vCPU's, which lives on.
void client_shared_by_16_vcpus(uint64_t engine, bool home_first) {
    std::unique_ptr<photon::net::http::HTTPServer> http(photon::net::http::new_http_server());
    http->add_handler({nullptr, &answer_ok});
    std::unique_ptr<ISocketServer> tcp(photon::net::new_tcp_socket_server());
    tcp->set_handler(http->get_connection_handler());
    ASSERT_EQ(0, tcp->bind_v4localhost());
    ASSERT_EQ(0, tcp->listen());
    photon::net::EndPoint ep;
    ASSERT_EQ(0, tcp->getsockname(ep));
    ASSERT_EQ(0, tcp->start_loop(false));
    std::string url = "http://127.0.0.1:" + std::to_string(ep.port) + "/";
    auto client = photon::net::http::new_http_client();
    std::atomic<int> ok{0}, finished{0};
    auto calls = [&](int n) {
        for (int j = 0; j < n; j++) {
            auto op = client->new_operation(photon::net::http::Verb::GET, url);
            op->timeout = photon::Timeout(20 * 1000 * 1000);
            char buf[4];
            if (op->call() == 0 && op->status_code == 200 && op->resp.read(buf, 4) == 2) ok++;
            op->destroy();
        }
    };
    if (home_first) calls(1);
    constexpr int kVcpus = 16, kCalls = 4;
    std::vector<std::thread> threads;
    for (int i = 0; i < kVcpus; i++) {
        threads.emplace_back([&] {
            if (photon::init(engine, photon::INIT_IO_NONE) == 0) {
                calls(kCalls);
                photon::fini();
            }
            finished++;
        });
    }
    // This vCPU serves meanwhile.
    EXPECT_TRUE(photon_test::wait_for([&] { return finished.load() == kVcpus; }, 60000));
    for (auto& t : threads) t.join();
    EXPECT_EQ(kVcpus * kCalls + (home_first ? 1 : 0), ok.load());
    std::atomic<bool> deleted{false};
    bounded("deleting the client", [&] {
        std::thread del([&] {
            if (photon::init(engine, photon::INIT_IO_NONE) == 0) {
                delete client;
                photon::fini();
            }
            deleted = true;
        });
        // The pool's vCPU (this one, if home_first) runs while it goes.
        photon_test::wait_for([&] { return deleted.load(); }, 60000);
        del.join();
    });
    EXPECT_TRUE(deleted);
    tcp->terminate();
}

TEST_P(NetSemantics, AnHttpClientUsedFrom16VcpusIsDeletedOnAnother) {
    client_shared_by_16_vcpus(GetParam(), false);
}

TEST_P(NetSemantics, AnHttpClientUsedFrom16VcpusIsDeletedOnAnotherWhileItsPoolsVcpuRuns) {
    client_shared_by_16_vcpus(GetParam(), true);
}

// What one program sees of a pipe through a cascading engine: the number of
// reports of each of these waits: data written; waited again without
// reading it; more written; after it was all read.
std::vector<ssize_t> cascading_reports(photon::CascadingEventEngine* ce, uint32_t flags) {
    std::vector<ssize_t> seen;
    photon_test::pipe_fds p;
    if (!p.ok() || ce->add_interest({p.r, photon::EVENT_READ | flags, &p}) < 0) return seen;
    void* data[4];
    auto wait = [&](uint64_t us) { seen.push_back(ce->wait_for_events(data, 4, us)); };
    const uint64_t kLong = 10 * 1000 * 1000, kShort = 20 * 1000;
    p.put();
    wait(kLong);
    wait(kShort);  // still readable, no new data
    p.put();
    wait(kLong);
    char buf[8];
    while (read(p.r, buf, sizeof(buf)) > 0) {
    }
    wait(kShort);  // drained
    ce->rm_interest({p.r, photon::EVENT_READ | flags, &p});
    return seen;
}

// PhotonLibOS's io_uring cascading engine reports only new
// readiness (multishot poll), its epoll one reports while ready (level).
// Ours: the same on both, level-triggered unless EDGE_TRIGGERED, which gives
// io_uring Photon's "new readiness only" on either engine.
TEST_P(NetSemantics, BothCascadingEnginesReportTheSameReadiness) {
    std::string why;
    if (!photon_test::iouring_available(&why)) GTEST_SKIP() << why;
    std::unique_ptr<photon::CascadingEventEngine> ep(photon::new_epoll_cascading_engine());
    std::unique_ptr<photon::CascadingEventEngine> ur(photon::new_iouring_cascading_engine());
    ASSERT_NE(nullptr, ep);
    ASSERT_NE(nullptr, ur);
    std::vector<ssize_t> level = {1, 1, 1, 0}, edge = {1, 0, 1, 0};
    EXPECT_EQ(level, cascading_reports(ep.get(), 0));
    EXPECT_EQ(level, cascading_reports(ur.get(), 0));
    EXPECT_EQ(edge, cascading_reports(ep.get(), photon::EDGE_TRIGGERED));
    EXPECT_EQ(edge, cascading_reports(ur.get(), photon::EDGE_TRIGGERED));
}

PHOTON_INSTANTIATE_ENGINE_TESTS(NetSemantics);

}  // namespace
