#!/usr/bin/env bash
# Builds containerd/overlaybd against this photon checkout the way its maintainers build it (its
# own CMake files, its own C++14 setting), runs its offline unit tests and an image round trip,
# and prints the table that doc/compat.md keeps (target, built, tests passed).
#
# The checkout is copied (overlaybd writes into its source tree); in the copy only
# CMake/Findphoton.cmake is replaced, by tools/downstream/overlaybd-Findphoton.cmake, which
# adds this photon with add_subdirectory. No overlaybd .cpp or .h is touched: the script checks.
#
# Usage: tools/downstream/overlaybd.sh OVERLAYBD-CHECKOUT [options]
#   --work DIR          where the copy and its build go (default: build-downstream/overlaybd)
#   --ocf DIR           Open-CAS/ocf source (overlaybd's submodule at src/overlaybd/cache/ocf_cache/ocf)
#                       when the checkout was cloned without --recursive
#   --erofs-utils DIR   erofs-utils source for overlaybd's FetchContent, without network
#   --jobs N            build parallelism (default: nproc)
#   --no-deps           do not install missing Debian packages
#   --tests-only        reuse the copy and build in --work from an earlier run: tests and round trip
# Without network, overlaybd's three downloads are served locally: tcmu (photon-libtcmu, not in
# Debian) by an empty project, so overlaybd-tcmu is not built; erofs-utils by --erofs-utils;
# PhotonLibOS's patched e2fsprogs is not needed (ORIGIN_EXT2FS=ON: Debian's libext2fs).
# overlaybd's tests and tools look for two files its `make install` puts in place (its CI installs
# before testing): as root, the script puts the base layer and the example service config there
# when they are missing, and removes them at the end.
set -euo pipefail

photon_src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
here="$photon_src/tools/downstream"
checkout="" work="$photon_src/build-downstream/overlaybd" ocf="" erofs="" deps=1 tests_only=0
jobs="$(nproc 2>/dev/null || echo 2)"

while [ $# -gt 0 ]; do
    case "$1" in
        --work) work="$2"; shift ;;
        --ocf) ocf="$(cd "$2" && pwd)"; shift ;;
        --erofs-utils) erofs="$(cd "$2" && pwd)"; shift ;;
        --jobs) jobs="$2"; shift ;;
        --no-deps) deps=0 ;;
        --tests-only) tests_only=1 ;;
        -h | --help) sed -n '2,25p' "$0"; exit 0 ;;
        -*) echo "overlaybd.sh: unknown option $1" >&2; exit 2 ;;
        *) checkout="$(cd "$1" && pwd)" ;;
    esac
    shift
done
[ -n "$checkout" ] || { sed -n '2,25p' "$0" >&2; exit 2; }
[ -f "$checkout/src/overlaybd/lsmt/file.h" ] || {
    echo "overlaybd.sh: $checkout is not an overlaybd checkout" >&2; exit 2; }

say() { printf '\n[overlaybd] %s\n' "$*"; }

packages=(build-essential cmake ninja-build pkg-config libcurl4-openssl-dev libssl-dev libaio-dev
    libext2fs-dev e2fsprogs zlib1g-dev libzstd-dev rapidjson-dev libyaml-cpp-dev libgflags-dev
    libgtest-dev uuid-dev autoconf automake libtool liburing-dev)
