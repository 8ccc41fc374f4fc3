#!/usr/bin/env python3
"""A scripted misbehaving origin for test/hostile/hostile_fetch.cpp.

    hostile_origin.py [--tls CERT KEY] -- DRIVER [ARGS...]

Listens on 127.0.0.1 (port 0), plain HTTP or, with --tls, HTTPS; runs
DRIVER ARGS... --port PORT (with --tls also --ca CERT --stall-port P
--garbage-port P, two raw TCP ports for handshake cases) and exits with the
driver's status (1 if it does not end within 120 s).

Each request path picks a behaviour (HANDLERS below). /ok is a well-behaved
keep-alive answer; /interim, /redirect-loop and /stray-* keep their
connection serving too, every other path ends it (closed, reset or held).
/hits/NAME answers how many requests /NAME got (and zeroes the count). Only
Python's standard library is used.
"""
import os
import socket
import socketserver
import ssl
import struct
import subprocess
import sys
import threading
import time

HOLD = 30.0  # s: the longest a stalling connection is held open
TLS_CTX = None
HITS = {}
HITS_LOCK = threading.Lock()


class Closed(Exception):
    pass


# ---------------------------------------------------------------- helpers


def hold(s, seconds=HOLD):
    """Send nothing until the peer goes away (or `seconds` pass)."""
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            s.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                if not s.recv(65536):
                    return
            except socket.timeout:
                return
    except (OSError, ValueError):
        return


def reset(s):
    """Close with RST (SO_LINGER 0) instead of FIN; a TLS socket without close_notify."""
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    s.close()


def close_notify(s):
    """Clean end of a read-to-close body: TLS close_notify, then FIN."""
    if isinstance(s, ssl.SSLSocket):
        try:
            s.settimeout(2.0)
            s = s.unwrap()  # waits for the client's close_notify or EOF
        except (OSError, ValueError):
            pass
    try:
        s.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    hold(s, 5.0)
    s.close()


def send_all(s, data):
    try:
        s.sendall(data)
        return True
    except (OSError, ValueError):
        return False


def head(status, *fields, length=None):
    lines = ["HTTP/1.1 %s" % status] + list(fields)
    if length is not None:
        lines.append("Content-Length: %d" % length)
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def read_request(s, buf):
    """(method, path, headers dict, body bytes after the head, rest) or raises Closed."""
    while b"\r\n\r\n" not in buf:
        try:
            chunk = s.recv(65536)
        except (OSError, ValueError):
            chunk = b""
        if not chunk:
            raise Closed()
        buf += chunk
    h, rest = buf.split(b"\r\n\r\n", 1)
    lines = h.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    fields = {}
    for line in lines[1:]:
        k, v = line.split(":", 1)
        fields[k.strip().lower()] = v.strip()
    return method, path, fields, rest


def read_body(s, fields, rest):
    """Reads a Content-Length body; returns the bytes after it."""
    n = int(fields.get("content-length", "0"))
    while len(rest) < n:
        chunk = s.recv(65536)
        if not chunk:
            raise Closed()
        rest += chunk
    return rest[n:]


# ---------------------------------------------------------------- behaviours
# Each takes (socket, method, fields, rest) and returns the bytes left over
# for a next request on the connection to continue keep-alive, or None when
# the connection is finished (closed, reset or held).

HANDLERS = {}


def path(p):
    def reg(fn):
        HANDLERS[p] = fn
        return fn

    return reg


@path("/ok")
def ok(s, method, fields, rest):
    rest = read_body(s, fields, rest)
    return rest if send_all(s, head("200 OK", length=3) + b"ok\n") else None


@path("/silent")
def silent(s, method, fields, rest):
    hold(s)


@path("/half-status")
def half_status(s, method, fields, rest):
    send_all(s, b"HTTP/1.1 20")
    hold(s)


@path("/body-stall")
def body_stall(s, method, fields, rest):
    send_all(s, head("200 OK", length=100) + b"0123456789")
    hold(s)


@path("/drip")
def drip(s, method, fields, rest):
    if not send_all(s, head("200 OK", length=50)):
        return
    for i in range(50):
        time.sleep(0.2)
        if not send_all(s, b"abcdefghijklmnopqrstuvwxy"[i % 25 : i % 25 + 1]):
            return
    hold(s, 5.0)


