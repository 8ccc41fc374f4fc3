#!/usr/bin/env bash
# tools/photon-gdb.py against a running program with parked coroutines
# (gdb_parked.cpp): photon-ls lists them with their entries, photon-bt shows
# where each is parked. Exit 77 (skipped) without gdb or ptrace.
#   photon_gdb_test.sh PROGRAM SCRIPT
set -uo pipefail
prog="$1" script="$2"
command -v gdb >/dev/null || { echo "gdb is not installed: skipped"; exit 77; }
out="$(timeout 120 gdb -nx -batch -ex run -ex "source $script" -ex photon-ls \
    -ex "photon-bt 1" -ex "photon-bt 2" -ex "photon-bt 3" -ex "photon-bt 4" -ex "photon-bt 5" -ex "photon-bt 6" \
    -ex kill "$prog" 2>&1)"
echo "$out"
if grep -q "ptrace: Operation not permitted\|Could not trace the inferior" <<<"$out"; then
    echo "ptrace is not permitted here: skipped"
    exit 77
fi
fail() { echo "photon_gdb_test: FAILED: $*"; exit 1; }
ls_lines="$(grep '^#[0-9]' <<<"$out" | grep ' vcpu ')"
[ "$(grep -c 'entry parked_in_sleep' <<<"$ls_lines")" = 2 ] || fail "two coroutines in parked_in_sleep"
[ "$(grep -c 'entry parked_on_semaphore' <<<"$ls_lines")" = 1 ] || fail "one in parked_on_semaphore"
grep -q 'vcpu 0 .*RUNNING *main .*on gdb thread 1$' <<<"$ls_lines" || fail "the running main coroutine of vCPU 0"
grep -q 'vcpu 1 ' <<<"$ls_lines" || fail "the pool's vCPU"
grep -q 'SLEEPING' <<<"$ls_lines" || fail "parked coroutines are SLEEPING"
# Each parked coroutine's backtrace reaches the function it parked in.
for f in parked_in_sleep parked_on_semaphore; do
    n="$(grep -E "^#[0-9]+ .* in $f|^#[0-9]+ +$f" <<<"$out" | wc -l)"
    [ "$n" -ge 1 ] || fail "no backtrace through $f"
done
grep -q "is on gdb thread 1: .thread 1. then .bt." <<<"$out" ||
    fail "photon-bt of the running coroutine points to its OS thread"
echo "photon_gdb_test: passed"