if [ "$deps" = 1 ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    missing=()
    for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
    done
    if [ "${#missing[@]}" -gt 0 ]; then
        say "installing ${missing[*]}"
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
    fi
fi

src="$work/src"
build_status=0
if [ "$tests_only" = 0 ]; then
    say "copying $checkout to $work/src"
    rm -rf "$work/src"
    mkdir -p "$work"
    cp -a "$checkout" "$work/src"
    rm -rf "$work/src/build" "$work/src/.git"
    cp "$here/overlaybd-Findphoton.cmake" "$src/CMake/Findphoton.cmake"

    if [ ! -d "$src/src/overlaybd/cache/ocf_cache/ocf/src" ]; then
        [ -n "$ocf" ] || { echo "overlaybd.sh: the ocf submodule is empty; pass --ocf DIR" >&2; exit 2; }
        rm -rf "$src/src/overlaybd/cache/ocf_cache/ocf"
        cp -a "$ocf" "$src/src/overlaybd/cache/ocf_cache/ocf"
    fi

    # The copy differs from the checkout in Findphoton.cmake (and submodule contents) only.
    changed="$(diff -rq "$checkout/src" "$src/src" 2>/dev/null | grep -v "/ocf_cache/ocf" || true)"
    changed+="$(diff -rq "$checkout/CMake" "$src/CMake" | grep -v Findphoton.cmake || true)"
    [ -z "$changed" ] || { echo "overlaybd.sh: the copy differs: $changed" >&2; exit 1; }

    # Where overlaybd still uses a PhotonLibOS 0.6 signature that PhotonLibOS main changed, main
    # wins (doc/compat.md, "PhotonLibOS 0.6"); these are the one-line changes overlaybd needs for
    # main, made in the copy and printed. Each is made only if its line is there as expected.
    main_fix() {  # main_fix FILE SED-EXPRESSION WHY
        local f="$src/$1" before
        before="$(md5sum <"$f")"
        sed -i "$2" "$f"
        if [ "$(md5sum <"$f")" = "$before" ]; then
            echo "[overlaybd] note: no change made in $1 ($3): the line differs from the one expected"
        else
            echo "[overlaybd] one-line change for PhotonLibOS main in $1: $3"
        fi
    }
    main_fix src/overlaybd/cache/cache.cpp \
        's|^    return cast(m_stores)->release(store->get_store_key());$|    return cast(m_stores)->release(store->get_store_key()), 0;|' \
        "ObjectCache::release() returns the object pointer (0.6: int)"
    main_fix src/overlaybd/tar/erofs/erofs_fs.h \
        's|^\tvoid seekdir(long loc);$|\tvoid seekdir(long long loc);|; s|^\tlong telldir();$|\tlong long telldir();|' \
        "DIR::seekdir/telldir take and return long long (0.6: long)"
    main_fix src/overlaybd/tar/erofs/erofs_fs.cpp \
        's|^void ErofsDir::seekdir(long loc){$|void ErofsDir::seekdir(long long loc){|; s|^long ErofsDir::telldir() {$|long long ErofsDir::telldir() {|' \
        "the same, where ErofsDir defines them"
    main_fix src/overlaybd/cache/store.cpp \
        's|^            ret = refill_buf.memcpy_to(&view, count);$|            ret = input->extract_front(refill_buf.memcpy_to(\&view, count));|' \
        "memcpy_to(iovector_view*) leaves the view as it was (0.6 consumed it, in place)"

    fetch_args=()
    mkdir -p "$work/tcmu-skipped"
    echo '# libtcmu is not in Debian: overlaybd-tcmu is not built' >"$work/tcmu-skipped/CMakeLists.txt"
    fetch_args+=("-DFETCHCONTENT_SOURCE_DIR_TCMU=$work/tcmu-skipped")
    if [ -n "$erofs" ]; then
        rm -rf "$work/erofs-utils"
        cp -a "$erofs" "$work/erofs-utils"
        fetch_args+=("-DFETCHCONTENT_SOURCE_DIR_EROFS-UTILS=$work/erofs-utils")
    fi
    # OVERLAYBD_CXX_LAUNCHER: a compiler launcher of your own (e.g. one that swaps -std flags to
    # see which errors are not about the standard); ccache where installed otherwise.
    launcher=()
    if [ -n "${OVERLAYBD_CXX_LAUNCHER:-}" ]; then
        launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER="$OVERLAYBD_CXX_LAUNCHER")
    elif command -v ccache >/dev/null; then
        launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    fi

    say "configuring (overlaybd's own C++ standard; ORIGIN_EXT2FS=ON, BUILD_TESTING=1)"
    cmake -S "$src" -B "$src/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=1 \
        -DORIGIN_EXT2FS=ON -DPHOTON_ENABLE_RESIZE=ON -DPHOTON_SOURCE_DIR="$photon_src" \
        -DFETCHCONTENT_FULLY_DISCONNECTED=ON "${fetch_args[@]}" "${launcher[@]}"

    say "building (every target but overlaybd-tcmu, which needs libtcmu)"
    targets=()
    while read -r t; do
        case "$t" in overlaybd-tcmu | all | clean | help | edit_cache | rebuild_cache | install* | \
            list_install_components | test | package* | *.o | *.i | *.s | Experimental* | \
            Nightly* | Continuous* | tcmu* | erofs-utils* | uninstall) ;;
        *) targets+=("$t") ;;
        esac
    done < <(ninja -C "$src/build" -t targets all | sed -n 's/^\([^/: ]*\): \(phony\|CXX_EXECUTABLE_LINKER\|CXX_STATIC_LIBRARY_LINKER\|C_STATIC_LIBRARY_LINKER\).*/\1/p' | sort -u)
    ninja -C "$src/build" -j "$jobs" -k 0 "${targets[@]}" || build_status=$?
