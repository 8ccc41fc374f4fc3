#!/usr/bin/env bash
# Fresh Debian 12 machine -> the whole test suite:
#   installs the missing Debian packages (when run as root; see tools/install-deps.sh),
#   configures a Release build in build/, builds it with all cores and runs `ctest`, as
#   many tests at once as there are cores (the tests hold no port, file or mount in
#   common, and bound their timing generously).
#
# Environment: BUILD_DIR (default build), PHOTON_CMAKE_ARGS (extra configure arguments),
#              PHOTON_SKIP_DEPS=1 (do not look for missing packages).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_dir="${BUILD_DIR:-build}"
jobs="$(nproc 2>/dev/null || echo 2)"

bash tools/install-deps.sh

generator=()
if [ ! -f "$build_dir/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1; then
    generator=(-G Ninja)
fi
# shellcheck disable=SC2086 # PHOTON_CMAKE_ARGS is a list of words
cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release ${PHOTON_CMAKE_ARGS:-}
cmake --build "$build_dir" --parallel "$jobs"
cd "$build_dir"
ctest --output-on-failure --parallel "$jobs"