@path("/short-body")
def short_body(s, method, fields, rest):
    send_all(s, head("200 OK", length=1000 * 1000 * 1000) + b"0123456789")
    time.sleep(0.1)
    s.close()  # FIN (TLS: without close_notify): 999,999,990 bytes never come


@path("/cl-overflow")
def cl_overflow(s, method, fields, rest):
    send_all(s, b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\nabc")
    hold(s)


@path("/cl-over-int64")
def cl_over_int64(s, method, fields, rest):
    send_all(s, b"HTTP/1.1 200 OK\r\nContent-Length: 9999999999999999999\r\n\r\nabc")
    hold(s)


@path("/two-lengths")
def two_lengths(s, method, fields, rest):
    """Two Content-Length fields that disagree (a response-splitting shape)."""
    send_all(s, b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!")
    hold(s, 5.0)


@path("/cl-and-te")
def cl_and_te(s, method, fields, rest):
    """Content-Length and Transfer-Encoding: chunked together."""
    send_all(
        s,
        b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"3\r\nabc\r\n0\r\n\r\n",
    )
    hold(s, 5.0)


@path("/no-content-body")
def no_content_body(s, method, fields, rest):
    """A 204 followed by body bytes it may not have; keeps serving."""
    rest = read_body(s, fields, rest)
    ok = send_all(s, head("204 No Content") + b"this is no body\n")
    return rest if ok else None


@path("/chunk-overflow")
def chunk_overflow(s, method, fields, rest):
    send_all(s, head("200 OK", "Transfer-Encoding: chunked") + b"ffffffffffffffffff\r\nabc\r\n")
    hold(s)


@path("/long-header")
def long_header(s, method, fields, rest):
    """A 1 MB field line (sent until the client stops reading)."""
    send_all(s, b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * (1 << 20) + b"\r\n\r\n")
    hold(s, 5.0)


@path("/many-headers")
def many_headers(s, method, fields, rest):
    """100,000 short fields."""
    send_all(s, b"HTTP/1.1 200 OK\r\n" + b"X-H: v\r\n" * 100000 + b"\r\n")
    hold(s, 5.0)


@path("/bad-status")
def bad_status(s, method, fields, rest):
    send_all(s, b"HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n")
    hold(s, 5.0)


@path("/not-http")
def not_http(s, method, fields, rest):
    send_all(s, b"SSH-2.0-OpenSSH_9.2\r\n\r\n")
    hold(s, 5.0)


UNTIL_CLOSE = bytes(range(256)) * 1200  # 307,200 bytes


@path("/until-close")
def until_close(s, method, fields, rest):
    """No Content-Length, no Transfer-Encoding: the body ends with the connection."""
    if send_all(s, b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n\r\n"):
        for i in range(0, len(UNTIL_CLOSE), 10000):  # in pieces, not one write
            if not send_all(s, UNTIL_CLOSE[i : i + 10000]):
                return
    close_notify(s)


@path("/reset-head")
def reset_head(s, method, fields, rest):
    send_all(s, b"HTTP/1.1 200 OK\r\nX-A: b\r\n")
    time.sleep(0.2)
    reset(s)


@path("/reset-body")
def reset_body(s, method, fields, rest):
    send_all(s, head("200 OK", length=100000) + b"r" * 5000)
    time.sleep(0.3)
    reset(s)


@path("/early-413")
def early_413(s, method, fields, rest):
    """Takes 64 KB of a large upload, answers 413 and closes (a reset: the rest is unread)."""
    got = len(rest)
    while got < 65536:
        try:
            chunk = s.recv(65536)
        except (OSError, ValueError):
            return
        if not chunk:
            return
        got += len(chunk)
    body = b"too large\n"
    send_all(s, head("413 Content Too Large", "Connection: close", length=len(body)) + body)
    time.sleep(0.05)
    s.close()


@path("/interim")
def interim(s, method, fields, rest):
    rest = read_body(s, fields, rest)
    ok = send_all(
        s,
        b"HTTP/1.1 100 Continue\r\n\r\n"
        b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
        + head("200 OK", length=6)
        + b"final\n",
    )
    return rest if ok else None


@path("/interim-flood")
def interim_flood(s, method, fields, rest):
    """1xx heads without end."""
    for _ in range(1000):
        if not send_all(s, b"HTTP/1.1 102 Processing\r\n\r\n"):
            return
    hold(s, 5.0)


@path("/redirect-loop")
def redirect_loop(s, method, fields, rest):
    rest = read_body(s, fields, rest)
    return rest if send_all(s, head("302 Found", "Location: /redirect-loop", length=0)) else None


@path("/ka-close")
def ka_close(s, method, fields, rest):
    """200 with keep-alive, then FIN: the client's next request on it must go elsewhere."""
    send_all(s, head("200 OK", length=3) + b"ok\n")
    time.sleep(0.05)
    try:
        s.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    hold(s, 5.0)


STRAY = head("200 OK", length=6) + b"stale\n"


@path("/stray-with")
def stray_with(s, method, fields, rest):
    """A response with a second, unasked-for one in the same write; keeps serving."""
    rest = read_body(s, fields, rest)
    return rest if send_all(s, head("200 OK", length=3) + b"ok\n" + STRAY) else None


@path("/stray-after")
def stray_after(s, method, fields, rest):
    """A response, then 50 ms later an unasked-for one; keeps serving."""
    rest = read_body(s, fields, rest)
    if not send_all(s, head("200 OK", length=3) + b"ok\n"):
        return None
    time.sleep(0.05)
    return rest if send_all(s, STRAY) else None


# ---------------------------------------------------------------- servers


class Origin(socketserver.BaseRequestHandler):
    def handle(self):
        s = self.request
        if TLS_CTX:
            s.settimeout(10.0)
            try:
                s = TLS_CTX.wrap_socket(s, server_side=True)
            except (OSError, ValueError):
                return
        s.settimeout(HOLD)
        rest = b""
        try:
            while rest is not None:
                method, p, fields, rest = read_request(s, rest)
                name = p.split("?", 1)[0]
                with HITS_LOCK:
                    HITS[name] = HITS.get(name, 0) + 1
                if name.startswith("/hits/"):
                    with HITS_LOCK:
                        n = HITS.pop("/" + name[len("/hits/") :], 0)
                    body = b"%d\n" % n
                    rest = rest if send_all(s, head("200 OK", length=len(body)) + body) else None
                    continue
                fn = HANDLERS.get(name)
                if fn is None:
                    body = b"no such case\n"
                    send_all(s, head("404 Not Found", length=len(body)) + body)
                    continue
                rest = fn(s, method, fields, rest)
        except (Closed, OSError, ValueError):
            pass
        finally:
            try:
                s.close()
            except OSError:
                pass


class TlsStall(socketserver.BaseRequestHandler):
    """Accepts a TLS client and never answers its ClientHello."""

    def handle(self):
        hold(self.request)


class TlsGarbage(socketserver.BaseRequestHandler):
    """Answers the ClientHello with bytes that are no ServerHello, then closes."""

    def handle(self):
        s = self.request
        s.settimeout(10.0)
        try:
            s.recv(65536)
            s.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n" + os.urandom(2000))
            time.sleep(0.1)
        except OSError:
            pass
        s.close()


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128


def start(handler):
    srv = Server(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, srv.server_address[1]


def main():
    global TLS_CTX
    args = sys.argv[1:]
    if "--" not in args:
        print(__doc__)
        return 2
    i = args.index("--")
    opts, driver = args[:i], args[i + 1 :]
    tls_opts = len(opts) == 3 and opts[0] == "--tls"
    if not driver or (opts and not tls_opts):
        print(__doc__)
        return 2
    _, port = start(Origin)
    extra = ["--port", str(port)]
    if opts:
        TLS_CTX = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        TLS_CTX.load_cert_chain(opts[1], opts[2])
        _, stall_port = start(TlsStall)
        _, garbage_port = start(TlsGarbage)
        extra += ["--ca", opts[1], "--stall-port", str(stall_port)]
        extra += ["--garbage-port", str(garbage_port)]
    sys.stdout.flush()
    try:
        return subprocess.run(driver + extra, timeout=120).returncode
    except subprocess.TimeoutExpired:
        print("FAIL: %s did not end within 120 s" % driver[0])
        return 1


if __name__ == "__main__":
    sys.exit(main())
