#!/usr/bin/env bash
# Runs test/hostile/hostile_fetch (our HTTP client) against the misbehaving
# origin test/hostile/hostile_origin.py, plain HTTP and then (unless the
# third argument is "notls" or the openssl CLI is missing) HTTPS with a
# throw-away self-signed certificate.
#   run_origin.sh FETCH_BINARY epoll|iouring [tls|notls]
# Exit: 0 all passed, 1 a failure, 77 skipped (no python3, or no io_uring).
set -u
fetch=${1:?usage: run_origin.sh FETCH_BINARY epoll|iouring [tls|notls]}
engine=${2:?usage: run_origin.sh FETCH_BINARY epoll|iouring [tls|notls]}
tls=${3:-tls}
here=$(cd "$(dirname "$0")" && pwd)

if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP: python3 not found"
    exit 77
fi

status=0
echo "== plain HTTP ($engine)"
python3 "$here/hostile_origin.py" -- "$fetch" --engine "$engine"
rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || status=1

if [ "$tls" != tls ]; then
    echo "== HTTPS: skipped (photon built without TLS)"
elif ! command -v openssl >/dev/null 2>&1; then
    echo "== HTTPS: skipped (no openssl CLI)"
else
    dir=$(mktemp -d /tmp/photon-hostile-origin-XXXXXX)
    trap 'rm -rf "$dir"' EXIT
    if ! openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
            -keyout "$dir/key.pem" -out "$dir/cert.pem" -days 2 -subj /CN=localhost \
            -addext subjectAltName=DNS:localhost,IP:127.0.0.1 >"$dir/openssl.log" 2>&1; then
        cat "$dir/openssl.log"
        echo "FAIL: openssl req could not make a certificate"
        exit 1
    fi
    echo "== HTTPS ($engine)"
    python3 "$here/hostile_origin.py" --tls "$dir/cert.pem" "$dir/key.pem" -- \
        "$fetch" --engine "$engine" || status=1
fi

[ $status -eq 0 ] && echo "hostile origin suite ($engine): all passed" ||
    echo "hostile origin suite ($engine): FAILED"
exit $status
