// PhotonLibOS programs call photon::net::setsockopt and friends, which its own
// <sys/socket.h> declares, having included only libc's socket header and a
// photon header that brings it (here io/iouring-wrapper.h; net/socket.h does
// too). Nothing from net/ is included here.
#include <photon/io/iouring-wrapper.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace {

TEST(SysSocketShim, SocketOptionCallsAreFoundInPhotonNet) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    int on = 1, got = 0;
    socklen_t len = sizeof(got);
    EXPECT_EQ(0, photon::net::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)));
    EXPECT_EQ(0, photon::net::getsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &got, &len));
    EXPECT_NE(0, got);
    sockaddr_in addr = {};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(0, ::bind(fd, (sockaddr*)&addr, sizeof(addr)));
    sockaddr_in bound = {};
    len = sizeof(bound);
    EXPECT_EQ(0, photon::net::getsockname(fd, (sockaddr*)&bound, &len));
    EXPECT_NE(0, bound.sin_port);
    len = sizeof(bound);
    errno = 0;
    EXPECT_EQ(-1, photon::net::getpeername(fd, (sockaddr*)&bound, &len));
    EXPECT_EQ(ENOTCONN, errno);
    ::close(fd);
    errno = 0;
    EXPECT_EQ(-1, photon::net::setsockopt(-1, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)));
    EXPECT_EQ(EBADF, errno);
}

}  // namespace
