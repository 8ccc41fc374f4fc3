// Zero-copy sends: once send/write returns the buffer is the caller's again
// (overwriting it cannot change what the peer receives), for the zero-copy
// flavour and for ZEROCOPY_FLAG on the other streams; small sends work too.
#include <memory>
#include <string>

#include <photon/net/socket.h>

#include "../thread/test_util.h"
#include "../util/engine_fixture.h"
#include "net_test_util.h"

using namespace photon;
using namespace photon::net;
using namespace photon_test;

namespace {

enum Kind { kZerocopyTcp, kTcpWithFlag, kIouringWithFlag };

using Param = std::tuple<uint64_t, Kind>;

class Zerocopy : public ::testing::TestWithParam<Param> {
protected:
    void SetUp() override {
        PHOTON_TEST_INIT_ENGINE(std::get<0>(GetParam()), photon::INIT_IO_NONE);
        switch (std::get<1>(GetParam())) {
            case kZerocopyTcp:
                server.reset(new_zerocopy_tcp_server());
                client.reset(new_zerocopy_tcp_client());
                break;
            case kTcpWithFlag:
                server.reset(new_tcp_socket_server());
                client.reset(new_tcp_socket_client());
                flags = ISocketStream::ZEROCOPY_FLAG;
                break;
            case kIouringWithFlag:
                server.reset(new_iouring_tcp_server());
                client.reset(new_iouring_tcp_client());
                flags = ISocketStream::ZEROCOPY_FLAG;
                break;
        }
        if (!server && errno == ENOSYS) GTEST_SKIP() << "built without io_uring";
        ASSERT_TRUE(server && client);
        ASSERT_EQ(0, server->bind_v4localhost(0));
        ASSERT_EQ(0, server->listen());
        ep = server->getsockname();
    }
    void TearDown() override {
        client.reset();
        server.reset();
        fini_vcpu();
    }
    // Sends `count` blocks of `size` bytes, scribbling over the buffer as
    // soon as each send returns; the peer must still see the patterns.
    void send_and_scribble(size_t size, int count) {
        std::unique_ptr<ISocketStream> c(client->connect(ep));
        std::unique_ptr<ISocketStream> a(server->accept());
        ASSERT_TRUE(c && a);
        int intact = 0;
        auto reader = spawn([&] {
            std::string in(size, 0);
            for (int i = 0; i < count; i++) {
                if (a->read(&in[0], size) != (ssize_t)size) return;
                if (in == pattern(size, i + 1)) intact++;
            }
        });
        std::string buf(size, 0);
        for (int i = 0; i < count; i++) {
            buf = pattern(size, i + 1);
            size_t done = 0;
            while (done < size) {  // send() may be short
                ssize_t r = c->send(&buf[done], size - done, flags);
                ASSERT_GT(r, 0) << strerror(errno);
                done += (size_t)r;
            }
            memset(&buf[0], 0xEE, size);  // the kernel must be done with it
        }
        reader.join();
        EXPECT_EQ(count, intact);
    }
    std::unique_ptr<ISocketServer> server;
    std::unique_ptr<ISocketClient> client;
    EndPoint ep;
    int flags = 0;
};

TEST_P(Zerocopy, LargeSendsArriveIntactThoughTheBufferIsReusedAtOnce) {
    send_and_scribble(256 * 1024, 16);
}

TEST_P(Zerocopy, SmallSendsWorkToo) { send_and_scribble(100, 50); }

TEST_P(Zerocopy, WriteOfALargeBufferIsWholeAndIntact) {
    std::unique_ptr<ISocketStream> c(client->connect(ep));
    std::unique_ptr<ISocketStream> a(server->accept());
    ASSERT_TRUE(c && a);
    std::string out = pattern(4 << 20, 7), in(out.size(), 0);
    auto reader = spawn([&] { EXPECT_EQ((ssize_t)in.size(), a->read(&in[0], in.size())); });
    EXPECT_EQ((ssize_t)out.size(), c->write(out.data(), out.size()));
    memset(&out[0], 0, 4096);
    reader.join();
    EXPECT_TRUE(in == pattern(4 << 20, 7));
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
    static const char* kinds[] = {"zerocopy_tcp", "tcp_with_flag", "iouring_with_flag"};
    return engine_label(std::get<0>(info.param)) + "_" + kinds[std::get<1>(info.param)];
}

INSTANTIATE_TEST_SUITE_P(Engines, Zerocopy,
                         ::testing::Combine(PHOTON_TEST_EVENT_ENGINES,
                                            ::testing::Values(kZerocopyTcp, kTcpWithFlag,
                                                              kIouringWithFlag)),
                         param_name);

}  // namespace
