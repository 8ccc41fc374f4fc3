// gRPC (photon/net/grpc/) ours against ours, on both event engines: the four
// kinds of call, metadata both ways (binary too), error statuses, deadlines
// seen and enforced on both sides, gzip, 100 coroutines on one channel,
// 8 MiB messages streamed, message size limits, a graceful stop() that lets
// a call in flight finish, reconnection after GOAWAY and after the
// connection died, retries of refused
// streams only (against a raw HTTP/2 server), h2 over TLS with ALPN,
// and malformed requests sent as raw HTTP/2 (bad content-type, length
// prefixes, compressed flags, encodings, timeouts).
#include <photon/net/grpc/channel.h>
#include <photon/net/grpc/server.h>
#include <photon/net/security-context/tls-stream.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../../net/http2/client_connection.h"
#include "../../net/http2/server_connection.h"
#include "../thread/test_util.h"
#include "grpc_test_util.h"
#include "../util/tls_pair.h"

namespace {

namespace grpc = photon::net::grpc;
using grpc::StatusCode;
using photon_test::grpc_pattern;
using photon_test::kLongUs;

class Grpc : public photon_test::EngineTest {
protected:
    void SetUp() override {
        photon_test::EngineTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        start_server();
    }
    void start_server(grpc::ServerOptions opt = {}) {
        server_.reset(new grpc::Server(opt));
        photon_test::register_echo(server_.get(), &seen_);
        listener_.reset(new photon_test::Listener(server_->get_connection_handler()));
        ASSERT_TRUE(listener_->ok());
    }
    void TearDown() override {
        if (listener_) listener_->terminate();
        if (server_) {
            EXPECT_EQ(0, server_->stop(kLongUs));
        }
        listener_.reset();
        server_.reset();
        photon_test::EngineTest::TearDown();
    }
    std::string target() { return listener_->target(); }

