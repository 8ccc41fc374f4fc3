// Tests of the metrics' counts skip in a build with PHOTON_METRICS=OFF (test/CMakeLists.txt
// defines PHOTON_METRICS_OFF for them then), which counts nothing on the hot paths.
#pragma once

#include <gtest/gtest.h>

#ifdef PHOTON_METRICS_OFF
#define PHOTON_TEST_SKIP_WITHOUT_COUNTING() \
    GTEST_SKIP() << "metrics counting compiled out (PHOTON_METRICS=OFF)"
#else
#define PHOTON_TEST_SKIP_WITHOUT_COUNTING() (void)0
#endif
