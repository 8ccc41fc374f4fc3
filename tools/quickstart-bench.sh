#!/usr/bin/env bash
# Fresh Debian 12 machine -> benchmark results:
#   installs the missing Debian packages (when run as root; see tools/install-deps.sh),
#   configures a Release build in build/, builds the benchmarks in examples/perf and runs
#   the ones that exist:
#     thread-perf  coroutine context switch / create+join / memory figures
#     net-perf     echo server and client on 127.0.0.1 for a few seconds, QPS printed
#   and ends with one table of what ran, on which engine, with its figures.
#
# Environment: BUILD_DIR (default build), PHOTON_CMAKE_ARGS (extra configure arguments),
#              PHOTON_SKIP_DEPS=1, NET_PERF_SECONDS (default 5), NET_PERF_PORT (default 9527).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_dir="${BUILD_DIR:-build}"
jobs="$(nproc 2>/dev/null || echo 2)"
perf="$build_dir/examples/perf"
benchmarks=(thread-perf net-perf)

bash tools/install-deps.sh

generator=()
if [ ! -f "$build_dir/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1; then
    generator=(-G Ninja)
fi
# shellcheck disable=SC2086 # PHOTON_CMAKE_ARGS is a list of words
cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release ${PHOTON_CMAKE_ARGS:-}

# Build only the benchmark targets that exist (the tests are not needed here).
targets=()
available="$(cmake --build "$build_dir" --target help 2>/dev/null || true)"
for b in "${benchmarks[@]}"; do
    if grep -Eq "(^|[ .:])$b(:|$| )" <<<"$available"; then
        targets+=(--target "$b")
    fi
done
if [ "${#targets[@]}" -eq 0 ]; then
    echo "quickstart-bench: no benchmark targets (${benchmarks[*]}) defined yet" >&2
    exit 1
fi
cmake --build "$build_dir" --parallel "$jobs" "${targets[@]}"

ran=0
out_dir="$(mktemp -d "${TMPDIR:-/tmp}/photon-bench.XXXXXX")"
summary=()  # rows of the final table: benchmark | engine | figure
if [ -x "$perf/thread-perf" ]; then
    echo
    echo "=== thread-perf"
    "$perf/thread-perf" | tee "$out_dir/thread-perf.txt"
    while IFS= read -r row; do summary+=("$row"); done < <(awk '
        function median() { match($0, /median +[0-9.]+/); split(substr($0, RSTART, RLENGTH), m, / +/); return m[2] }
        /^thread_yield, 2 coroutines/ { printf "thread-perf|-|context switch: %s ns\n", median() }
        /^create\+run\+join/ { printf "thread-perf|-|create+run+join: %.2fM per s\n", median() / 1e6 }
        /^RSS per idle coroutine/ { printf "thread-perf|-|memory per idle coroutine: %s bytes\n", median() }
    ' "$out_dir/thread-perf.txt")
    ran=1
fi

if [ -x "$perf/net-perf" ]; then
    seconds="${NET_PERF_SECONDS:-5}"
    port="${NET_PERF_PORT:-9527}"
    echo
    echo "=== net-perf: echo server + client on 127.0.0.1:$port for ${seconds}s"
    # On 2+ cores, server on CPU 0 and client on CPU 1 so they do not fight for one core.
    pin_server=() pin_client=()
    if command -v taskset >/dev/null 2>&1 && [ "$jobs" -ge 2 ]; then
        pin_server=(taskset -c 0) pin_client=(taskset -c 1)
    fi
    "${pin_server[@]}" "$perf/net-perf" -port="$port" > >(tee "$out_dir/server.txt") &
    server=$!
    stop_server() {
        if kill -0 "$server" 2>/dev/null; then
            kill -INT "$server" 2>/dev/null || true
            for _ in 1 2 3 4 5 6 7 8 9 10; do
                kill -0 "$server" 2>/dev/null || break
                sleep 0.2
            done
            kill -KILL "$server" 2>/dev/null || true
        fi
        wait "$server" 2>/dev/null || true
    }
    trap stop_server EXIT
    # Wait for the server to listen (up to 5 s).
    for _ in $(seq 50); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
        sleep 0.1
    done
    # The client reports QPS every second and a summary line after -duration seconds
    # (the timeout is only a safety net).
    status=0
    "${pin_client[@]}" timeout --signal=INT --kill-after=5 $((seconds + 20)) \
        "$perf/net-perf" -client -ip=127.0.0.1 -port="$port" -duration="$seconds" \
        > >(tee "$out_dir/client.txt") || status=$?
    if [ "$status" -ne 0 ]; then
        echo "quickstart-bench: net-perf client failed (exit $status)" >&2
        exit 1
    fi
    stop_server
    trap - EXIT
    sleep 0.2  # the tee processes flush
    # The summary lines: each side's rate over the seconds that carried messages.
    for side in client server; do
        line="$(grep '^net-perf summary' "$out_dir/$side.txt" || true)"
        [ -n "$line" ] || continue
        engine="$(sed -n 's/.*event_engine=\([^ ]*\).*/\1/p' <<<"$line")"
        qps="$(sed -n 's/.* qps=\([0-9]*\).*/\1/p' <<<"$line")"
        secs="$(sed -n 's/.* seconds=\([0-9.]*\).*/\1/p' <<<"$line")"
        what="echo"
        [ "$side" = client ] && what="$(sed -n 's/.* mode=\([^ ]*\) connections=\([0-9]*\).*/\1, \2 connections/p' <<<"$line")"
        summary+=("net-perf $side|$engine|$(awk -v q="$qps" 'BEGIN { printf "%.0fK", q / 1000 }') msg/s over the ${secs} s with load ($what)")
    done
    ran=1
fi

if [ "$ran" = 0 ]; then
    echo "quickstart-bench: no benchmark binaries found in $perf" >&2
    exit 1
fi

echo
echo "=== summary ($(nproc) CPUs, $(uname -r))"
printf '%-18s %-10s %s\n' benchmark engine result
for row in "${summary[@]}"; do
    IFS='|' read -r what engine figure <<<"$row"
    printf '%-18s %-10s %s\n' "$what" "$engine" "$figure"
done
rm -rf "$out_dir"
