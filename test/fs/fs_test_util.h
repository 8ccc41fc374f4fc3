// Helpers of the fs tests: a scratch directory on a real file system
// (O_DIRECT does not work on tmpfs), made and removed per test, and a
// fixture over (master event engine, I/O engine).
#pragma once

#include <linux/magic.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <tuple>

#include <photon/fs/localfs.h>
#include <photon/io/fd-events.h>
#include <photon/photon.h>

#include <gtest/gtest.h>

#include "../thread/test_util.h"
#include "../util/engine_fixture.h"

#include "../util/temp_dir.h"

namespace photon_test {

// $PHOTON_TEST_FS_DIR, else ./fs-test-tmp (ctest runs in the build dir).
inline std::string scratch_root() {
    const char* env = getenv("PHOTON_TEST_FS_DIR");
    if (env && *env) return env;
    char cwd[4096];
    return std::string(getcwd(cwd, sizeof(cwd)) ? cwd : ".") + "/fs-test-tmp";
}

// A fresh directory, removed (with everything in it) when destroyed.
class scratch_dir : public temp_dir {
public:
    scratch_dir() : temp_dir("t", scratch_root()) {}
    bool on_tmpfs() const {
        struct statfs st;
        return ::statfs(path().c_str(), &st) == 0 && st.f_type == TMPFS_MAGIC;
    }
};

inline const char* io_engine_name(int e) {
    switch (e) {
        case photon::fs::ioengine_psync:
            return "psync";
        case photon::fs::ioengine_libaio:
            return "libaio";
        case photon::fs::ioengine_posixaio:
            return "posixaio";
        default:
            return "iouring";
    }
}

// Why an I/O engine cannot run in this build, or nullptr.
inline const char* io_engine_missing(int e) {
#ifndef PHOTON_HAVE_LIBAIO
    if (e == photon::fs::ioengine_libaio) return "photon built without libaio";
#endif
#ifndef PHOTON_HAVE_URING
    if (e == photon::fs::ioengine_iouring) return "photon built without io_uring";
#endif
    return nullptr;
}

// One vCPU per test with the given master engine, and a scratch directory.
class FsEngineTest : public ::testing::TestWithParam<std::tuple<uint64_t, int>> {
protected:
    uint64_t event_engine() const { return std::get<0>(GetParam()); }
    int io_engine() const { return std::get<1>(GetParam()); }
    bool needs_alignment() const { return io_engine() == photon::fs::ioengine_libaio; }

    void SetUp() override {
        if (auto why = io_engine_missing(io_engine())) GTEST_SKIP() << why;
        PHOTON_TEST_INIT_ENGINE(event_engine(), photon::INIT_IO_NONE);
        ASSERT_FALSE(dir_.path().empty()) << "cannot make a scratch dir under " << scratch_root();
        if (needs_alignment() && dir_.on_tmpfs())
            GTEST_SKIP() << "O_DIRECT needs a real file system; set PHOTON_TEST_FS_DIR";
    }
    void TearDown() override { fini_vcpu(); }

    scratch_dir dir_;
};

inline std::string fs_engine_name(const ::testing::TestParamInfo<std::tuple<uint64_t, int>>& info) {
    return engine_label(std::get<0>(info.param)) + "_" + io_engine_name(std::get<1>(info.param));
}

#define PHOTON_INSTANTIATE_FS_ENGINE_TESTS(suite)                                          \
    INSTANTIATE_TEST_SUITE_P(                                                              \
        Engines, suite,                                                                    \
        ::testing::Combine(                                                                \
            PHOTON_TEST_EVENT_ENGINES,                                                     \
            ::testing::Values(photon::fs::ioengine_psync, photon::fs::ioengine_posixaio,   \
                              photon::fs::ioengine_libaio, photon::fs::ioengine_iouring)), \
        ::photon_test::fs_engine_name)

}  // namespace photon_test
