#!/usr/bin/env python3
"""rpc-perf against gRPC C++ and against a plain socket echo, in one run.

Usage: tools/rpc-bench.py [--build build] [--rounds 3] [--duration 5] [--warmup 1]
                          [--server-cpu 0] [--client-cpu 1] [--engine epoll]
                          [--only a-64,a-4k,b-64,b-4k] [--peers photon-rpc,grpc,plain-echo]
                          [--rpc-perf PATH] [--net-perf PATH] [--peer-dir DIR]
                          [--echo-client SRC_OR_BINARY]

Workloads, unary echo: a-N: 100 connections, one call in flight on each; b-N: one
connection, 64 calls in flight; N = 64 or 4k payload bytes.
Peers, each server with its own load client:
  photon-rpc  examples/perf/rpc-perf -mode server / -mode client (photon/rpc/rpc.h)
  grpc        tools/grpc-echo (Debian's gRPC C++, async API, one completion-queue
              thread), built here by tools/grpc-echo/build.sh into --peer-dir; skipped
              with a message when the packages are missing
  plain-echo  net-perf's echo server under the echo client that --echo-client names (a
              C source, built here into --peer-dir, or a binary; ping-pong, so only the
              a-N workloads): the floor for server CPU per message. Skipped with a
              message when --echo-client is not given

All servers start at once, pinned to --server-cpu, idle but for the one under load;
the load client runs pinned to --client-cpu. Each round loads every workload on every
peer back to back (--warmup s, then --duration s measured). The clients sample the
server's utime + stime (/proc/PID/stat, all threads) at the window's edges: server
CPU-us per call. Client CPU near 100% means the load generator, not the server, set
the pace: then compare calls per server core (1e6 / server CPU-us per call) rather
than calls/s. Reported: medians over the rounds, and the medians of the per-round
ratios to gRPC (calls/s and calls per server core) and to plain-echo (server CPU per
call). Only processes this script started are stopped, by PID.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_util import free_port, stop_process, wait_port  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOADS = {  # name -> (connections, calls in flight per connection, payload bytes)
    "a-64": (100, 1, 64),
    "a-4k": (100, 1, 4096),
    "b-64": (1, 64, 64),
    "b-4k": (1, 64, 4096),
}






def established(port):
    """Server-side TCP connections in state ESTABLISHED on port, IPv4 or IPv6 (gRPC's
    sockets are dual-stack)."""
    n = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            next(f)
            for line in f:
                fields = line.split()
                if fields[3] == "01" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                    n += 1
    return n


def thread_ticks(pid):
    """{thread name (tid): utime + stime ticks} of every thread of pid."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                head, rest = f.read().rsplit(")", 1)
            fields = rest.split()
            out[f"{head.split('(', 1)[1]} ({tid})"] = int(fields[11]) + int(fields[12])
        except OSError:
            pass  # the thread ended
    return out


def summary(text):
    """key=value pairs of the client's summary line (trailing % dropped)."""
    line = next((l for l in text.splitlines() if " summary: " in l or l.startswith("qps=")), "")
    return {k: v.rstrip("%") for k, v in re.findall(r"(\S+?)=(\S+)", line)}


class Server:
    def __init__(self, name, cmd, port):
        self.name, self.cmd, self.port = name, cmd, port

    def start(self):
        self.log = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(self.cmd, stdout=self.log, stderr=subprocess.STDOUT)
        if not wait_port(self.port, self.proc):
            self.stop()
            raise RuntimeError(f"{self.name} did not listen on {self.port}: {self.output()}")
        return self

    def output(self):
        self.log.seek(0)
        return self.log.read()[-2000:]

    def stop(self):
        stop_process(self.proc)


def build_peers(args):
    """Paths of the gRPC peer's programs and of the echo client; None when unavailable."""
    os.makedirs(args.peer_dir, exist_ok=True)
    grpc = None
    if "grpc" in args.peers:
        r = subprocess.run([os.path.join(HERE, "grpc-echo/build.sh"), args.peer_dir])
        if r.returncode == 0:
            grpc = tuple(os.path.join(args.peer_dir, f"grpc-echo-{p}") for p in ("server", "client"))
        else:
            print(f"rpc-bench: the gRPC peer is skipped (build.sh exit {r.returncode}, see above)",
                  file=sys.stderr)
    echo = None
    if "plain-echo" in args.peers:
        src = args.echo_client
        if not src:
            print("rpc-bench: plain-echo is skipped (no --echo-client given)", file=sys.stderr)
        elif src.endswith(".c") and os.path.exists(src):
            echo = os.path.join(args.peer_dir, "echo_client")
            if not os.path.exists(echo) or os.path.getmtime(src) > os.path.getmtime(echo):
                subprocess.run(["cc", "-O2", "-std=gnu11", "-o", echo, src], check=True)
        elif os.access(src, os.X_OK):
            echo = src
        else:
            print(f"rpc-bench: plain-echo is skipped ({src} not found)", file=sys.stderr)
    return grpc, echo


