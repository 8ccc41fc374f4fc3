// The hard faults (ENOMEM, EIO, ECONNRESET), with the transparent ones mixed
// in, under a workload: echo over TCP (both engines, kernel and io_uring
// sockets), RPC calls, HTTP requests and file copies. Outcomes change, so
// each case checks invariants instead of results:
//   - no crash, no hang: every case is bounded in rounds and in time;
//   - a failure is -1 with the injected errno, or one that follows from a
//     fault on the other side (the peer closed: EOF, EPIPE, ECONNRESET), or a
//     clean error status (an HTTP 5xx, an RPC error reply);
//   - delivered bytes are exactly the sent prefix: nothing lost or doubled;
//   - no leak: the fd count is back to its baseline (and ASan's leak check,
//     in the sanitizer build, is clean).
// PHOTON_FAULT_SEED (default 1) and PHOTON_FAULT_P (default 0.02) choose the
// run; tools/fault-suites.sh runs it for several seeds.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <photon/common/alog.h>
#include <photon/common/fault_injection.h>
#include <photon/fs/filecopy.h>
#include <photon/fs/filesystem.h>
#include <photon/fs/localfs.h>
#include <photon/net/http/client.h>
#include <photon/net/http/server.h>
#include <photon/net/socket.h>
#include <photon/photon.h>
#include <photon/rpc/rpc.h>
#include <photon/thread/thread11.h>

#include "../util/engine_fixture.h"
#include "../util/fd_count.h"
#include "../util/hang_watch.h"
#include "../util/wait.h"

using namespace photon;
using namespace photon::net;

