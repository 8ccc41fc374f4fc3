#!/usr/bin/env bash
# Checks that every C and C++ source of the repository is as clang-format (.clang-format) writes
# it; lists the files that are not and exits 1. Exit 77 (skipped) without clang-format, or with
# another major version than the tree's (14, Debian 12's: versions format differently).
#   tools/check-format.sh        (from anywhere in the repository)
# To fix: clang-format -i FILE...
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v clang-format >/dev/null || {
    echo "check-format: skipped: clang-format is not installed"
    exit 77
}
version=$(clang-format --version | grep -o '[0-9][0-9.]*' | head -1)
[ "${version%%.*}" = 14 ] || {
    echo "check-format: skipped: clang-format $version; the tree is formatted by version 14"
    exit 77
}
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    files=$(git ls-files '*.cpp' '*.h' '*.cc' '*.c')
else  # an exported tree
    files=$(find . -path ./build\* -prune -o -type f \( -name '*.cpp' -o -name '*.h' -o \
        -name '*.cc' -o -name '*.c' \) -print | sed 's|^\./||')
fi
[ -n "$files" ] || {
    echo "check-format: FAILED: no sources found"
    exit 1
}
bad=$(xargs clang-format --dry-run 2>&1 <<<"$files" | grep -o '^[^:]*:[0-9]*:[0-9]*: warning' |
    cut -d: -f1 | sort -u)
if [ -n "$bad" ]; then
    echo "check-format: FAILED: not as clang-format $version writes them (clang-format -i to fix):"
    echo "$bad"
    exit 1
fi
echo "check-format: ok: $(wc -l <<<"$files") files"
