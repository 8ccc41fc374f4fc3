#!/usr/bin/env python3
"""Redis GET/SET load: photon's pipelined client (examples/perf/redis-perf) against
redis-benchmark, against the same redis-server, in one run.

Usage: tools/redis-bench.py [--build build] [--rounds 3] [--duration 5] [--warmup 1]
                            [--server-cpu 0] [--client-cpu 1] [--conns 50] [--pipeline 16]
                            [--payload 64] [--keyspace 100000] [--engine epoll] [--ops set,get]
                            [--modes calls,batch]

One redis-server (Debian's, --save '' --appendonly no, a temp dir, a free port) pinned to
--server-cpu; each load generator in turn pinned to --client-cpu, with the same connection
count, pipeline depth (redis-benchmark -P; redis-perf: that many calls in flight per
connection), value size and keys (key:%012d below --keyspace, redis-benchmark -r).
redis-perf runs in two modes: calls (one command() per coroutine, --pipeline coroutines per
connection: the client's group commit batches them) and batch (one coroutine per connection
sending --pipeline commands per commands() call, as redis-benchmark -P sends them).
The keys are filled once (redis-perf -op=fill) so that every GET hits.
Both are measured by this script the same way: after --warmup s it samples the client's and
the server's utime + stime (/proc/PID/stat, all threads) and the server's
total_commands_processed (INFO stats), again --duration s later; requests/s and client (and
server) CPU-us per request come from the differences. redis-benchmark gets a request count it
never reaches and is stopped (SIGTERM, by PID) after the window; redis-perf ends on its own.
The target is on requests per client core (1e6 / client CPU-us per request):
ours / redis-benchmark >= 1.2. Reported: medians over the rounds, and the median of the
per-round ratios. Only processes this script started are stopped, by PID.
"""
import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_util import cpu_seconds, free_port, stop_process, wait_port  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)






def commands_processed(port):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"INFO stats\r\n")
        data = b""
        while b"\r\n" not in data or len(data) < data.index(b"\r\n") + 2 + int(data[1:data.index(b"\r\n")]) + 2:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    for line in data.decode().splitlines():
        if line.startswith("total_commands_processed:"):
            return int(line.split(":")[1])
    raise RuntimeError("no total_commands_processed in INFO")




