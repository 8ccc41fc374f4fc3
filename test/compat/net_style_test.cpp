// Datagram sockets and socket iostreams used the way PhotonLibOS's own tests
// and examples use them: raw pointers with DEFER(delete ...), templated
// send/recv on char arrays, setsockopt<int>, IMessage through its base,
// an iostream the accepting coroutine owns. The code above the gtest
// include sees only what the photon headers bring.
#include <photon/common/alog.h>
#include <photon/common/message.h>
#include <photon/common/utility.h>
#include <photon/net/datagram_socket.h>
#include <photon/net/iostream.h>
#include <photon/net/socket.h>
#include <photon/photon.h>
#include <photon/thread/thread11.h>

#include <unistd.h>  // unlink(): no Photon header promises it

using namespace photon;
using namespace photon::net;

namespace {

const char kLine[] = "hello iostream over socket stream!";

// Photon's UDP test, nearly verbatim in shape: 0 when every step worked.
int udp_round_trips(char* got, size_t n) {
    auto s1 = new_udp_socket();
    DEFER(delete s1);
    auto s2 = new_udp_socket();
    DEFER(delete s2);
    s1->setsockopt<int>(SOL_SOCKET, SO_RCVBUF, 256 * 1024);
    if (s1->bind_v4localhost() != 0) return 1;
    auto ep = s1->getsockname();
    LOG_DEBUG("bound at ", ep);
    if (s2->connect(ep) != 0) return 2;
    if (s2->send("Hello", 6) != 6) return 3;
    if (s1->recv(got, n) != 6) return 4;
    auto s3 = new_udp_socket();
    DEFER(delete s3);
    if (s3->sendto("World", 6, ep) != 6) return 5;
    EndPoint from;
    if (s1->recvfrom(got + 6, n - 6, &from) != 6) return 6;
    if (from.port != s3->getsockname().port) return 7;  // s3 bound itself to 0.0.0.0
    struct iovec iov = {(void*)"iov", 4};
    if (s2->send(&iov, 1) != 4) return 8;  // B = iovec: a gathered datagram
    IMessage* m = s1;                      // the type-erased view
    if (m->recv(got + 12, n - 12) != 4) return 9;
    return 0;
}

int uds_round_trip(const char* path, char* got, size_t n) {
    unlink(path);
    auto s1 = new_uds_datagram_socket();
    DEFER(delete s1);
    auto s2 = new_uds_datagram_socket();
    DEFER(delete s2);
    DEFER(unlink(path));
    if (s1->bind(path) != 0) return 1;
    char bound[1024] = {};
    if (s1->getsockname(bound, sizeof(bound)) != 0) return 2;
    if (s2->connect(bound) != 0) return 3;
    if (s2->send("Hello", 6) != 6) return 4;
    if (s1->recv(got, n) != 6) return 5;
    auto s3 = new_uds_datagram_socket();
    DEFER(delete s3);
    if (s3->sendto("Hello", 6, path) != 6) return 6;
    char from[1024] = {};
    if (s1->recvfrom(got, n, from, sizeof(from)) != 6) return 7;
    return 0;
}

void iostream_server(ISocketServer* server, std::string* line) {
    auto connection = server->accept();
    auto ios = new_iostream(connection, true);
    DEFER(delete ios);
    char buf[4096];
    ios->getline(buf, sizeof(buf));
    *line = buf;
    *ios << 123456;  // goes out when ios is deleted
}

uint64_t iostream_client(const char* path, std::string* line) {
    unlink(path);
    auto server = new_uds_server(true);
    DEFER(delete server);
    if (server->bind(path) != 0 || server->listen(100) != 0) return 0;
    auto th = thread_create11(iostream_server, server, line);
    auto jh = thread_enable_join(th);
    auto cli = new_uds_client();
    DEFER(delete cli);
    auto sock = cli->connect(path);
    if (!sock) return 0;
    auto ios = new_iostream(sock, true);
    DEFER(delete ios);
    *ios << kLine << std::endl;
    uint64_t x = 0;
    *ios >> x;
    thread_join(jh);
    return x;
}

}  // namespace

#include <gtest/gtest.h>

namespace {

std::string sock_path(const char* name) {
    return "/tmp/photon-net-style-" + std::to_string(getpid()) + "-" + name;
}

TEST(NetStyle, UdpSocketsRoundTripAsInPhotonsTests) {
    ASSERT_EQ(0, photon::init(INIT_EVENT_DEFAULT, INIT_IO_NONE));
    char got[64] = {};
    EXPECT_EQ(0, udp_round_trips(got, sizeof(got)));
    EXPECT_STREQ("Hello", got);
    EXPECT_STREQ("World", got + 6);
    EXPECT_STREQ("iov", got + 12);
    EXPECT_EQ(0, photon::fini());
}

TEST(NetStyle, UnixDatagramSocketsRoundTripAsInPhotonsTests) {
    ASSERT_EQ(0, photon::init(INIT_EVENT_DEFAULT, INIT_IO_NONE));
    char got[64] = {};
    EXPECT_EQ(0, uds_round_trip(sock_path("dgram").c_str(), got, sizeof(got)));
    EXPECT_STREQ("Hello", got);
    EXPECT_EQ(0, photon::fini());
}

TEST(NetStyle, IostreamOverAUnixStreamAsInPhotonsTests) {
    ASSERT_EQ(0, photon::init(INIT_EVENT_DEFAULT, INIT_IO_NONE));
    std::string line;
    EXPECT_EQ(123456u, iostream_client(sock_path("stream").c_str(), &line));
    EXPECT_EQ(kLine, line);
    EXPECT_EQ(0, photon::fini());
}

TEST(NetStyle, DeclarationsKeepPhotonsShapes) {
    static_assert(std::is_base_of<IMessage, IDatagramSocket>::value, "");
    static_assert(std::is_base_of<ISocketBase, IDatagramSocket>::value, "");
    static_assert(std::is_base_of<ISocketName, IDatagramSocket>::value, "");
    static_assert(std::is_same<decltype(&new_udp_socket), UDPSocket* (*)(int)>::value, "");
    static_assert(
        std::is_same<decltype(&new_uds_datagram_socket), UDS_DatagramSocket* (*)(int)>::value, "");
    static_assert(
        std::is_same<decltype(&new_iostream), std::iostream* (*)(ISocketStream*, bool)>::value, "");
    static_assert(IMessage::Reliable == 1 && IMessage::PreserveOrder == 2, "");
}

}  // namespace
