#!/usr/bin/env python3
"""Hostile WebSocket peers against test/hostile/hostile_server.cpp's /ws.

    hostile_websocket.py SERVER_BINARY

Starts the server with a 2 s WebSocket idle_timeout, a 3 s message_timeout
and a 64 MiB memory budget, runs each case, checks after each that the server
still answers a normal request, then sends SIGTERM with a WebSocket open (it
must get Close 1001) and checks that the server exits 0 within 10 s with few
descriptors open. Prints PASS/FAIL/SKIP with each case's expected outcome;
exits 1 on any failure. HOSTILE_WS_RSS_SLACK_MIB (default 48) is the RSS the
pinning case allows above the budget (a sanitizer's shadow memory needs more).
"""
import base64
import os
import resource
import selectors
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback

IDLE_S = 2.0
MESSAGE_S = 3.0
BUDGET_MIB = 64
BOUND = 10.0
MAX_FDS_AT_EXIT = 16
HOST = "127.0.0.1"
PORT = 0
SERVER_PID = 0


class Skip(Exception):
    pass


# ---------------------------------------------------------------- helpers


def frame(opcode, payload=b"", fin=True, length=None):
    """A masked client frame; `length` claims another payload length."""
    n = len(payload) if length is None else length
    b0 = (0x80 if fin else 0) | opcode
    if n < 126:
        head = struct.pack("!BB", b0, 0x80 | n)
    elif n < 65536:
        head = struct.pack("!BBH", b0, 0x80 | 126, n)
    else:
        head = struct.pack("!BBQ", b0, 0x80 | 127, n)
    key = b"\x00\x00\x00\x00"  # a zero key: the payload goes as it is
    return head + key + payload


UPGRADE = (
    b"GET /ws HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)


def upgraded(sock_timeout=BOUND):
    """A connection upgraded on /ws: (socket, bytes after the 101)."""
    s = socket.create_connection((HOST, PORT), timeout=sock_timeout)
    s.sendall(UPGRADE)
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(4096)
        assert chunk, "closed before the 101"
        buf += chunk
    head, rest = buf.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 101"), "no 101: %r" % head[:80]
    return s, rest


def parse_frames(buf):
    """Whole server frames at the front of buf: ([(opcode, payload)], rest)."""
    out = []
    while len(buf) >= 2:
        n, h = buf[1] & 0x7F, 2
        if n == 126:
            if len(buf) < 4:
                break
            n, h = struct.unpack("!H", buf[2:4])[0], 4
        elif n == 127:
            if len(buf) < 10:
                break
            n, h = struct.unpack("!Q", buf[2:10])[0], 10
        if len(buf) < h + n:
            break
        out.append((buf[0] & 0x0F, buf[h : h + n]))
        buf = buf[h + n :]
    return out, buf


def close_code(payload):
    return struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005


def read_until_close(s, buf=b"", bound=BOUND):
    """Reads server frames until its Close and then EOF: (close code or None
    if the connection ended without one, seconds taken, pongs seen)."""
    t0 = time.monotonic()
    code, pongs = None, 0
    while True:
        frames, buf = parse_frames(buf)
        for op, payload in frames:
            if op == 0xA:
                pongs += 1
            elif op == 0x8 and code is None:
                code = close_code(payload)
                try:
                    s.sendall(frame(0x8, payload[:2]))  # the closing handshake
                except OSError:
                    pass
        left = bound - (time.monotonic() - t0)
        assert left > 0, "still open after %.0f s (close code %s)" % (bound, code)
        s.settimeout(left)
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            continue
        except ConnectionError:
            chunk = b""
        if not chunk:
            return code, time.monotonic() - t0, pongs
        buf += chunk


def normal_request():
    """A fresh connection gets 200 for GET /text."""
    s = socket.create_connection((HOST, PORT), timeout=BOUND)
    try:
        s.sendall(b"GET /text HTTP/1.1\r\nHost: h\r\n\r\n")
        buf = b""
        while b"hostile server says hello\n" not in buf:
            chunk = s.recv(4096)
            assert chunk, "normal request: closed (got %r)" % buf[:80]
            buf += chunk
        assert buf.startswith(b"HTTP/1.1 200"), "normal request: %r" % buf[:80]
    finally:
        s.close()


def ws_echo_roundtrip(s, buf, msg):
    """Sends a text message on an upgraded connection and reads its echo: rest of buf."""
    s.sendall(frame(0x1, msg))
    while True:
        frames, buf = parse_frames(buf)
        for op, payload in frames:
            assert op == 0x1 and payload == msg, "echo: op %d %r" % (op, payload[:40])
            return buf
        chunk = s.recv(65536)
        assert chunk, "closed before the echo"
        buf += chunk


def server_rss_kib():
    with open("/proc/%d/status" % SERVER_PID) as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))


# ---------------------------------------------------------------- cases

CASES = []


def case(fn):
    CASES.append(fn)
    return fn


