#!/usr/bin/env bash
# Cross-builds photon and its tests for AArch64 Linux and runs them under
# qemu-user with ctest. Needs g++-aarch64-linux-gnu, libc6-dev-arm64-cross,
# qemu-user, cmake and googletest (sources in /usr/src/googletest).
#
#   tools/test-aarch64.sh [ctest args...]      e.g. -R ContextSwitch
#
# The consumer smoke tests (label `consumer`) are skipped: they rebuild photon
# as a host project, which says nothing about the aarch64 build.
#
# Environment: BUILD_DIR (default <repo>/build-aarch64), BUILD_TYPE (Release),
# JOBS (parallel compile and test jobs, default: all cores; use JOBS=1 on a
# machine shared with other builds), TEST_EXCLUDE (a regular expression over
# test sources under test/ not to build, PHOTON_TEST_EXCLUDE), SERIAL (a
# regular expression of test names run alone after the others: the tests that
# spin OS threads against each other miss their deadlines beside other
# emulated tests on two cores; not combined with -R or -E arguments).
# Exits nonzero if anything fails.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build-aarch64}
jobs=${JOBS:-$(nproc)}
build_type=${BUILD_TYPE:-Release}

# Prints each command before running it, so a CI log shows what failed.
run() {
    echo "+ $*" >&2
    "$@"
}

for tool in cmake ctest aarch64-linux-gnu-gcc aarch64-linux-gnu-g++ qemu-aarch64; do
    if ! command -v "$tool" >/dev/null; then
        echo "test-aarch64: $tool not found" >&2
        exit 1
    fi
done

configure=(-S "$root" -B "$build"
    -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchain-aarch64-linux-gnu.cmake"
    -DCMAKE_BUILD_TYPE="$build_type"
    -DPHOTON_BUILD_TESTING=ON
    -DPHOTON_BUILD_EXAMPLES=OFF
    -DPHOTON_INSTALL=OFF
    -DPHOTON_TEST_EXCLUDE="${TEST_EXCLUDE:-}")
# Ninja when available, unless the build dir was already made with another generator.
if [[ ! -f $build/CMakeCache.txt ]] && command -v ninja >/dev/null; then
    configure+=(-G Ninja)
fi

# Without examples and install rules, the default target is the library and the
# tests (googletest is built only because the tests link it).
run nice cmake "${configure[@]}"
run nice cmake --build "$build" --parallel "$jobs"
ctest_args=(--test-dir "$build" --output-on-failure --no-tests=error --label-exclude consumer)
if [[ -n ${SERIAL:-} ]]; then
    run ctest "${ctest_args[@]}" --parallel "$jobs" -E "$SERIAL" "$@"
    run ctest "${ctest_args[@]}" -R "$SERIAL" "$@"
else
    run ctest "${ctest_args[@]}" --parallel "$jobs" "$@"
fi
