#!/usr/bin/env python3
"""HTTP/2 static files: our http-server against nginx and h2o, loaded by h2load.

Usage: tools/h2-bench.py [--build build] [--rounds 3] [--requests 200000] [--conns 100]
                         [--streams 10] [--server-cpu 0] [--client-cpu 1]
                         [--only h2c,h2] [--servers photon,nginx,h2o]

Each server serves the same 4 KiB file (/files/4k.bin) over h2c (HTTP/2 by
prior knowledge on a plain listener) and h2 (TLS 1.3, ALPN). All servers
run at once, pinned to --server-cpu and idle but for the one under load:
ours is examples/basic/http-server PORT DIR (one vCPU; --cert/--key for h2),
nginx 1.22 with one worker process (`listen ... http2`, sendfile, no access
log, open_file_cache) and h2o with one thread (no access log). h2load
(-t1 -c --conns -m --streams) runs pinned to --client-cpu, a tenth of
--requests as warm-up, then --requests (a count, not h2load -D: its timed
runs hung now and then against TLS listeners here). Each round loads every case on every server back to
back. Reported per case and server: medians over the rounds of h2load's
requests/s, of the server's CPU time (utime + stime from /proc, all its
threads) per request, of requests/s per server core (10^6 / CPU-us per
request: what the server's one core would serve if it were the bottleneck;
h2load on one core is, for the faster servers) and of the per-round ratios
to nginx and to h2o of the last two.
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
    http2_max_requests 100000000;
    http2_max_concurrent_streams 128;
    open_file_cache max=1000 inactive=60s;
    default_type application/octet-stream;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    server {{
        listen 127.0.0.1:{port} http2;
        listen 127.0.0.1:{tls_port} ssl http2;
        ssl_certificate {cert};
        ssl_certificate_key {key};
        ssl_protocols TLSv1.3;
        root {www};
    }}
}}
"""

H2O_CONF = """{user}
num-threads: 1
pid-file: {tmp}/h2o.pid
error-log: {tmp}/h2o-error.log
http2-idle-timeout: 120
listen:
  host: 127.0.0.1
  port: {port}
listen:
  host: 127.0.0.1
  port: {tls_port}
  ssl:
    certificate-file: {cert}
    key-file: {key}
hosts:
  default:
    paths:
      /:
        file.dir: {www}
"""








def h2load(url, args, requests):
    # -N: a connection that stalls ends (counted as errors) instead of holding h2load.
    cmd = ["taskset", "-c", str(args.client_cpu), "h2load", "-t1", f"-c{args.conns}",
           f"-m{args.streams}", f"-n{requests}", "-N10", url]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600).stdout
    m = re.search(r"finished in [\d.]+m?s, ([\d.]+) req/s", out)
    done = re.search(r"requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded", out)
    proto = re.search(r"Application protocol: (\S+)", out)
    if not m or not done:
        raise RuntimeError(f"h2load failed on {url}:\n{out}")
    failed = re.search(r"(\d+) failed, (\d+) errored, (\d+) timeout", out)
    status = re.search(r"status codes: \d+ 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", out)
    errors = sum(int(x) for x in failed.groups()) + sum(int(x) for x in status.groups())
    return float(m.group(1)), int(done.group(1)), errors, proto.group(1) if proto else "?"


def tls_session(port):
    """The protocol, cipher and ALPN a default OpenSSL client offering h2 gets."""
    out = subprocess.run(["openssl", "s_client", "-alpn", "h2", "-connect", f"127.0.0.1:{port}"],
                         input="", capture_output=True, text=True, errors="replace",
                         timeout=10).stdout
    m = re.search(r"New, (\S+), Cipher is (\S+)", out)
    alpn = re.search(r"ALPN protocol: (\S+)", out)
    return (f"{m.group(1)} {m.group(2)}" if m else "no TLS session") + \
        f", ALPN {alpn.group(1) if alpn else 'none'}"




