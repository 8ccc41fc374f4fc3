// Code written the way PhotonLibOS users write it compiles and runs here:
// names where Photon declares them (signal calls in namespace photon,
// photon::net::setsockopt, alog's log_output_level, the pooled stack knobs)
// and the standard declarations Photon's headers bring along. The functions
// above the gtest include see only what the photon headers included.
#include <photon/photon.h>
#include <photon/common/alog.h>
#include <photon/common/hash_combine.h>
#include <photon/common/string_view.h>
#include <photon/io/signal.h>
#include <photon/net/socket.h>
#include <photon/thread/stack-allocator.h>
#include <photon/thread/thread11.h>
#include <photon/thread/workerpool.h>

#include <unistd.h>  // close(): no Photon header promises it

namespace {

// std::thread, std::vector and std::begin, with no standard header of ours.
int sum_in_a_std_thread() {
    std::vector<int> v{3, 1, 2};
    int sum = 0;
    std::thread t([&] {
        for (auto it = std::begin(v); it != std::end(v); ++it) sum += *it;
    });
    t.join();
    return sum;
}

// photon::net's socket calls on a raw fd: 0 on success, or the errno.
int socket_calls(uint16_t* bound_port, int* reuse, int* peer_errno) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return errno;
    int one = 1;
    if (photon::net::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0) return errno;
    socklen_t len = sizeof(*reuse);
    if (photon::net::getsockopt(fd, SOL_SOCKET, SO_REUSEADDR, reuse, &len) != 0) return errno;
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd, (sockaddr*)&sa, sizeof(sa)) != 0) return errno;
    socklen_t sl = sizeof(sa);
    if (photon::net::getsockname(fd, (sockaddr*)&sa, &sl) != 0) return errno;
    *bound_port = ntohs(sa.sin_port);
    *peer_errno = photon::net::getpeername(fd, (sockaddr*)&sa, &sl) == 0 ? 0 : errno;
    ::close(fd);
    return 0;
}

}  // namespace

#include <gtest/gtest.h>

#include "../util/wait.h"

namespace {

TEST(PhotonStyle, WorkerpoolAndThread11BringStdThreadVectorAndBegin) {
    EXPECT_EQ(6, sum_in_a_std_thread());
}

TEST(PhotonStyle, SocketOptionAndNameCallsAreInPhotonNet) {
    uint16_t port = 0;
    int reuse = 0, peer_errno = 0;
    ASSERT_EQ(0, socket_calls(&port, &reuse, &peer_errno));
    EXPECT_NE(0, reuse);
    EXPECT_NE(0, port);
    EXPECT_EQ(ENOTCONN, peer_errno);
    errno = 0;
    EXPECT_EQ(-1, photon::net::setsockopt(-1, SOL_SOCKET, SO_REUSEADDR, &reuse, sizeof(reuse)));
    EXPECT_EQ(EBADF, errno);
}

TEST(PhotonStyle, SignalCallsAreInNamespacePhotonWithCLinkage) {
    static_assert(std::is_same<decltype(&photon::sync_signal_init), int (*)()>::value, "");
    static_assert(
        std::is_same<decltype(&photon::sync_signal), sighandler_t (*)(int, sighandler_t)>::value,
        "");
    static_assert(std::is_same<decltype(&photon::block_all_signal), int (*)()>::value, "");
    ASSERT_EQ(0, photon::init(photon::INIT_EVENT_EPOLL | photon::INIT_EVENT_SIGNAL,
                              photon::INIT_IO_NONE));
    static int got = 0;
    ASSERT_NE(SIG_ERR, photon::sync_signal(SIGUSR2, [](int) { got++; }));
    ASSERT_EQ(0, kill(getpid(), SIGUSR2));
    EXPECT_TRUE(photon_test::wait_for([] { return got > 0; }));
    EXPECT_EQ(1, got);
    EXPECT_EQ(0, photon::fini());
    int blocked = -1;
    std::thread([&] { blocked = photon::block_all_signal(); }).join();
    EXPECT_EQ(0, blocked);
}

TEST(PhotonStyle, LogOutputLevelIsTheDefaultLoggersLevel) {
    uint32_t old = log_output_level;
    log_output_level = ALOG_ERROR;
    EXPECT_EQ((uint32_t)ALOG_ERROR, default_logger.log_level);
    set_log_output_level(ALOG_WARN);
    EXPECT_EQ((uint32_t)ALOG_WARN, log_output_level);
    log_output_level = old;
    EXPECT_EQ(default_logger.log_output, log_output);
}

TEST(PhotonStyle, HashCombineFoldsLeftToRightAndStringViewIsStd) {
    EXPECT_EQ(7u, photon::hash_combine(7));
    size_t ab = (size_t(1) << 6) + (size_t(1) >> 2) + 0x9e3779b9 + 2;
    EXPECT_EQ(ab, photon::hash_combine(1, 2));
    EXPECT_EQ(photon::hash_combine(ab, 3), photon::hash_combine(1, 2, 3));
    EXPECT_NE(photon::hash_combine(1, 2), photon::hash_combine(2, 1));
    std::string_view sv = "photon";
    EXPECT_EQ(6u, sv.size());
}

TEST(PhotonStyle, PooledStackKnobsKeepPhotonsNames) {
    ASSERT_EQ(0, photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE));
    EXPECT_EQ(size_t(64) << 20, photon::pooled_stack_trim_threshold(size_t(64) << 20));
    photon::thread_create11([] { photon::thread_usleep(1000); });
    photon::wait_all();
    photon::pooled_stack_trim_current_vcpu(0);
    EXPECT_EQ(size_t(0), photon::pooled_stack_trim_current_vcpu(0));
    EXPECT_EQ(size_t(1) << 30, photon::pooled_stack_trim_threshold(size_t(1) << 30));
    EXPECT_EQ(0, photon::fini());
}

}  // namespace