def client_cmd(peer, wl, port, server_pid, args, tools):
    conns, inflight, payload = WORKLOADS[wl]
    if peer == "plain-echo":
        if inflight != 1:
            return None  # the echo client plays ping-pong: one message in flight
        return [tools["echo"], "127.0.0.1", str(port), "pingpong", str(conns), str(payload),
                str(args.duration), str(args.warmup)]
    common = [f"-ip=127.0.0.1", f"-port={port}", f"-conns={conns}", f"-inflight={inflight}",
              f"-payload={payload}", f"-warmup={args.warmup}", f"-duration={args.duration}",
              f"-server_pid={server_pid}"]
    if peer == "photon-rpc":
        return [tools["rpc"], "-mode=client", f"-event_engine={args.engine}"] + common
    return [tools["grpc"][1]] + common


def run_client(cmd, srv, args):
    """Runs one measured load; returns the summary's fields plus the connection count."""
    env = dict(os.environ, SERVER_PID=str(srv.proc.pid))  # the echo client's way
    pin = ["taskset", "-c", str(args.client_cpu)]
    with tempfile.TemporaryFile(mode="w+") as out:
        p = subprocess.Popen(pin + cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
        time.sleep(args.warmup + min(1.0, args.duration / 2))
        conns = established(srv.port)
        try:
            p.wait(timeout=args.warmup + args.duration + 60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        out.seek(0)
        text = out.read()
    s = summary(text)
    if "qps" not in s or p.returncode not in (0, None):
        print(f"rpc-bench: client failed (exit {p.returncode}): {' '.join(cmd)}\n{text[-1500:]}",
              file=sys.stderr)
    s["conns_seen"] = conns
    return s


def fnum(d, k):
    try:
        return float(d.get(k, "nan"))
    except ValueError:
        return float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--client-cpu", type=int, default=1)
    ap.add_argument("--engine", default="epoll", help="photon event engine: epoll | io_uring")
    ap.add_argument("--only", default=",".join(WORKLOADS))
    ap.add_argument("--peers", default="photon-rpc,grpc,plain-echo")
    ap.add_argument("--rpc-perf", help="default: BUILD/examples/perf/rpc-perf")
    ap.add_argument("--net-perf", help="default: BUILD/examples/perf/net-perf")
    ap.add_argument("--peer-dir", help="where the gRPC peer is built; default BUILD/grpc-echo")
    ap.add_argument("--echo-client",
                    help="plain-echo's load client: its C source (built into --peer-dir) or "
                         "binary; no default, plain-echo is skipped without it")
    args = ap.parse_args()
    args.rpc_perf = os.path.abspath(args.rpc_perf or f"{args.build}/examples/perf/rpc-perf")
    args.net_perf = os.path.abspath(args.net_perf or f"{args.build}/examples/perf/net-perf")
    args.peer_dir = os.path.abspath(args.peer_dir or f"{args.build}/grpc-echo")
    args.peers = [p for p in args.peers.split(",") if p]
    workloads = [w for w in args.only.split(",") if w]
    for w in workloads:
        if w not in WORKLOADS:
            sys.exit(f"rpc-bench: unknown workload {w} (known: {', '.join(WORKLOADS)})")
    if not shutil.which("taskset"):
        sys.exit("rpc-bench: taskset not found (util-linux)")
    for prog in [args.rpc_perf] + ([args.net_perf] if "plain-echo" in args.peers and
                                   args.echo_client else []):
        if not os.access(prog, os.X_OK):
            sys.exit(f"rpc-bench: {prog} not built")

    grpc, echo = build_peers(args)
    tools = {"rpc": args.rpc_perf, "grpc": grpc, "echo": echo}
    pin = ["taskset", "-c", str(args.server_cpu)]
    servers = {}
    if "photon-rpc" in args.peers:
        port = free_port()
        servers["photon-rpc"] = Server("photon-rpc", pin + [
            args.rpc_perf, "-mode=server", "-ip=127.0.0.1", f"-port={port}",
            f"-event_engine={args.engine}"], port)
    if grpc:
        port = free_port()
        servers["grpc"] = Server("grpc", pin + [grpc[0], "-ip=127.0.0.1", f"-port={port}"], port)
    if echo:
        port = free_port()
        servers["plain-echo"] = Server("plain-echo", pin + [
            args.net_perf, "-ip=127.0.0.1", f"-port={port}", f"-event_engine={args.engine}",
            "-buf_size=65536"], port)

    results = {}  # (workload, peer) -> [summary dicts, one per round]
    grpc_threads = None
    started = []
    try:
        for srv in servers.values():
            started.append(srv.start())
        for rnd in range(args.rounds):
            for wl in workloads:
                for peer, srv in servers.items():
                    cmd = client_cmd(peer, wl, srv.port, srv.proc.pid, args, tools)
                    if not cmd:
                        continue
                    s = run_client(cmd, srv, args)
                    results.setdefault((wl, peer), []).append(s)
                    print(f"round {rnd + 1} {wl:5} {peer:10} {fnum(s, 'qps'):9.0f} calls/s "
                          f"{server_cpu_per_call(peer, s):6.2f} server CPU-us/call, "
                          f"server {fnum(s, 'server_cpu'):3.0f}% "
                          f"client {fnum(s, 'client_cpu'):3.0f}% conns={s['conns_seen']} "
                          f"errors={s.get('errors', '0')}", flush=True)
                    if srv.proc.poll() is not None:
                        raise RuntimeError(f"{peer} server died: {srv.output()}")
        if "grpc" in servers:
            grpc_threads = thread_ticks(servers["grpc"].proc.pid)
    finally:
        for srv in started:
            srv.stop()

    report(results, workloads, servers, grpc_threads, args)


def server_cpu_per_call(peer, s):
    return fnum(s, "server_cpu_us_per_msg" if peer == "plain-echo" else "server_cpu_us_per_call")


def median(xs):
    xs = [x for x in xs if x == x]  # drop NaN (a failed run)
    return statistics.median(xs) if xs else float("nan")


def report(results, workloads, servers, grpc_threads, args):
    print(f"\nmedians of {args.rounds} rounds, {args.warmup} s warm-up + {args.duration} s "
          f"measured, server on CPU {args.server_cpu}, load on CPU {args.client_cpu}, photon "
          f"engine {args.engine}; per core = 1e6 / server CPU-us per call; ratios (photon-rpc "
          f"rows): medians of the per-round ratios")
    print("| workload | peer | calls/s (min-max) | per core | server CPU-us/call | server CPU | "
          "client CPU | p50 / p99 us | x gRPC calls/s | x gRPC per core | "
          "x plain-echo CPU/call | conns |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    verdicts = []
    for wl in workloads:
        grpc_rows = results.get((wl, "grpc"), [])
        echo_rows = results.get((wl, "plain-echo"), [])
        for peer in servers:
            rows = results.get((wl, peer))
            if not rows:
                continue
            qps = [fnum(s, "qps") for s in rows]
            cpus = [server_cpu_per_call(peer, s) for s in rows]
            x = ["-", "-", "-"]
            if peer == "photon-rpc":
                ratios = [
                    median([q / fnum(g, "qps") for q, g in zip(qps, grpc_rows)]),
                    median([server_cpu_per_call("grpc", g) / c for c, g in zip(cpus, grpc_rows)]),
                    median([c / server_cpu_per_call("plain-echo", e)
                            for c, e in zip(cpus, echo_rows)]),
                ]
                x = ["-" if r != r else f"{r:.2f}" for r in ratios]
                if grpc_rows:
                    verdicts.append(f"{wl}: x{ratios[1]:.2f} gRPC per core "
                                    f"({'met' if ratios[1] >= 3 else 'NOT met'}, >= 3)")
                if echo_rows and wl == "a-64":
                    verdicts.append(f"{wl}: x{ratios[2]:.2f} plain-echo CPU per call "
                                    f"({'met' if ratios[2] <= 1.3 else 'NOT met'}, <= 1.3)")
            lat = "-" if peer == "plain-echo" else (
                f"{median([fnum(s, 'lat_p50_us') for s in rows]):.0f} / "
                f"{median([fnum(s, 'lat_p99_us') for s in rows]):.0f}")
            conns = "/".join(sorted({str(s["conns_seen"]) for s in rows}))
            print(f"| {wl} | {peer} | {median(qps):,.0f} ({min(qps):,.0f}-{max(qps):,.0f}) | "
                  f"{1e6 / median(cpus):,.0f} | {median(cpus):.2f} | "
                  f"{median([fnum(s, 'server_cpu') for s in rows]):.0f}% | "
                  f"{median([fnum(s, 'client_cpu') for s in rows]):.0f}% | {lat} | "
                  f"{x[0]} | {x[1]} | {x[2]} | {conns} |")
    if grpc_threads:
        busy = sum(grpc_threads.values()) or 1
        top = sorted(grpc_threads.items(), key=lambda kv: -kv[1])
        print("\ngRPC server CPU by thread over the run: " +
              ", ".join(f"{name} {100 * t / busy:.1f}%" for name, t in top[:4]))
    if verdicts:
        print("\ntargets: " + "; ".join(verdicts))


if __name__ == "__main__":
    main()
