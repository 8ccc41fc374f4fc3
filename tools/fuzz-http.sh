#!/usr/bin/env bash
# Builds the HTTP parser fuzzer (clang, libFuzzer, ASan+UBSan) in build-fuzz
# and runs it for a bounded time on the seed corpus.
#   tools/fuzz-http.sh [seconds=60] [extra libFuzzer args...]
# New inputs go to build-fuzz/corpus-http (the seeds stay untouched); a crash
# leaves crash-* in build-fuzz/ and fails the script.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds="${1:-60}"
shift || true
jobs="${FUZZ_JOBS:-1}"

generator=()
if [ ! -f build-fuzz/CMakeCache.txt ] && command -v ninja >/dev/null 2>&1; then
    generator=(-G Ninja)
fi
CC="${CC:-clang}" CXX="${CXX:-clang++}" cmake -S . -B build-fuzz "${generator[@]}" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPHOTON_BUILD_FUZZERS=ON \
    -DPHOTON_SANITIZE=address,undefined -DPHOTON_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build-fuzz --parallel "$jobs" --target http_parser_fuzz

mkdir -p build-fuzz/corpus-http
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
cd build-fuzz
./test/fuzz/http_parser_fuzz -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 "$@" corpus-http ../test/fuzz/corpus/http
