#!/usr/bin/env python3
"""http-perf against nginx, serving static files to wrk on loopback.

Usage: tools/http-bench.py [--build build] [--rounds 5] [--duration 8] [--conns 100]
                           [--server-cpu 0] [--client-cpu 1] [--only 4k,100k,https-4k]
                           [--photon epoll,io_uring]

All servers (nginx with one worker process; http-perf on each engine, plain
and HTTPS) run at once, pinned to --server-cpu, idle but for the one under
load; wrk (-t1) runs pinned to --client-cpu. Each round loads every case on
every server back to back (1 s warm-up, then --duration seconds), so a
case's servers are compared within the same minute. Reported per case and
server: medians over the rounds of wrk's requests/s and of the server's CPU
time (utime + stime from /proc) per request, and the median over the rounds
of the ratio to nginx in the same round. nginx is tuned as a careful
operator would: sendfile, tcp_nopush, no access log, unbounded keep-alive,
open_file_cache.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_util import Server, cpu_seconds, free_port  # noqa: E402

NGINX_CONF = """
daemon off;
master_process off;
worker_processes 1;
error_log {tmp}/nginx-error.log warn;
pid {tmp}/nginx.pid;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_requests 100000000;
    keepalive_timeout 120s;
    open_file_cache max=1000 inactive=60s;
    default_type application/octet-stream;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    server {{
        listen 127.0.0.1:{port};
        {tls_listen}
        root {www};
    }}
}}
"""








def wrk(url, args):
    cmd = ["taskset", "-c", str(args.client_cpu), "wrk", "-t1", f"-c{args.conns}",
           f"-d{args.duration}s", url]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=args.duration + 60).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    total = int(re.search(r"(\d+) requests in", out).group(1))
    errors = sum(int(x) for x in re.findall(r"(?:connect|read|write|timeout) (\d+)", out))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors += int(non2xx.group(1)) if non2xx else 0
    return rps, total, errors


def tls_session(port):
    """The protocol and cipher a default OpenSSL client gets, e.g. TLSv1.3 TLS_AES_256_GCM_SHA384."""
    out = subprocess.run(["openssl", "s_client", "-connect", f"127.0.0.1:{port}"],
                         input="", capture_output=True, text=True, timeout=10).stdout
    m = re.search(r"New, (\S+), Cipher is (\S+)", out)
    return f"{m.group(1)} {m.group(2)}" if m else "unknown (no TLS session)"




def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--duration", type=int, default=8)
    ap.add_argument("--conns", type=int, default=100)
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--client-cpu", type=int, default=1)
    ap.add_argument("--only", default="4k,100k,https-4k")
    ap.add_argument("--photon", default="epoll,io_uring")
    args = ap.parse_args()

    perf = os.path.abspath(os.path.join(args.build, "examples/perf/http-perf"))
    for tool in ("nginx", "wrk", "taskset", "openssl"):
        if not shutil.which(tool) and not os.path.exists(f"/usr/sbin/{tool}"):
            sys.exit(f"http-bench: {tool} not found (tools/install-deps.sh installs it)")
    if not os.access(perf, os.X_OK):
        sys.exit(f"http-bench: {perf} not built")
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"

    tmp = tempfile.mkdtemp(prefix="http-bench-")
    www = os.path.join(tmp, "www")
    os.makedirs(www)
    for name, size in (("4k.bin", 4096), ("100k.bin", 100 * 1024)):
        with open(os.path.join(www, name), "wb") as f:
            f.write(os.urandom(size))
    cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                    "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1"],
                   check=True, capture_output=True)

    cases = [c for c in args.only.split(",") if c]
    pin = ["taskset", "-c", str(args.server_cpu)]
    port, tls_port = free_port(), free_port()
    conf = os.path.join(tmp, "nginx.conf")
    with open(conf, "w") as f:
        f.write(NGINX_CONF.format(
            tmp=tmp, www=www, port=port,
            # nginx 1.22 offers TLS 1.2 at most unless told: both sides run 1.3.
            tls_listen=(f"listen 127.0.0.1:{tls_port} ssl; ssl_certificate {cert}; "
                        f"ssl_certificate_key {key}; ssl_protocols TLSv1.2 TLSv1.3;")))
    servers = [Server("nginx", pin + [nginx, "-p", tmp, "-c", conf], port, tls_port)]
    for engine in args.photon.split(","):
        port, tls_port = free_port(), free_port()
        base = pin + [perf, f"-serve_dir={www}", "-ip=127.0.0.1", f"-event_engine={engine}"]
        servers.append(Server(f"photon-{engine}", base + [f"-port={port}"], port))
        tls = Server(f"photon-{engine}-tls",
                     base + [f"-port={tls_port}", f"-cert={cert}", f"-key={key}"], None, tls_port)
        servers.append(tls)

    def target(srv, case):
        https = case.startswith("https-")
        p = srv.tls_port if https else srv.port
        if not p:
            return None
        return f"{'https' if https else 'http'}://127.0.0.1:{p}/{case.replace('https-', '')}.bin"

    results = {}  # (case, server name) -> [(rps, cpu_us, errors, ratio)]
    started = []
    try:
        for srv in servers:
            started.append(srv.__enter__())
        if any(c.startswith("https-") for c in cases):
            for srv in servers:
                if srv.tls_port:
                    print(f"{srv.name:16} negotiates {tls_session(srv.tls_port)}", flush=True)
        for rnd in range(args.rounds):
            for case in cases:
                base_rps = None
                for srv in servers:
                    url = target(srv, case)
                    if not url:
                        continue
                    name = srv.name.replace("-tls", "")
                    wrk(url, argparse.Namespace(**{**vars(args), "duration": 1}))  # warm-up
                    c0 = cpu_seconds(srv.proc.pid)
                    rps, total, errors = wrk(url, args)
                    cpu_us = (cpu_seconds(srv.proc.pid) - c0) * 1e6 / max(total, 1)
                    if name == "nginx":
                        base_rps, base_cpu = rps, cpu_us
                    ratio = (rps / base_rps, cpu_us / base_cpu) if base_rps else (1.0, 1.0)
                    results.setdefault((case, name), []).append((rps, cpu_us, errors, ratio))
                    print(f"round {rnd + 1} {case:9} {name:16} {rps:10.0f} req/s "
                          f"{cpu_us:6.2f} CPU-us/req errors={errors} "
                          f"(x{ratio[0]:.2f} req/s, x{ratio[1]:.2f} CPU vs nginx)", flush=True)
    finally:
        for srv in started:
            srv.__exit__(None, None, None)

    print(f"\nmedians of {args.rounds} rounds, wrk -t1 -c{args.conns} -d{args.duration}s, "
          f"server on CPU {args.server_cpu}, wrk on CPU {args.client_cpu}; ratios: median of "
          f"the per-round ratios to nginx")
    print("| case | server | req/s | x nginx | server CPU-us/req | x nginx | errors |")
    print("|---|---|---|---|---|---|---|")
    for case in cases:
        for (c, name), rows in results.items():
            if c != case:
                continue
            med = lambda i: statistics.median(r[i] for r in rows)
            rr = statistics.median(r[3][0] for r in rows)
            cr = statistics.median(r[3][1] for r in rows)
            print(f"| {case} | {name} | {med(0):.0f} | {rr:.2f} | {med(1):.2f} | {cr:.2f} | "
                  f"{sum(r[2] for r in rows)} |")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
