#!/usr/bin/env bash
# Consumer smoke test: builds test/consumer/project against photon the ways a user would, from
# scratch in a temporary directory, runs the result, and exits nonzero on any failure.
#
#   fetchcontent  FetchContent_Declare(photon SOURCE_DIR <photon source>), no download
#   install       build photon (or take --photon-build's), `cmake --install` it into a
#                 temporary prefix, then
#                 find_package(photon CONFIG REQUIRED) from that prefix, and compile the same
#                 main.cpp with `pkg-config --cflags --libs photon` from that prefix; if photon
#                 was built with FUSE, find_package again where fuse3 cannot be found: the
#                 consumer must configure (FUSE off, with a message), build and run, and
#                 COMPONENTS fuse must fail
#
# Usage: test/consumer/run.sh [fetchcontent|install|all] [options]
#   --source DIR        photon source tree (default: the one this script is in)
#   --cmake PATH        cmake to use (default: cmake from PATH)
#   --generator NAME    CMake generator (default: cmake's default / $CMAKE_GENERATOR)
#   --c-compiler CC     C compiler for photon (default: cmake's choice)
#   --cxx-compiler CXX  C++ compiler (default: cmake's choice; `c++` for the pkg-config build)
#   --jobs N            build parallelism (default: 2)
#   --photon-build DIR  install: a photon build tree to install (built already, with install
#                       rules), instead of building photon again
#   --keep              keep the temporary directory
# CXXFLAGS from the environment reach every compile (CMake reads it on configure). The consumer
# is built as C++14 (photon itself stays C++17) with -Wall -Wextra -Werror, so photon's public
# headers must be C++14 and warning-free, and each run of it is limited to 120 s.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mode=all
src="$(cd "$here/../.." && pwd)"
cmake_bin=cmake
generator="${CMAKE_GENERATOR:-}"
cc=""
cxx=""
jobs=2
keep=0
photon_build=""

while [ $# -gt 0 ]; do
    case "$1" in
        fetchcontent | install | all) mode="$1" ;;
        --source) src="$(cd "$2" && pwd)"; shift ;;
        --cmake) cmake_bin="$2"; shift ;;
        --generator) generator="$2"; shift ;;
        --c-compiler) cc="$2"; shift ;;
        --cxx-compiler) cxx="$2"; shift ;;
        --jobs) jobs="$2"; shift ;;
        --photon-build) photon_build="$(cd "$2" && pwd)"; shift ;;
        --keep) keep=1 ;;
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "run.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
    shift
done

project="$here/project"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/photon-consumer.XXXXXX")"
cleanup() {
    if [ "$keep" = 1 ]; then
        echo "run.sh: kept $tmp"
    else
        rm -rf "$tmp"
    fi
}
trap cleanup EXIT

common_args=(-DCMAKE_BUILD_TYPE=Release)
[ -n "$generator" ] && common_args+=(-G "$generator")
[ -n "$cc" ] && common_args+=("-DCMAKE_C_COMPILER=$cc")
[ -n "$cxx" ] && common_args+=("-DCMAKE_CXX_COMPILER=$cxx")

step() { printf '\n=== consumer: %s\n' "$*"; }
fail() { printf 'consumer test FAILED: %s\n' "$*" >&2; exit 1; }

build() {  # build <dir>
    "$cmake_bin" --build "$1" --config Release --parallel "$jobs" || fail "build of $1"
}

run_consumer() {  # run_consumer <build dir> <what>
    local exe="$1/photon_consumer"
    [ -x "$exe" ] || exe="$1/Release/photon_consumer"  # multi-config generators
    run_bounded "$exe" || fail "photon_consumer ($2) exited with $?"
    exe="$1/photon_glue_consumer"
    [ -x "$exe" ] || exe="$1/Release/photon_glue_consumer"
    run_bounded "$exe" || fail "photon_glue_consumer ($2) exited with $?"
}

run_bounded() {  # a hung consumer must not eat the ctest timeout (124 = timed out)
    if command -v timeout >/dev/null 2>&1; then
        timeout --kill-after=10 120 "$@"
    else
        "$@"
    fi
}

run_fetchcontent() {
    local b="$tmp/fetchcontent"
    step "FetchContent from $src"
    "$cmake_bin" -S "$project" -B "$b" "${common_args[@]}" \
        -DPHOTON_CONSUMER_MODE=fetchcontent -DPHOTON_SOURCE_DIR="$src" ||
        fail "configure (fetchcontent)"
    build "$b"
    run_consumer "$b" fetchcontent
}

