#!/usr/bin/env bash
# Every public header compiles on its own, and all of them together, in a user's strict build:
# each compiler x each C++ standard (alone: the pairs --alone names), -fsyntax-only -Wall -Wextra -Werror. Prints one line per
# combination and the first errors of each failing header; exits 1 on any failure.
#
# Usage: public_headers_check.sh --include DIR --headers FILE [--compiler CXX]... [--std S]...
#                                [-DNAME[=VALUE]]... [--jobs N]
#   --headers FILE   the headers to check, one a line, relative to DIR (photon/common/...)
#   --compiler CXX   a compiler to use (default: g++ and clang++); one missing is skipped with
#                    a message, unless none is found at all
#   --std S          c++14, c++17, c++20 (default: all three)
#   --alone CXX:S    check each header alone only with these compiler:standard pairs (repeat;
#                    default: every pair); all headers together are checked with every pair
#   -D...            definitions passed to every compile (the PHOTON_HAVE_<PART>=1 set)
#   --jobs N         parallel compiles (default: 2)
set -uo pipefail

inc=""
list=""
compilers=()
stds=()
defs=()
alone=()
jobs=2
while [ $# -gt 0 ]; do
    case "$1" in
        --include) inc="$2"; shift ;;
        --headers) list="$2"; shift ;;
        --compiler) compilers+=("$2"); shift ;;
        --std) stds+=("$2"); shift ;;
        --jobs) jobs="$2"; shift ;;
        --alone) alone+=("$2"); shift ;;
        -D*) defs+=("$1") ;;
        *) echo "public_headers_check.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
    shift
done
[ -d "$inc" ] && [ -f "$list" ] || { echo "usage: see the head of $0" >&2; exit 2; }
[ ${#compilers[@]} -gt 0 ] || compilers=(g++ clang++)
[ ${#stds[@]} -gt 0 ] || stds=(c++14 c++17 c++20)

tmp="$(mktemp -d "${TMPDIR:-/tmp}/photon-headers.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

# The all-headers translation unit.
sed 's/.*/#include <&>/' "$list" >"$tmp/all.cpp"

# One job per (compiler, standard, header): a failing one leaves its diagnostics in a file.
: >"$tmp/jobs"
found=0
for cxx in "${compilers[@]}"; do
    if ! command -v "$cxx" >/dev/null 2>&1; then
        echo "SKIP $cxx: not installed (CI installs it; tools/install-deps.sh)"
        continue
    fi
    found=1
    for std in "${stds[@]}"; do
        if [ ${#alone[@]} -eq 0 ] || [[ " ${alone[*]} " == *" $cxx:$std "* ]]; then
            while read -r h; do
                [ -n "$h" ] && printf '%s %s %s\n' "$cxx" "$std" "$h" >>"$tmp/jobs"
            done <"$list"
        fi
        printf '%s %s %s\n' "$cxx" "$std" "ALL" >>"$tmp/jobs"
    done
done
[ "$found" = 1 ] || { echo "no compiler found among: ${compilers[*]}" >&2; exit 1; }

export inc tmp
export PHOTON_DEFS="${defs[*]:-}"
compile_one() {  # compile_one <cxx> <std> <header|ALL>
    local cxx="$1" std="$2" h="$3" src out
    out="$tmp/$(basename "$cxx")_${std}_$(printf '%s' "$h" | tr '/.' '__').log"
    if [ "$h" = ALL ]; then
        src="$tmp/all.cpp"
    else
        src="$tmp/$(printf '%s' "$h" | tr '/.' '__').cpp"
        [ -f "$src" ] || printf '#include <%s>\n' "$h" >"$src"
    fi
    # shellcheck disable=SC2086 # PHOTON_DEFS is a list of words
    if ! "$cxx" -std="$std" -fsyntax-only -Wall -Wextra -Werror -I "$inc" $PHOTON_DEFS \
        -x c++ "$src" >"$out" 2>&1; then
        echo "$cxx $std $h" >>"$out.failed"
    else
        rm -f "$out"
    fi
}
export -f compile_one

# Write the per-header sources first so parallel jobs never race on them.
while read -r h; do
    [ -n "$h" ] && printf '#include <%s>\n' "$h" >"$tmp/$(printf '%s' "$h" | tr '/.' '__').cpp"
done <"$list"

start=$SECONDS
xargs -P "$jobs" -L 1 bash -c 'compile_one "$@"' _ <"$tmp/jobs"

nheaders=$(grep -c . "$list")
status=0
for cxx in "${compilers[@]}"; do
    command -v "$cxx" >/dev/null 2>&1 || continue
    for std in "${stds[@]}"; do
        failed=$(cat "$tmp/$(basename "$cxx")_${std}_"*.failed 2>/dev/null | wc -l)
        what="all $nheaders headers together"
        if [ ${#alone[@]} -eq 0 ] || [[ " ${alone[*]} " == *" $cxx:$std "* ]]; then
            what="$nheaders headers alone + all together"
        fi
        printf '%-10s -std=%-6s %s: %s\n' "$cxx" "$std" "$what" \
            "$([ "$failed" = 0 ] && echo ok || echo "$failed FAILED")"
        [ "$failed" = 0 ] || status=1
    done
done
if [ "$status" != 0 ]; then
    for f in "$tmp"/*.failed; do
        echo
        echo "=== FAILED: $(cat "$f")"
        grep -m 5 -E 'error' "${f%.failed}" || head -n 5 "${f%.failed}"
    done
fi
echo "public_headers_check: $((SECONDS - start)) s"
exit "$status"
