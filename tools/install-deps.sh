#!/usr/bin/env bash
# Installs the Debian 12 packages photon's build, tests and tools use, if they are missing.
#
#   As root: `apt-get update` once, then `apt-get install -y --no-install-recommends` of only the
#   missing packages. As another user: prints what is missing (and the command to install it)
#   and carries on. Not Debian (no dpkg-query/apt-get): says so and carries on.
#
# Usage: tools/install-deps.sh [--check] [--aarch64] [--bench]
#   --check     only report; exit 1 if anything is missing
#   --bench     also the benchmarks' own peers that no test needs: s5cmd (tools/oss-bench.py)
#   --aarch64   instead: the cross compiler and qemu-user that tools/test-aarch64.sh needs
#               (CI's aarch64 phase); strict: exits 1 if they are missing and cannot be installed
# Environment: PHOTON_SKIP_DEPS=1 skips this script entirely.
#
# The optional libraries (liburing, libaio, OpenSSL, libcurl, fuse3, libext2fs, zlib) are not
# required to build:
# if one is missing, configure switches its part off with a message.
set -euo pipefail

packages=(
    build-essential cmake ninja-build pkg-config
    libgtest-dev libgmock-dev googletest libgflags-dev
    liburing-dev libaio-dev libssl-dev libcurl4-openssl-dev libfuse3-dev libext2fs-dev zlib1g-dev
    rapidjson-dev librapidxml-dev libyaml-cpp-dev
    clang clang-format libclang-rt-14-dev valgrind
)
# Peers of the HTTP/TLS/WebSocket, HTTP/2 (nghttp, h2load, h2o), gRPC (grpc C++ built from
# libgrpc++-dev, etcd), FUSE (fusermount3), extfs (fsck.ext4, debugfs), gdb-helper and perf
# call-graph (linux-perf) tests and of the benchmarks (tests skip without them):
# installed in a second apt-get call, so that one of them failing (a service that cannot start)
# costs nothing else. Go (golang-go, unless a go is on PATH) builds the Go peers below.
peers=(curl openssl python3 python3-websockets nginx wrk apache2-utils fuse3 gdb e2fsprogs
    nghttp2-client h2o libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
    etcd-server etcd-client redis-server redis-tools linux-perf)
command -v go >/dev/null 2>&1 || peers+=(golang-go)
# Go peers, pinned, built from the Go module proxy with `go install` into /usr/local/bin (root)
# or ~/go/bin: h2spec (the HTTP/2 conformance suite) and versitygw (an S3 server over a
# directory, Apache-2.0: the object storage tests' peer; about a minute to build).
go_peers=(github.com/summerwind/h2spec/cmd/h2spec@v2.2.1+incompatible
    github.com/versity/versitygw/cmd/versitygw@v1.8.0)
packages+=("${peers[@]}")

check_only=0 strict=0
for arg in "$@"; do
    case "$arg" in
        --check) check_only=1 ;;
        --aarch64)
            packages=(g++-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user)
            peers=() go_peers=()
            strict=1
            ;;
        --bench) go_peers+=(github.com/peak/s5cmd/v2@v2.3.0) ;;
        *) echo "usage: $0 [--check] [--aarch64] [--bench]" >&2; exit 2 ;;
    esac
done

# go install asks the module proxy for the module's version list (for deprecations); where the
# proxy refuses that but serves the version itself (s5cmd), a module whose main package is at
# its root is built from its downloaded source instead. go_build_module MODULE@VERSION NAME BIN
go_build_module() {
    local dir src st
    dir=$(GOFLAGS=-mod=mod go mod download -json "$1" 2>/dev/null |
        sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
    [ -n "$dir" ] || return 1
    src=$(mktemp -d) || return 1
    cp -r "$dir/." "$src" && chmod -R u+w "$src" &&
        (cd "$src" && GOFLAGS=-mod=mod go build -o "$3/$2" . </dev/null)
    st=$?
    rm -rf "$src"
    return $st
}

# Installs the Go peers that are not on PATH yet; a failure (no network) is a warning.
install_go_peers() {
    [ "$check_only" = 0 ] && [ "${#go_peers[@]}" -gt 0 ] && command -v go >/dev/null 2>&1 || return 0
    local bin="$HOME/go/bin"
    [ "$(id -u)" -eq 0 ] && bin=/usr/local/bin
    for m in "${go_peers[@]}"; do
        local name="${m%@*}"
        [[ $name =~ /v[0-9]+$ ]] && name="${name%/v*}"  # a major version suffix: module/v2
        name="${name##*/}"
        command -v "$name" >/dev/null 2>&1 || [ -x "$bin/$name" ] && continue
        if GOBIN="$bin" GOFLAGS=-mod=mod go install "$m" </dev/null ||
            go_build_module "$m" "$name" "$bin"; then
            echo "install-deps: installed $name ($m) in $bin"
        else
            echo "install-deps: WARNING: go install $m failed; its tests will skip" >&2
        fi
    done
}

if [ "${PHOTON_SKIP_DEPS:-0}" = 1 ]; then
    echo "install-deps: PHOTON_SKIP_DEPS=1, skipped"
    exit 0
fi

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
    echo "install-deps: not a Debian system (no dpkg-query/apt-get); install the equivalents of:"
    echo "  ${packages[*]}"
    exit 0
fi

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
        missing+=("$p")
    fi
done

if [ "${#missing[@]}" -eq 0 ]; then
    echo "install-deps: all ${#packages[@]} packages are installed"
    install_go_peers
    exit 0
fi

echo "install-deps: missing: ${missing[*]}"
if [ "$check_only" = 1 ]; then
    exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: not root, continuing without them; to install:"
    echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing[*]}"
    exit "$strict"
fi

export DEBIAN_FRONTEND=noninteractive
core_missing=() peers_missing=()
for p in "${missing[@]}"; do
    if [[ " ${peers[*]} " == *" $p "* ]]; then peers_missing+=("$p"); else core_missing+=("$p"); fi
done
apt_install() {
    [ "$#" -gt 0 ] || return 0
    if apt-get install -y --no-install-recommends "$@" </dev/null; then
        echo "install-deps: installed $*"
    elif [ "$strict" = 1 ]; then
        echo "install-deps: ERROR: apt-get install failed: $*" >&2
        exit 1
    else
        # No network or no mirror: carry on with what is there. A missing required tool or
        # library fails at configure time; a missing optional library switches its part off.
        echo "install-deps: WARNING: apt-get failed; continuing without: $*" >&2
    fi
}
if apt-get update </dev/null; then
    apt_install "${core_missing[@]}"
    apt_install "${peers_missing[@]}"
elif [ "$strict" = 1 ]; then
    echo "install-deps: ERROR: apt-get update failed; cannot install: ${missing[*]}" >&2
    exit 1
else
    echo "install-deps: WARNING: apt-get update failed; continuing without: ${missing[*]}" >&2
fi
install_go_peers
