#!/usr/bin/env bash
# perf's call graphs through coroutines: perf_spin (perf_spin.cpp) burns CPU in
# perf_spin_work, called by perf_spin_handler, the entry of four coroutines that yield to
# each other. Recorded with --call-graph=fp and then dwarf, at least 90% of the samples in
# perf_spin_work must unwind to perf_spin_handler, thread_stub and photon_context_start,
# and end there: nothing after the context's entry stub (thread/arch/switch_*.S).
# Exit 77 (skipped) without perf or when perf_event_open is refused (perf_event_paranoid
# above 2, containers' seccomp).
#   perf_callgraph.sh PROGRAM
set -uo pipefail
prog="$1"
skip() {
    echo "perf_callgraph: skipped: $*"
    exit 77
}
fail() {
    echo "perf_callgraph: FAILED: $*"
    exit 1
}
command -v perf >/dev/null || skip "perf is not installed"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# cpu-clock:u (user-space samples of our own process) is what perf_event_paranoid 2 allows,
# and needs no hardware counters (VMs often have none).
if ! perf record -q -e cpu-clock:u -o "$tmp/probe.data" -- true >"$tmp/probe.log" 2>&1; then
    cat "$tmp/probe.log"
    skip "perf record does not work here: perf_event_open refused (perf_event_paranoid" \
        "$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo unknown)," \
        "or a container), or no perf for this kernel"
fi

# check MODE: records the program with --call-graph=MODE and checks the chains.
check() {
    local mode="$1" data="$tmp/$1.data"
    if ! timeout 30 perf record -q -e cpu-clock:u -F 997 --call-graph="$mode" -o "$data" \
        -- "$prog" 1.5 >"$tmp/record.log" 2>&1; then
        cat "$tmp/record.log"
        fail "perf record --call-graph=$mode, or the program, failed"
    fi
    # One sample per paragraph, innermost frame first, "ADDRESS SYMBOL" per line.
    local counts
    counts="$(timeout 30 perf script -i "$data" -F ip,sym --no-inline 2>/dev/null | awk '
        function judge() {
            if (n > 0 && f[1] == "perf_spin_work") {
                total++
                if (n >= 4 && f[n] == "photon_context_start" && f[n - 1] ~ /thread_stub$/ &&
                    f[n - 2] == "perf_spin_handler")
                    good++
                else if (bad++ < 3) {
                    printf "a broken chain:"
                    for (i = 1; i <= n; i++) printf " <%s>", f[i]
                    printf "\n"
                }
            }
            n = 0
        }
        NF == 0 { judge(); next }
        { $1 = ""; sub(/^ /, ""); f[++n] = $0 }
        END { judge(); printf "%d %d\n", total, good }')"
    local total good
    read -r total good <<<"$(tail -n 1 <<<"$counts")"
    head -n -1 <<<"$counts"
    echo "perf_callgraph: --call-graph=$mode: $good of $total samples in perf_spin_work" \
        "unwind to the coroutine's entry and end there"
    [ "${total:-0}" -ge 50 ] || fail "--call-graph=$mode: too few samples in perf_spin_work"
    [ $((good * 10)) -ge $((total * 9)) ] || fail "--call-graph=$mode: under 90% full chains"
}

check fp
if perf version --build-options 2>/dev/null | grep -Eq '(libdw-dwarf-unwind|libunwind): *\[ on'; then
    # 16 KiB of stack per sample is plenty for perf_spin's shallow stacks.
    check dwarf,16384
else
    echo "perf_callgraph: this perf has no DWARF unwinder: --call-graph=dwarf not checked"
fi
echo "perf_callgraph: passed"
