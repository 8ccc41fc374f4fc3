# GoogleTest for photon's tests: defines GTest::gtest and GTest::gtest_main.
#   1. a parent project's targets, if it already has them;
#   2. else, in a native build, the installed package (find_package(GTest));
#   3. else (cross builds, where the host's package is for the wrong ISA, or no
#      package) the sources in PHOTON_GTEST_SOURCE_DIR, by default the ones
#      Debian/Ubuntu's `googletest` package ships, built in our binary dir.
# Never downloads.
if(TARGET GTest::gtest AND TARGET GTest::gtest_main)
    return()
endif()

if(NOT CMAKE_CROSSCOMPILING)
    find_package(GTest QUIET)
    if(TARGET GTest::gtest AND TARGET GTest::gtest_main)
        return()
    endif()
endif()

set(PHOTON_GTEST_SOURCE_DIR /usr/src/googletest CACHE PATH
    "GoogleTest sources, built when no usable GTest package is found")
if(NOT EXISTS ${PHOTON_GTEST_SOURCE_DIR}/CMakeLists.txt)
    message(FATAL_ERROR "photon: no usable GoogleTest package and no sources in "
        "PHOTON_GTEST_SOURCE_DIR=${PHOTON_GTEST_SOURCE_DIR} (Debian/Ubuntu: apt install "
        "googletest), or configure with -DPHOTON_BUILD_TESTING=OFF")
endif()
message(STATUS "photon: building GoogleTest from ${PHOTON_GTEST_SOURCE_DIR}")
# Only gtest: no gmock, no install rules of its own. Cache entries, so a parent
# or the command line can still decide otherwise.
set(BUILD_GMOCK OFF CACHE BOOL "Build googlemock along with googletest")
set(INSTALL_GTEST OFF CACHE BOOL "Install googletest with photon")
add_subdirectory(${PHOTON_GTEST_SOURCE_DIR} ${PROJECT_BINARY_DIR}/_deps/googletest EXCLUDE_FROM_ALL)
# googletest >= 1.11 defines these aliases itself; older sources do not.
if(NOT TARGET GTest::gtest)
    add_library(GTest::gtest ALIAS gtest)
endif()
if(NOT TARGET GTest::gtest_main)
    add_library(GTest::gtest_main ALIAS gtest_main)
endif()
