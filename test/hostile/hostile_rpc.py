#!/usr/bin/env python3
"""A scripted hostile RPC peer against test/hostile/hostile_rpc_server.cpp.

    hostile_rpc.py SERVER_BINARY      (HOSTILE_ENGINE=epoll|iouring: the server's engine)

Starts the server (port 0), runs every case, checks after each that a normal
call on a fresh connection still succeeds, then sends SIGTERM and checks that
the server exits 0 within 10 s with few descriptors open. Prints PASS/FAIL
with each case's expected outcome (its docstring); exits 1 on any failure, 77
if the server cannot use the engine asked for.

The server's deadlines: 1 s per frame (from its first byte), 2 s idle between
frames, 1 MiB largest message (hostile_rpc_server.cpp); its memory budget is
64 MiB (BUDGET_MIB, given on its command line). Bounds here are generous upper
bounds ("within 10 s"), never tight windows.

The wire format (doc/rpc.md): a 40-byte little-endian header (magic, version
0, payload size, interface, method, tag, reserved), then the payload. The
server's operation Sum (0x4057, 1) takes a buffer: the payload is the
buffer's bytes, then the request struct's 16 bytes (pointer, length). Its
reply payload is 16 bytes: the length and the sum of the bytes. Sleep (0x4057,
2) takes a u64 of milliseconds (its payload is that struct's 8 bytes) and
replies with 1 byte (an empty struct) after that long. An error reply has size
0 and reserved = 0x50455252_00000000 | errno.
"""
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

BOUND = 10.0  # s
MAX_FDS_AT_EXIT = 16
HOST = "127.0.0.1"
PORT = 0
SRV = None

MAGIC = 0x87DE5D02E6AB95C7
HDR = struct.Struct("<QIIIIQQ")  # magic, version, size, interface, method, tag, reserved
IID, FID = 0x4057, 1
ERR_MARK = 0x5045525200000000
ENOSYS, EINVAL, ENOMEM = 38, 22, 12
BUDGET_MIB = 64
# What the server holds beyond its budget: per connection a 64 KiB read-ahead
# buffer and its coroutine's stack pages, and the allocator's slack.
RSS_SLACK_MIB = 48


def header(size, tag, iid=IID, fid=FID, magic=MAGIC, version=0):
    return HDR.pack(magic, version, size, iid, fid, tag, 0)


def sum_payload(data):
    return data + struct.pack("<QQ", 0, len(data))


def sum_frame(data, tag):
    p = sum_payload(data)
    return header(len(p), tag) + p


def connect():
    s = socket.create_connection((HOST, PORT), timeout=BOUND)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        assert chunk, "connection closed after %d of %d bytes of a reply" % (len(buf), n)
        buf += chunk
    return buf


def read_reply(s):
    """(tag, error or 0, payload) of the next reply."""
    magic, version, size, iid, fid, tag, reserved = HDR.unpack(recv_exact(s, HDR.size))
    assert magic == MAGIC and version == 0, "bad reply header"
    err = reserved & 0xFFFFFFFF if reserved & 0xFFFFFFFF00000000 == ERR_MARK else 0
    return tag, err, recv_exact(s, size) if size else b""


def sleep_frame(ms, tag):
    return header(8, tag, fid=2) + struct.pack("<Q", ms)


def server_vmsize():
    with open("/proc/%d/status" % SRV.pid) as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmSize:"))


def check_sum(s, data, tag):
    s.sendall(sum_frame(data, tag))
    rtag, err, payload = read_reply(s)
    assert rtag == tag and err == 0, "reply tag %d error %d" % (rtag, err)
    length, total = struct.unpack("<QQ", payload)
    assert length == len(data) and total == sum(data), "wrong sum reply %r" % payload


def normal_call():
    """A fresh connection's Sum call is answered correctly."""
    s = connect()
    try:
        check_sum(s, b"hello, rpc", 7)
    finally:
        s.close()


def wait_closed(s, bound=BOUND):
    """Reads until the server ends the connection; returns (seconds, bytes read)."""
    t0 = time.monotonic()
    data = b""
    while True:
        left = bound - (time.monotonic() - t0)
        assert left > 0, "still open after %.0f s" % bound
        s.settimeout(left)
        try:
            chunk = s.recv(65536)
        except ConnectionError:
            chunk = b""
        except socket.timeout:
            continue
        if not chunk:
            return time.monotonic() - t0, data
        data += chunk


def server_usage():
    fds = len(os.listdir("/proc/%d/fd" % SRV.pid))
    with open("/proc/%d/status" % SRV.pid) as f:
        rss = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
    return fds, rss


# ---------------------------------------------------------------- cases

CASES = []


def case(fn):
    CASES.append(fn)
    return fn


