// A fixture that runs each case once per master event engine and TCP
// flavour (plain, io_uring, zero-copy), with a server of that flavour
// listening on 127.0.0.1 and a client of the same flavour.
#pragma once

#include <memory>
#include <string>
#include <tuple>

#include <photon/net/socket.h>

#include "../thread/test_util.h"
#include "../util/engine_fixture.h"

namespace photon_test {

enum TcpKind { kTcp, kIouring, kZerocopy };
using TcpParam = std::tuple<uint64_t, TcpKind>;

class TcpFlavourTest : public ::testing::TestWithParam<TcpParam> {
protected:
    void SetUp() override {
        PHOTON_TEST_INIT_ENGINE(std::get<0>(GetParam()), photon::INIT_IO_NONE);
        server.reset(new_server());
        client.reset(new_client());
        if (!server && errno == ENOSYS) GTEST_SKIP() << "built without io_uring";
        ASSERT_TRUE(server && client);
        ASSERT_EQ(0, server->bind_v4localhost(0));
        ASSERT_EQ(0, server->listen());
        ep = server->getsockname();
        ASSERT_NE(0, ep.port);
    }
    void TearDown() override {
        client.reset();
        server.reset();
        fini_vcpu();
    }
    TcpKind kind() const { return std::get<1>(GetParam()); }
    photon::net::ISocketServer* new_server() const {
        using namespace photon::net;
        return kind() == kIouring    ? new_iouring_tcp_server()
               : kind() == kZerocopy ? new_zerocopy_tcp_server()
                                     : new_tcp_socket_server();
    }
    photon::net::ISocketClient* new_client() const {
        using namespace photon::net;
        return kind() == kIouring    ? new_iouring_tcp_client()
               : kind() == kZerocopy ? new_zerocopy_tcp_client()
                                     : new_tcp_socket_client();
    }

    std::unique_ptr<photon::net::ISocketServer> server;
    std::unique_ptr<photon::net::ISocketClient> client;
    photon::net::EndPoint ep;
};

inline std::string tcp_param_name(const ::testing::TestParamInfo<TcpParam>& info) {
    static const char* kinds[] = {"_tcp", "_iouring_tcp", "_zerocopy_tcp"};
    return engine_label(std::get<0>(info.param)) + kinds[std::get<1>(info.param)];
}

#define PHOTON_INSTANTIATE_TCP_FLAVOUR_TESTS(suite)                                        \
    INSTANTIATE_TEST_SUITE_P(                                                              \
        Engines, suite,                                                                    \
        ::testing::Combine(PHOTON_TEST_EVENT_ENGINES,                                      \
                           ::testing::Values(::photon_test::kTcp, ::photon_test::kIouring, \
                                             ::photon_test::kZerocopy)),                   \
        ::photon_test::tcp_param_name)

}  // namespace photon_test
