#!/usr/bin/env python3
"""Writes the seed corpus of the h2 fuzzer (test/fuzz/h2_fuzz.cpp) to
test/fuzz/corpus/h2: a few whole client connections (preface, SETTINGS,
HPACK-encoded HEADERS, DATA, WINDOW_UPDATE, RST_STREAM, PRIORITY, PING,
CONTINUATION, GOAWAY) and server ones answering the fuzzer's client. Each
file: the largest read piece - 1, the fuzzer's flags (0x1: the preface is put
first; 0x8: the client side), then the frames."""
import os
import struct

DATA, HEADERS, PRIORITY, RST, SETTINGS, PING, GOAWAY, WU, CONT = 0, 1, 2, 3, 4, 6, 7, 8, 9
END_STREAM, ACK, END_HEADERS, PADDED, PRIO = 0x1, 0x1, 0x4, 0x8, 0x20


def frame(ftype, flags, stream, payload=b""):
    n = len(payload)
    return struct.pack(">BHBBI", n >> 16, n & 0xFFFF, ftype, flags, stream) + payload


def lit(name, value):  # literal with incremental indexing, new name, no Huffman
    return b"\x40" + bytes([len(name)]) + name + bytes([len(value)]) + value


def request(method, path, extra=()):
    b = bytes([0x82 if method == b"GET" else 0x83, 0x86])  # :method, :scheme http
    b += b"\x04" + bytes([len(path)]) + path  # :path, literal without indexing
    b += b"\x41\x09localhost"  # :authority (indexed name)
    for n, v in extra:
        b += lit(n, v)
    return b


def settings(*pairs):
    return frame(SETTINGS, 0, 0, b"".join(struct.pack(">HI", k, v) for k, v in pairs))


def seed(piece, flags, *frames):
    return bytes([piece - 1, flags]) + b"".join(frames)


SEEDS = {
    "get": seed(255, 1, settings(), frame(HEADERS, END_STREAM | END_HEADERS, 1,
                request(b"GET", b"/")), frame(SETTINGS, ACK, 0),
                frame(GOAWAY, 0, 0, struct.pack(">II", 0, 0))),
    "post-echo": seed(255, 1, settings((4, 1 << 20)),
                      frame(HEADERS, END_HEADERS, 1, request(b"POST", b"/echo",
                            [(b"content-length", b"11")])),
                      frame(DATA, 0, 1, b"hello "), frame(DATA, END_STREAM, 1, b"world"),
                      frame(WU, 0, 0, struct.pack(">I", 1000)),
                      frame(WU, 0, 1, struct.pack(">I", 1000)), frame(SETTINGS, ACK, 0),
                      frame(PING, 0, 0, b"12345678")),
    "streams-reset-trailers": seed(
        7, 1, settings((1, 0), (4, 10), (5, 16384)), frame(SETTINGS, ACK, 0),
        frame(HEADERS, END_HEADERS, 1, request(b"POST", b"/trailers")),
        frame(DATA, 0, 1, b"abc"),
        frame(HEADERS, END_STREAM | END_HEADERS, 1, lit(b"x-sum", b"3")),
        frame(HEADERS, END_HEADERS, 3, request(b"POST", b"/reset")),
        frame(RST, 0, 3, struct.pack(">I", 8)),
        frame(HEADERS, END_STREAM | END_HEADERS, 5, request(b"GET", b"/none")),
        frame(PRIORITY, 0, 7, struct.pack(">IB", 1, 15)),
        frame(WU, 0, 1, struct.pack(">I", 100)), frame(WU, 0, 0, struct.pack(">I", 100)),
        frame(GOAWAY, 0, 0, struct.pack(">II", 5, 0))),
    "continuation-padding-priority": seed(
        255, 1, settings(), frame(SETTINGS, ACK, 0),
        frame(HEADERS, PADDED | PRIO, 1,
              b"\x03" + struct.pack(">IB", 0, 200) + request(b"POST", b"/echo")[:5] + b"\0\0\0"),
        frame(CONT, END_HEADERS, 1, request(b"POST", b"/echo")[5:]),
        frame(DATA, PADDED | END_STREAM, 1, b"\x04" + b"padded" + b"\0" * 4),
        frame(HEADERS, END_STREAM | END_HEADERS | PRIO, 3,
              struct.pack(">IB", 0x80000001, 3) + request(b"GET", b"/"))),
    "small-windows-big-body": seed(
        31, 1 | 2 | 4, settings((4, 100)), frame(SETTINGS, ACK, 0),
        frame(HEADERS, END_HEADERS, 1, request(b"POST", b"/echo")),
        frame(DATA, 0, 1, b"x" * 4000), frame(DATA, END_STREAM, 1, b"y" * 96),
        frame(HEADERS, END_STREAM | END_HEADERS, 3, request(b"GET", b"/")),
        frame(HEADERS, END_STREAM | END_HEADERS, 5, request(b"GET", b"/")),
        frame(WU, 0, 1, struct.pack(">I", 3000)), frame(WU, 0, 0, struct.pack(">I", 3000)),
        frame(WU, 0, 1, struct.pack(">I", 2000))),
    "bad-frames": seed(
        63, 1, settings(), frame(HEADERS, END_HEADERS, 2, request(b"GET", b"/")),
        frame(DATA, 0, 9, b"x"), frame(WU, 0, 0, struct.pack(">I", 0))),
    # The client side: requests 1 (GET /), 3 (POST /echo) and 5 (GET /trailers).
    "client-responses": seed(
        255, 8, settings((3, 100), (4, 1 << 20)), frame(SETTINGS, ACK, 0),
        frame(HEADERS, END_HEADERS, 1, b"\x88" + lit(b"content-length", b"2")),
        frame(DATA, END_STREAM, 1, b"ok"),
        frame(WU, 0, 0, struct.pack(">I", 1000)), frame(WU, 0, 3, struct.pack(">I", 1000)),
        frame(HEADERS, END_HEADERS, 3, b"\x88"), frame(DATA, 0, 3, b"hello, "),
        frame(DATA, END_STREAM, 3, b"fuzz"),
        frame(HEADERS, END_HEADERS, 5, b"\x88"), frame(DATA, 0, 5, b"t"),
        frame(HEADERS, END_STREAM | END_HEADERS, 5, lit(b"x-sum", b"1")),
        frame(PING, 0, 0, b"abcdefgh"), frame(GOAWAY, 0, 0, struct.pack(">II", 5, 0))),
    "client-refused-small-windows": seed(
        15, 8 | 2 | 4, settings((3, 1), (4, 3)), frame(SETTINGS, ACK, 0),
        frame(HEADERS, END_HEADERS, 1, b"\x89"),  # :status 204
        frame(RST, 0, 3, struct.pack(">I", 7)),
        frame(HEADERS, END_HEADERS | END_STREAM, 1, b"\x88"),
        frame(WU, 0, 3, struct.pack(">I", 8)), frame(DATA, PADDED, 5, b"\x02ab\0\0"),
        frame(GOAWAY, 0, 0, struct.pack(">II", 1, 0))),
}

if __name__ == "__main__":
    d = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "h2")
    os.makedirs(d, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)
