// libaio_* (aio-wrapper.h): submission in pairs, cancellation of queued
// requests, context lifetime.
#include <photon/io/aio-wrapper.h>
#include <photon/thread/stats.h>

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "../fs/fs_test_util.h"
#include "../thread/test_util.h"
#include "../util/engine_fixture.h"
#include "../util/metrics.h"

#ifdef PHOTON_HAVE_LIBAIO
namespace photon {
uint64_t libaio_submit_calls();  // libaio_wrapper.cpp, for this test
}
#endif

using namespace photon;

namespace {

class Libaio : public photon_test::EngineTest {
protected:
    void SetUp() override {
#ifndef PHOTON_HAVE_LIBAIO
        GTEST_SKIP() << "photon built without libaio";
#endif
        EngineTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        ASSERT_FALSE(dir_.path().empty());
        if (dir_.on_tmpfs()) GTEST_SKIP() << "O_DIRECT needs a real file system";
        fd_ = ::open((dir_ / "f").c_str(), O_CREAT | O_RDWR | O_DIRECT, 0644);
        ASSERT_GE(fd_, 0) << strerror(errno);
        ASSERT_EQ(0, posix_memalign(&buf_, 4096, kSize));
        memset(buf_, 'L', kSize);
        ASSERT_EQ((ssize_t)kSize, ::pwrite(fd_, buf_, kSize, 0));
    }
    void TearDown() override {
        EngineTest::TearDown();  // fini first: it stops the reaper
        if (fd_ >= 0) ::close(fd_);
        free(buf_);
    }
    static constexpr size_t kSize = 1 << 20;
    photon_test::scratch_dir dir_;
    int fd_ = -1;
    void* buf_ = nullptr;
};

}  // namespace

#ifdef PHOTON_HAVE_LIBAIO

// Requests go to io_submit in pairs (larger batches plug the block queue).
TEST_P(Libaio, SubmittersOfARoundGoInPairs) {
    ASSERT_EQ(0, libaio_wrapper_init(128));
    constexpr int kReaders = 64;
    std::vector<photon_test::task> tasks;
    int ok = 0;
    uint64_t before = libaio_submit_calls();
    for (int i = 0; i < kReaders; i++) {
        tasks.push_back(photon_test::spawn([&, i] {
            void* p = nullptr;
            if (posix_memalign(&p, 4096, 4096)) return (void*)nullptr;
            if (libaio_pread(fd_, p, 4096, i * 4096) == 4096 && ((char*)p)[0] == 'L') ok++;
            free(p);
            return (void*)nullptr;
        }));
    }
    for (auto& t : tasks) t.join();
    EXPECT_EQ(kReaders, ok);
    EXPECT_EQ((uint64_t)kReaders / 2, libaio_submit_calls() - before);
}

// The vCPU's metrics count each request once going in and once coming back.
TEST_P(Libaio, TheVcpuCountsRequestsAndCompletions) {
    PHOTON_TEST_SKIP_WITHOUT_COUNTING();
    auto totals = [] {
        std::vector<VcpuStats> all;
        EXPECT_EQ(0, get_vcpu_stats(&all));
        EXPECT_EQ(1u, all.size());
        return all.empty() ? VcpuStats{} : all[0];
    };
    VcpuStats a = totals();
    for (int i = 0; i < 10; i++) ASSERT_EQ(4096, libaio_pread(fd_, buf_, 4096, i * 4096));
    VcpuStats b = totals();
    EXPECT_EQ(a.io_submitted[1] + 10, b.io_submitted[1]);
    EXPECT_EQ(a.io_completed[1] + 10, b.io_completed[1]);
}

// A caller alone on its vCPU has no partner to wait for: its request goes to
// the kernel before anything else runs, even a sleeper whose time is up
// (which a yield for a partner would run first).
TEST_P(Libaio, ALoneCallerSubmitsBeforeDueSleepersRun) {
    ASSERT_EQ(4096, libaio_pread(fd_, buf_, 4096, 0));  // the reaper is parked after it
    uint64_t before = libaio_submit_calls(), seen = UINT64_MAX;
    auto sleeper = photon_test::spawn([&] {
        thread_usleep(1000);
        seen = libaio_submit_calls() - before;
        return (void*)nullptr;
    });
    thread_yield();  // the sleeper starts and goes to sleep
    auto due = std::chrono::steady_clock::now() + std::chrono::milliseconds(3);
    while (std::chrono::steady_clock::now() < due) {
    }
    ASSERT_EQ(4096, libaio_pread(fd_, buf_, 4096, 0));
    sleeper.join();
    EXPECT_EQ(1u, seen);
}

TEST_P(Libaio, VectorFormsMoveEveryByte) {
    char* b = static_cast<char*>(buf_);
    memset(b, 'v', 8192);
    iovec w[2] = {{b, 4096}, {b + 4096, 4096}};
    ASSERT_EQ(8192, libaio_pwritev(fd_, w, 2, 4096));
    memset(b, 0, 8192);
    iovec r[2] = {{b + 4096, 4096}, {b, 4096}};
    ASSERT_EQ(8192, libaio_preadv(fd_, r, 2, 4096));
    EXPECT_EQ('v', b[0]);
    EXPECT_EQ('v', b[8191]);
    EXPECT_EQ(4096, libaio_pwrite(fd_, b, 4096, 0));
}

// The caller is interrupted while its request is still queued (before the
// round's io_submit): it never reaches the kernel and the call says EINTR.
TEST_P(Libaio, InterruptBeforeSubmitCancelsWithTheInterruptersErrno) {
    ssize_t r = 0;
    int err = 0;
    memset(buf_, 0, 4096);
    auto t = photon_test::spawn([&] {
        r = libaio_pread(fd_, buf_, 4096, 0);
        err = errno;
        return nullptr;
    });
    thread_yield();  // it queues and yields once to gather the round
    thread_interrupt(t.th, EINTR);
    t.join();
    EXPECT_EQ(-1, r);
    EXPECT_EQ(EINTR, err);
    EXPECT_EQ(0, static_cast<char*>(buf_)[0]);
    EXPECT_EQ(4096, libaio_pread(fd_, buf_, 4096, 0));  // the context still works
}

TEST_P(Libaio, InitTwiceSaysEalreadyAndFiniEndsTheContext) {
    ASSERT_EQ(0, libaio_wrapper_init(16));
    EXPECT_EQ(-1, libaio_wrapper_init(16));
    EXPECT_EQ(EALREADY, errno);
    EXPECT_EQ(0, libaio_wrapper_fini());
    EXPECT_EQ(-1, libaio_wrapper_fini());
    EXPECT_EQ(4096, libaio_pread(fd_, buf_, 4096, 0));  // a new one, lazily
}

TEST(LibaioWithoutEngine, FailsWithEnosys) {
    ASSERT_EQ(0, photon::init(INIT_EVENT_NONE, INIT_IO_NONE));
    EXPECT_EQ(-1, libaio_wrapper_init(8));
    EXPECT_EQ(ENOSYS, errno);
    EXPECT_EQ(0, photon::fini());
}

PHOTON_INSTANTIATE_ENGINE_TESTS(Libaio);

#else

TEST(LibaioAbsent, EveryCallFailsWithEnosys) {
    EXPECT_EQ(-1, libaio_wrapper_init(8));
    EXPECT_EQ(ENOSYS, errno);
    char b[512];
    EXPECT_EQ(-1, libaio_pread(0, b, sizeof(b), 0));
    EXPECT_EQ(ENOSYS, errno);
}

#endif