    photon_test::EchoSeen seen_;
    std::unique_ptr<grpc::Server> server_;
    std::unique_ptr<photon_test::Listener> listener_;
};

TEST_P(Grpc, UnaryEchoesWithMetadataBothWays) {
    grpc::Channel ch(target());
    grpc::Metadata initial, trailing;
    grpc::CallOptions opt;
    opt.metadata = {{"x-echo", "hello"}, {"x-echo-bin", std::string("\0\x01\xff bin", 7)}};
    opt.initial_metadata = &initial;
    opt.trailing_metadata = &trailing;
    std::string resp;
    auto st = ch.call("/test.Echo/Unary", "ping", &resp, opt);
    ASSERT_TRUE(st.ok()) << st.message;
    EXPECT_EQ("ping", resp);
    ASSERT_NE(nullptr, grpc::find_metadata(initial, "x-echo"));
    EXPECT_EQ("hello", *grpc::find_metadata(initial, "x-echo"));
    EXPECT_EQ("i", *grpc::find_metadata(initial, "x-initial"));
    ASSERT_NE(nullptr, grpc::find_metadata(trailing, "x-echo-bin"));
    EXPECT_EQ(std::string("\0\x01\xff bin", 7), *grpc::find_metadata(trailing, "x-echo-bin"));
    EXPECT_EQ("t", *grpc::find_metadata(trailing, "x-trailing"));
    EXPECT_EQ(nullptr, grpc::find_metadata(trailing, "grpc-status")) << "reserved: not metadata";
    // An empty message is a message too.
    st = ch.call("/test.Echo/Unary", "", &resp);
    EXPECT_TRUE(st.ok()) << st.message;
    EXPECT_EQ("", resp);
}

TEST_P(Grpc, ErrorStatusesCarryTheirPercentEncodedMessages) {
    grpc::Channel ch(target());
    std::string resp;
    auto st = ch.call("/test.Echo/Fail", "5 no such thing: 100% \xc3\xa9t\xc3\xa9\nline", &resp);
    EXPECT_EQ(StatusCode::NOT_FOUND, st.code);
    EXPECT_EQ("no such thing: 100% \xc3\xa9t\xc3\xa9\nline", st.message);
    st = ch.call("/test.Echo/Fail", "16", &resp);
    EXPECT_EQ(StatusCode::UNAUTHENTICATED, st.code);
    st = ch.call("/test.Echo/Nope", "x", &resp);
    EXPECT_EQ(StatusCode::UNIMPLEMENTED, st.code);
    EXPECT_NE(std::string::npos, st.message.find("/test.Echo/Nope"));
    grpc::CallOptions bad;
    bad.metadata = {{"Upper", "x"}};
    EXPECT_EQ(StatusCode::INTERNAL, ch.call("/test.Echo/Unary", "x", &resp, bad).code);
}

TEST_P(Grpc, ClientServerAndBidiStreaming) {
    grpc::Channel ch(target());
    {  // client streaming
        auto call = ch.start_call("/test.Echo/Sum");
        for (int i = 0; i < 50; i++) ASSERT_EQ(0, call->write(grpc_pattern(1000 + i)));
        ASSERT_EQ(0, call->writes_done());
        std::string m;
        ASSERT_EQ(1, call->read(&m));
        EXPECT_EQ("50 " + std::to_string(50 * 1000 + 49 * 50 / 2), m);
        EXPECT_EQ(0, call->read(&m));
        EXPECT_TRUE(call->finish().ok());
    }
    {  // server streaming
        auto call = ch.start_call("/test.Echo/Split");
        ASSERT_EQ(0, call->write("20 70000"));
        ASSERT_EQ(0, call->writes_done());
        std::string m;
        int n = 0;
        while (call->read(&m) == 1) {
            EXPECT_TRUE(m == grpc_pattern(70000, n)) << n;
            n++;
        }
        EXPECT_EQ(20, n);
        EXPECT_TRUE(call->finish().ok());
    }
    {  // bidi: each message answered before the next is sent
        auto call = ch.start_call("/test.Echo/Bidi");
        std::string m;
        for (int i = 0; i < 30; i++) {
            ASSERT_EQ(0, call->write(grpc_pattern(i * 100, i)));
            ASSERT_EQ(1, call->read(&m));
            EXPECT_TRUE(m == grpc_pattern(i * 100, i)) << i;
        }
        ASSERT_EQ(0, call->writes_done());
        EXPECT_EQ(0, call->read(&m));
        auto st = call->finish();
        EXPECT_TRUE(st.ok()) << st.message;
    }
}

TEST_P(Grpc, EightMiBMessagesStreamBothWays) {
    listener_->terminate();
    EXPECT_EQ(0, server_->stop(kLongUs));
    grpc::ServerOptions so;
    so.max_receive_message_size = 16 << 20;
    start_server(so);
    grpc::ChannelOptions co;
    co.max_receive_message_size = 16 << 20;
    grpc::Channel ch(target(), co);
    auto call = ch.start_call("/test.Echo/Bidi");
    std::vector<std::string> sent;
    for (int i = 0; i < 3; i++) sent.push_back(grpc_pattern(8 << 20, i));
    auto writer = photon_test::spawn([&] {
        for (auto& m : sent) EXPECT_EQ(0, call->write(m));
        EXPECT_EQ(0, call->writes_done());
    });
    std::string m;
    int n = 0;
    while (call->read(&m) == 1) {
        EXPECT_TRUE(m == sent[n]) << n;
        n++;
    }
    writer.join();
    EXPECT_EQ(3, n);
    EXPECT_TRUE(call->finish().ok());
}

TEST_P(Grpc, MessagesOverTheLimitsAreResourceExhausted) {
    grpc::Channel ch(target());
    std::string resp;
    auto st = ch.call("/test.Echo/Unary", grpc_pattern((4 << 20) + 1), &resp);
    EXPECT_EQ(StatusCode::RESOURCE_EXHAUSTED, st.code) << st.message;
    grpc::ChannelOptions small;
    small.max_receive_message_size = 1000;
    grpc::Channel ch2(target(), small);
    st = ch2.call("/test.Echo/Unary", grpc_pattern(1001), &resp);
    EXPECT_EQ(StatusCode::RESOURCE_EXHAUSTED, st.code) << st.message;
    st = ch2.call("/test.Echo/Unary", grpc_pattern(1000), &resp);
    EXPECT_TRUE(st.ok()) << st.message;
}

TEST_P(Grpc, TheClientsDeadlineEndsTheCallAndTheHandlerSeesIt) {
    grpc::Channel ch(target());
    grpc::CallOptions opt;
    opt.timeout = 200 * 1000;
    std::string resp;
    uint64_t before = photon::now;
    auto st = ch.call("/test.Echo/Sleep", "1000000", &resp, opt);
    EXPECT_EQ(StatusCode::DEADLINE_EXCEEDED, st.code) << st.message;
    EXPECT_GT(seen_.deadline, before);
    EXPECT_LT(seen_.deadline, before + 10 * 1000 * 1000);
    // The handler finds the call over once it wakes.
    EXPECT_TRUE(photon_test::wait_for([&] { return seen_.sleeping == 0; }, 10000));
    EXPECT_TRUE(seen_.cancelled_after_sleep);
    // A call within its deadline succeeds, and one without a deadline has none.
    opt.timeout = 10 * 1000 * 1000;
    EXPECT_TRUE(ch.call("/test.Echo/Sleep", "1000", &resp, opt).ok());
    EXPECT_TRUE(ch.call("/test.Echo/Sleep", "1000", &resp).ok());
    EXPECT_EQ(UINT64_MAX, seen_.deadline);
}

// Raw HTTP/2 requests to our server, as a client that sends what it likes.
class RawCall {
public:
    explicit RawCall(uint16_t port) {
        cli_.reset(photon::net::new_tcp_socket_client());
        sock_.reset(cli_->connect(photon::net::EndPoint(photon::net::IPAddr("127.0.0.1"), port)));
        if (sock_) {
            c_.reset(new photon::net::http2::client_connection(sock_.get()));
            if (c_->start() < 0) c_.reset();
        }
    }
    ~RawCall() {
        c_.reset();
        sock_.reset();
    }
    bool ok() const { return bool(c_); }
    // The response's :status and the grpc-status found in its head or trailers ("" if none).
    std::pair<int, std::string> call(std::vector<photon::net::http2::header_field> extra,
                                     const std::string& body, const char* path = "/test.Echo/Unary",
                                     const char* method = "POST") {
        std::vector<photon::net::http2::header_field> f = {
            {":method", method}, {":scheme", "http"}, {":authority", "127.0.0.1"}, {":path", path}};
        bool ct = false;
        for (auto& e : extra) ct |= e.name == "content-type";
        if (!ct) f.push_back({"content-type", "application/grpc"});
        f.insert(f.end(), extra.begin(), extra.end());
        auto s = c_->request(f, false);
        if (!s) return {-1, ""};
        s->write(body.data(), body.size());
        s->finish();
        int status = s->response(kLongUs);
        std::string gs;
        auto look = [&](const std::vector<photon::net::http2::header_field>& fs) {
            for (auto& x : fs)
                if (x.name == "grpc-status") gs = x.value;
        };
        look(s->response_fields());
        char buf[65536];
        while (s->read(buf, sizeof(buf), kLongUs) > 0) {
        }
        look(s->trailers());
        c_->release(s);
        return {status, gs};
    }

private:
    std::unique_ptr<photon::net::ISocketClient> cli_;
    std::unique_ptr<photon::net::ISocketStream> sock_;
    std::unique_ptr<photon::net::http2::client_connection> c_;
};

std::string framed(const std::string& m, uint8_t flag = 0, int64_t len = -1) {
    std::string out(5, 0);
    uint32_t n = len < 0 ? (uint32_t)m.size() : (uint32_t)len;
    out[0] = (char)flag;
    out[1] = (char)(n >> 24), out[2] = (char)(n >> 16), out[3] = (char)(n >> 8), out[4] = (char)n;
    return out + m;
}

TEST_P(Grpc, MalformedRequestsGetTheRightStatus) {
    RawCall raw(listener_->port());
    ASSERT_TRUE(raw.ok());
    using P = std::pair<int, std::string>;
    EXPECT_EQ(P(200, "0"), raw.call({}, framed("ok")));
    EXPECT_EQ(415, raw.call({{"content-type", "text/plain"}}, framed("x")).first);
    EXPECT_EQ(P(200, "0"), raw.call({{"content-type", "application/grpc+proto"}}, framed("x")));
    EXPECT_EQ(405, raw.call({}, "", "/test.Echo/Unary", "GET").first);
    EXPECT_EQ(P(200, "13"), raw.call({}, framed("x", 2))) << "compressed flag 2";
    EXPECT_EQ(P(200, "13"), raw.call({}, framed("x", 1))) << "compressed, no grpc-encoding";
    EXPECT_EQ(P(200, "13"), raw.call({{"grpc-encoding", "identity"}}, framed("x", 1)));
    EXPECT_EQ(P(200, "12"), raw.call({{"grpc-encoding", "snappy"}}, framed("x")));
    EXPECT_EQ(P(200, "13"), raw.call({}, framed("abc", 0, 10))) << "truncated";
    EXPECT_EQ(P(200, "13"), raw.call({}, framed("abc").substr(0, 3))) << "partial prefix";
    EXPECT_EQ(P(200, "8"), raw.call({}, framed("", 0, 100 << 20))) << "over the size limit";
    EXPECT_EQ(P(200, "13"), raw.call({}, "")) << "no request message";
    EXPECT_EQ(P(200, "13"), raw.call({}, framed("a") + framed("b"))) << "two for a unary";
    EXPECT_EQ(P(200, "13"), raw.call({{"grpc-timeout", "1x"}}, framed("x")));
    EXPECT_EQ(P(200, "13"), raw.call({{"x-b-bin", "!!!"}}, framed("x"))) << "bad base64";
    EXPECT_EQ(P(200, "12"), raw.call({}, framed("x"), "/no.Such/Method"));
    if (grpc::gzip_supported()) {
        EXPECT_EQ(P(200, "13"), raw.call({{"grpc-encoding", "gzip"}}, framed("notgzip", 1)));
    }
    // The connection survived all of them.
    EXPECT_EQ(P(200, "0"), raw.call({}, framed("still here")));
}

TEST_P(Grpc, TheServerEnforcesTheDeadlineTheClientSent) {
    RawCall raw(listener_->port());
    ASSERT_TRUE(raw.ok());
    // No local deadline on this client: the status comes from the server.
    auto r = raw.call({{"grpc-timeout", "100m"}}, framed("1000000"), "/test.Echo/Sleep");
    EXPECT_EQ(200, r.first);
    EXPECT_EQ("4", r.second);
    EXPECT_GT(seen_.deadline, 0u);
    EXPECT_TRUE(photon_test::wait_for([&] { return seen_.sleeping == 0; }, 10000));
}

TEST_P(Grpc, GzipBothWays) {
    if (!grpc::gzip_supported()) {
        grpc::Channel ch(target());
        grpc::CallOptions opt;
        opt.compression = grpc::Compression::gzip;
        std::string resp;
        EXPECT_EQ(StatusCode::UNIMPLEMENTED, ch.call("/test.Echo/Unary", "x", &resp, opt).code);
        GTEST_SKIP() << "photon built without zlib: gzip is UNIMPLEMENTED (checked)";
    }
    grpc::Channel ch(target());
    grpc::CallOptions opt;
    opt.compression = grpc::Compression::gzip;
    std::string big(1 << 20, 'z'), resp;
    auto st = ch.call("/test.Echo/Unary", big, &resp, opt);
    ASSERT_TRUE(st.ok()) << st.message;
    EXPECT_TRUE(resp == big);
    auto call = ch.start_call("/test.Echo/Bidi", opt);
    for (int i = 0; i < 5; i++) {
        std::string m = grpc_pattern(10000 * i, i), back;
        ASSERT_EQ(0, call->write(m));
        ASSERT_EQ(1, call->read(&back));
        EXPECT_TRUE(back == m);
    }
    EXPECT_TRUE(call->finish().ok());
    // Raw: a gzip request is answered in gzip (flag 1) when the client accepts it.
    RawCall raw(listener_->port());
    ASSERT_TRUE(raw.ok());
    auto r = raw.call({{"grpc-encoding", "gzip"}, {"grpc-accept-encoding", "gzip"}},
                      framed(std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\x03\x00\x00"
                                         "\x00\x00\x00\x00\x00\x00\x00",
                                         20),
                             1));
    EXPECT_EQ(200, r.first);
    EXPECT_EQ("0", r.second) << "an empty message, gzipped";
}