def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--requests", type=int, default=200000)
    ap.add_argument("--conns", type=int, default=100)
    ap.add_argument("--streams", type=int, default=10)
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--client-cpu", type=int, default=1)
    ap.add_argument("--only", default="h2c,h2")
    ap.add_argument("--servers", default="photon,nginx,h2o")
    args = ap.parse_args()

    ours = os.path.abspath(os.path.join(args.build, "examples/basic/http-server"))
    wanted = args.servers.split(",")
    for tool in ["h2load", "taskset", "openssl"] + [s for s in ("nginx", "h2o") if s in wanted]:
        if not shutil.which(tool) and not os.path.exists(f"/usr/sbin/{tool}"):
            sys.exit(f"h2-bench: {tool} not found (tools/install-deps.sh installs it)")
    if "photon" in wanted and not os.access(ours, os.X_OK):
        sys.exit(f"h2-bench: {ours} not built (ninja -C {args.build} http-server)")

    tmp = tempfile.mkdtemp(prefix="h2-bench-")
    www = os.path.join(tmp, "www")
    os.makedirs(os.path.join(www, "files"))
    with open(os.path.join(www, "files", "4k.bin"), "wb") as f:
        f.write(os.urandom(4096))
    cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                    "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1"],
                   check=True, capture_output=True)

    pin = ["taskset", "-c", str(args.server_cpu)]
    servers = []
    for name in wanted:
        port, tls_port = free_port(), free_port()
        fmt = dict(tmp=tmp, www=www, port=port, tls_port=tls_port, cert=cert, key=key,
                   # As root h2o would switch to nobody, who cannot read the temporary directory.
                   user="user: root" if os.geteuid() == 0 else "")
        if name == "nginx":
            conf = os.path.join(tmp, "nginx.conf")
            with open(conf, "w") as f:
                f.write(NGINX_CONF.format(**fmt))
            nginx = shutil.which("nginx") or "/usr/sbin/nginx"
            servers.append(Server(name, pin + [nginx, "-p", tmp, "-c", conf], port, tls_port))
        elif name == "h2o":
            conf = os.path.join(tmp, "h2o.conf")
            with open(conf, "w") as f:
                f.write(H2O_CONF.format(**fmt))
            servers.append(Server(name, pin + [shutil.which("h2o"), "-c", conf], port, tls_port))
        elif name == "photon":
            # Two processes (it serves one listener each): h2c, and h2 over TLS.
            servers.append(Server(name, pin + [ours, str(port), os.path.join(www, "files")],
                                  port, port))
            servers.append(Server(name + "-tls", pin + [ours, str(tls_port),
                                  os.path.join(www, "files"), "--cert", cert, "--key", key],
                                  tls_port, tls_port))
        else:
            sys.exit(f"h2-bench: unknown server {name}")

    def target(srv, case):
        if srv.name == "photon-tls" and case != "h2" or srv.name == "photon" and case == "h2":
            return None
        path = "/files/4k.bin"  # (ours serves DIR under /files/)
        if case == "h2":
            return f"https://127.0.0.1:{srv.tls_port}{path}"
        return f"http://127.0.0.1:{srv.port}{path}"

    cases = [c for c in args.only.split(",") if c]
    results = {}  # (case, server) -> [(rps, cpu_us, errors, {peer: (rps ratio, cpu ratio)})]
    started = []
    try:
        for srv in servers:
            started.append(srv.__enter__())
        if "h2" in cases:
            for srv in servers:
                if target(srv, "h2"):
                    print(f"{srv.name.replace('-tls', ''):8} negotiates "
                          f"{tls_session(srv.tls_port)}", flush=True)
        for rnd in range(args.rounds):
            for case in cases:
                row = {}
                for srv in servers:
                    url = target(srv, case)
                    if not url:
                        continue
                    name = srv.name.replace("-tls", "")
                    h2load(url, args, args.requests // 10)  # warm-up
                    c0 = cpu_seconds(srv.proc.pid)
                    rps, total, errors, proto = h2load(url, args, args.requests)
                    cpu_us = (cpu_seconds(srv.proc.pid) - c0) * 1e6 / max(total, 1)
                    row[name] = (rps, cpu_us, errors, proto)
                for name, (rps, cpu_us, errors, proto) in row.items():
                    ratios = {p: (row[p][1] / cpu_us, cpu_us / row[p][1])
                              for p in ("nginx", "h2o") if p in row and p != name}
                    results.setdefault((case, name), []).append((rps, cpu_us, errors, ratios))
                    vs = " ".join(f"x{r[0]:.2f} req/s/core x{r[1]:.2f} CPU vs {p};"
                                  for p, r in ratios.items())
                    print(f"round {rnd + 1} {case:3} {name:7} {rps:9.0f} req/s {cpu_us:6.2f} "
                          f"CPU-us/req errors={errors} ({proto}) {vs}", flush=True)
    finally:
        for srv in started:
            srv.__exit__(None, None, None)

    print(f"\nmedians of {args.rounds} rounds, h2load -t1 -c{args.conns} -m{args.streams} "
          f"-n{args.requests}, 4 KiB file, server on CPU {args.server_cpu}, h2load on CPU "
          f"{args.client_cpu}; ratios: medians of the per-round ratios")
    print("| case | server | req/s | server CPU-us/req | req/s per server core | x nginx "
          "| x h2o | errors |")
    print("|---|---|---|---|---|---|---|---|")
    for case in cases:
        for (c, name), rows in results.items():
            if c != case:
                continue
            med = lambda i: statistics.median(r[i] for r in rows)

            def ratio(peer, i):
                v = [r[3][peer][i] for r in rows if peer in r[3]]
                return f"{statistics.median(v):.2f}" if v else "-"
            print(f"| {case} | {name} | {med(0):.0f} | {med(1):.2f} | {1e6 / med(1):.0f} "
                  f"| {ratio('nginx', 0)} | {ratio('h2o', 0)} | {sum(r[2] for r in rows)} |")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
