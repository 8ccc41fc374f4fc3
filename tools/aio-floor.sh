#!/bin/bash
# Depth-1 libaio reads (or writes): io-perf against fio and against tools/aio-floor.c,
# the same loop with no runtime, waiting as fio does (getevents) and as an
# event loop must (epoll on an eventfd, with and without a timeout). Rounds
# alternate the programs; prints each one's median IOPS and CPU µs per I/O,
# and both as multiples of fio's.
#
#   tools/aio-floor.sh BUILD_DIR FILE [ROUNDS=9] [SECONDS=6] [randread|randwrite]
# randwrite overwrites FILE's contents.
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR FILE [ROUNDS] [SECONDS] [randread|randwrite]}
file=${2:?file to read (at least 2 GiB, written beforehand)}
rounds=${3:-9} secs=${4:-6} rw=${5:-randread}
case $rw in
randread) mode=read field=read ;;
randwrite) mode=write field=write ;;
*)
    echo "randread or randwrite, not $rw" >&2
    exit 2
    ;;
esac
command -v fio >/dev/null || {
    echo "needs fio" >&2
    exit 77
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/aio-floor" "$(dirname "$0")/aio-floor.c" -laio

# run NAME: "IOPS CPU-µs-per-I/O" of one round.
run() {
    case $1 in
    fio)
        fio --name=floor --filename="$file" --ioengine=libaio --direct=1 --rw="$rw" --bs=4096 \
            --iodepth=1 --size=2G --time_based=1 --runtime="$secs" --ramp_time=1 --randrepeat=0 \
            --norandommap=1 --cpus_allowed=0 --output-format=json >"$tmp/fio.json"
        python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]; r = j[sys.argv[2]]
print(r["iops"], (j["usr_cpu"] + j["sys_cpu"]) / 100 * j["job_runtime"] * 1000 / r["total_ios"])' \
            "$tmp/fio.json" "$field" ;;
    io-perf)
        "$build/examples/perf/io-perf" -disk_path="$file" -disk_size=2G -rw="$rw" -io_depth=1 \
            -duration="$secs" -ramp=1 -cpu=0 -io_engine=libaio 2>/dev/null |
            sed -n 's/.*IOPS=\([0-9]*\).* \([0-9.]*\)us\/IO.*/\1 \2/p' ;;
    *) "$tmp/aio-floor" "$file" "$1" "$secs" "$mode" | sed 's/.*IOPS=\([0-9.]*\) cpu_us_per_io=\(.*\)/\1 \2/' ;;
    esac
}

names=(fio getevents epoll epoll-tmo io-perf)
for r in $(seq 1 "$rounds"); do
    for i in "${!names[@]}"; do
        n=${names[$(((i + r) % ${#names[@]}))]}
        echo "$n $(run "$n")" | tee -a "$tmp/rounds"
    done
done
python3 - "$tmp/rounds" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(lambda: ([], []))
for line in open(sys.argv[1]):
    name, iops, cpu = line.split()
    runs[name][0].append(float(iops)); runs[name][1].append(float(cpu))
med = {n: (statistics.median(i), statistics.median(c)) for n, (i, c) in runs.items()}
print(f"{'program':10} {'IOPS':>8} {'us/IO':>7} {'IOPS x fio':>11} {'CPU x fio':>10}")
for n, (i, c) in med.items():
    print(f"{n:10} {i:8.0f} {c:7.2f} {i / med['fio'][0]:11.3f} {c / med['fio'][1]:10.3f}")
PY