@case
def idle_upgraded_connection():
    """an upgraded connection that sends nothing: Close 1001 after the 2 s idle_timeout, then closed"""
    s, buf = upgraded()
    buf = ws_echo_roundtrip(s, buf, b"hello")  # frames restart the idle clock
    code, took, _ = read_until_close(s, buf)
    s.close()
    assert code == 1001, "close code %s" % code
    assert IDLE_S * 0.75 <= took <= IDLE_S + 3, "closed after %.2f s" % took


@case
def thousand_stalled_peers():
    """1,000 peers upgraded, then silent: every one gets Close 1001 and is closed within the idle deadline (+3 s)"""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 1200:
        raise Skip("RLIMIT_NOFILE %d < 1200 (hard %d)" % (soft, hard))
    socks, upgraded_at = [], {}
    sel = selectors.DefaultSelector()
    try:
        for _ in range(1000):
            s = socket.create_connection((HOST, PORT), timeout=BOUND)
            s.sendall(UPGRADE)
            s.setblocking(False)
            socks.append(s)
            sel.register(s, selectors.EVENT_READ, [b"", None])  # bytes, close code
        normal_request()  # served meanwhile
        t0 = time.monotonic()
        open_, latest = len(socks), 0.0
        while open_:
            assert time.monotonic() - t0 < IDLE_S + 2 * BOUND, "%d of 1000 still open" % open_
            for key, _ in sel.select(1.0):
                s, st = key.fileobj, key.data
                try:
                    chunk = s.recv(65536)
                except BlockingIOError:
                    continue
                except ConnectionError:
                    chunk = b""
                now = time.monotonic()
                if chunk:
                    st[0] += chunk
                    if s not in upgraded_at and b"\r\n\r\n" in st[0]:
                        head, st[0] = st[0].split(b"\r\n\r\n", 1)
                        assert head.startswith(b"HTTP/1.1 101"), "no 101: %r" % head[:60]
                        upgraded_at[s] = now
                    if s in upgraded_at:
                        frames, st[0] = parse_frames(st[0])
                        for op, payload in frames:
                            assert op == 0x8, "a stalled peer got opcode %d" % op
                            st[1] = close_code(payload)
                    continue
                assert s in upgraded_at, "closed before its 101"
                assert st[1] == 1001, "closed with code %s" % st[1]
                took = now - upgraded_at[s]
                assert took <= IDLE_S + 3, "closed %.2f s after its upgrade" % took
                latest = max(latest, took)
                sel.unregister(s)
                open_ -= 1
        print("      1000 closed with 1001, the last %.2f s after its upgrade" % latest)
    finally:
        sel.close()
        for s in socks:
            s.close()


@case
def ping_flood_without_reading():
    """5,000 pings sent without reading a pong: the connection is cut (Close 1008 or a reset) within 10 s"""
    s, buf = upgraded()
    burst = frame(0x9, b"f" * 100) * 5000
    s.settimeout(BOUND)
    try:
        s.sendall(burst)
    except OSError:
        pass  # the server closed it under us: the point
    code, took, pongs = read_until_close(s, buf)
    s.close()
    assert code in (1008, None), "close code %s" % code
    assert pongs <= 16, "%d pongs: more than the 16-ping burst" % pongs


