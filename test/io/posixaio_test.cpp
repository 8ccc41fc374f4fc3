// posixaio_* (aio-wrapper.h): syscalls on helper OS threads that wake the
// parked coroutine; a queued request can be cancelled, a running one is
// waited for.
#include <photon/io/aio-wrapper.h>

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "../fs/fs_test_util.h"
#include "../thread/test_util.h"
#include "../util/engine_fixture.h"

using namespace photon;

namespace {

class Posixaio : public photon_test::EngineTest {};

constexpr int kHelpers = 16;  // posixaio.cpp's kMaxHelpers

}  // namespace

TEST_P(Posixaio, ManyCoroutinesReadAndWriteTheirOwnBlocks) {
    photon_test::scratch_dir dir;
    int fd = ::open((dir / "f").c_str(), O_CREAT | O_RDWR, 0644);
    ASSERT_GE(fd, 0);
    constexpr int kN = 64;
    int ok = 0;
    std::vector<photon_test::task> tasks;
    for (int i = 0; i < kN; i++) {
        tasks.push_back(photon_test::spawn([&, i] {
            char w[100], r[100];
            memset(w, 'a' + i % 26, sizeof(w));
            iovec v[2] = {{r, 50}, {r + 50, 50}};
            if (posixaio_pwrite(fd, w, 100, i * 100) == 100 &&
                posixaio_preadv(fd, v, 2, i * 100) == 100 && memcmp(w, r, 100) == 0)
                ok++;
            return nullptr;
        }));
    }
    for (auto& t : tasks) t.join();
    EXPECT_EQ(kN, ok);
    EXPECT_EQ(0, posixaio_fsync(fd));
    EXPECT_EQ(0, posixaio_fdatasync(fd));
    char c;
    EXPECT_EQ(-1, posixaio_pread(-1, &c, 1, 0));
    EXPECT_EQ(EBADF, errno);
    ::close(fd);
}

// Far more requests than helpers, all interrupted at once: the ones still
// queued are cancelled (-1 with the interrupter's errno), the running ones
// finish with their full result; none ends any other way. A loaded machine
// may let the helpers drain the queue before the interrupts come: the round
// is then repeated (a few times at most) until some request was queued.
TEST_P(Posixaio, InterruptCancelsQueuedRequestsAndWaitsForRunningOnes) {
    photon_test::scratch_dir dir;
    int fd = ::open((dir / "big").c_str(), O_CREAT | O_RDWR, 0644);
    ASSERT_GE(fd, 0);
    constexpr size_t kSize = 4 << 20;
    std::vector<char> src(kSize, 's');
    ASSERT_EQ((ssize_t)kSize, ::pwrite(fd, src.data(), kSize, 0));
    constexpr int kN = kHelpers * 8;
    // Buffers made beforehand, so that the requests are queued in a burst.
    std::vector<std::vector<char>> bufs(kN, std::vector<char>(kSize));
    bool saw_cancel = false;
    for (int round = 0; round < 5 && !saw_cancel; round++) {
        int full = 0, cancelled = 0, other = 0;
        std::vector<photon_test::task> tasks;
        for (int i = 0; i < kN; i++) {
            tasks.push_back(photon_test::spawn([&, i] {
                auto& buf = bufs[i];
                buf[kSize - 1] = 0;
                ssize_t r = posixaio_pread(fd, buf.data(), kSize, 0);
                if (r == (ssize_t)kSize && buf[kSize - 1] == 's')
                    full++;
                else if (r == -1 && errno == ECANCELED)
                    cancelled++;
                else
                    other++;
                return nullptr;
            }));
        }
        photon_test::run_others(2);  // all have queued and parked
        for (auto& t : tasks) thread_interrupt(t.th, ECANCELED);
        for (auto& t : tasks) t.join();
        EXPECT_EQ(0, other);
        EXPECT_EQ(kN, full + cancelled);
        saw_cancel = cancelled > 0;
#ifdef PHOTON_TEST_EMULATED
        break;  // under an emulator the helpers may drain the queue every time
#endif
    }
#ifndef PHOTON_TEST_EMULATED
    EXPECT_TRUE(saw_cancel);
#endif
    ::close(fd);
}

// As PhotonLibOS spells them: the calls in namespace photon, and the adaptor
// structs' close(); libaio_fsync really syncs (Photon's returned 0 for any fd).
TEST_P(Posixaio, PhotonQualifiedNamesAndAdaptorCloseWork) {
    photon_test::scratch_dir dir;
    int fd = ::open((dir / "g").c_str(), O_CREAT | O_RDWR, 0644);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(3, photon::posixaio_pwrite(fd, "xyz", 3, 0));
    char buf[4] = {};
    EXPECT_EQ(3, photon::posixaio::pread(fd, buf, 3, 0));
    EXPECT_STREQ("xyz", buf);
    EXPECT_EQ(0, photon::libaio_fsync(fd));
    EXPECT_EQ(0, photon::libaio::fdatasync(fd));
    EXPECT_EQ(0, photon::posixaio::close(fd));
    EXPECT_EQ(-1, ::fcntl(fd, F_GETFD));  // closed
    EXPECT_EQ(EBADF, errno);
    EXPECT_EQ(-1, photon::libaio_fsync(fd));  // a real fsync: a closed fd fails
    EXPECT_EQ(EBADF, errno);
    EXPECT_EQ(-1, photon::libaio::close(fd));
    EXPECT_EQ(EBADF, errno);
    int (*init)(int) = &photon::libaio_wrapper_init;  // the same C function
    EXPECT_EQ(init, &::libaio_wrapper_init);
}

PHOTON_INSTANTIATE_ENGINE_TESTS(Posixaio);
