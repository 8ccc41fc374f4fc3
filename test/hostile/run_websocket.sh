#!/usr/bin/env bash
# Runs test/hostile/hostile_websocket.py against hostile_server on the event
# engine named by the second argument (photon's default if none).
#   run_websocket.sh SERVER_BINARY [epoll|iouring]
# Exit: 0 all passed, 1 a failure, 77 skipped (no python3, or no io_uring).
set -u
server=${1:?usage: run_websocket.sh SERVER_BINARY [epoll|iouring]}
export HOSTILE_ENGINE=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP: python3 not found"
    exit 77
fi
echo "== WebSocket ${HOSTILE_ENGINE}"
timeout 150 python3 "$here/hostile_websocket.py" "$server"