TEST_P(Grpc, AHundredCoroutinesShareOneConnection) {
    grpc::Channel ch(target());
    int ok = 0;
    std::vector<photon_test::task> tasks;
    for (int i = 0; i < 100; i++)
        tasks.push_back(photon_test::spawn([&, i] {
            for (int j = 0; j < 5; j++) {
                std::string req = grpc_pattern(100 + i * 37 + j, i), resp;
                grpc::CallOptions opt;
                opt.timeout = 30 * 1000 * 1000;
                auto st = ch.call("/test.Echo/Unary", req, &resp, opt);
                if (st.ok() && resp == req) ok++;
            }
        }));
    for (auto& t : tasks) t.join();
    EXPECT_EQ(500, ok);
    EXPECT_EQ(1u, ch.connections_opened());
}

TEST_P(Grpc, StopLetsACallInFlightFinishAndRefusesNewOnes) {
    grpc::Channel ch(target());
    grpc::Status st;
    std::string resp;
    auto t = photon_test::spawn([&] { st = ch.call("/test.Echo/Sleep", "300000", &resp); });
    ASSERT_TRUE(photon_test::wait_for([&] { return seen_.sleeping == 1; }, 10000));
    listener_->terminate();
    EXPECT_EQ(1u, server_->calls());
    EXPECT_EQ(0, server_->stop(kLongUs));
    t.join();
    EXPECT_TRUE(st.ok()) << st.message;
    EXPECT_EQ("slept", resp);
    EXPECT_EQ(0u, server_->connections());
    listener_.reset();  // no listener now: the channel cannot reconnect
    st = ch.call("/test.Echo/Unary", "x", &resp);
    EXPECT_EQ(StatusCode::UNAVAILABLE, st.code);
}