elif [ ! -f "$src/build/build.ninja" ]; then
    echo "overlaybd.sh: --tests-only, but $src/build has no build" >&2
    exit 2
fi

# The files `make install` would have put where overlaybd's tests look.
placed=()
place() {  # place FILE DESTINATION
    if [ ! -e "$2" ] && [ -e "$1" ] && install -D -m 0644 "$1" "$2"; then
        placed+=("$2")
        echo "[overlaybd] placed $2 (removed at the end)"
    fi
}
cleanup_placed() { [ "${#placed[@]}" -eq 0 ] || rm -f "${placed[@]}"; }
trap cleanup_placed EXIT
if [ "$(id -u)" = 0 ]; then
    place "$src/build/output/ext4_64" /opt/overlaybd/baselayers/ext4_64
    place "$src/src/example_config/overlaybd.json" /etc/overlaybd/overlaybd.json
else
    echo "[overlaybd] not root: /opt/overlaybd/baselayers/ext4_64 and /etc/overlaybd/overlaybd.json" \
        "must exist for image_service_test and the tools"
fi

say "tests: ctest, but the cases that download from the internet are left out and listed"
# Test cases that download from the internet (github.com, go.dev, aliyuncs.com); the rest of
# their executables runs with a gtest filter.
declare -A internet_cases=(
    [untar_test]="TarTest.untar:TarTest.tar_meta:TarTest.stream:TarTest.gz_tarmeta_e2e"
    [gzindex_test]="GzIndexTest.stream"
    [trace_test]="trace.case1"
)
for t in "${!internet_cases[@]}"; do
    echo "[overlaybd] skipped (downloads from the internet): $t ${internet_cases[$t]}"
done
exclude="$(IFS='|'; echo "^(${!internet_cases[*]})\$")"
ctest_status=0
# OVERLAYBD_CTEST_REGEX: run only the ctest tests it matches (e.g. to rerun one after a fix).
only=()
[ -z "${OVERLAYBD_CTEST_REGEX:-}" ] || only=(-R "$OVERLAYBD_CTEST_REGEX")
(cd "$src/build" && ctest --output-on-failure --timeout 1800 -E "$exclude" "${only[@]}") ||
    ctest_status=$?
for t in "${!internet_cases[@]}"; do
    exe="$src/build/output/$t"
    echo "[overlaybd] $t --gtest_filter=-${internet_cases[$t]}"
    if [ ! -x "$exe" ]; then
        echo "[overlaybd] $t: not built"
        ctest_status=1
    elif ! (cd "$src/build" && timeout 1800 "$exe" --gtest_filter="-${internet_cases[$t]}" 2>&1 |
        grep -E '^\[ *(PASSED|FAILED|SKIPPED|OK|RUN) *\]|tests? (ran|from)'); then
        ctest_status=1
    fi
done

