#!/usr/bin/env bash
# httpfs vs curl: sequential download of one file from nginx on 127.0.0.1.
#
# Makes a file of SIZE random bytes, serves it with nginx (one worker,
# sendfile, no access log), warms the page cache, then runs ROUNDS rounds; each
# round downloads the file with curl (to /dev/null) and reads it with
# httpfs-perf (httpfs preads of BS bytes, one after another), back to back.
# nginx is pinned to CPU 0 and the client to CPU 1 when there are two CPUs.
# Prints a table per round and the medians; exits 1 if the median ratio
# httpfs/curl is below MIN_RATIO.
#
#   tools/httpfs-bench.sh                 # builds build/examples/perf/httpfs-perf
#   HTTPFS_PERF=/path/to/httpfs-perf SIZE=1G ROUNDS=5 BS=4M tools/httpfs-bench.sh
#
# Environment: BUILD_DIR (default build), HTTPFS_PERF (a binary to use instead
# of building), SIZE (default 1G), ROUNDS (5), BS (4M), MIN_RATIO (0.8),
# EVENT_ENGINE (default: io_uring, else epoll), WORK_DIR (default: a new
# directory under /tmp, removed at the end).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

size="${SIZE:-1G}"
rounds="${ROUNDS:-5}"
bs="${BS:-4M}"
min_ratio="${MIN_RATIO:-0.8}"
engine="${EVENT_ENGINE:-default}"

for tool in nginx curl python3; do
    command -v "$tool" >/dev/null || { echo "httpfs-bench: $tool is needed" >&2; exit 2; }
done

perf="${HTTPFS_PERF:-}"
if [ -z "$perf" ]; then
    build_dir="${BUILD_DIR:-build}"
    [ -f "$build_dir/CMakeCache.txt" ] || cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release
    cmake --build "$build_dir" --target httpfs-perf --parallel "$(nproc)"
    perf="$build_dir/examples/perf/httpfs-perf"
fi
[ -x "$perf" ] || { echo "httpfs-bench: no $perf" >&2; exit 2; }

work="${WORK_DIR:-$(mktemp -d /tmp/httpfs-bench.XXXXXX)}"
mkdir -p "$work/www"
nginx_pid=""
cleanup() {
    [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null
    [ -z "${WORK_DIR:-}" ] && rm -rf "$work"
}
trap cleanup EXIT

file="$work/www/big.bin"
bytes=$(numfmt --from=iec "$size")
if [ ! -f "$file" ] || [ "$(stat -c %s "$file")" != "$bytes" ]; then
    echo "httpfs-bench: writing $size of random bytes to $file"
    head -c "$bytes" /dev/urandom >"$file"
fi
cat "$file" >/dev/null  # into the page cache: the disk is not what we measure

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])')
cat >"$work/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
error_log $work/error.log warn;
pid $work/nginx.pid;
events { worker_connections 64; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 100000000;
    client_body_temp_path $work/body;
    proxy_temp_path $work/proxy;
    fastcgi_temp_path $work/fastcgi;
    uwsgi_temp_path $work/uwsgi;
    scgi_temp_path $work/scgi;
    server {
        listen 127.0.0.1:$port;
        root $work/www;
    }
}
EOF
server_cpu=() client_cpu=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
    server_cpu=(taskset -c 0) client_cpu=(taskset -c 1)
fi
"${server_cpu[@]}" nginx -p "$work" -c "$work/nginx.conf" -e "$work/error.log" &
nginx_pid=$!
url="http://127.0.0.1:$port/big.bin"
for _ in $(seq 100); do
    curl -s -o /dev/null -I "$url" && break
    sleep 0.1
done

echo "httpfs-bench: $size over $url, $rounds rounds, httpfs reads of $bs"
printf '%-6s %12s %12s %7s\n' round "curl MB/s" "httpfs MB/s" ratio
results=()
for r in $(seq "$rounds"); do
    c=$("${client_cpu[@]}" curl -s -o /dev/null -w '%{speed_download}' "$url")
    c=$(python3 -c "print(f'{$c / 1e6:.1f}')")
    h=$("${client_cpu[@]}" "$perf" -url="$url" -bs="$bs" -event_engine="$engine" 2>/dev/null |
        awk '/^httpfs / {print $6}')
    [ -n "$h" ] || { echo "httpfs-bench: httpfs-perf failed" >&2; exit 1; }
    ratio=$(python3 -c "print(f'{$h / $c:.2f}')")
    printf '%-6s %12s %12s %7s\n' "$r" "$c" "$h" "$ratio"
    results+=("$c $h")
done

printf '%s\n' "${results[@]}" | python3 -c "
import statistics, sys
rows = [tuple(map(float, l.split())) for l in sys.stdin if l.strip()]
c = statistics.median(r[0] for r in rows)
h = statistics.median(r[1] for r in rows)
ratio = statistics.median(r[1] / r[0] for r in rows)
print(f'{\"median\":<6} {c:12.1f} {h:12.1f} {ratio:7.2f}')
ok = ratio >= $min_ratio
verdict = 'PASS' if ok else 'FAIL'
print(f'httpfs-bench: {verdict} (median ratio {ratio:.2f}, target >= $min_ratio)')
sys.exit(0 if ok else 1)
"
