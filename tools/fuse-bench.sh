#!/usr/bin/env bash
# fuse-bench.sh: fio through photon's FUSE passthrough (examples/fs/passthrough)
# against bindfs mounting the same directory, and fio on the directory itself
# as the ceiling, all in one run; with BUCKETFS, also the same file as an object
# of a local S3 server (versitygw, posix backend) read through bucketfs and
# fs/cache's full-file cache (examples/fs/bucketfs -o cache_dir), warm.
#
#   tools/fuse-bench.sh PASSTHROUGH_BINARY
#
# Environment (defaults in brackets):
#   BENCH_DIR   where the source dir and mount points go [/dev/shm/photon-fuse-bench]
#               (tmpfs: the file stays in memory, so FUSE itself is measured;
#               tmpfs takes O_DIRECT since Linux 6.6)
#   SIZE_MB     file size [1024]       RUNTIME  seconds per fio run [15]
#   ROUNDS      rounds; targets alternate within a round, the median is reported [3]
#   PT_OPTS     passthrough -o options, one variant per ";" [";ioengine=psync;no_splice_write"]
#               (the empty variant: its defaults, io_uring for file data and
#               splice_write,splice_move)
#   BINDFS_OPTS bindfs -o options, one variant per ";" [";max_background=128"]
#   TESTS       which fio jobs [randread seqread seqread-buffered]
#   TARGETS     which mounts [photon bindfs, and bucketfs when BUCKETFS is set]
#   BUCKETFS    examples/fs/bucketfs: adds the target "bucketfs+cache" (needs versitygw,
#               tools/install-deps.sh); the cache is in BENCH_DIR and is filled by one
#               sequential read after each mount, before fio runs
#
# Jobs (libaio, 4 KiB random: iodepth 32 x 4 jobs; 1 MiB sequential: iodepth 8 x 1 job):
#   randread          4 KiB random reads, O_DIRECT (every read reaches the server)
#   seqread           1 MiB sequential reads, O_DIRECT
#   seqread-buffered  1 MiB sequential reads through the page cache (caches dropped
#                     first: the kernel's readahead drives the server)
# For each target: IOPS, MiB/s, and CPU per I/O in microseconds: the FUSE server's
# (all its threads, from /proc/PID/task/*/schedstat) and fio's (user + system, from
# /usr/bin/time), so the kernel's work is charged to whoever did it. Other load on
# the machine shows up as noise, not as CPU per I/O.
# Needs root (or fusermount3), fio and bindfs (apt-get install fio bindfs fuse3).
set -euo pipefail

PT=${1:?usage: $0 PASSTHROUGH_BINARY}
PT=$(realpath "$PT")
BENCH_DIR=${BENCH_DIR:-/dev/shm/photon-fuse-bench}
SIZE_MB=${SIZE_MB:-1024}
RUNTIME=${RUNTIME:-15}
ROUNDS=${ROUNDS:-3}
PT_OPTS=${PT_OPTS-;ioengine=psync;no_splice_write}
BINDFS_OPTS=${BINDFS_OPTS-;max_background=128}
TESTS=${TESTS:-randread seqread seqread-buffered}
BUCKETFS=${BUCKETFS:+$(realpath "$BUCKETFS")}
TARGETS=${TARGETS:-photon bindfs${BUCKETFS:+ bucketfs}}

need=(fio fusermount3)
[[ " $TARGETS " == *" bindfs "* ]] && need+=(bindfs)
[[ " $TARGETS " == *" bucketfs "* ]] && need+=(versitygw curl)
for tool in "${need[@]}"; do
    command -v $tool > /dev/null || { echo "$0: $tool is missing" >&2; exit 2; }
done
if [[ " $TARGETS " == *" bucketfs "* && -z $BUCKETFS ]]; then
    echo "$0: the bucketfs target needs BUCKETFS=path/to/examples/fs/bucketfs" >&2
    exit 2
fi

SRC=$BENCH_DIR/src
MNT=$BENCH_DIR/mnt
RES=$BENCH_DIR/results
mkdir -p "$SRC" "$MNT" "$RES"
DAEMON_PID=

