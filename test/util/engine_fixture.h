// Fixtures that make the test's OS thread a vCPU for each test: with no
// event engine (VcpuTest), or once per master event engine, epoll and
// io_uring (EngineTest), skipping io_uring where the kernel refuses it.
// Other parameterised fixtures build on PHOTON_TEST_INIT_ENGINE,
// PHOTON_TEST_EVENT_ENGINES, engine_label and fini_vcpu.
#pragma once

#include <errno.h>

#include <photon/io/fd-events.h>
#include <photon/photon.h>

#include <gtest/gtest.h>

#include <cstring>
#include <string>

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

// The master event engines every engine-dependent suite runs on.
#define PHOTON_TEST_EVENT_ENGINES \
    ::testing::Values(photon::INIT_EVENT_EPOLL, photon::INIT_EVENT_IOURING)

// "epoll" or "iouring", for test names.
inline std::string engine_label(uint64_t engine) {
    return engine == photon::INIT_EVENT_IOURING ? "iouring" : "epoll";
}

// In a fixture's TearDown: ends the vCPU unless the test already did
// (photon::fini()) or SetUp never made one (a skip).
inline void fini_vcpu() {
    if (photon::CURRENT) {
        EXPECT_EQ(0, photon::fini());
    }
}

// Makes the test's OS thread a vCPU, without an event engine, for the
// duration of each test.
class VcpuTest : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_EQ(0, photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE));
    }
    void TearDown() override { fini_vcpu(); }
};

// A vCPU on the master engine GetParam(); instantiate with
// PHOTON_INSTANTIATE_ENGINE_TESTS.
class EngineTest : public ::testing::TestWithParam<uint64_t> {
protected:
    void SetUp() override {
        PHOTON_TEST_INIT_ENGINE(GetParam(), photon::INIT_IO_NONE);
        ASSERT_EQ(GetParam(), photon::master_event_engine_kind());
    }
    void TearDown() override { fini_vcpu(); }
};

inline std::string engine_name(const ::testing::TestParamInfo<uint64_t>& info) {
    return engine_label(info.param);
}

#define PHOTON_INSTANTIATE_ENGINE_TESTS(suite) \
    INSTANTIATE_TEST_SUITE_P(Engines, suite, PHOTON_TEST_EVENT_ENGINES, ::photon_test::engine_name)

// Whether this kernel lets us set up an io_uring; the reason if not.
inline bool iouring_available(std::string* why) {
    photon::MasterEventEngine* e = photon::new_iouring_master_engine();
    if (!e) {
        *why = "io_uring unavailable here: ";
        *why += strerror(errno);
        return false;
    }
    delete e;
    return true;
}

// EngineTest, skipped where io_uring cannot be set up at all: for tests of
// io_uring itself, which the epoll runs reach through a sidecar ring.
class IouringEngineTest : public EngineTest {
protected:
    void SetUp() override {
        std::string why;
        if (!iouring_available(&why)) GTEST_SKIP() << why;
        EngineTest::SetUp();
    }
};

}  // namespace photon_test