@case
def silent_connection():
    """connect and send nothing: closed silently after the idle timeout, within 10 s"""
    s = connect()
    _, data = wait_closed(s)
    assert data == b"", "unexpected bytes %r" % data[:40]


@case
def half_header_stall():
    """20 of a header's 40 bytes, then silence: closed silently (frame timeout), within 10 s"""
    s = connect()
    s.sendall(header(16, 1)[:20])
    _, data = wait_closed(s)
    assert data == b""


@case
def huge_declared_body():
    """a header declaring 4 GiB - 1 (past the 1 MiB limit): closed at once without a reply,
    and the server's RSS does not grow by the declared size"""
    _, rss0 = server_usage()
    s = connect()
    s.sendall(header(0xFFFFFFFF, 1))
    el, data = wait_closed(s)
    _, rss1 = server_usage()
    assert data == b"", "unexpected reply %r" % data[:40]
    assert el < 5, "took %.1f s: it should not wait for the body" % el
    assert rss1 - rss0 < 64 * 1024, "RSS grew %d KiB" % (rss1 - rss0)


@case
def declared_body_never_sent():
    """a header declaring 1 MiB (the limit), then no body: closed silently (frame timeout),
    within 10 s"""
    s = connect()
    s.sendall(header(1 << 20, 1))
    _, data = wait_closed(s)
    assert data == b""


@case
def body_dripped():
    """a 1,000-byte body dripped a byte every 100 ms: cut by the frame timeout (closed,
    no reply) well before it is complete"""
    s = connect()
    p = sum_payload(b"\x01" * 984)
    s.sendall(header(len(p), 1))
    t0 = time.monotonic()
    sent = 0
    s.settimeout(0.1)
    while sent < len(p):
        assert time.monotonic() - t0 < BOUND, "still open after %.0f s" % BOUND
        try:
            data = s.recv(65536)
            assert data == b"", "unexpected reply %r" % data[:40]
            break  # closed
        except socket.timeout:
            pass
        except ConnectionError:
            break
        try:
            s.sendall(p[sent:sent + 1])
        except ConnectionError:
            break
        sent += 1
    assert sent < len(p) // 2, "the server accepted %d dripped bytes" % sent


@case
def bad_magic():
    """a header with a wrong magic: closed without a reply, within 10 s"""
    s = connect()
    s.sendall(header(16, 1, magic=0x1122334455667788) + b"\0" * 16)
    _, data = wait_closed(s)
    assert data == b""


@case
def bad_version():
    """the right magic with version 7: closed without a reply, within 10 s"""
    s = connect()
    s.sendall(header(16, 1, version=7) + b"\0" * 16)
    _, data = wait_closed(s)
    assert data == b""


@case
def unknown_function():
    """a call of method 99: an error reply (size 0, ENOSYS) with the call's tag; the connection
    goes on and its next call is answered"""
    s = connect()
    try:
        s.sendall(header(5, 42, fid=99) + b"abcde")
        tag, err, payload = read_reply(s)
        assert tag == 42 and err == ENOSYS and payload == b"", (tag, err, payload)
        check_sum(s, b"after", 43)
    finally:
        s.close()


@case
def truncated_message():
    """a payload shorter than the request struct, and one whose buffer length runs past the
    payload: error replies (EINVAL); the connection goes on"""
    s = connect()
    try:
        s.sendall(header(8, 5) + b"\0" * 8)
        tag, err, _ = read_reply(s)
        assert tag == 5 and err == EINVAL, (tag, err)
        p = b"ab" + struct.pack("<QQ", 0, 1000)  # claims 1000 bytes, carries 2
        s.sendall(header(len(p), 6) + p)
        tag, err, _ = read_reply(s)
        assert tag == 6 and err == EINVAL, (tag, err)
        check_sum(s, b"still here", 7)
    finally:
        s.close()


@case
def reset_mid_frame():
    """a header and half its body, then a reset: the server goes on"""
    s = connect()
    p = sum_payload(b"x" * 1000)
    s.sendall(header(len(p), 1) + p[:500])
    time.sleep(0.05)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()


@case
def pipelined_calls():
    """50 calls in one write: 50 correct replies, matched by tag"""
    s = connect()
    try:
        datas = {100 + i: bytes([i]) * (i + 1) for i in range(50)}
        s.sendall(b"".join(sum_frame(d, t) for t, d in datas.items()))
        for _ in range(len(datas)):
            tag, err, payload = read_reply(s)
            length, total = struct.unpack("<QQ", payload)
            d = datas.pop(tag)
            assert err == 0 and length == len(d) and total == sum(d)
        assert not datas
    finally:
        s.close()


