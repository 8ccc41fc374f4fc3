#!/usr/bin/env bash
# Builds one libFuzzer target (clang, ASan+UBSan) in build-fuzz and runs it
# for a bounded time on its seed corpus.
#   tools/fuzz.sh NAME [seconds=60] [extra libFuzzer args...]
# NAME is http (the HTTP parser), rfc9110 (the static-file handler's path,
# Range, ETag and If-Range helpers), rpc (RPC frames and messages), hpack
# (HTTP/2 header blocks, through a decoder and an encoder) or h2 (an HTTP/2
# server connection fed the input as its client's bytes) or simple_dom (SimpleDOM's
# JSON, XML, YAML and INI parsers). New inputs
# go to build-fuzz/corpus-NAME (the seeds in test/fuzz/corpus/NAME stay
# untouched); a crash leaves crash-* in build-fuzz/ and fails the script.
# PHOTON_CMAKE_ARGS: extra configure arguments (CI passes -DPHOTON_WERROR=ON).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
name="${1:?usage: tools/fuzz.sh http|rfc9110|rpc|hpack|h2|simple_dom [seconds] [libFuzzer args]}"
shift
seconds="${1:-60}"
shift || true
jobs="${FUZZ_JOBS:-1}"
case "$name" in
http) target=http_parser_fuzz ;;
rfc9110) target=http_rfc9110_fuzz ;;
rpc) target=rpc_fuzz ;;
hpack) target=hpack_fuzz ;;
h2) target=h2_fuzz ;;
simple_dom) target=simple_dom_fuzz ;;
*) echo "fuzz.sh: unknown target $name" >&2; exit 2 ;;
esac

generator=()
if [ ! -f build-fuzz/CMakeCache.txt ] && command -v ninja >/dev/null 2>&1; then
    generator=(-G Ninja)
fi
# shellcheck disable=SC2086 # PHOTON_CMAKE_ARGS is a list of words
CC="${CC:-clang}" CXX="${CXX:-clang++}" cmake -S . -B build-fuzz "${generator[@]}" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPHOTON_BUILD_FUZZERS=ON \
    -DPHOTON_SANITIZE=address,undefined -DPHOTON_BUILD_EXAMPLES=OFF ${PHOTON_CMAKE_ARGS:-} >/dev/null
cmake --build build-fuzz --parallel "$jobs" --target "$target"

mkdir -p "build-fuzz/corpus-$name"
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
cd build-fuzz
"./test/fuzz/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 "$@" "corpus-$name" "../test/fuzz/corpus/$name"
