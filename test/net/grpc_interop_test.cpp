// gRPC interop with grpc C++ (Debian's libgrpc++, the peer built from
// test/net/grpc_interop/ when CMake finds it): our Channel against grpc C++'s
// server, and grpc C++'s client against our Server, over h2c: unary, the
// three streaming kinds, deadlines, error statuses, metadata (binary too),
// gzip, and UNIMPLEMENTED. Skips without the peer.
#include <photon/net/grpc/channel.h>
#include <photon/net/grpc/server.h>
#include <photon/thread/thread.h>

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "../thread/test_util.h"
#include "../util/temp_dir.h"
#include "grpc_pb_util.h"
#include "grpc_test_util.h"
#include "tls_test_util.h"

namespace {

namespace grpc = photon::net::grpc;
using grpc::StatusCode;
using photon_test::pb_parse;
using photon_test::PbWriter;

#ifdef PHOTON_GRPC_INTEROP_PEER
const char* const kPeer = PHOTON_GRPC_INTEROP_PEER;
#else
const char* const kPeer = nullptr;
#endif

// interop.Msg (interop.proto): payload 1, code 2, text 3, sleep_us 4, count 5.
std::string msg(const std::string& payload, int code = 0, const std::string& text = "",
                uint64_t sleep_us = 0, int count = 0) {
    PbWriter w;
    if (!payload.empty()) w.bytes(1, payload);
    if (code) w.varint(2, code);
    if (!text.empty()) w.bytes(3, text);
    if (sleep_us) w.varint(4, sleep_us);
    if (count) w.varint(5, count);
    return w.str();
}

class GrpcInterop : public photon_test::EngineTest {
protected:
    void SetUp() override {
        if (!kPeer)
            GTEST_SKIP() << "gRPC C++ (libgrpc++-dev, protoc, grpc_cpp_plugin) not found "
                            "at configure time: no interop peer";
        photon_test::EngineTest::SetUp();
    }
};

// Unary, metadata both ways, the deadline seen by the server.
void check_unary_metadata_and_deadline(grpc::Channel& ch) {
    grpc::Metadata initial, trailing;
    grpc::CallOptions opt;
    opt.timeout = 10 * 1000 * 1000;
    opt.metadata = {{"x-echo", "hi"}, {"x-echo-bin", std::string("\0\xff\x01", 3)}};
    opt.initial_metadata = &initial;
    opt.trailing_metadata = &trailing;
    std::string resp;
    auto st = ch.call("/interop.Peer/Unary", msg("ping"), &resp, opt);
    ASSERT_TRUE(st.ok()) << st.message;
    auto r = pb_parse(resp);
    EXPECT_EQ("ping", r.bytes(1));
    EXPECT_EQ(0u, r.bytes(3).rfind("deadline-ms ", 0)) << r.bytes(3);
    int left = std::stoi(r.bytes(3).substr(12));
    EXPECT_GT(left, 5000);
    EXPECT_LE(left, 10000);
    ASSERT_NE(nullptr, grpc::find_metadata(initial, "x-echo"));
    EXPECT_EQ("hi", *grpc::find_metadata(initial, "x-echo"));
    ASSERT_NE(nullptr, grpc::find_metadata(trailing, "x-echo-bin"));
    EXPECT_EQ(std::string("\0\xff\x01", 3), *grpc::find_metadata(trailing, "x-echo-bin"));
}

// Error statuses, with a message to percent-decode; our deadline, enforced
// here while the server sleeps.
void check_errors_and_our_deadline(grpc::Channel& ch) {
    std::string resp;
    auto st = ch.call("/interop.Peer/Unary", msg("", 7, "denied: 100% \xc3\xa9\n"), &resp);
    EXPECT_EQ(StatusCode::PERMISSION_DENIED, st.code);
    EXPECT_EQ("denied: 100% \xc3\xa9\n", st.message);
    st = ch.call("/interop.Peer/Missing", msg("x"), &resp);
    EXPECT_EQ(StatusCode::UNIMPLEMENTED, st.code) << st.message;

    grpc::CallOptions shortopt;
    shortopt.timeout = 200 * 1000;
    st = ch.call("/interop.Peer/Unary", msg("", 0, "", 5 * 1000 * 1000), &resp, shortopt);
    EXPECT_EQ(StatusCode::DEADLINE_EXCEEDED, st.code) << st.message;
}

void check_client_streaming(grpc::Channel& ch) {
    auto call = ch.start_call("/interop.Peer/ClientStream");
    std::string all;
    for (int i = 0; i < 20; i++) {
        std::string p(1000 + i, (char)('a' + i));
        all += p;
        ASSERT_EQ(0, call->write(msg(p)));
    }
    ASSERT_EQ(0, call->writes_done());
    std::string m;
    ASSERT_EQ(1, call->read(&m));
    auto f = pb_parse(m);
    EXPECT_EQ(20u, f.num(5));
    EXPECT_TRUE(f.bytes(1) == all);
    EXPECT_TRUE(call->finish().ok());
}

// Server streaming, 1 MiB messages.
void check_server_streaming(grpc::Channel& ch) {
    auto call = ch.start_call("/interop.Peer/ServerStream");
    std::string big(1 << 20, 'q');
    ASSERT_EQ(0, call->write(msg(big, 0, "", 0, 8)));
    ASSERT_EQ(0, call->writes_done());
    std::string m;
    int n = 0;
    while (call->read(&m) == 1) n += pb_parse(m).bytes(1) == big;
    EXPECT_EQ(8, n);
    auto s = call->finish();
    EXPECT_TRUE(s.ok()) << s.message;
}

void check_bidi(grpc::Channel& ch) {
    auto call = ch.start_call("/interop.Peer/Bidi");
    std::string m;
    for (int i = 0; i < 50; i++) {
        std::string p(i * 100 + 1, (char)i);
        ASSERT_EQ(0, call->write(msg(p)));
        ASSERT_EQ(1, call->read(&m));
        EXPECT_TRUE(pb_parse(m).bytes(1) == p) << i;
    }
    ASSERT_EQ(0, call->writes_done());
    EXPECT_EQ(0, call->read(&m));
    EXPECT_TRUE(call->finish().ok());
}

// Gzip both ways (x-gzip: the peer answers gzipped).
void check_gzip(grpc::Channel& ch) {
    grpc::CallOptions g;
    g.compression = grpc::Compression::gzip;
    g.metadata = {{"x-gzip", "1"}};
    std::string p(100000, 'z'), resp;
    auto st = ch.call("/interop.Peer/Unary", msg(p), &resp, g);
    EXPECT_TRUE(st.ok()) << st.message;
    EXPECT_TRUE(pb_parse(resp).bytes(1) == p);
}

// One channel for all the checks: they must share one connection. A fatal
// failure in a check ends the test, as it did when the checks were inline.
TEST_P(GrpcInterop, OurClientAgainstGrpcCppServer) {
    photon_test::temp_dir dir("photon-grpc-interop");
    ASSERT_TRUE(dir.ok());
    std::string port_file = dir / "port";
    photon_test::child_process peer({kPeer, "server", port_file}, "", dir / "log");
    ASSERT_TRUE(peer.started());
    ASSERT_TRUE(photon_test::wait_for([&] { return std::ifstream(port_file).good(); }, 20000))
        << photon_test::slurp(dir / "log");
    int port = 0;
    std::ifstream(port_file) >> port;
    ASSERT_GT(port, 0);
    grpc::ChannelOptions co;
    co.max_receive_message_size = 16 << 20;
    grpc::Channel ch("127.0.0.1:" + std::to_string(port), co);

    ASSERT_NO_FATAL_FAILURE(check_unary_metadata_and_deadline(ch));
    check_errors_and_our_deadline(ch);
    ASSERT_NO_FATAL_FAILURE(check_client_streaming(ch));
    ASSERT_NO_FATAL_FAILURE(check_server_streaming(ch));
    ASSERT_NO_FATAL_FAILURE(check_bidi(ch));
    if (grpc::gzip_supported()) check_gzip(ch);
    EXPECT_EQ(1u, ch.connections_opened());
}

// interop.Peer on our server, as peer.cc's server does it.
void register_peer(grpc::Server* s) {
    auto echo_md = [](grpc::ServerCall& call) {
        for (auto& kv : call.client_metadata()) {
            if (kv.first == "x-echo" || kv.first == "x-echo-bin") {
                call.add_initial_metadata(kv.first, kv.second);
                call.add_trailing_metadata(kv.first, kv.second);
            }
            if (kv.first == "x-gzip") call.set_compression(grpc::Compression::gzip);
        }
    };
    s->add_unary("/interop.Peer/Unary",
                 [echo_md](grpc::ServerCall& call, const std::string& req, std::string* resp) {
                     echo_md(call);
                     auto f = pb_parse(req);
                     if (f.num(2)) return grpc::Status((StatusCode)f.num(2), f.bytes(3));
                     photon::Timeout end(f.num(4));
                     while (!end.expired() && !call.cancelled()) photon::thread_usleep(5000);
                     if (call.cancelled()) return grpc::Status(StatusCode::CANCELLED, "cancelled");
                     std::string text;
                     if (call.deadline() != UINT64_MAX) {
                         photon::Timeout d;
                         d.expiration(call.deadline());
                         text = "deadline-ms " + std::to_string(d.timeout() / 1000);
                     }
                     *resp = msg(f.bytes(1), 0, text);
                     return grpc::Status();
                 });
    s->add_streaming("/interop.Peer/ClientStream", [echo_md](grpc::ServerCall& call) {
        echo_md(call);
        std::string m, all;
        int n = 0;
        while (call.read(&m) == 1) n++, all += pb_parse(m).bytes(1);
        call.write(msg(all, 0, "", 0, n));
        return grpc::Status();
    });
    s->add_streaming("/interop.Peer/ServerStream", [echo_md](grpc::ServerCall& call) {
        echo_md(call);
        std::string m;
        if (call.read(&m) != 1) return grpc::Status(StatusCode::INTERNAL, "no request");
        for (uint64_t i = 0; i < pb_parse(m).num(5); i++)
            if (call.write(m) < 0) return grpc::Status(StatusCode::CANCELLED, "write failed");
        return grpc::Status();
    });
    s->add_streaming("/interop.Peer/Bidi", [echo_md](grpc::ServerCall& call) {
        echo_md(call);
        std::string m;
        while (call.read(&m) == 1)
            if (call.write(m) < 0) return grpc::Status(StatusCode::CANCELLED, "write failed");
        return grpc::Status();
    });
}

TEST_P(GrpcInterop, GrpcCppClientAgainstOurServer) {
    grpc::ServerOptions so;
    so.max_receive_message_size = 16 << 20;
    grpc::Server server(so);
    register_peer(&server);
    photon_test::Listener l(server.get_connection_handler());
    ASSERT_TRUE(l.ok());
    photon_test::temp_dir dir("photon-grpc-interop");
    ASSERT_TRUE(dir.ok());
    photon_test::child_process peer({kPeer, "client", l.target()}, "", dir / "log");
    ASSERT_TRUE(peer.started());
    int rc = peer.wait(60000);
    std::string log = photon_test::slurp(dir / "log");
    EXPECT_EQ(0, rc) << log;
    EXPECT_EQ(std::string::npos, log.find("FAIL")) << log;
    EXPECT_NE(std::string::npos, log.find("PASS: gzip")) << log;
    EXPECT_NE(std::string::npos, log.find("0 failures")) << log;
    l.terminate();
    EXPECT_EQ(0, server.stop(10 * 1000 * 1000));
}

PHOTON_INSTANTIATE_ENGINE_TESTS(GrpcInterop);

}  // namespace
