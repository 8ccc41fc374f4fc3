// photon/net/grpc/protobuf.h: typed unary calls and streaming reads and
// writes of protobuf messages (protobuf's own google.protobuf.StringValue),
// through our server and channel. Skips where libprotobuf was not found.
#include <photon/net/grpc/protobuf.h>

#include <gtest/gtest.h>

#include "../thread/test_util.h"
#include "grpc_test_util.h"

#if defined(PHOTON_GRPC_TEST_PROTOBUF) && defined(PHOTON_GRPC_HAVE_PROTOBUF)
#include <google/protobuf/wrappers.pb.h>
#define HAVE_PB 1
#endif

namespace {

namespace grpc = photon::net::grpc;

class GrpcProtobuf : public photon_test::EngineTest {};

TEST_P(GrpcProtobuf, TypedCallsAndStreams) {
#ifndef HAVE_PB
    GTEST_SKIP() << "libprotobuf not found at configure time";
#else
    using google::protobuf::Int64Value;
    using google::protobuf::StringValue;
    grpc::Server server;
    ASSERT_EQ(0, (grpc::add_unary<StringValue, Int64Value>(
                     &server, "/t.S/Len",
                     [](grpc::ServerCall&, const StringValue& req, Int64Value* resp) {
                         resp->set_value((int64_t)req.value().size());
                         return grpc::Status();
                     })));
    server.add_streaming("/t.S/Upper", [](grpc::ServerCall& call) {
        StringValue m;
        while (grpc::read_message(call, &m) == 1) {
            for (auto& c : *m.mutable_value()) c = (char)toupper(c);
            grpc::write_message(call, m);
        }
        return grpc::Status();
    });
    photon_test::Listener l(server.get_connection_handler());
    ASSERT_TRUE(l.ok());
    {
        grpc::Channel ch(l.target());
        StringValue req;
        req.set_value("seven!!");
        Int64Value resp;
        auto st = grpc::call(ch, "/t.S/Len", req, &resp);
        ASSERT_TRUE(st.ok()) << st.message;
        EXPECT_EQ(7, resp.value());
        // Bytes that are not an Int64Value: the typed server answers INTERNAL.
        std::string raw;
        st = ch.call("/t.S/Len", std::string("\x0a\xff", 2), &raw);
        EXPECT_EQ(grpc::StatusCode::INTERNAL, st.code);

        auto call = ch.start_call("/t.S/Upper");
        req.set_value("abc");
        ASSERT_EQ(0, grpc::write_message(*call, req));
        StringValue back;
        ASSERT_EQ(1, grpc::read_message(*call, &back));
        EXPECT_EQ("ABC", back.value());
        ASSERT_EQ(0, call->writes_done());
        EXPECT_EQ(0, grpc::read_message(*call, &back));
        EXPECT_TRUE(call->finish().ok());
    }
    l.terminate();
    EXPECT_EQ(0, server.stop(10 * 1000 * 1000));
#endif
}

PHOTON_INSTANTIATE_ENGINE_TESTS(GrpcProtobuf);

}  // namespace
