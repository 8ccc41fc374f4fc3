#!/usr/bin/env python3
"""A well-behaved RPC client's latency, unloaded and while hostile peers pin memory.

Usage: tools/rpc-budget-bench.py [--server build/test/hostile_rpc_server] [--budget 64M]
                                 [--attackers 100] [--duration 10] [--engine epoll]
                                 [--payload 1024] [--calls sum|hold]

Starts test/hostile/hostile_rpc_server (its memory budget --budget; "process" for the
process-wide default), then measures one client making back-to-back Sum calls of
--payload bytes on one connection, twice for --duration s each: alone, and while
--attackers connections (in a separate process) pipeline 1 MiB calls as fast as they
can without ever reading a reply, reconnecting when the server cuts them. Reports the
client's calls, p50, p99 and max latency in each phase, the p99 ratio (the target:
within 2x), the server's peak RSS, and its budget's waits and sheds. --calls hold makes
the attackers' calls hold their MiB for 2 s without work (memory only). Only the
processes this script started are stopped, by PID. A tool, not a test: nothing here
asserts a time.
"""
import argparse
import os
import selectors
import signal
import socket
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MAGIC = 0x87DE5D02E6AB95C7
HDR = struct.Struct("<QIIIIQQ")


def frame(data, tag):
    p = data + struct.pack("<QQ", 0, len(data))
    return HDR.pack(MAGIC, 0, len(p), 0x4057, 1, tag, 0) + p


def hold_frame(size, ms, tag):
    """A Hold call of `size` bytes: the buffer's bytes, then the message (ms, the buffer)."""
    data = b"\x01" * (size - 24)
    p = data + struct.pack("<QQQ", ms, 0, len(data))
    return HDR.pack(MAGIC, 0, len(p), 0x4057, 3, tag, 0) + p


def recv_exact(s, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("closed")
        buf += chunk
    return bytes(buf)


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))


def attack(port, n, duration, kind):
    """The hostile peers: n connections, 1 MiB calls, replies never read. kind 0: Sum
    (each call costs the server a pass over its MiB); 1: Hold (2 s, no CPU: memory only)."""
    big = frame(b"\x01" * ((1 << 20) - 16), 1) if kind == 0 else hold_frame(1 << 20, 2000, 1)

    def conn():
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect(("127.0.0.1", port))
        s.setblocking(False)
        return s

    sel = selectors.DefaultSelector()
    for _ in range(n):
        sel.register(conn(), selectors.EVENT_WRITE, [0])
    end = time.monotonic() + duration
    sent = cuts = 0
    while time.monotonic() < end:
        for key, _ in sel.select(timeout=0.05):
            s, off = key.fileobj, key.data
            try:
                k = s.send(memoryview(big)[off[0]:])
                off[0] = (off[0] + k) % len(big)
                sent += k
            except BlockingIOError:
                pass
            except OSError:
                cuts += 1
                sel.unregister(s)
                s.close()
                try:
                    sel.register(conn(), selectors.EVENT_WRITE, [0])
                except OSError:
                    pass
    print("attack: %d MiB sent, %d connections cut" % (sent >> 20, cuts), flush=True)


def measure(port, duration, payload, pid):
    """Back-to-back calls for duration s: (latencies in ms, peak server RSS KiB, errors)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    data = b"w" * payload
    lat, errors, peak = [], 0, 0
    end = time.monotonic() + duration
    tag = 0
    next_sample = 0
    while time.monotonic() < end:
        tag += 1
        t0 = time.perf_counter()
        s.sendall(frame(data, tag))
        _, _, size, _, _, rtag, reserved = HDR.unpack(recv_exact(s, HDR.size))
        body = recv_exact(s, size) if size else b""
        lat.append((time.perf_counter() - t0) * 1000)
        if reserved or rtag != tag or len(body) != 16:
            errors += 1
        if time.monotonic() >= next_sample:
            peak = max(peak, rss_kib(pid))
            next_sample = time.monotonic() + 0.1
    s.close()
    return lat, peak, errors


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p / 100))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", default=os.path.join(HERE, "..", "build", "test",
                                                     "hostile_rpc_server"))
    ap.add_argument("--budget", default="64M")
    ap.add_argument("--attackers", type=int, default=100)
    ap.add_argument("--duration", type=float, default=10)
    ap.add_argument("--engine", default="epoll")
    ap.add_argument("--payload", type=int, default=1024)
    ap.add_argument("--calls", choices=("sum", "hold"), default="sum",
                    help="the attackers' calls: sum (CPU per call) or hold (memory only)")
    ap.add_argument("--attack", nargs=4, type=float, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.attack:
        attack(int(a.attack[0]), int(a.attack[1]), a.attack[2], int(a.attack[3]))
        return 0

    args = [a.server, "0"] + ([] if a.budget == "process" else [a.budget])
    env = dict(os.environ, HOSTILE_ENGINE=a.engine)
    srv = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    line = srv.stdout.readline().decode()
    if not line.startswith("listening "):
        print("server did not start: %r" % line)
        srv.kill()
        return 1
    port = int(line.split()[1])
    try:
        base, base_peak, base_err = measure(port, a.duration, a.payload, srv.pid)
        atk = subprocess.Popen([sys.executable, __file__, "--attack", str(port),
                                str(a.attackers), str(a.duration + 2),
                                "1" if a.calls == "hold" else "0"])
        time.sleep(1)  # the attackers connect and fill the budget
        load, load_peak, load_err = measure(port, a.duration, a.payload, srv.pid)
        atk.wait()
    finally:
        srv.send_signal(signal.SIGTERM)
        out, _ = srv.communicate(timeout=30)
    print("server: %s, budget %s, engine %s, %d attackers of %s calls, %d-byte calls" %
          (a.server, a.budget, a.engine, a.attackers, a.calls, a.payload))
    for name, lat, peak, err in (("unloaded", base, base_peak, base_err),
                                 ("attacked", load, load_peak, load_err)):
        print("%-9s %6d calls  p50 %7.3f ms  p99 %7.3f ms  max %7.3f ms  errors %d  "
              "server RSS peak %d MiB" % (name, len(lat), pct(lat, 50), pct(lat, 99), max(lat),
                                          err, peak >> 10))
    print("p99 attacked / unloaded: %.2f (the target: at most 2)" %
          (pct(load, 99) / pct(base, 99)))
    for l in out.decode().splitlines():
        if l.startswith("budget"):
            print("server " + l)
    return 0


if __name__ == "__main__":
    sys.exit(main())