S3_PID=
cleanup() {
    mountpoint -q "$MNT" && fusermount3 -u "$MNT" 2> /dev/null || true
    mountpoint -q "$MNT" && umount -l "$MNT" 2> /dev/null || true
    [ -n "$DAEMON_PID" ] && kill "$DAEMON_PID" 2> /dev/null || true
    [ -n "$S3_PID" ] && kill "$S3_PID" 2> /dev/null || true
}
trap cleanup EXIT

if [ "$(stat -c %s "$SRC/file" 2> /dev/null || echo 0)" != $((SIZE_MB << 20)) ]; then
    echo "writing a ${SIZE_MB} MiB file in $SRC ..."
    dd if=/dev/urandom of="$SRC/file" bs=1M count="$SIZE_MB" status=none
fi

# The S3 side of the bucketfs target: versitygw serving BENCH_DIR/s3 on a free port, the
# file as the object bench/file (a hard link: the posix backend keeps objects as files).
if [[ " $TARGETS " == *" bucketfs "* ]]; then
    # An empty cache: one left by a run on another file (SIZE_MB) would serve that file's
    # size and bytes (the full-file cache trusts its media for files that do not change).
    rm -rf "$BENCH_DIR/cache"
    mkdir -p "$BENCH_DIR/s3/bench" "$BENCH_DIR/cache"
    ln -f "$SRC/file" "$BENCH_DIR/s3/bench/file"
    S3_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    versitygw --access benchkey --secret benchsecret --port "127.0.0.1:$S3_PORT" \
        posix "$BENCH_DIR/s3" > "$RES/versitygw.log" 2>&1 &
    S3_PID=$!
    for _ in $(seq 100); do
        curl -s -o /dev/null "http://127.0.0.1:$S3_PORT/" && break
        sleep 0.1
    done
fi

# fio_job NAME DIR: writes the job file for test NAME on DIR/file.
fio_job() {
    local rw bs depth jobs direct=1
    case $1 in
        randread) rw=randread bs=4k depth=32 jobs=4 ;;
        seqread) rw=read bs=1M depth=8 jobs=1 ;;
        seqread-buffered) rw=read bs=1M depth=8 jobs=1 direct=0 ;;
    esac
    cat > "$RES/job.fio" << EOF
[global]
ioengine=libaio
direct=$direct
rw=$rw
bs=$bs
iodepth=$depth
numjobs=$jobs
size=${SIZE_MB}m
runtime=$RUNTIME
time_based=1
group_reporting=1
invalidate=1
filename=$2/file

[job]
EOF
}

