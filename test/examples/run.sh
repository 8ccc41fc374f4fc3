#!/usr/bin/env bash
# Smoke run of examples/basic: each program does its job once, on 127.0.0.1,
# and its output is checked. Usage: run.sh DIR_WITH_THE_EXAMPLES
set -euo pipefail
bin="$(cd "$1" && pwd)"
here="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/photon-examples.XXXXXX")"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "examples: FAILED: $*" >&2; exit 1; }
run() { timeout --kill-after=5 60 "$@"; }  # every step is bounded

# start_server LOG CMD...: runs a server in the background until it prints its address.
start_server() {
    local log="$1"
    shift
    "$@" >"$log" 2>&1 &
    pids+=($!)
    for _ in $(seq 100); do
        grep -q "127.0.0.1" "$log" && return 0
        sleep 0.05
    done
    cat "$log"
    fail "$1 did not start"
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

echo "== std-threads, before and after the swap"
run "$bin/std-threads" | grep -q "(right)" || fail std-threads
run "$bin/std-threads-photon" | grep -q "(right)" || fail std-threads-photon

echo "== work-pool"
run "$bin/work-pool" 2 || fail work-pool

echo "== rpc-echo"
out=$(run "$bin/rpc-echo" 8 500) || fail "rpc-echo: $out"
echo "$out"
echo "$out" | grep -q "4000 calls answered, 0 failed" || fail "rpc-echo output"

echo "== echo-server and echo-client"
port=$(free_port)
start_server "$tmp/echo.log" "$bin/echo-server" "$port"
out=$(run "$bin/echo-client" "$port" 16 500) || fail "echo-client: $out"
echo "$out"
echo "$out" | grep -q "8000 replies checked, 0 failed" || fail "echo-client output"

echo "== http-server, with curl and http-client"
mkdir -p "$tmp/www"
head -c 300000 /dev/urandom >"$tmp/www/blob.bin"
port=$(free_port)
start_server "$tmp/http.log" "$bin/http-server" "$port" "$tmp/www"
[ "$(run curl -sf "http://127.0.0.1:$port/hello?name=ci")" = "hello, ci" ] || fail "/hello"
run curl -sf "http://127.0.0.1:$port/files/blob.bin" -o "$tmp/got.bin" || fail "/files/"
cmp "$tmp/www/blob.bin" "$tmp/got.bin" || fail "/files/ content"
if curl -V | grep -q HTTP2; then  # h2c (prior knowledge and Upgrade), then h2 over TLS
    [ "$(run curl -sf --http2-prior-knowledge -o /dev/null -w '%{http_version}' \
        "http://127.0.0.1:$port/files/blob.bin")" = 2 ] || fail "h2c"
    run curl -sf --http2 "http://127.0.0.1:$port/files/blob.bin" -o "$tmp/got2.bin" || fail "h2c upgrade"
    cmp "$tmp/www/blob.bin" "$tmp/got2.bin" || fail "h2c upgrade content"
    if command -v openssl >/dev/null; then
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
            -subj /CN=localhost -keyout "$tmp/key.pem" -out "$tmp/cert.pem" 2>/dev/null
        tls_port=$(free_port)
        start_server "$tmp/https.log" "$bin/http-server" "$tls_port" "$tmp/www" \
            --cert "$tmp/cert.pem" --key "$tmp/key.pem"
        [ "$(run curl -skf -o "$tmp/got3.bin" -w '%{http_version}' \
            "https://127.0.0.1:$tls_port/files/blob.bin")" = 2 ] || fail "h2 over TLS"
        cmp "$tmp/www/blob.bin" "$tmp/got3.bin" || fail "h2 content"
    fi
    echo "http-server: h2c and h2 ok"
fi
echo "== http-server --debug, with tools/photon-top.py"
dbg_port=$(free_port)
start_server "$tmp/http-debug.log" "$bin/http-server" "$dbg_port" "$tmp/www" --debug
run curl -sf "http://127.0.0.1:$dbg_port/files/blob.bin" -o /dev/null || fail "/files/ (--debug)"
run curl -sf "http://127.0.0.1:$dbg_port/metrics" -o "$tmp/metrics.txt" || fail "/metrics"
grep -q '^photon_vcpu_switches_total{vcpu="0"} ' "$tmp/metrics.txt" || fail "/metrics: no vCPU 0"
grep -q '^photon_http_server_requests_total{server="http-1",code="2xx"} [1-9]' "$tmp/metrics.txt" ||
    fail "/metrics: the /files/ request is not counted"
if command -v python3 >/dev/null; then
    run python3 "$here/../../tools/photon-top.py" --once --interval 0.5 \
        "http://127.0.0.1:$dbg_port/metrics" --dump "http://127.0.0.1:$dbg_port/debug/coroutines" \
        >"$tmp/top.txt" || fail "photon-top"
    grep -q '^vCPU  *coros  *runq  *switch/s' "$tmp/top.txt" || fail "photon-top: no vCPU table"
    grep -q '^0  ' "$tmp/top.txt" || fail "photon-top: no row for vCPU 0"
    grep -q '^http-1 ' "$tmp/top.txt" || fail "photon-top: no row for the HTTP server"
    grep -q '^coroutines: [1-9]' "$tmp/top.txt" || fail "photon-top: no coroutines from the dump"
    echo "photon-top: ok"
fi
if [ -x "$bin/http-client" ]; then
    out=$(run "$bin/http-client" "http://127.0.0.1:$port/files/blob.bin") || fail "http-client: $out"
    echo "$out"
    echo "$out" | grep -q "300000 bytes, the same from both" || fail "http-client output"
fi

echo "== file-copy on each engine"
head -c 5000000 /dev/urandom >"$tmp/src.bin"
for engine in psync iouring libaio posixaio; do
    if run "$bin/file-copy" "$tmp/src.bin" "$tmp/dst-$engine.bin" "$engine" >"$tmp/copy.log" 2>&1; then
        cmp "$tmp/src.bin" "$tmp/dst-$engine.bin" || fail "file-copy $engine: content"
        echo "file-copy $engine: ok"
    elif grep -q "Function not implemented\|Invalid argument" "$tmp/copy.log" && [ "$engine" != psync ]; then
        echo "file-copy $engine: engine unavailable here: $(tail -1 "$tmp/copy.log")"
    else
        cat "$tmp/copy.log"
        fail "file-copy $engine"
    fi
done
echo "examples: all passed"
