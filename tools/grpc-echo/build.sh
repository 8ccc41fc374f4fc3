#!/usr/bin/env bash
# Builds the gRPC peer of rpc-perf: grpc-echo-server and grpc-echo-client, into OUT_DIR.
#
#   tools/grpc-echo/build.sh OUT_DIR
#
# Needs Debian's libgrpc++-dev, libprotobuf-dev, protobuf-compiler-grpc, pkg-config and
# libgflags-dev (tools/install-deps.sh installs them). Nothing is downloaded. Exits 77 (the
# "skipped" status) with a message saying what is missing when one of them is absent;
# tools/rpc-bench.py then runs without the gRPC peer. Rebuilds only what is older than its
# sources.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
perf_dir="$here/../../examples/perf"  # load_window.h, shared with rpc-perf
[ $# -eq 1 ] || { echo "usage: $0 OUT_DIR" >&2; exit 2; }
out="$1"

missing=()
command -v protoc >/dev/null || missing+=(protobuf-compiler)
command -v grpc_cpp_plugin >/dev/null || missing+=(protobuf-compiler-grpc)
command -v pkg-config >/dev/null || missing+=(pkg-config)
if command -v pkg-config >/dev/null; then
    pkg-config --exists grpc++ || missing+=(libgrpc++-dev)
    pkg-config --exists protobuf || missing+=(libprotobuf-dev)
fi
[ -e /usr/include/gflags/gflags.h ] || missing+=(libgflags-dev)
if [ "${#missing[@]}" -gt 0 ]; then
    echo "grpc-echo: not built, missing Debian packages: ${missing[*]}" \
        "(apt-get install ${missing[*]}, or tools/install-deps.sh)" >&2
    exit 77
fi

mkdir -p "$out"
newer() {  # newer TARGET SOURCES...: true when TARGET is missing or older than a source
    local t="$1"; shift
    [ -e "$t" ] || return 0
    for s in "$@"; do [ "$s" -nt "$t" ] && return 0; done
    return 1
}

if newer "$out/echo.grpc.pb.cc" "$here/echo.proto"; then
    protoc -I "$here" --cpp_out="$out" --grpc_out="$out" \
        --plugin=protoc-gen-grpc="$(command -v grpc_cpp_plugin)" "$here/echo.proto"
fi
read -r -a libs <<<"$(pkg-config --cflags --libs grpc++ protobuf)"
flags=(-std=c++17 -O2 -g -Wall -I"$out" -I"$perf_dir")
for prog in server client; do
    bin="$out/grpc-echo-$prog"
    if newer "$bin" "$here/$prog.cc" "$out/echo.grpc.pb.cc" "$perf_dir/load_window.h"; then
        echo "grpc-echo: building $bin" >&2
        nice -n 10 g++ "${flags[@]}" -o "$bin" "$here/$prog.cc" "$out/echo.pb.cc" \
            "$out/echo.grpc.pb.cc" "${libs[@]}" -lgflags -lpthread
    fi
done