TEST_P(Grpc, TheChannelReconnectsAfterGoawayAndAfterTheConnectionDied) {
    // One listener, three servers: the first stops (GOAWAY), the second takes
    // over and is deleted (its connection cut), the third takes over.
    photon_test::EchoSeen seen2;
    grpc::Server a, c;
    std::unique_ptr<grpc::Server> b(new grpc::Server);
    photon_test::register_echo(&a, &seen_);
    photon_test::register_echo(b.get(), &seen2);
    photon_test::register_echo(&c, &seen2);
    grpc::Server* current = &a;
    auto handler = [&](photon::net::ISocketStream* s) { return current->handle_connection(s); };
    struct Fwd {
        std::function<int(photon::net::ISocketStream*)> f;
        int call(photon::net::ISocketStream* s) { return f(s); }
    } fwd{handler};
    photon_test::Listener l({&fwd, &Fwd::call});
    ASSERT_TRUE(l.ok());
    grpc::Channel ch(l.target());
    std::string resp;
    ASSERT_TRUE(ch.call("/test.Echo/Unary", "1", &resp).ok());
    current = b.get();
    EXPECT_EQ(0, a.stop(kLongUs));
    auto st = ch.call("/test.Echo/Unary", "2", &resp);
    EXPECT_TRUE(st.ok()) << st.message;
    EXPECT_EQ("2", resp);
    EXPECT_EQ(2u, ch.connections_opened());
    current = &c;
    b.reset();  // abrupt: the connection is shut down
    st = ch.call("/test.Echo/Unary", "3", &resp);
    if (!st.ok()) {  // sent before the channel saw the end: it may have been processed
        EXPECT_EQ(StatusCode::UNAVAILABLE, st.code) << st.message;
        st = ch.call("/test.Echo/Unary", "3", &resp);
    }
    EXPECT_TRUE(st.ok()) << st.message;
    EXPECT_EQ("3", resp);
    EXPECT_EQ(3u, ch.connections_opened());
    l.terminate();
    EXPECT_EQ(0, c.stop(kLongUs));
}

