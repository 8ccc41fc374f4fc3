# Cross-compiles photon for AArch64 Linux with Debian/Ubuntu's cross toolchain
# (packages g++-aarch64-linux-gnu, libc6-dev-arm64-cross) and runs what it
# builds (ctest, gtest_discover_tests) under qemu-user. Usage:
#   cmake -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64-linux-gnu.cmake
# or tools/test-aarch64.sh. Libraries are searched for in the cross sysroot only,
# so a host (x86-64) package is never picked up; GoogleTest is then built from
# source, see PhotonGTest.cmake.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(PHOTON_CROSS_TRIPLE aarch64-linux-gnu)
set(PHOTON_CROSS_SYSROOT /usr/${PHOTON_CROSS_TRIPLE})

set(CMAKE_C_COMPILER ${PHOTON_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${PHOTON_CROSS_TRIPLE}-g++)
set(CMAKE_ASM_COMPILER ${PHOTON_CROSS_TRIPLE}-gcc)

# Headers, libraries and CMake packages from the sysroot; programs from the host.
set(CMAKE_FIND_ROOT_PATH ${PHOTON_CROSS_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# pkg-config is a host program: point it at target .pc files only, or it would
# hand out the host's libraries.
set(ENV{PKG_CONFIG_LIBDIR} ${PHOTON_CROSS_SYSROOT}/lib/pkgconfig)

# -L: where qemu finds the target's dynamic loader and shared libraries.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-${CMAKE_SYSTEM_PROCESSOR};-L;${PHOTON_CROSS_SYSROOT})