@case
def pinning_large_messages():
    """40 peers each send 16 MiB - 1 byte of a 16 MiB message against a 64 MiB budget: server RSS stays under budget + slack, all 40 closed (1008/1009) within message_timeout + 10 s, a well-behaved WebSocket and HTTP client served throughout"""
    slack = int(os.environ.get("HOSTILE_WS_RSS_SLACK_MIB", "48"))
    base = server_rss_kib()
    n, size = 40, 16 << 20
    peers = []
    for _ in range(n):
        s, _ = upgraded()
        s.setblocking(False)
        peers.append([s, frame(0x2, length=size), size - 1, False, b""])  # sock, pending, left, done, in
    good, good_buf = upgraded()
    stop = threading.Event()
    served = [0, 0.0]  # round trips, worst seconds
    errors = []

    def well_behaved():
        nonlocal good_buf
        try:
            while not stop.is_set():
                t = time.monotonic()
                good_buf = ws_echo_roundtrip(good, good_buf, b"still there %d" % served[0])
                normal_request()
                served[1] = max(served[1], time.monotonic() - t)
                served[0] += 1
                time.sleep(0.05)
        except Exception as e:  # reported below
            errors.append(e)

    th = threading.Thread(target=well_behaved)
    th.start()
    block = b"\x00" * (256 << 10)
    peak, t0, closed = base, time.monotonic(), 0
    codes = {}
    try:
        while closed < n:
            assert time.monotonic() - t0 < MESSAGE_S + BOUND, "%d of %d peers still open" % (n - closed, n)
            for p in peers:
                s = p[0]
                if p[3]:
                    continue
                try:
                    while True:  # read what the server says (a Close), if anything
                        chunk = s.recv(65536)
                        if not chunk:
                            raise ConnectionError
                        p[4] += chunk
                        frames, p[4] = parse_frames(p[4])
                        for op, payload in frames:
                            if op == 0x8:
                                codes[close_code(payload)] = codes.get(close_code(payload), 0) + 1
                except BlockingIOError:
                    pass
                except (ConnectionError, OSError):
                    p[3] = True
                    closed += 1
                    continue
                try:
                    while p[1] or p[2]:
                        if not p[1]:
                            k = min(p[2], len(block))
                            p[1], p[2] = block[:k], p[2] - k
                        sent = s.send(p[1])
                        p[1] = p[1][sent:]
                except BlockingIOError:
                    pass
                except OSError:
                    p[3] = True
                    closed += 1
            peak = max(peak, server_rss_kib())
            time.sleep(0.01)
    finally:
        stop.set()
        th.join(BOUND)
        for p in peers:
            p[0].close()
        good.close()
    grown = (peak - base) / 1024.0
    print("      RSS %d MiB at the start, peak +%.0f MiB (budget %d, slack %d); Close codes %s; "
          "well-behaved round trips %d, worst %.2f s"
          % (base // 1024, grown, BUDGET_MIB, slack, codes, served[0], served[1]))
    assert not errors, "the well-behaved client failed: %s" % errors[0]
    assert served[0] >= 3, "the well-behaved client made only %d round trips" % served[0]
    assert served[1] < 5.0, "a well-behaved round trip took %.2f s" % served[1]
    assert grown <= BUDGET_MIB + slack, "RSS grew %.0f MiB" % grown
    assert set(codes) <= {1008, 1009}, "close codes %s" % codes


# ---------------------------------------------------------------- runner


def main():
    global PORT, SERVER_PID
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # the server raises its own too
    cmd = [sys.argv[1], "-w", str(int(IDLE_S * 1000)), "-m", str(int(MESSAGE_S * 1000)),
           "-b", str(BUDGET_MIB), "0"]
    log = tempfile.TemporaryFile()
    srv = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log)
    line = srv.stdout.readline().decode()
    if not line.startswith("listening "):
        if srv.wait(BOUND) == 77:
            print("SKIP server: %s" % line.strip())
            return 77
        print("FAIL server did not start: %r" % line)
        return 1
    PORT, SERVER_PID = int(line.split()[1]), srv.pid
    print("[websocket] server on port %d" % PORT)

    failures = 0
    t_all = time.monotonic()
    for fn in CASES:
        t0 = time.monotonic()
        try:
            fn()
            normal_request()
            verdict, detail = "PASS", ""
        except Skip as e:
            verdict, detail = "SKIP", str(e)
        except Exception as e:
            verdict, detail = "FAIL", "%s: %s" % (type(e).__name__, e)
            if not isinstance(e, AssertionError):
                detail += "\n" + traceback.format_exc()
        if verdict == "FAIL":
            failures += 1
        print("%-5s [websocket] %-28s %-5.1fs  %s%s" % (verdict, fn.__name__, time.monotonic() - t0,
                                                       fn.__doc__, "\n      " + detail if detail else ""))
        sys.stdout.flush()

    # SIGTERM with a WebSocket open: it gets Close 1001 (HTTPServer::stop()).
    ok_stop = False
    try:
        s, buf = upgraded()
        buf = ws_echo_roundtrip(s, buf, b"before the stop")
        srv.send_signal(signal.SIGTERM)
        code, took, _ = read_until_close(s, buf)
        s.close()
        ok_stop = code == 1001
        print("%s  [websocket] SIGTERM with a WebSocket open: Close 1001 (code %s after %.2f s)"
              % ("PASS" if ok_stop else "FAIL", code, took))
    except Exception as e:
        print("FAIL  [websocket] SIGTERM with a WebSocket open: %s" % e)
        srv.send_signal(signal.SIGTERM)
    if not ok_stop:
        failures += 1
    try:
        rc = srv.wait(BOUND)
    except subprocess.TimeoutExpired:
        srv.kill()
        srv.wait()
        rc = None
    out = srv.stdout.read().decode()
    fds = [int(l.split()[1]) for l in out.splitlines() if l.startswith("fds ")]
    ok = rc == 0 and fds and 0 <= fds[0] <= MAX_FDS_AT_EXIT
    if not ok:
        failures += 1
    print("%s  [websocket] exits 0 within 10 s with <= %d fds open (rc %s, fds %s)"
          % ("PASS" if ok else "FAIL", MAX_FDS_AT_EXIT, rc, fds[0] if fds else "?"))
    if failures:
        log.seek(0)
        print("---- server stderr (tail) ----\n" + log.read()[-4000:].decode(errors="replace"))
    print("[websocket] %d failure(s), %.1f s" % (failures, time.monotonic() - t_all))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