say "round trip: overlaybd-create --mkfs, overlaybd-apply of two tar layers, overlaybd-commit, overlaybd-merge, then debugfs rdump of the merged image against the source trees"
roundtrip_status=0
roundtrip() {
    local out="$src/build/output" rt="$work/roundtrip"
    rm -rf "$rt" && mkdir -p "$rt/layer1/etc/app" "$rt/layer1/usr/lib" "$rt/layer2/etc/app" \
        "$rt/layer2/var/log"
    (
        cd "$rt/layer1"
        head -c 3000000 /dev/urandom >usr/lib/big.bin
        head -c 5000 /dev/urandom >usr/lib/small.bin
        echo "version 1" >etc/app/config
        echo "kept" >etc/app/kept
        : >etc/empty
        ln -s ../usr/lib/big.bin etc/link-to-big
        ln usr/lib/small.bin usr/lib/small-hardlink.bin
        chmod 0750 etc/app
        for i in $(seq 1 300); do echo "$i" >"usr/lib/f$i"; done
        cd "$rt/layer2"
        echo "version 2" >etc/app/config
        head -c 1500000 /dev/urandom >var/log/new.bin
    )
    tar --format=gnu -C "$rt/layer1" -cf "$rt/layer1.tar" .
    tar --format=gnu -C "$rt/layer2" -cf "$rt/layer2.tar" .
    mkdir -p "$rt/expected" && cp -a "$rt/layer1/." "$rt/expected/" && cp -a "$rt/layer2/." "$rt/expected/"
    cat >"$rt/service.json" <<JSON
{ "logConfig": { "logLevel": 1, "logPath": "$rt/overlaybd.log" },
  "cacheConfig": { "cacheType": "file", "cacheDir": "$rt/cache", "cacheSizeGB": 1 },
  "gzipCacheConfig": { "enable": false },
  "credentialConfig": { "mode": "file", "path": "$rt/cred.json" },
  "ioEngine": 0, "download": { "enable": false }, "enableAudit": false }
JSON
    echo '{"auths": {}}' >"$rt/cred.json"
    layer_config() {  # layer_config FILE UPPER-PREFIX LOWER...
        local f="$1" upper="$2" lowers="" l
        shift 2
        for l in "$@"; do lowers+="${lowers:+, }{ \"file\": \"$rt/$l\" }"; done
        {
            echo "{ \"lowers\": [ $lowers ],"
            [ -z "$upper" ] || echo "  \"upper\": { \"index\": \"$rt/$upper.index\", \"data\": \"$rt/$upper.data\" },"
            echo "  \"resultFile\": \"$rt/$(basename "$f").result\" }"
        } >"$rt/$f"
    }
    local svc=(--service_config_path "$rt/service.json")
    "$out/overlaybd-create" --mkfs "$rt/l1.data" "$rt/l1.index" 1 &&
        layer_config l1.json l1 &&
        "$out/overlaybd-apply" "${svc[@]}" "$rt/layer1.tar" "$rt/l1.json" &&
        "$out/overlaybd-commit" "$rt/l1.data" "$rt/l1.index" "$rt/layer1.commit" &&
        "$out/overlaybd-create" "$rt/l2.data" "$rt/l2.index" 1 &&
        layer_config l2.json l2 layer1.commit &&
        "$out/overlaybd-apply" "${svc[@]}" "$rt/layer2.tar" "$rt/l2.json" &&
        "$out/overlaybd-commit" "$rt/l2.data" "$rt/l2.index" "$rt/layer2.commit" &&
        layer_config merge.json "" layer1.commit layer2.commit &&
        "$out/overlaybd-merge" "${svc[@]}" "$rt/merge.json" "$rt/merged.commit" &&
        layer_config merged.json "" merged.commit &&
        "$out/overlaybd-image-dump" "$rt/service.json" "$rt/merged.json" "$rt/merged.img" || return 1
    fsck.ext4 -fn "$rt/merged.img" || { echo "[overlaybd] fsck.ext4 found errors"; return 1; }
    rm -rf "$rt/rdump" && mkdir "$rt/rdump"
    debugfs -R "rdump / $rt/rdump" "$rt/merged.img" >/dev/null 2>&1
    diff -r --no-dereference --exclude lost+found "$rt/expected" "$rt/rdump" ||
        { echo "[overlaybd] the merged image differs from the layers"; return 1; }
    echo "[overlaybd] round trip: the merged image holds exactly the two layers' files"
}
if [ -x "$src/build/output/overlaybd-image-dump" ]; then
    roundtrip || roundtrip_status=1
else
    echo "[overlaybd] round trip not run: its tools were not built"
    roundtrip_status=1
fi

say "summary: build exit $build_status, tests exit $ctest_status, round trip exit $roundtrip_status"
for t in overlaybd-create overlaybd-apply overlaybd-commit overlaybd-merge overlaybd-zfile \
    turboOCI-apply overlaybd-tcmu; do
    if [ -x "$src/build/output/$t" ]; then echo "  $t: built"; else echo "  $t: not built"; fi
done
[ "$build_status" = 0 ] && [ "$ctest_status" = 0 ] && [ "$roundtrip_status" = 0 ]