task_cpu_ns() {  # all threads of a process
    local s=0 t
    for t in /proc/$1/task/*/schedstat; do s=$((s + $(cut -d' ' -f1 "$t" 2> /dev/null || echo 0))); done
    echo $s
}

# mount_target KIND OPTS: mounts SRC on MNT, sets DAEMON_PID.
mount_target() {
    local kind=$1 opts=$2
    case $kind in
        photon)
            "$PT" "$SRC" "$MNT" -f ${opts:+-o "$opts"} > "$RES/daemon.log" 2>&1 &
            ;;
        bindfs)
            bindfs -f ${opts:+-o "$opts"} "$SRC" "$MNT" > "$RES/daemon.log" 2>&1 &
            ;;
        bucketfs)
            AWS_ACCESS_KEY_ID=benchkey AWS_SECRET_ACCESS_KEY=benchsecret \
                "$BUCKETFS" "http://127.0.0.1:$S3_PORT" bench "$MNT" -f \
                -o "cache_dir=$BENCH_DIR/cache${opts:+,$opts}" > "$RES/daemon.log" 2>&1 &
            ;;
    esac
    DAEMON_PID=$!
    for _ in $(seq 200); do
        if stat "$MNT/file" > /dev/null 2>&1; then
            # Warm: the whole file into the cache (a no-op for the other targets' data).
            [ "$kind" = bucketfs ] && cat "$MNT/file" > /dev/null
            return 0
        fi
        sleep 0.05
    done
    echo "$kind did not mount:" >&2
    cat "$RES/daemon.log" >&2
    exit 1
}

unmount_target() {
    fusermount3 -u "$MNT"
    wait "$DAEMON_PID" 2> /dev/null || true
    DAEMON_PID=
}

# run_fio LABEL TEST DIR: one fio run; appends "label test iops mibs server_us fio_us".
run_fio() {
    local label=$1 test=$2 dir=$3 c0=0 c1=0
    fio_job "$test" "$dir"
    [ "$test" = seqread-buffered ] && sync && echo 3 > /proc/sys/vm/drop_caches
    [ -n "$DAEMON_PID" ] && c0=$(task_cpu_ns "$DAEMON_PID")
    /usr/bin/time -f "%U %S" -o "$RES/time" \
        fio "$RES/job.fio" --output-format=terse --terse-version=3 > "$RES/fio.out" 2> "$RES/fio.err"
    [ -n "$DAEMON_PID" ] && c1=$(task_cpu_ns "$DAEMON_PID")
    local fio_cpu_us
    fio_cpu_us=$(awk '{printf "%d", ($1 + $2) * 1e6}' "$RES/time")
    awk -F';' -v l="$label" -v t="$test" -v d=$(((c1 - c0) / 1000)) -v f="$fio_cpu_us" '
        { ios = $8 * $9 / 1000  # read IOPS x read runtime (ms)
          printf "%s %s %d %.1f %.2f %.2f\n", l, t, $8, $7 / 1024, d / ios, f / ios }' \
        "$RES/fio.out" >> "$RES/all"
}

# run_target KIND LABEL TEST VARIANT...: if TARGETS has KIND, mounts it with each variant's
# options in turn and runs fio TEST on it.
run_target() {
    local kind=$1 label=$2 test=$3 o
    shift 3
    [[ " $TARGETS " == *" $kind "* ]] || return 0
    for o in "$@"; do
        mount_target "$kind" "$o"
        run_fio "$label${o:+[$o]}" "$test" "$MNT"
        unmount_target
    done
}

: > "$RES/all"
IFS=';' read -ra pt_variants <<< "$PT_OPTS"
IFS=';' read -ra bindfs_variants <<< "$BINDFS_OPTS"
[ ${#pt_variants[@]} -eq 0 ] && pt_variants=("")
[ ${#bindfs_variants[@]} -eq 0 ] && bindfs_variants=("")
for round in $(seq "$ROUNDS"); do
    echo "round $round/$ROUNDS ..."
    for test in $TESTS; do
        run_fio "direct-on-dir" "$test" "$SRC"
        run_target photon photon "$test" "${pt_variants[@]}"
        run_target bindfs bindfs "$test" "${bindfs_variants[@]}"
        run_target bucketfs bucketfs+cache "$test" ""
    done
done

echo
echo "kernel $(uname -r), $(nproc) CPUs, file ${SIZE_MB} MiB in $BENCH_DIR ($(stat -f -c %T "$SRC")),"
echo "fio $(fio --version), bindfs $(bindfs --version 2> /dev/null | head -1 | awk '{print $2}'), median of $ROUNDS rounds x ${RUNTIME}s"
echo "CPU us/IO: the FUSE server's (all threads) and fio's (user+sys)"
printf "%-36s %-17s %10s %10s %12s %10s\n" target test IOPS MiB/s server_us/IO fio_us/IO
# The median round by IOPS, per target and test.
cut -d' ' -f1,2 "$RES/all" | awk '!seen[$0]++' | while read -r label test; do
    grep -F "$label $test " "$RES/all" | sort -n -k3,3 > "$RES/one"
    sed -n "$((($(wc -l < "$RES/one") + 1) / 2))p" "$RES/one"
done | sort -k2,2 -s | while read -r l t i m s f; do
    printf "%-36s %-17s %10d %10.1f %12.2f %10.2f\n" "$l" "$t" "$i" "$m" "$s" "$f"
done
