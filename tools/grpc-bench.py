#!/usr/bin/env python3
"""gRPC unary echo: photon's gRPC server (examples/perf/grpc-perf) against gRPC C++'s
(tools/grpc-echo's grpc-echo-server), under the same load client: h2load (nghttp2-client,
C, one thread) posting gRPC-framed EchoMessages, or grpc-echo-client (gRPC C++'s async API).

Usage: tools/grpc-bench.py [--build build] [--rounds 3] [--duration 5] [--warmup 1]
                           [--server-cpu 0] [--client-cpu 1] [--engine epoll]
                           [--only a-64,a-4k,b-64,b-4k] [--peer-dir DIR]
                           [--client h2load|grpc] [--requests N]

Workloads, unary echo of an EchoMessage: a-N: 100 connections, one call in flight on
each; b-N: one connection, 64 calls in flight; N = 64 or 4k payload bytes.

Both servers start at once, pinned to --server-cpu (one core: grpc-perf runs one vCPU,
grpc-echo-server one completion-queue thread), idle but for the one under load; the
load client runs pinned to --client-cpu. Each round loads every workload on both
servers back to back.
- h2load (the default): a warm-up of --requests/10 calls, then --requests calls; the
  server's utime + stime (/proc/PID/stat, all threads) is sampled around the measured
  run. A call counts only when its response is 200 with exactly one echoed
  EchoMessage of the request's size (h2load's data bytes per call); h2load does not
  read trailers, so grpc-status is checked by one grpc-echo-client call per server
  and workload before the load (--client grpc's own check).
- grpc: --warmup s, then --duration s measured; the client samples the server's CPU at
  the window's edges. gRPC C++'s client saturates its core before either server does.
Compare calls per server core (1e6 / server CPU-us per call) more than calls/s. Reported:
medians over the rounds, and the median of the per-round ratios photon / gRPC C++.
Only processes this script started are stopped, by PID. Reuses tools/rpc-bench.py's
helpers (ports, the server wrapper, the client's summary line).
"""
import argparse
import importlib.util
import os
import re
import resource
import statistics
import struct
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
_spec = importlib.util.spec_from_file_location("rpc_bench", os.path.join(HERE, "rpc-bench.py"))
sys.path.insert(0, HERE)
from bench_util import cpu_seconds  # noqa: E402
rb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rb)
SERVICE_PATH = "/rpcbench.EchoService/Echo"


def grpc_request(payload):
    """One uncompressed gRPC message holding EchoMessage{payload: payload bytes}."""
    size, varint = payload, b""
    while True:
        varint += bytes([(size & 0x7F) | (0x80 if size > 0x7F else 0)])
        size >>= 7
        if not size:
            break
    msg = b"\x0a" + varint + b"x" * payload
    return b"\x00" + struct.pack(">I", len(msg)) + msg