def measure(cmd, server, port, args, ends_itself):
    """Runs one load generator; the window's figures."""
    pin = ["taskset", "-c", str(args.client_cpu)]
    with tempfile.TemporaryFile(mode="w+") as out:
        p = subprocess.Popen(pin + cmd, stdout=out, stderr=subprocess.STDOUT)
        try:
            time.sleep(args.warmup)
            t0, c0, s0, n0 = time.time(), cpu_seconds(p.pid), cpu_seconds(server.pid), \
                commands_processed(port)
            time.sleep(args.duration)
            t1, c1, s1, n1 = time.time(), cpu_seconds(p.pid), cpu_seconds(server.pid), \
                commands_processed(port)
        finally:
            if ends_itself:
                try:
                    p.wait(timeout=args.duration + 30)
                except subprocess.TimeoutExpired:
                    pass
            stop_process(p)
        out.seek(0)
        text = out.read()
    n = n1 - n0 - 1  # the second INFO
    if n <= 0 or (ends_itself and p.returncode != 0):
        print(f"redis-bench: load failed (exit {p.returncode}): {' '.join(cmd)}\n{text[-1500:]}",
              file=sys.stderr)
    return {"rps": n / (t1 - t0), "client_us": (c1 - c0) * 1e6 / n if n > 0 else float("nan"),
            "client_cpu": (c1 - c0) / (t1 - t0) * 100,
            "server_us": (s1 - s0) * 1e6 / n if n > 0 else float("nan"),
            "tail": text.strip().splitlines()[-1:] if text.strip() else []}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--client-cpu", type=int, default=1)
    ap.add_argument("--conns", type=int, default=50)
    ap.add_argument("--pipeline", type=int, default=16)
    ap.add_argument("--payload", type=int, default=64)
    ap.add_argument("--keyspace", type=int, default=100000)
    ap.add_argument("--engine", default="epoll")
    ap.add_argument("--ops", default="set,get")
    ap.add_argument("--modes", default="calls,batch")
    args = ap.parse_args()
    perf = os.path.join(os.path.abspath(args.build), "examples/perf/redis-perf")
    if not os.access(perf, os.X_OK):
        sys.exit(f"redis-bench: {perf} not built (ninja -C {args.build} redis-perf; needs gflags)")
    for tool in ("redis-server", "redis-benchmark", "taskset"):
        if not shutil.which(tool):
            sys.exit(f"redis-bench: {tool} not found (Debian: redis-server, redis-tools)")
    ops = [o for o in args.ops.split(",") if o in ("get", "set")]
    modes = [m for m in args.modes.split(",") if m in ("calls", "batch")]
    names = [f"photon {m}" for m in modes] + ["redis-benchmark"]

    port = free_port()
    tmp = tempfile.TemporaryDirectory(prefix="redis-bench-")
    server = subprocess.Popen(["taskset", "-c", str(args.server_cpu), "redis-server", "--port",
                               str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly",
                               "no", "--dir", tmp.name], stdout=subprocess.DEVNULL,
                              stderr=subprocess.STDOUT)
    results = {}
    try:
        if not wait_port(port, server):
            sys.exit("redis-bench: redis-server did not listen")
        common = [f"-ip=127.0.0.1", f"-port={port}", f"-conns={args.conns}",
                  f"-pipeline={args.pipeline}", f"-payload={args.payload}",
                  f"-keyspace={args.keyspace}", f"-event_engine={args.engine}"]
        subprocess.run([perf, "-op=fill"] + common, check=True, stdout=subprocess.DEVNULL)
        for rnd in range(args.rounds):
            for op in ops:
                ours = [perf, f"-op={op}", f"-warmup={args.warmup}",
                        f"-duration={args.duration}"] + common
                theirs = ["redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-c",
                          str(args.conns), "-P", str(args.pipeline), "-d", str(args.payload),
                          "-r", str(args.keyspace), "-n", "2000000000", "-t", op, "-q"]
                runs = [(f"photon {m}", ours + [f"-batch={args.pipeline if m == 'batch' else 0}"],
                         True) for m in modes] + [("redis-benchmark", theirs, False)]
                for name, cmd, ends in runs:
                    r = measure(cmd, server, port, args, ends)
                    results.setdefault((op, name), []).append(r)
                    print(f"round {rnd + 1} {op} {name}: rps={r['rps']:.0f} "
                          f"client_us_per_req={r['client_us']:.3f} client_cpu={r['client_cpu']:.0f}% "
                          f"server_us_per_req={r['server_us']:.3f}", flush=True)
    finally:
        stop_process(server)
        tmp.cleanup()

    def med(xs):
        xs = [x for x in xs if x == x]
        return statistics.median(xs) if xs else float("nan")

    print()
    print(f"{args.conns} connections, pipeline {args.pipeline}, {args.payload} B values, "
          f"redis-server on CPU {args.server_cpu}, client on CPU {args.client_cpu}")
    print("| op | client | requests/s | client CPU | client CPU us/req | requests per client core "
          "| server CPU us/req | photon/redis-benchmark per client core |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for op in ops:
        rb = results.get((op, "redis-benchmark"), [])
        for name in names:
            rows = results.get((op, name), [])
            ratios = [b["client_us"] / a["client_us"] for a, b in zip(rows, rb)]
            us = med([x["client_us"] for x in rows])
            print(f"| {op.upper()} | {name} | {med([x['rps'] for x in rows]):.0f} | "
                  f"{med([x['client_cpu'] for x in rows]):.0f}% | {us:.3f} | "
                  f"{1e6 / us if us else float('nan'):.0f} | "
                  f"{med([x['server_us'] for x in rows]):.3f} | "
                  f"{'%.2fx' % med(ratios) if name != 'redis-benchmark' else ''} |")


if __name__ == "__main__":
    main()
