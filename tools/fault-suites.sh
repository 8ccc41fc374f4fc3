#!/usr/bin/env bash
# Runs the suites under fault injection (doc/fault-injection.md), once per seed:
#   1. the transparent faults (EAGAIN storms, EINTR, short transfers, late and
#      spurious wake-ups) under the existing net, rpc, http, fs and hostile
#      suites, which must pass unchanged (PHOTON_FAULTS in their environment);
#   2. the hard faults (ENOMEM, EIO, ECONNRESET) under the dedicated workload
#      and the injector's own tests (test/fault/, PHOTON_FAULT_SEED).
#
#   tools/fault-suites.sh [options] SEED...
#     --build DIR     a configured and built build directory (default: build)
#     --p P           probability per hook of the transparent faults (default 0.05)
#     --hard-p P      of the hard ones in the workload (default 0.02)
#     --suites RE     the test executables of step 1, an extended regex on their
#                     names (default: ^(net|rpc|fs)_)
#     --exclude RE    executables or gtest cases left out (see below)
#     --budget SECS   stop starting new seeds after this many seconds (default: none)
# Each executable runs whole (one process, all its cases, --gtest_brief), bounded
# by `timeout`; the hostile suites run through ctest (their scripts drive them).
# Exit: 0 if every seed passed, 1 otherwise. Prints one line per seed and step.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build=build
p=0.05
hard_p=0.02
suites='^(net|rpc|fs)_'
budget=0
# Left out of step 1 (doc/fault-injection.md says why, case by case):
#  - executables that reach the internet or need FUSE or a root mount;
#  - gtest cases that time a latency or rate the faults change on purpose.
exclude_bins='^(net_curl_test|net_http_client_dns_test|fs_fuse_.*|fs_httpfs_test)$'
# gtest cases that test a mechanism the faults defeat on purpose, not a contract:
#  - FsHandler.SendsALargeFileBySendfileOnlyWhenTheFileHasAnFd counts the server's write
#    calls (a short send makes two);
#  - ReadAhead.SmallRecvsAreServedFromOneKernelRead checks that one kernel read took the
#    whole queue (an injected short read takes less);
#  - Sockets.RecvIsOnePartialTransferAndRecvAtLeastGathers expects recv_at_least(4) to return
#    the 5 bytes queued (its contract is "at least 4": a short read may stop at 4);
#  - ReadAhead.BufferedBytesComeBeforeEof expects each recv of 100 to get 100 of the 300
#    queued (on the io_uring socket, which has no read-ahead, a short read gets fewer).
exclude_cases='*FsHandler.SendsALargeFileBySendfileOnlyWhenTheFileHasAnFd*'
exclude_cases+=':*ReadAhead.SmallRecvsAreServedFromOneKernelRead*'
exclude_cases+=':*Sockets.RecvIsOnePartialTransferAndRecvAtLeastGathers*'
exclude_cases+=':*ReadAhead.BufferedBytesComeBeforeEof*'
while [ $# -gt 0 ]; do
    case "$1" in
        --build) build=$2; shift 2 ;;
        --p) p=$2; shift 2 ;;
        --hard-p) hard_p=$2; shift 2 ;;
        --suites) suites=$2; shift 2 ;;
        --exclude) exclude_bins=$2; shift 2 ;;
        --budget) budget=$2; shift 2 ;;
        -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
        --*) echo "fault-suites: unknown option $1" >&2; exit 2 ;;
        *) break ;;
    esac
done
[ $# -gt 0 ] || set -- 1
if [ ! -d "$build/test" ]; then
    echo "fault-suites: $build/test: no tests built there" >&2
    exit 2
fi
bins=()
for b in "$build"/test/*_test; do
    n=$(basename "$b")
    [ -x "$b" ] || continue
    [[ $n =~ $suites ]] || continue
    [[ $n =~ $exclude_bins ]] && continue
    bins+=("$b")
done
filter="-${exclude_cases}"
[ -n "$exclude_cases" ] || filter='*'

# run LOG ENV... -- CMD...: runs CMD with ENV, appends to LOG, returns CMD's status.
run() {
    local log=$1
    shift
    env "$@" >>"$log" 2>&1
}

# Logs of this run, apart from any other run's (several may run at once).
logs=$(mktemp -d /tmp/photon-fault-XXXXXX)
start=$SECONDS
status=0
results=()
for seed in "$@"; do
    if [ "$budget" -gt 0 ] && [ $((SECONDS - start)) -ge "$budget" ]; then
        results+=("seed $seed: not run (budget of ${budget}s spent)")
        continue
    fi
    t0=$SECONDS
    log=$logs/$seed-transparent.log
    : >"$log"
    faults="seed=$seed,p=$p,kinds=transparent,delay_us=500"
    echo "===== [fault] seed $seed: transparent faults ($faults), ${#bins[@]} executables"
    failed=()
    for b in "${bins[@]}"; do
        echo "----- $(basename "$b")" >>"$log"
        tb=$SECONDS
        if ! run "$log" PHOTON_FAULTS="$faults" timeout -k 10 300 "$b" --gtest_brief=1 \
            "--gtest_filter=$filter"; then
            failed+=("$(basename "$b")")
        fi
        echo "----- $(basename "$b"): $((SECONDS - tb))s" >>"$log"
    done
    echo "----- hostile (ctest -R ^hostile_)" >>"$log"
    if ! run "$log" PHOTON_FAULTS="$faults" ctest --test-dir "$build" -R '^hostile_' \
        --timeout 300 --output-on-failure; then
        failed+=("hostile")
    fi
    rc1=${#failed[@]}
    [ $rc1 -eq 0 ] || echo "FAILED under transparent faults: ${failed[*]}"
    t1=$SECONDS
    log=$logs/$seed-hard.log
    : >"$log"
    echo "===== [fault] seed $seed: hard faults (p=$hard_p), test/fault/"
    hard_failed=()
    for b in "$build"/test/fault_*_test; do
        [ -x "$b" ] || continue
        echo "----- $(basename "$b")" >>"$log"
        if ! run "$log" PHOTON_FAULT_SEED="$seed" PHOTON_FAULT_P="$hard_p" \
            timeout -k 10 300 "$b" --gtest_brief=1; then
            hard_failed+=("$(basename "$b")")
        fi
    done
    rc2=${#hard_failed[@]}
    [ $rc2 -eq 0 ] || echo "FAILED under hard faults: ${hard_failed[*]}"
    line="seed $seed: transparent $([ $rc1 -eq 0 ] && echo pass || echo FAIL) ($((t1 - t0))s)"
    line+=", hard $([ $rc2 -eq 0 ] && echo pass || echo FAIL) ($((SECONDS - t1))s)"
    results+=("$line")
    [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] || status=1
    echo "===== [fault] $line (logs: $logs/$seed-*.log)"
done
printf '\n===== [fault] summary (%ds)\n' $((SECONDS - start))
printf '%s\n' "${results[@]}"
exit $status