def h2load_calls(srv, conns, inflight, body_path, body_len, requests, args):
    """Runs h2load for `requests` calls; returns the result fields grpc-echo-client's
    summary line gives (qps, server_cpu_us_per_call, client_cpu, errors)."""
    cmd = ["taskset", "-c", str(args.client_cpu), "h2load", "-t1", f"-c{conns}",
           f"-m{inflight}", f"-n{requests}", "-N10", "-d", body_path,
           "-H", "content-type: application/grpc", "-H", "te: trailers",
           "-H", "grpc-timeout: 10S", f"http://127.0.0.1:{srv.port}{SERVICE_PATH}"]
    cpu0 = cpu_seconds(srv.proc.pid)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = cpu_seconds(srv.proc.pid) - cpu0
    rate = re.search(r"finished in ([\d.]+)(m?s), ([\d.]+) req/s", out)
    done = re.search(r"requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded", out)
    data = re.search(r"traffic: .* total, .* headers .*, .*\((\d+)\) data", out)
    if not rate or not done or not data:
        raise RuntimeError(f"h2load failed on {srv.name}:\n{out[-1500:]}")
    ok = int(done.group(1))
    wall = float(rate.group(1)) / (1000 if rate.group(2) == "ms" else 1)
    client = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    # Every succeeded call must have carried one echo as long as the request.
    errors = requests - ok + (0 if int(data.group(1)) == ok * body_len else requests)
    return {"qps": float(rate.group(3)), "server_cpu_us_per_call": 1e6 * cpu / max(ok, 1),
            "client_cpu": f"{100 * client / wall:.0f}", "errors": errors, "conns_seen": conns}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--client-cpu", type=int, default=1)
    ap.add_argument("--engine", default="epoll")
    ap.add_argument("--only", default="a-64,a-4k,b-64,b-4k")
    ap.add_argument("--peer-dir", help="where the gRPC C++ peer is built; default BUILD/grpc-echo")
    ap.add_argument("--client", default="h2load", choices=["h2load", "grpc"])
    ap.add_argument("--requests", type=int, default=300000, help="calls per h2load run")
    args = ap.parse_args()
    args.build = os.path.abspath(args.build)
    peer_dir = os.path.abspath(args.peer_dir or f"{args.build}/grpc-echo")
    workloads = [w for w in args.only.split(",") if w]
    for w in workloads:
        if w not in rb.WORKLOADS:
            sys.exit(f"grpc-bench: unknown workload {w}")
    perf = os.path.join(args.build, "examples/perf/grpc-perf")
    if not os.access(perf, os.X_OK):
        sys.exit(f"grpc-bench: {perf} not built (ninja -C {args.build} grpc-perf; needs gflags)")
    os.makedirs(peer_dir, exist_ok=True)
    r = subprocess.run([os.path.join(HERE, "grpc-echo/build.sh"), peer_dir])
    if r.returncode != 0:
        sys.exit(f"grpc-bench: the gRPC C++ peer did not build (exit {r.returncode}); nothing to compare")
    grpc_server = os.path.join(peer_dir, "grpc-echo-server")
    client = os.path.join(peer_dir, "grpc-echo-client")

    if args.client == "h2load" and not shutil.which("h2load"):
        sys.exit("grpc-bench: h2load not found (Debian nghttp2-client)")
    bodies = tempfile.TemporaryDirectory()
    pin = ["taskset", "-c", str(args.server_cpu)]
    p1, p2 = rb.free_port(), rb.free_port()
    servers = {
        "photon": rb.Server("photon", pin + [perf, "-ip=127.0.0.1", f"-port={p1}",
                                             f"-event_engine={args.engine}"], p1),
        "grpc": rb.Server("grpc", pin + [grpc_server, "-ip=127.0.0.1", f"-port={p2}"], p2),
    }
    results = {}
    try:
        for s in servers.values():
            s.start()
        for rnd in range(args.rounds):
            for wl in workloads:
                conns, inflight, payload = rb.WORKLOADS[wl]
                body = grpc_request(payload)
                body_path = os.path.join(bodies.name, f"{wl}.bin")
                with open(body_path, "wb") as f:
                    f.write(body)
                for name, srv in servers.items():
                    cmd = [client, "-ip=127.0.0.1", f"-port={srv.port}", f"-conns={conns}",
                           f"-inflight={inflight}", f"-payload={payload}",
                           f"-warmup={args.warmup}", f"-duration={args.duration}",
                           f"-server_pid={srv.proc.pid}"]
                    if args.client == "grpc":
                        res = rb.run_client(cmd, srv, args)
                    else:
                        if rnd == 0:  # grpc-status: one short load by the gRPC C++ client
                            check = rb.run_client(cmd[:6] + ["-warmup=0", "-duration=1",
                                                             f"-server_pid={srv.proc.pid}"],
                                                  srv, args)
                            if rb.fnum(check, "errors") != 0 or "qps" not in check:
                                raise RuntimeError(f"{name} failed gRPC calls: {check}")
                        h2load_calls(srv, conns, inflight, body_path, len(body),
                                     args.requests // 10, args)
                        res = h2load_calls(srv, conns, inflight, body_path, len(body),
                                           args.requests, args)
                    results.setdefault((wl, name), []).append(res)
                    print(f"round {rnd + 1} {wl} {name}: qps={res.get('qps')} "
                          f"server_cpu_us_per_call={res.get('server_cpu_us_per_call')} "
                          f"client_cpu={res.get('client_cpu')}% errors={res.get('errors')} "
                          f"conns={res.get('conns_seen')}", flush=True)
    finally:
        for s in servers.values():
            s.stop()
        bodies.cleanup()

    def med(xs):
        xs = [x for x in xs if x == x]
        return statistics.median(xs) if xs else float("nan")

    print()
    print("| workload | server | calls/s | server CPU us/call | calls per server core | "
          "client CPU | photon/gRPC calls per core |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for wl in workloads:
        ph, gr = results.get((wl, "photon"), []), results.get((wl, "grpc"), [])
        ratios = [rb.fnum(g, "server_cpu_us_per_call") / rb.fnum(p, "server_cpu_us_per_call")
                  for p, g in zip(ph, gr)]
        for name, rows in (("photon", ph), ("grpc C++", gr)):
            cpu = med([rb.fnum(x, "server_cpu_us_per_call") for x in rows])
            print(f"| {wl} | {name} | {med([rb.fnum(x, 'qps') for x in rows]):.0f} | {cpu:.2f} | "
                  f"{1e6 / cpu if cpu else float('nan'):.0f} | "
                  f"{med([rb.fnum(x, 'client_cpu') for x in rows]):.0f}% | "
                  f"{'%.2fx' % med(ratios) if name == 'photon' else ''} |")


if __name__ == "__main__":
    main()