run_install() {
    local pb="$tmp/photon-build" prefix="$tmp/prefix" b="$tmp/find_package"
    if [ -n "$photon_build" ]; then
        pb="$photon_build"
        step "install the photon build in $pb into $prefix"
    else
        step "build photon and install it into $prefix"
        "$cmake_bin" -S "$src" -B "$pb" "${common_args[@]}" \
            -DPHOTON_BUILD_TESTING=OFF -DPHOTON_BUILD_EXAMPLES=OFF -DPHOTON_INSTALL=ON \
            -DCMAKE_INSTALL_PREFIX=/nonexistent/photon-prefix || fail "configure photon"
        build "$pb"
    fi
    # --prefix differs from the configured one on purpose: the package must be relocatable.
    "$cmake_bin" --install "$pb" --config Release --prefix "$prefix" || fail "cmake --install"

    local f missing=0
    for f in include/photon/photon.h include/photon/thread/thread.h; do
        [ -f "$prefix/$f" ] || { echo "missing $prefix/$f" >&2; missing=1; }
    done
    for f in libphoton.a cmake/photon/photonConfig.cmake cmake/photon/photonConfigVersion.cmake \
        cmake/photon/photonTargets.cmake pkgconfig/photon.pc; do
        compgen -G "$prefix/lib*/$f" >/dev/null || compgen -G "$prefix/lib*/*/$f" >/dev/null ||
            { echo "missing <libdir>/$f under $prefix" >&2; missing=1; }
    done
    [ "$missing" = 0 ] || fail "install layout"

    step "find_package(photon CONFIG REQUIRED) from $prefix"
    "$cmake_bin" -S "$project" -B "$b" "${common_args[@]}" \
        -DPHOTON_CONSUMER_MODE=find_package -DCMAKE_PREFIX_PATH="$prefix" ||
        fail "configure (find_package)"
    local found
    found="$(sed -n 's/^photon_DIR:PATH=//p' "$b/CMakeCache.txt")"
    case "$found" in
        "$prefix"/*) ;;
        *) fail "find_package used photon_DIR=$found, not the one under $prefix" ;;
    esac
    build "$b"
    run_consumer "$b" find_package

    step "pkg-config --cflags --libs photon from $prefix"
    command -v pkg-config >/dev/null || fail "pkg-config is not installed"
    local pcdir
    pcdir="$(dirname "$(find "$prefix" -name photon.pc -print -quit)")"
    local flags
    flags="$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs photon)" ||
        fail "pkg-config photon"
    echo "pkg-config: $flags"
    local compiler="${cxx:-${CXX:-c++}}"
    # shellcheck disable=SC2086 # CXXFLAGS and the flags are lists of words
    "$compiler" -std=c++14 -O2 -Wall -Wextra -Werror ${CXXFLAGS:-} \
        -o "$tmp/pkgconfig_consumer" "$project/main.cpp" $flags ||
        fail "compile with pkg-config flags"
    run_bounded "$tmp/pkgconfig_consumer" || fail "pkgconfig_consumer exited with $?"

    if grep -qs 'set(PHOTON_HAVE_FUSE ON)' "$prefix"/lib*/cmake/photon/photonConfig.cmake; then
        run_without_fuse3
    fi
}

# A consumer machine without libfuse3-dev: pkg-config sees every .pc file but fuse3's.
run_without_fuse3() {
    step "find_package(photon) where fuse3 is not installed"
    local pc="$tmp/pc-without-fuse3" d b="$tmp/find_package_nofuse" log="$tmp/nofuse.log"
    mkdir -p "$pc"
    for d in $(pkg-config --variable pc_path pkg-config | tr ':' ' '); do
        [ -d "$d" ] && cp -n "$d"/*.pc "$pc"/ 2>/dev/null || true
    done
    rm -f "$pc/fuse3.pc"
    PKG_CONFIG_LIBDIR="$pc" PKG_CONFIG_PATH="" "$cmake_bin" -S "$project" -B "$b" \
        "${common_args[@]}" -DPHOTON_CONSUMER_MODE=find_package -DCMAKE_PREFIX_PATH="$prefix" \
        >"$log" 2>&1 || { cat "$log"; fail "configure without fuse3"; }
    grep -q "fuse3 is not found here" "$log" || { cat "$log"; fail "no FUSE-off message"; }
    build "$b"
    run_consumer "$b" "find_package without fuse3"
    if PKG_CONFIG_LIBDIR="$pc" PKG_CONFIG_PATH="" "$cmake_bin" -S "$project" -B "$b-fuse" \
        "${common_args[@]}" -DPHOTON_CONSUMER_MODE=find_package -DCMAKE_PREFIX_PATH="$prefix" \
        -DPHOTON_CONSUMER_COMPONENTS=fuse >"$log" 2>&1; then
        cat "$log"
        fail "find_package(photon COMPONENTS fuse) succeeded without fuse3"
    fi
    grep -q "fuse component needs fuse3" "$log" || { cat "$log"; fail "no message for COMPONENTS fuse"; }
}

case "$mode" in
    fetchcontent) run_fetchcontent ;;
    install) run_install ;;
    all) run_fetchcontent; run_install ;;
esac
printf '\nconsumer test (%s) passed\n' "$mode"
