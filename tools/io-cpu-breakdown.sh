#!/bin/bash
# Where the CPU time of one file I/O goes, for io-perf and for fio running
# the same job, in alternating rounds: µs per I/O in the virtio notify
# (iowrite16: a VM exit per request the device is told about), in
# finish_task_switch (where the wake-up's deferred interrupts land), in the
# rest of the kernel and in user space. From `perf record -e cpu-clock`
# samples (no hardware counters in a VM); sampling itself adds cost, so
# compare the columns, not the totals with io-perf's own figures.
#
#   tools/io-cpu-breakdown.sh BUILD_DIR FILE [ENGINE=libaio] [RW=randread] [DEPTH=1] [ROUNDS=3]
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR FILE [ENGINE] [RW] [DEPTH] [ROUNDS]}
file=${2:?file to run on (2 GiB are used)}
engine=${3:-libaio} rw=${4:-randread} depth=${5:-1} rounds=${6:-3}
secs=4 hz=20000
iop=$build/examples/perf/io-perf
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v perf >/dev/null && command -v fio >/dev/null || {
    echo "needs perf and fio" >&2
    exit 77
}
fio_engine=$engine
[ "$engine" = iouring ] && fio_engine=io_uring

# breakdown DATA IOS LABEL: the busiest process of the recording.
breakdown() {
    perf report -i "$1" --no-children -n --sort pid,sym 2>/dev/null | grep -v '^#' |
        awk -v ios="$2" -v label="$3" -v us=$((1000000 / hz)) '
        NF >= 4 { p = $3; n = $2; tot[p] += n
                  if ($0 ~ /iowrite16/) kick[p] += n
                  else if ($0 ~ /finish_task_switch/) fts[p] += n
                  else if ($0 ~ /\[k\]/) kern[p] += n
                  else user[p] += n }
        END { for (p in tot) if (best == "" || tot[p] > tot[best]) best = p
              printf "%-28s notify %5.1f  switch %5.1f  kernel %5.1f  user %5.1f  total %5.1f us/IO\n",
                     label, kick[best] * us / ios, fts[best] * us / ios, kern[best] * us / ios,
                     user[best] * us / ios, tot[best] * us / ios }'
}

for r in $(seq "$rounds"); do
    perf record -q -e cpu-clock -F $hz -o "$tmp/fio.data" fio --name=x --filename="$file" \
        --ioengine="$fio_engine" --direct=1 --rw="$rw" --bs=4096 --iodepth="$depth" --size=2G \
        --time_based=1 --runtime=$secs --randrepeat=0 --norandommap=1 --cpus_allowed=0 \
        --output-format=json >"$tmp/fio.json" 2>/dev/null
    ios=$(python3 -c "import json,sys; j=json.load(open(sys.argv[1]))['jobs'][0]; \
print(j['read']['total_ios'] + j['write']['total_ios'])" "$tmp/fio.json")
    breakdown "$tmp/fio.data" "$ios" "round $r fio $((ios / secs)) IOPS"
    out=$(perf record -q -e cpu-clock -F $hz -o "$tmp/ours.data" "$iop" -disk_path="$file" \
        -disk_size=2G -io_engine="$engine" -io_depth="$depth" -rw="$rw" -duration=$secs -ramp=0 \
        -cpu=0 2>/dev/null | grep '^io-perf:')
    iops=$(sed -E 's/.*IOPS=([0-9]+).*/\1/' <<<"$out")
    breakdown "$tmp/ours.data" $((iops * secs)) "round $r io-perf $iops IOPS"
done
