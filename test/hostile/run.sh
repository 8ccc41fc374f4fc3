#!/usr/bin/env bash
# Runs test/hostile/hostile_client.py against hostile_server, plain HTTP and
# then (unless the second argument is "notls" or the openssl CLI is missing)
# HTTPS with a throw-away self-signed certificate, on the event engine named
# by the third argument (photon's default if none).
#   run.sh SERVER_BINARY [tls|notls] [epoll|iouring]
# Exit: 0 all passed, 1 a failure, 77 skipped (no python3, or no io_uring).
set -u
server=${1:?usage: run.sh SERVER_BINARY [tls|notls] [epoll|iouring]}
tls=${2:-tls}
export HOSTILE_ENGINE=${3:-}
here=$(cd "$(dirname "$0")" && pwd)

if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP: python3 not found"
    exit 77
fi

status=0
echo "== plain HTTP ${HOSTILE_ENGINE}"
timeout 120 python3 "$here/hostile_client.py" "$server"
rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || status=1

if [ "$tls" != tls ]; then
    echo "== HTTPS: skipped (photon built without TLS)"
elif ! command -v openssl >/dev/null 2>&1; then
    echo "== HTTPS: skipped (no openssl CLI)"
else
    dir=$(mktemp -d /tmp/photon-hostile-XXXXXX)
    trap 'rm -rf "$dir"' EXIT
    if ! openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
            -keyout "$dir/key.pem" -out "$dir/cert.pem" -days 2 -subj /CN=localhost \
            -addext subjectAltName=DNS:localhost,IP:127.0.0.1 >"$dir/openssl.log" 2>&1; then
        cat "$dir/openssl.log"
        echo "FAIL: openssl req could not make a certificate"
        exit 1
    fi
    echo "== HTTPS ${HOSTILE_ENGINE}"
    timeout 120 python3 "$here/hostile_client.py" "$server" --tls "$dir/cert.pem" "$dir/key.pem" ||
        status=1
fi

[ $status -eq 0 ] && echo "hostile suite: all passed" || echo "hostile suite: FAILED"
exit $status
