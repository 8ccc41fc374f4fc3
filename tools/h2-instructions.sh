#!/bin/bash
# User-space instructions per HTTP/2 request of examples/basic/http-server,
# counted by callgrind: deterministic where requests/s on a shared machine
# are not. The server serves a 4 KiB file over h2c; h2load sends a warm-up,
# the counters are zeroed, then REQUESTS more (100 connections x 10 streams).
# Prints the total per request and the functions with the most self cost.
#
# Usage: tools/h2-instructions.sh [BUILD_DIR] [REQUESTS] [TOP]
set -euo pipefail
build=${1:-build}
requests=${2:-30000}
top=${3:-25}
for tool in valgrind callgrind_control h2load python3; do
    command -v $tool > /dev/null || { echo "h2-instructions: $tool is missing" >&2; exit 2; }
done
server=$build/examples/basic/http-server
[ -x "$server" ] || { echo "h2-instructions: no $server (build it first)" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'kill -9 $pid 2> /dev/null || true; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/www"
head -c 4096 /dev/urandom > "$tmp/www/4k.bin"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$server" "$port" "$tmp/www" \
    > "$tmp/server.log" 2>&1 &
pid=$!
url=http://127.0.0.1:$port/files/4k.bin
for i in $(seq 100); do
    curl -s --http2-prior-knowledge -o /dev/null "$url" && break
    sleep 0.1
done
h2load -t1 -c100 -m10 -n5000 "$url" > /dev/null
callgrind_control -z $pid > /dev/null
h2load -t1 -c100 -m10 -n"$requests" "$url" | grep -E "^requests:"
callgrind_control -d $pid > /dev/null
sleep 1
python3 - "$tmp/cg.out.1" "$requests" "$top" <<'PY'
import collections, re, sys
names, cost = {}, collections.Counter()
fn, after_call = None, False
def ref(tok):  # "(id) name" or "(id)"
    m = re.match(r'\((\d+)\)(?: (.*))?', tok)
    if m.group(2): names[m.group(1)] = m.group(2)
    return m.group(1)
for line in open(sys.argv[1]):
    if line.startswith('fn='): fn, after_call = ref(line[3:].strip()), False
    elif line.startswith('cfn='): ref(line[4:].strip())
    elif line.startswith('calls='): after_call = True
    elif line[:1].isdigit() or line[:1] in '+-*':
        if after_call: after_call = False  # a call's inclusive cost, not self
        elif fn and len(line.split()) >= 2: cost[fn] += int(line.split()[1])
n = float(sys.argv[2])
print(f"instructions per request: {sum(cost.values()) / n:,.0f}")
for f, c in cost.most_common(int(sys.argv[3])):
    print(f"{c / n:9.0f}  {names.get(f, f)[:120]}")
PY
