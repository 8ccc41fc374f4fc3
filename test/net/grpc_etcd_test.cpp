// Our gRPC channel against etcd (Debian's etcd-server, /usr/bin/etcd or
// PATH), started here on 127.0.0.1 with free ports and a temporary data
// directory: Put and Range through etcdserverpb.KV, and a Watch stream
// (etcdserverpb.Watch/Watch, bidi) that sees Puts made meanwhile on the same
// connection. The messages are written and read by hand from the field
// numbers of etcd's rpc.proto and kv.proto. Skips without etcd.
#include <photon/net/grpc/channel.h>
#include <photon/net/socket.h>
#include <photon/thread/thread.h>

#include <gtest/gtest.h>

#include <string>

#include "../thread/test_util.h"
#include "../util/temp_dir.h"
#include "grpc_pb_util.h"
#include "tls_test_util.h"

namespace {

namespace grpc = photon::net::grpc;
using photon_test::pb_parse;
using photon_test::PbWriter;

uint16_t free_port() {
    std::unique_ptr<photon::net::ISocketServer> s(photon::net::new_tcp_socket_server());
    if (s->bind_v4localhost(0) < 0) return 0;
    return s->getsockname().port;
}

// etcdserverpb.PutRequest: key 1, value 2.
std::string put_request(const std::string& k, const std::string& v) {
    return PbWriter().bytes(1, k).bytes(2, v).str();
}

class GrpcEtcd : public photon_test::EngineTest {
protected:
    void SetUp() override {
        if (!photon_test::have_tool("etcd")) GTEST_SKIP() << "etcd not installed (etcd-server)";
        photon_test::EngineTest::SetUp();
    }
};

TEST_P(GrpcEtcd, PutRangeAndWatchThroughEtcdsGrpcServices) {
    photon_test::temp_dir dir("photon-grpc-etcd");
    ASSERT_TRUE(dir.ok());
    uint16_t cport = free_port(), pport = free_port();
    ASSERT_TRUE(cport && pport && cport != pport);
    std::string curl = "http://127.0.0.1:" + std::to_string(cport);
    std::string purl = "http://127.0.0.1:" + std::to_string(pport);
    photon_test::child_process etcd(
        {"etcd", "--name", "t", "--data-dir", dir / "data", "--listen-client-urls", curl,
         "--advertise-client-urls", curl, "--listen-peer-urls", purl,
         "--initial-advertise-peer-urls", purl, "--initial-cluster", "t=" + purl},
        "", dir / "log");
    ASSERT_TRUE(etcd.started());

    grpc::Channel ch("127.0.0.1:" + std::to_string(cport));
    grpc::CallOptions opt;
    opt.timeout = 2 * 1000 * 1000;
    std::string resp;
    grpc::Status st;
    // etcd elects itself a leader after it starts: retry the first Put a while.
    for (int i = 0; i < 100; i++) {
        st = ch.call("/etcdserverpb.KV/Put", put_request("k1", "v1"), &resp, opt);
        if (st.ok()) break;
        photon::thread_usleep(200 * 1000);
    }
    ASSERT_TRUE(st.ok()) << (int)st.code << " " << st.message << "\n"
                         << photon_test::slurp(dir / "log");
    // PutResponse: header 1 (ResponseHeader: revision 3).
    uint64_t rev = pb_parse(pb_parse(resp).bytes(1)).num(3);
    EXPECT_GT(rev, 0u);

    // RangeRequest: key 1. RangeResponse: header 1, kvs 2 (KeyValue: key 1,
    // mod_revision 3, value 5), count 4.
    ASSERT_TRUE(
        ch.call("/etcdserverpb.KV/Range", PbWriter().bytes(1, "k1").str(), &resp, opt).ok());
    auto range = pb_parse(resp);
    ASSERT_TRUE(range.ok);
    EXPECT_EQ(1u, range.num(4));
    ASSERT_EQ(1u, range.all(2).size());
    auto kv = pb_parse(range.all(2)[0]);
    EXPECT_EQ("k1", kv.bytes(1));
    EXPECT_EQ("v1", kv.bytes(5));
    EXPECT_EQ(rev, kv.num(3));
    // A key that is not there.
    ASSERT_TRUE(
        ch.call("/etcdserverpb.KV/Range", PbWriter().bytes(1, "nope").str(), &resp, opt).ok());
    EXPECT_EQ(0u, pb_parse(resp).all(2).size());

    // Watch: WatchRequest create_request 1 (WatchCreateRequest: key 1).
    // WatchResponse: watch_id 2, created 3, events 11 (Event: type 1, kv 2).
    grpc::CallOptions wopt;
    wopt.timeout = 30 * 1000 * 1000;
    auto watch = ch.start_call("/etcdserverpb.Watch/Watch", wopt);
    ASSERT_EQ(0, watch->write(PbWriter().bytes(1, PbWriter().bytes(1, "w").str()).str()));
    std::string m;
    ASSERT_EQ(1, watch->read(&m)) << watch->finish().message;
    EXPECT_EQ(1u, pb_parse(m).num(3)) << "created";
    ASSERT_TRUE(ch.call("/etcdserverpb.KV/Put", put_request("w", "one"), &resp, opt).ok());
    ASSERT_TRUE(ch.call("/etcdserverpb.KV/Put", put_request("other", "x"), &resp, opt).ok());
    ASSERT_TRUE(ch.call("/etcdserverpb.KV/Put", put_request("w", "two"), &resp, opt).ok());
    std::vector<std::string> seen;
    while (seen.size() < 2 && watch->read(&m) == 1) {
        auto wr = pb_parse(m);  // kept: all() refers into it
        for (auto& ev : wr.all(11)) {
            auto e = pb_parse(ev);
            EXPECT_EQ(0u, e.num(1)) << "PUT";
            auto ekv = pb_parse(e.bytes(2));
            EXPECT_EQ("w", ekv.bytes(1));
            seen.push_back(ekv.bytes(5));
        }
    }
    ASSERT_EQ(2u, seen.size());
    EXPECT_EQ("one", seen[0]);
    EXPECT_EQ("two", seen[1]);
    watch->cancel();
    EXPECT_EQ(grpc::StatusCode::CANCELLED, watch->finish().code);
    watch.reset();
    EXPECT_EQ(1u, ch.connections_opened());
}

PHOTON_INSTANTIATE_ENGINE_TESTS(GrpcEtcd);

}  // namespace