TEST_P(Grpc, StopFromAnotherVcpuFinishesTheCallInFlight) {
    // The server's connections on a vCPU of their own; stop() from the test's.
    grpc::Server remote;
    photon_test::EchoSeen seen2;
    photon_test::register_echo(&remote, &seen2);
    std::atomic<uint16_t> port{0};
    std::atomic<bool> done{false};
    std::thread th([&] {
        if (photon::init(photon::INIT_EVENT_EPOLL, photon::INIT_IO_NONE) != 0) return;
        {
            photon_test::Listener l(remote.get_connection_handler());
            port = l.ok() ? l.port() : 1;
            while (!done) photon::thread_usleep(1000);
            l.terminate();
        }
        photon::fini();
    });
    ASSERT_TRUE(photon_test::wait_for([&] { return port != 0; }));
    ASSERT_GT(port.load(), 1);
    grpc::Channel ch("127.0.0.1:" + std::to_string(port.load()));
    grpc::Status st;
    std::string resp;
    auto t = photon_test::spawn([&] { st = ch.call("/test.Echo/Sleep", "300000", &resp); });
    EXPECT_TRUE(photon_test::wait_for([&] { return remote.calls() == 1; }, 10000));
    EXPECT_EQ(0, remote.stop(kLongUs));
    t.join();
    EXPECT_TRUE(st.ok()) << st.message;
    EXPECT_EQ("slept", resp);
    EXPECT_EQ(0u, remote.connections());
    done = true;
    th.join();
}

