#!/usr/bin/env bash
# The RPC frame and message fuzzer: tools/fuzz-rpc.sh [seconds=60] [libFuzzer args...]
exec "$(dirname "${BASH_SOURCE[0]}")/fuzz.sh" rpc "$@"
