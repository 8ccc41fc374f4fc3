#!/usr/bin/env bash
# The HTTP parser fuzzer: tools/fuzz-http.sh [seconds=60] [libFuzzer args...]
exec "$(dirname "${BASH_SOURCE[0]}")/fuzz.sh" http "$@"