@case
def calls_without_reading_replies():
    """calls sent without pause while no reply is read: the server stops reading at its
    in-flight cap, cuts the connection when a reply cannot be written within the frame timeout
    (within 10 s), and its RSS grows by less than 64 MiB"""
    _, rss0 = server_usage()
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect((HOST, PORT))
    batch = b"".join(sum_frame(b"z" * 1000, i) for i in range(64))
    t0 = time.monotonic()
    cut = False
    s.settimeout(0.5)
    peak = rss0
    while time.monotonic() - t0 < BOUND:
        try:
            s.sendall(batch)
        except socket.timeout:
            pass  # the server is not reading: its cap, or our unread replies
        except (ConnectionError, BrokenPipeError):
            cut = True
            break
        peak = max(peak, server_usage()[1])
    s.close()
    assert cut, "still open after %.0f s" % BOUND
    # 64 MiB; more under sanitizers (ASan's quarantine holds freed requests),
    # still far below the 3.4 GB this case grew to before the cap.
    limit = int(os.environ.get("HOSTILE_RPC_RSS_LIMIT_KIB", 64 * 1024))
    assert peak - rss0 < limit, "RSS grew %d KiB (limit %d)" % (peak - rss0, limit)


@case
def idle_then_split_header():
    """a connection idle 1.3 s (more than the frame timeout, less than the idle timeout) whose
    next header arrives in two parts 0.2 s apart: answered (the frame's deadline counts from
    its first byte, not from when the wait began)"""
    s = connect()
    try:
        check_sum(s, b"first", 1)
        time.sleep(1.3)
        frame = sum_frame(b"second", 2)
        s.sendall(frame[:20])
        time.sleep(0.2)
        s.sendall(frame[20:])
        tag, err, payload = read_reply(s)
        assert tag == 2 and err == 0, (tag, err)
    finally:
        s.close()


@case
def thousand_idle_connections():
    """1,000 connections that send nothing: normal calls work meanwhile, and all 1,000 are
    closed by the idle timeout within 10 s"""
    conns = [connect() for _ in range(1000)]
    try:
        normal_call()
        t0 = time.monotonic()
        for c in conns:
            _, data = wait_closed(c, max(0.5, BOUND - (time.monotonic() - t0)))
            assert data == b""
    finally:
        for c in conns:
            c.close()


@case
def pipelining_pinning_attack():
    """100 connections pipelining 1 MiB calls as fast as they can for 6 s, never reading a reply
    (reconnecting when cut): the server's RSS grows by less than its 64 MiB budget plus 48 MiB of
    slack, and a well-behaved client meanwhile gets every reply, each correct"""
    _, rss0 = server_usage()
    frame = sum_frame(b"\x01" * ((1 << 20) - 16), 1)
    stop = threading.Event()
    good = {"ok": 0, "error": None}

    def well_behaved():
        try:
            s = connect()
            i = 0
            while not stop.is_set():
                check_sum(s, b"well-behaved" * 80, 1000 + i)
                good["ok"] += 1
                i += 1
                time.sleep(0.01)
            s.close()
        except Exception as e:  # reported below
            good["error"] = repr(e)

    def attacker():
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect((HOST, PORT))
        s.setblocking(False)
        return s

    sel = selectors.DefaultSelector()
    for _ in range(100):
        sel.register(attacker(), selectors.EVENT_WRITE, [0])
    t = threading.Thread(target=well_behaved)
    t.start()
    peak, cuts, sent = rss0, 0, 0
    end = time.monotonic() + 6
    next_sample = 0
    try:
        while time.monotonic() < end:
            for key, _ in sel.select(timeout=0.05):
                s, off = key.fileobj, key.data
                try:
                    n = s.send(memoryview(frame)[off[0]:])
                    off[0] = (off[0] + n) % len(frame)
                    sent += n
                except BlockingIOError:
                    pass
                except OSError:  # cut: the server gave up on our replies
                    cuts += 1
                    sel.unregister(s)
                    s.close()
                    sel.register(attacker(), selectors.EVENT_WRITE, [0])
            if time.monotonic() >= next_sample:
                peak = max(peak, server_usage()[1])
                next_sample = time.monotonic() + 0.05
    finally:
        stop.set()
        t.join()
        for key in list(sel.get_map().values()):
            key.fileobj.close()
        sel.close()
    print("     pinning: %d MiB sent, %d cuts, RSS %d -> peak %d KiB, well-behaved %d calls" %
          (sent >> 20, cuts, rss0, peak, good["ok"]))
    assert good["error"] is None, "the well-behaved client failed: %s" % good["error"]
    # Few under sanitizers (slow calls behind slow attackers); what matters is
    # that every one it made was answered, correctly.
    assert good["ok"] >= 2, "the well-behaved client made only %d calls" % good["ok"]
    limit = int(os.environ.get("HOSTILE_RPC_RSS_LIMIT_KIB", (BUDGET_MIB + RSS_SLACK_MIB) * 1024))
    assert peak - rss0 < limit, "RSS grew %d KiB (limit %d)" % (peak - rss0, limit)


