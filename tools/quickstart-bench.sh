#!/usr/bin/env bash
# Fresh Debian 12 machine -> benchmark results:
#   installs the missing Debian packages (when run as root; see tools/install-deps.sh),
#   configures a Release build in build/, builds the benchmarks in examples/perf and runs
#   the ones that exist:
#     thread-perf  coroutine context switch / create+join / memory figures
#     net-perf     echo server and client on 127.0.0.1 for a few seconds, QPS printed
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
if [ -x "$perf/thread-perf" ]; then
    echo
    echo "=== thread-perf"
    "$perf/thread-perf"
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
    "${pin_server[@]}" "$perf/net-perf" -port="$port" &
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
        "$perf/net-perf" -client -ip=127.0.0.1 -port="$port" -duration="$seconds" || status=$?
    if [ "$status" -ne 0 ]; then
        echo "quickstart-bench: net-perf client failed (exit $status)" >&2
        exit 1
    fi
    stop_server
    trap - EXIT
    ran=1
fi

if [ "$ran" = 0 ]; then
    echo "quickstart-bench: no benchmark binaries found in $perf" >&2
    exit 1
fi
