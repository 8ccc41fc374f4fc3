// A fixture that runs each test once per master event engine (epoll and
// io_uring) on a fresh vCPU, skipping io_uring where the kernel refuses it.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <photon/io/fd-events.h>
#include <photon/photon.h>

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "../thread/test_util.h"

namespace photon_test {

// In a fixture's SetUp: photon::init with this master engine, skipping the
// test where io_uring is refused (old kernels, seccomp), failing otherwise.
#define PHOTON_TEST_INIT_ENGINE(engine, io_engines)                               \
    do {                                                                          \
        if (photon::init((engine), (io_engines)) < 0) {                           \
            if ((engine) == photon::INIT_EVENT_IOURING)                           \
                GTEST_SKIP() << "io_uring unavailable here: " << strerror(errno); \
            FAIL() << "photon::init failed: " << strerror(errno);                 \
        }                                                                         \
    } while (0)

class EngineTest : public ::testing::TestWithParam<uint64_t> {
protected:
    void SetUp() override {
        PHOTON_TEST_INIT_ENGINE(GetParam(), photon::INIT_IO_NONE);
        ASSERT_EQ(GetParam(), photon::master_event_engine_kind());
    }
    void TearDown() override {
        if (photon::CURRENT) {
            EXPECT_EQ(0, photon::fini());
        }
    }
};

// A non-blocking pipe, closed at scope end.
struct pipe_fds {
    int r = -1, w = -1;
    pipe_fds() {
        int fds[2];
        if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) == 0) r = fds[0], w = fds[1];
    }
    ~pipe_fds() {
        if (r >= 0) close(r);
        if (w >= 0) close(w);
    }
    pipe_fds(const pipe_fds&) = delete;
    pipe_fds& operator=(const pipe_fds&) = delete;
    void put(char c = 'x') { ASSERT_EQ(1, write(w, &c, 1)); }
};

inline std::string engine_name(const ::testing::TestParamInfo<uint64_t>& info) {
    return info.param == photon::INIT_EVENT_IOURING ? "iouring" : "epoll";
}

#define PHOTON_INSTANTIATE_ENGINE_TESTS(suite)                                                   \
    INSTANTIATE_TEST_SUITE_P(                                                                    \
        Engines, suite, ::testing::Values(photon::INIT_EVENT_EPOLL, photon::INIT_EVENT_IOURING), \
        ::photon_test::engine_name)

}  // namespace photon_test