@case
def slow_calls_flood():
    """50 connections each pipelining 100 calls that sleep 1 s (5,000 at once): every call is
    answered (ENOMEM allowed) within 30 s, new connections are accepted and answered meanwhile (a
    Sum or ENOMEM), and the server's virtual size grows by less than 16 GiB"""
    conns = [connect() for _ in range(50)]
    vm0 = vm_peak = server_vmsize()
    try:
        for c in conns:
            c.sendall(b"".join(sleep_frame(1000, t) for t in range(1, 101)))
        fresh = {"ok": 0, "enomem": 0}
        for i in range(10):
            s = connect()
            s.sendall(sum_frame(b"fresh", 77))
            tag, err, _ = read_reply(s)
            assert tag == 77 and err in (0, ENOMEM), (tag, err)
            fresh["ok" if err == 0 else "enomem"] += 1
            s.close()
            vm_peak = max(vm_peak, server_vmsize())
            time.sleep(0.1)
        replies = {"ok": 0, "enomem": 0}
        t0 = time.monotonic()
        for c in conns:
            c.settimeout(max(0.5, 30 - (time.monotonic() - t0)))
            tags = set()
            for _ in range(100):
                tag, err, _ = read_reply(c)
                assert err in (0, ENOMEM), "error %d" % err
                replies["ok" if err == 0 else "enomem"] += 1
                tags.add(tag)
                if len(tags) % 25 == 0:
                    vm_peak = max(vm_peak, server_vmsize())
            assert tags == set(range(1, 101)), "missing replies"
    finally:
        for c in conns:
            c.close()
    print("     slow calls: %d answered, %d ENOMEM; fresh connections %d ok %d ENOMEM; "
          "VmSize %d -> peak %d MiB" % (replies["ok"], replies["enomem"], fresh["ok"],
                                        fresh["enomem"], vm0 >> 10, vm_peak >> 10))
    assert vm_peak - vm0 < 16 << 20, "VmSize grew %d MiB" % ((vm_peak - vm0) >> 10)


# ---------------------------------------------------------------- runner


def main():
    global PORT, SRV
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 4096 if hard == resource.RLIM_INFINITY else min(hard, 4096)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))  # the server inherits it
    log = tempfile.TemporaryFile()
    SRV = subprocess.Popen([sys.argv[1], "0", "%dM" % BUDGET_MIB], stdout=subprocess.PIPE,
                           stderr=log)
    line = SRV.stdout.readline().decode()
    if line.startswith("io_uring not available"):
        print("SKIP: %s" % line.strip())
        SRV.wait()
        return 77
    if not line.startswith("listening "):
        print("FAIL server did not start: %r" % line)
        SRV.kill()
        return 1
    PORT = int(line.split()[1])
    print("rpc server on port %d" % PORT)

    failures = 0
    t_all = time.monotonic()
    for fn in CASES:
        t0 = time.monotonic()
        try:
            fn()
            normal_call()
            print("PASS %-26s %5.1f s  %s" % (fn.__name__, time.monotonic() - t0,
                                              " ".join(fn.__doc__.split())))
        except Exception:
            failures += 1
            print("FAIL %-26s expected: %s" % (fn.__name__, " ".join(fn.__doc__.split())))
            traceback.print_exc(file=sys.stdout)
        sys.stdout.flush()
        if SRV.poll() is not None:
            print("FAIL the server died (exit %s)" % SRV.returncode)
            failures += 1
            break

    if SRV.poll() is None:
        SRV.send_signal(signal.SIGTERM)
        try:
            out, _ = SRV.communicate(timeout=BOUND)
            fds = [int(l.split()[1]) for l in out.decode().splitlines() if l.startswith("fds ")]
            if SRV.returncode != 0 or not fds or fds[0] > MAX_FDS_AT_EXIT:
                failures += 1
                print("FAIL stop: exit %s, fds %s (at most %d)" % (SRV.returncode, fds,
                                                                    MAX_FDS_AT_EXIT))
            else:
                print("PASS stop on SIGTERM: exit 0, fds %d" % fds[0])
        except subprocess.TimeoutExpired:
            SRV.kill()
            failures += 1
            print("FAIL stop: still running %.0f s after SIGTERM" % BOUND)
    if failures:
        log.seek(0)
        print("server log (last 40 lines):")
        print("\n".join(log.read().decode(errors="replace").splitlines()[-40:]))
    print("hostile rpc: %d cases, %d failed, %.1f s" % (len(CASES), failures,
                                                       time.monotonic() - t_all))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