// A raw HTTP/2 server whose handler is the test's: refusals and resets as it likes.
struct RawH2Server {
    std::function<void(photon::net::http2::Stream&)> handler;
    int serve(photon::net::ISocketStream* sock) {
        photon::net::http2::server_connection c(sock, {}, handler);
        return c.serve();
    }
};

void grpc_ok(photon::net::http2::Stream& s, const std::string& msg) {
    char buf[4096];
    while (s.read(buf, sizeof(buf), kLongUs) > 0) {
    }
    s.respond({{":status", "200"}, {"content-type", "application/grpc"}});
    std::string f = framed(msg);
    s.write(f.data(), f.size());
    std::vector<photon::net::http2::header_field> t = {{"grpc-status", "0"}};
    s.finish(&t);
}

TEST_P(Grpc, OnlyCallsTheServerNeverProcessedAreRetried) {
    int streams = 0;
    RawH2Server raw;
    raw.handler = [&](photon::net::http2::Stream& s) {
        if (++streams == 1) return s.reset(photon::net::http2::ErrorCode::REFUSED_STREAM);
        std::string path(s.field(":path"));
        if (path == "/t.S/Reset") {  // processed, then broken off: not to be retried
            char buf[4096];
            while (s.read(buf, sizeof(buf), kLongUs) > 0) {
            }
            return s.reset(photon::net::http2::ErrorCode::INTERNAL_ERROR);
        }
        grpc_ok(s, "second try");
    };
    photon_test::Listener l({&raw, &RawH2Server::serve});
    ASSERT_TRUE(l.ok());
    grpc::Channel ch(l.target());
    std::string resp;
    auto st = ch.call("/t.S/M", "x", &resp);
    EXPECT_TRUE(st.ok()) << st.message;
    EXPECT_EQ("second try", resp);
    EXPECT_EQ(2, streams) << "refused once (REFUSED_STREAM: not processed), then retried";
    EXPECT_EQ(1u, ch.connections_opened()) << "the connection itself was fine";
    st = ch.call("/t.S/Reset", "x", &resp);
    EXPECT_EQ(StatusCode::UNAVAILABLE, st.code) << st.message;
    EXPECT_EQ(3, streams) << "a call the server processed is not retried";
    l.terminate();
}

TEST_P(Grpc, ServesH2OverTlsWithAlpn) {
    using namespace photon::net;
    photon_test::tls_pair pair;
    PHOTON_TEST_MAKE_TLS_PAIR(pair);
    ASSERT_EQ(0, pair.server->set_alpn_protos({"h2"}));
    auto tcp = new_tcp_socket_server();
    ASSERT_EQ(0, tcp->bind_v4localhost(0));
    ASSERT_EQ(0, tcp->listen());
    photon_test::Listener l(server_->get_connection_handler(),
                            new_tls_server(pair.server.get(), tcp, true));
    ASSERT_TRUE(l.ok());
    ASSERT_EQ(0, pair.client->set_alpn_protos({"h2"}));
    grpc::ChannelOptions co;
    co.tls = pair.client.get();
    grpc::Channel ch("localhost:" + std::to_string(l.port()), co);
    std::string resp;
    auto st = ch.call("/test.Echo/Unary", "over tls", &resp);
    EXPECT_TRUE(st.ok()) << st.message;
    EXPECT_EQ("over tls", resp);
    auto call = ch.start_call("/test.Echo/Bidi");
    ASSERT_EQ(0, call->write("a"));
    ASSERT_EQ(1, call->read(&resp));
    EXPECT_EQ("a", resp);
    EXPECT_TRUE(call->finish().ok());
    // A client that does not offer h2 is refused before any call.
    std::unique_ptr<TLSContext> plain(new_tls_context());
    ASSERT_EQ(0, plain->set_ca_cert(photon_test::test_pki::get().pem("ca.pem").c_str()));
    ASSERT_EQ(0, plain->set_alpn_protos({"http/1.1"}));
    co.tls = plain.get();
    grpc::Channel ch2("localhost:" + std::to_string(l.port()), co);
    EXPECT_EQ(StatusCode::UNAVAILABLE, ch2.call("/test.Echo/Unary", "x", &resp).code);
    l.terminate();
}

PHOTON_INSTANTIATE_ENGINE_TESTS(Grpc);

}  // namespace