namespace {

uint64_t env_u64(const char* name, uint64_t dflt) {
    const char* v = getenv(name);
    return v && *v ? strtoull(v, nullptr, 0) : dflt;
}

double env_p() {
    const char* v = getenv("PHOTON_FAULT_P");
    return v && *v ? atof(v) : 0.02;
}

void arm(const char* kinds) {
    std::string spec = "seed=" + std::to_string(env_u64("PHOTON_FAULT_SEED", 1)) +
                       ",p=" + std::to_string(env_p()) + ",delay_us=500,kinds=" + kinds;
    ASSERT_EQ(0, fault::configure(spec.c_str())) << spec;
    fault::reset_counts();
}

using photon_test::count_open_fds;

// Connections the server is still closing may hold fds a little longer: the
// count is waited for (bounded), then must be back to what it was.
void expect_fds_back_to(int baseline) {
    photon_test::wait_for([&] { return count_open_fds() <= baseline; }, 2000);
    EXPECT_LE(count_open_fds(), baseline);
}

// The byte at offset o of stream `id`: a lost, doubled or misplaced byte
// shows as a mismatch.
inline char pattern(uint64_t id, uint64_t o) {
    return (char)((o * 131) ^ (o >> 9) ^ (id * 0x9E3779B1u));
}
void fill(char* buf, size_t n, uint64_t id, uint64_t off) {
    for (size_t i = 0; i < n; i++) buf[i] = pattern(id, off + i);
}
// Index of the first byte of buf[0..n) that is not stream id's at off, or n.
size_t first_mismatch(const char* buf, size_t n, uint64_t id, uint64_t off) {
    for (size_t i = 0; i < n; i++)
        if (buf[i] != pattern(id, off + i)) return i;
    return n;
}

using Clock = std::chrono::steady_clock;
bool over(Clock::time_point deadline) { return Clock::now() > deadline; }

// errno values seen by the failures, for the message of a failed check.
struct Errnos {
    std::map<int, int> seen;
    void add(int e) { seen[e]++; }
    std::string text() const {
        std::string s;
        for (auto& kv : seen)
            s += std::string(strerror(kv.first)) + " x" + std::to_string(kv.second) + "; ";
        return s;
    }
    // True if every one is in `allowed`.
    bool only(std::initializer_list<int> allowed) const {
        for (auto& kv : seen) {
            bool ok = false;
            for (int a : allowed) ok |= kv.first == a;
            if (!ok) return false;
        }
        return true;
    }
};

constexpr uint64_t kIoTimeoutUs = 10 * 1000 * 1000;  // a hang, not a slow call
constexpr auto kCaseTime = std::chrono::seconds(6);

// A case runs about kCaseTime plus a few I/O timeouts at worst.
static photon_test::HangWatch hang_watch(120);

// ---- echo over TCP ------------------------------------------------------------

struct EchoParam {
    uint64_t engine;
    bool iouring_socket;
};

class EchoUnderFaults : public ::testing::TestWithParam<EchoParam> {
protected:
    void SetUp() override {
        PHOTON_TEST_INIT_ENGINE(GetParam().engine, INIT_IO_NONE);
        set_log_output_level(ALOG_FATAL);  // the faults' warnings are expected
        if (GetParam().iouring_socket) {
            std::unique_ptr<ISocketClient> probe(new_iouring_tcp_client());
            if (!probe) GTEST_SKIP() << "io_uring sockets are not built here (no liburing)";
        }
    }
    void TearDown() override {
        fault::disable();
        set_log_output_level(ALOG_INFO);
        photon_test::fini_vcpu();
    }
    ISocketServer* new_server() {
        return GetParam().iouring_socket ? new_iouring_tcp_server() : new_tcp_socket_server();
    }
    ISocketClient* new_client() {
        return GetParam().iouring_socket ? new_iouring_tcp_client() : new_tcp_socket_client();
    }
};

struct EchoServer {
    Errnos errors;
    uint64_t echoed = 0;
    int handle(ISocketStream* s) {
        s->timeout(kIoTimeoutUs);
        std::unique_ptr<char[]> buf(new char[32768]);
        while (true) {
            ssize_t n = s->recv(buf.get(), 32768);
            if (n == 0) return 0;
            if (n < 0) return errors.add(errno), -1;
            ssize_t w = s->write(buf.get(), (size_t)n);
            if (w != n) return errors.add(w < 0 ? errno : EPIPE), -1;
            echoed += (uint64_t)n;
        }
    }
};

// One connection's life: chunks written, then read back and checked, until
// a failure or `chunks` chunks. Returns the bytes that came back intact.
uint64_t echo_connection(ISocketClient* client, const EndPoint& ep, uint64_t id, int chunks,
                         Errnos& errors, std::string& corruption) {
    std::unique_ptr<ISocketStream> s(client->connect(ep));
    if (!s) return errors.add(errno), 0;
    s->timeout(kIoTimeoutUs);
    std::vector<char> out(32768), in(32768);
    uint64_t sent = 0, got = 0;
    for (int c = 0; c < chunks; c++) {
        size_t len = 1 + (size_t)((id * 7919 + (uint64_t)c * 104729) % out.size());
        fill(out.data(), len, id, sent);
        ssize_t w = s->write(out.data(), len);
        if (w > 0) sent += (uint64_t)w;
        if (w != (ssize_t)len) {
            errors.add(w < 0 ? errno : EPIPE);
            break;
        }
        ssize_t r = s->read(in.data(), len);
        if (r > 0) {
            size_t bad = first_mismatch(in.data(), (size_t)r, id, got);
            if (bad != (size_t)r && corruption.empty())
                corruption = "stream " + std::to_string(id) + ": byte " +
                             std::to_string(got + bad) + " is not the one sent";
            got += (uint64_t)r;
        }
        if (r != (ssize_t)len) {
            errors.add(r < 0 ? errno : 0);  // 0: the peer closed (EOF)
            break;
        }
    }
    if (got > sent && corruption.empty()) corruption = "more bytes came back than were sent";
    return got;
}

TEST_P(EchoUnderFaults, BytesArriveIntactOrTheConnectionFailsCleanly) {
    EchoServer echo;
    std::unique_ptr<ISocketServer> server(new_server());
    server->set_handler({&echo, &EchoServer::handle});
    ASSERT_EQ(0, server->bind_v4localhost(0));
    ASSERT_EQ(0, server->listen());
    ASSERT_EQ(0, server->start_loop(false));
    EndPoint ep = server->getsockname();
    std::unique_ptr<ISocketClient> client(new_client());
    client->timeout(kIoTimeoutUs);  // bounds each connect

    // A round without faults: the engine's own fds (a sidecar ring) exist
    // from here on, so the baseline is taken after it.
    Errnos warmup;
    std::string corruption;
    EXPECT_GT(echo_connection(client.get(), ep, 0, 4, warmup, corruption), 0u);
    thread_usleep(20 * 1000);
    const int baseline = count_open_fds();

    arm("reset,enomem,eagain,eintr,short,delay,spurious");
    Errnos errors;
    uint64_t intact = 0, connections = 0;
    auto deadline = Clock::now() + kCaseTime;
    std::vector<join_handle*> workers;
    for (int w = 0; w < 8; w++) {
        thread* th = nullptr;
        // Creating the workers may meet an injected ENOMEM too: try again.
        for (int tries = 0; !th && tries < 100; tries++)
            th = thread_create11([&, w] {
                for (uint64_t i = 0; i < 200 && !over(deadline); i++) {
                    intact += echo_connection(client.get(), ep, 1000 * (w + 1) + i, 16, errors,
                                              corruption);
                    connections++;
                }
            });
        ASSERT_NE(nullptr, th);
        workers.push_back(thread_enable_join(th));
    }
    for (auto j : workers) thread_join(j);
    fault::Counts counts = fault::counts();
    fault::disable();

    printf(
        "echo: %llu connections, %llu bytes back intact; client failures: %s; server: %s; "
        "%llu resets, %llu ENOMEM injected\n",
        (unsigned long long)connections, (unsigned long long)intact, errors.text().c_str(),
        echo.errors.text().c_str(), (unsigned long long)counts.hits[7],
        (unsigned long long)counts.hits[5]);
    EXPECT_EQ("", corruption);
    EXPECT_GT(intact, 0u) << "no byte came back in " << connections << " connections";
    EXPECT_GT(counts.hits[7], 0u) << "no reset was injected";
    // 0: EOF, the server's end failed (its reset, its ENOMEM) and closed.
    EXPECT_TRUE(errors.only({0, ECONNRESET, EPIPE, ENOMEM})) << errors.text();
    EXPECT_TRUE(echo.errors.only({ECONNRESET, EPIPE})) << echo.errors.text();
    EXPECT_LE(echo.echoed, intact + (uint64_t)connections * 32768);

    server->terminate();
    server.reset();
    client.reset();
    expect_fds_back_to(baseline);
}

std::string echo_name(const ::testing::TestParamInfo<EchoParam>& p) {
    return photon_test::engine_label(p.param.engine) +
           (p.param.iouring_socket ? "_iouring_socket" : "_kernel_socket");
}

INSTANTIATE_TEST_SUITE_P(Engines, EchoUnderFaults,
                         ::testing::Values(EchoParam{INIT_EVENT_EPOLL, false},
                                           EchoParam{INIT_EVENT_IOURING, false},
                                           EchoParam{INIT_EVENT_EPOLL, true},
                                           EchoParam{INIT_EVENT_IOURING, true}),
                         echo_name);

// ---- RPC ------------------------------------------------------------------------

struct Echo {
    const static uint32_t IID = 0x6661;
    const static uint32_t FID = 1;
    struct Request : rpc::Message {
        uint64_t id = 0;
        rpc::buffer data;
        PROCESS_FIELDS(data);
    };
    struct Response : rpc::Message {
        uint64_t id = 0;
        rpc::buffer data;
        PROCESS_FIELDS(data);
    };
};

struct EchoService {
    int do_rpc_service(Echo::Request* req, Echo::Response* resp, IOVector* iov, IStream*) {
        void* out = iov->malloc(req->data.size());
        memcpy(out, req->data.addr(), req->data.size());
        resp->data.assign(out, req->data.size());
        resp->id = req->id;
        return 0;
    }
};

int serve_rpc(rpc::Skeleton* skeleton, ISocketStream* s) { return skeleton->serve(s); }

class WorkloadUnderFaults : public photon_test::EngineTest {
protected:
    void SetUp() override {
        photon_test::EngineTest::SetUp();
        set_log_output_level(ALOG_FATAL);
    }
    void TearDown() override {
        fault::disable();
        set_log_output_level(ALOG_INFO);
        photon_test::EngineTest::TearDown();
    }
};

TEST_P(WorkloadUnderFaults, RpcRepliesAreExactOrCallsFailCleanly) {
    EchoService service;
    std::unique_ptr<rpc::Skeleton> skeleton(rpc::new_skeleton());
    skeleton->register_service<Echo>(&service);
    std::unique_ptr<ISocketServer> server(new_tcp_socket_server());
    server->set_handler({skeleton.get(), &serve_rpc});
    ASSERT_EQ(0, server->bind_v4localhost(0));
    ASSERT_EQ(0, server->listen());
    ASSERT_EQ(0, server->start_loop(false));
    EndPoint ep = server->getsockname();
    std::unique_ptr<ISocketClient> client(new_tcp_socket_client());
    thread_usleep(10 * 1000);
    const int baseline = count_open_fds();

    arm("reset,enomem,eagain,eintr,short,delay,spurious");
    Errnos errors;
    std::string corruption;
    uint64_t ok = 0, calls = 0;
    auto deadline = Clock::now() + kCaseTime;
    std::vector<join_handle*> workers;
    for (int w = 0; w < 6; w++) {
        thread* th = nullptr;
        for (int tries = 0; !th && tries < 100; tries++)
            th = thread_create11([&, w] {
                std::vector<char> out(16384), in(16384);
                std::unique_ptr<rpc::Stub> stub;
                for (uint64_t i = 0; i < 400 && !over(deadline); i++) {
                    if (!stub) {
                        ISocketStream* s = client->connect(ep);
                        if (!s) {
                            errors.add(errno);
                            continue;
                        }
                        stub.reset(rpc::new_rpc_stub(s, true));
                    }
                    uint64_t id = (uint64_t)w << 32 | i;
                    size_t len = 1 + (size_t)(id * 2654435761u % out.size());
                    fill(out.data(), len, id, 0);
                    Echo::Request req;
                    req.id = id;
                    req.data.assign(out.data(), len);
                    Echo::Response resp;
                    resp.data.assign(in.data(), in.size());
                    calls++;
                    int r = stub->call<Echo>(req, resp, kIoTimeoutUs);
                    if (r < 0) {
                        errors.add(errno);
                        stub.reset();  // a fresh connection for the next call
                        continue;
                    }
                    if (resp.id != id || resp.data.size() != len ||
                        first_mismatch((const char*)resp.data.addr(), len, id, 0) != len) {
                        if (corruption.empty())
                            corruption = "call " + std::to_string(id) + ": a wrong reply";
                    }
                    ok++;
                }
            });
        ASSERT_NE(nullptr, th);
        workers.push_back(thread_enable_join(th));
    }
    for (auto j : workers) thread_join(j);
    fault::Counts counts = fault::counts();
    fault::disable();

    printf("rpc: %llu of %llu calls exact; failures: %s; %llu resets, %llu ENOMEM injected\n",
           (unsigned long long)ok, (unsigned long long)calls, errors.text().c_str(),
           (unsigned long long)counts.hits[7], (unsigned long long)counts.hits[5]);
    EXPECT_EQ("", corruption);
    EXPECT_GT(ok, 0u) << "no call of " << calls << " succeeded: " << errors.text();
    EXPECT_GT(counts.hits[7] + counts.hits[5], 0u) << "no hard fault was injected";
    EXPECT_TRUE(errors.only({ECONNRESET, EPIPE, ENOMEM, ENOTCONN, ECANCELED})) << errors.text();

    server->terminate();
    skeleton->shutdown();
    server.reset();
    client.reset();
    expect_fds_back_to(baseline);
}

// ---- HTTP -------------------------------------------------------------------------

int http_body(void*, http::Request& req, http::Response& resp, std::string_view) {
    std::string_view q = req.query();
    uint64_t n =
        q.substr(0, 2) == "n=" ? strtoull(std::string(q.substr(2)).c_str(), nullptr, 10) : 0;
    std::vector<char> body(n);
    fill(body.data(), n, n, 0);
    resp.set_result(200);
    resp.headers.content_length(n);
    return resp.write(body.data(), n) == (ssize_t)n ? 0 : -1;
}

TEST_P(WorkloadUnderFaults, HttpBodiesAreExactOrRequestsFailCleanly) {
    std::unique_ptr<http::HTTPServer> http(http::new_http_server());
    http->add_handler({nullptr, &http_body}, "/body");
    std::unique_ptr<ISocketServer> server(new_tcp_socket_server());
    server->set_handler(http->get_connection_handler());
    ASSERT_EQ(0, server->bind_v4localhost(0));
    ASSERT_EQ(0, server->listen());
    ASSERT_EQ(0, server->start_loop(false));
    std::string base = "http://127.0.0.1:" + std::to_string(server->getsockname().port);
    std::unique_ptr<http::Client> client(http::new_http_client());
    thread_usleep(10 * 1000);
    const int baseline = count_open_fds();

    arm("reset,enomem,eagain,eintr,short,delay,spurious");
    Errnos errors;
    std::string corruption;
    uint64_t ok = 0, statuses = 0, requests = 0;
    auto deadline = Clock::now() + kCaseTime;
    std::vector<join_handle*> workers;
    for (int w = 0; w < 4; w++) {
        thread* th = nullptr;
        for (int tries = 0; !th && tries < 100; tries++)
            th = thread_create11([&, w] {
                std::vector<char> in(200000);
                for (uint64_t i = 0; i < 300 && !over(deadline); i++) {
                    uint64_t n = (w * 7919 + i * 104729) % in.size();
                    auto op = client->new_operation(http::Verb::GET,
                                                    base + "/body?n=" + std::to_string(n));
                    op->timeout = Timeout(kIoTimeoutUs);
                    requests++;
                    if (op->call() < 0) {
                        errors.add(errno);
                    } else if (op->status_code != 200) {
                        statuses++;  // a clean error status
                    } else {
                        size_t got = 0;
                        ssize_t r = 0;
                        while (got < in.size() &&
                               (r = op->resp.read(in.data() + got, in.size() - got)) > 0)
                            got += (size_t)r;
                        if (first_mismatch(in.data(), got, n, 0) != got && corruption.empty())
                            corruption = "body of " + std::to_string(n) + " bytes: wrong bytes";
                        if (got == n) {
                            ok++;
                        } else {
                            errors.add(r < 0 ? errno : 0);
                            if (got > n && corruption.empty()) corruption = "body too long";
                        }
                    }
                    op->destroy();
                }
            });
        ASSERT_NE(nullptr, th);
        workers.push_back(thread_enable_join(th));
    }
    for (auto j : workers) thread_join(j);
    fault::Counts counts = fault::counts();
    fault::disable();

    printf(
        "http: %llu of %llu requests exact, %llu error statuses; failures: %s; %llu resets, "
        "%llu ENOMEM injected\n",
        (unsigned long long)ok, (unsigned long long)requests, (unsigned long long)statuses,
        errors.text().c_str(), (unsigned long long)counts.hits[7],
        (unsigned long long)counts.hits[5]);
    EXPECT_EQ("", corruption);
    EXPECT_GT(ok, 0u) << "no request of " << requests << " succeeded: " << errors.text();
    EXPECT_GT(counts.hits[7] + counts.hits[5], 0u) << "no hard fault was injected";
    // 0 or EPROTO: the body ended early (the server's side failed after the
    // head), as a short read or the body reader's "truncated".
    EXPECT_TRUE(errors.only({0, EPROTO, ECONNRESET, EPIPE, ENOMEM, ENOTCONN, ECONNABORTED}))
        << errors.text() << " statuses " << statuses;

    server->terminate();
    server.reset();
    client.reset();
    http.reset();
    expect_fds_back_to(baseline);
}

// ---- file copies ------------------------------------------------------------------

TEST_P(WorkloadUnderFaults, FileCopiesAreExactOrFailWithEio) {
    char dir[] = "/tmp/photon-fault-XXXXXX";
    ASSERT_NE(nullptr, mkdtemp(dir));
    int io_engine = GetParam() == INIT_EVENT_IOURING ? fs::ioengine_iouring : fs::ioengine_psync;
    std::unique_ptr<fs::IFileSystem> lfs(fs::new_localfs_adaptor(dir, io_engine));
    ASSERT_TRUE(lfs);
    const size_t size = 3 * 65536 + 1234;
    {
        std::vector<char> data(size);
        fill(data.data(), size, 42, 0);
        std::unique_ptr<fs::IFile> f(lfs->open("src", O_CREAT | O_TRUNC | O_WRONLY, 0644));
        ASSERT_TRUE(f);
        ASSERT_EQ((ssize_t)size, f->pwrite(data.data(), size, 0));
    }
    const int baseline = count_open_fds();

    arm("eio,enomem");
    Errnos errors;
    std::string corruption;
    int ok = 0;
    uint64_t eio_injected;
    auto deadline = Clock::now() + kCaseTime;
    for (int i = 0; i < 300 && !over(deadline); i++) {
        std::unique_ptr<fs::IFile> in(lfs->open("src", O_RDONLY));
        std::unique_ptr<fs::IFile> out(lfs->open("dst", O_CREAT | O_TRUNC | O_RDWR, 0644));
        ASSERT_TRUE(in && out);
        // A small block: more calls, more faults; filecopy retries each.
        ssize_t r = fs::filecopy(in.get(), out.get(), 4096 * (1 + i % 4), i % 3 ? 2 : 0);
        if (r < 0) {
            errors.add(errno);
            continue;
        }
        if (r != (ssize_t)size) {
            corruption = "copied " + std::to_string(r) + " bytes of " + std::to_string(size);
            continue;
        }
        // The check reads past the adaptor: no faults there.
        std::vector<char> back(size + 1);
        int fd = ::open((std::string(dir) + "/dst").c_str(), O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? ::pread(fd, back.data(), back.size(), 0) : -1;
        if (fd >= 0) ::close(fd);
        if (n != (ssize_t)size || first_mismatch(back.data(), size, 42, 0) != size)
            corruption = "the copy differs from its source";
        ok++;
    }
    eio_injected = fault::counts().hits[6];
    fault::disable();
    printf("file copies: %d exact, failed: %s; EIO injected %llu times\n", ok,
           errors.text().c_str(), (unsigned long long)eio_injected);
    EXPECT_EQ("", corruption);
    EXPECT_GT(ok, 0);
    EXPECT_GT(eio_injected, 0u) << "no EIO was injected";
    EXPECT_TRUE(errors.only({EIO})) << errors.text();
    lfs->unlink("src");
    lfs->unlink("dst");
    lfs.reset();
    EXPECT_LE(count_open_fds(), baseline);
    rmdir(dir);
}

PHOTON_INSTANTIATE_ENGINE_TESTS(WorkloadUnderFaults);

}  // namespace
