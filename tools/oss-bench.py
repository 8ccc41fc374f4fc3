#!/usr/bin/env python3
"""Object storage client throughput: photon's client (examples/perf/oss-perf) against s5cmd and
curl, against the same local S3 server (versitygw), in one run.

Usage: tools/oss-bench.py [--build build] [--rounds 3] [--size-mib 1024] [--part-size-mib 16]
                          [--parallel 4] [--small-count 10000] [--inflight 64] [--duration 5]
                          [--server-cpu 0] [--client-cpu 1] [--engine default]
                          [--tests get,put,small]

One versitygw (posix backend, a temp dir in /dev/shm so that no disk is measured: the objects
live in memory, as does the upload source file) on a free 127.0.0.1 port, pinned to
--server-cpu; each client in turn pinned to --client-cpu. Set-up, untimed: the bucket
(s5cmd mb), a --size-mib file of random bytes uploaded as the object `big` (oss-perf put), and
--small-count objects of 4 KiB, small/000000.. (oss-perf fill_small), all through the S3 API;
`big` is read back with its sha256 checked before the rounds. Per round, each test's clients
run in turn, starting one later each round (whoever runs first after the other test's
transfers meets a colder server):

- get: `oss-perf -op get` (one streamed whole-object GET read 64 KiB at a time, its body
  discarded, the byte count checked; also without the MD5 check, and checked against the
  CRC32C `big` was uploaded with instead: `-crc32c`), `s5cmd cat s3://photon/big > /dev/null` (its default
  ranged GETs, 5 x 50 MiB in flight) and `curl --aws-sigv4 ... -o /dev/null` (one GET, the size checked).
- put: `oss-perf -op put` (multipart from the file mapped in memory, --part-size-mib parts,
  --parallel in flight; also without the MD5 check, and with CRC32C trailers and no MD5:
  `-crc32c`), `s5cmd cp FILE s3://...` with the same part size and concurrency,
  and `curl -T FILE` (one PUT: curl has no multipart upload); also `oss-perf -op put -single`,
  one PUT as curl sends it. What each stored is read back once (round 1, untimed) and its
  sha256 compared with the file's.
- small: `oss-perf -op get_small` (--inflight coroutines GETting the 4 KiB objects in turn for
  --duration s, each answer's size and key checked) and
  `s5cmd --numworkers 64 cp 's3://photon/small/*' DIR/` (one listing, then a GET per object,
  written to a dir in /dev/shm; the file count is checked).

Each client's wall time and CPU (user + system of the process and its children, all threads,
over its whole run: os.wait4's rusage) are measured here the same way for all; versitygw's CPU
over the same run is sampled from /proc. Throughput is bytes (or objects) / wall time. The
targets: GET and PUT of 1 GiB at >= 1.0x the throughput of the fastest of s5cmd and
curl at no more client CPU per byte; 4 KiB GETs with 64 in flight at >= 1.5x s5cmd's requests
per client core (requests/s / client CPU use). Reported: medians over the rounds, and the
median of the per-round ratios. Only processes this script started are stopped, by PID.
"""
import argparse
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_util import Server, cpu_seconds, free_port  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
AK, SK, BUCKET = "photonbench", "photonbenchsecret", "photon"


def rotated(runs, rnd):
    """runs starting at a different one each round: the first after a phase change (the server
    just wrote 1 GiB, say) runs on a colder server, and no client should always be it."""
    k = rnd % len(runs)
    return runs[k:] + runs[:k]


def run_timed(cmd, server, cpu, stdout=subprocess.DEVNULL, timeout=600):
    """Runs cmd pinned to cpu; wall s, client CPU s (process and children), server CPU s, exit
    status, output."""
    with tempfile.TemporaryFile(mode="w+") as err:
        s0, t0 = cpu_seconds(server.pid), time.time()
        p = subprocess.Popen(["taskset", "-c", str(cpu)] + cmd, stdout=stdout, stderr=err)
        deadline = t0 + timeout
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.time() > deadline:
                p.kill()
                pid, status, ru = os.wait4(p.pid, 0)
                break
            time.sleep(0.005)
        t1, s1 = time.time(), cpu_seconds(server.pid)
        p.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read()
    return {"wall": t1 - t0, "cpu": ru.ru_utime + ru.ru_stime, "server_cpu": s1 - s0,
            "rc": p.returncode, "err": text}


def check(r, what):
    if r["rc"] != 0:
        sys.exit(f"oss-bench: {what} failed (exit {r['rc']}):\n{r['err'][-2000:]}")


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            b = f.read(1 << 20)
            if not b:
                return h.hexdigest()
            h.update(b)


def summary_field(out, name):
    for line in out.splitlines():
        if "oss-perf summary" in line:
            for f in line.split():
                if f.startswith(name + "="):
                    return f.split("=", 1)[1]
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--part-size-mib", type=int, default=16)
    ap.add_argument("--parallel", type=int, default=4)
    ap.add_argument("--small-count", type=int, default=10000)
    ap.add_argument("--inflight", type=int, default=64)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--client-cpu", type=int, default=1)
    ap.add_argument("--engine", default="default")
    ap.add_argument("--tests", default="get,put,small")
    args = ap.parse_args()
    perf = os.path.join(os.path.abspath(args.build), "examples/perf/oss-perf")
    if not os.access(perf, os.X_OK):
        sys.exit(f"oss-bench: {perf} not built (cmake --build {args.build} --target oss-perf; "
                 "needs gflags and TLS)")
    for tool, how in (("versitygw", "tools/install-deps.sh"),
                      ("s5cmd", "tools/install-deps.sh --bench"),
                      ("curl", "Debian: curl"), ("taskset", "Debian: util-linux")):
        if not shutil.which(tool):
            sys.exit(f"oss-bench: {tool} not found ({how})")
    if not os.path.isdir("/dev/shm"):
        sys.exit("oss-bench: no /dev/shm (the objects are kept in memory)")
    tests = [t for t in args.tests.split(",") if t in ("get", "put", "small")]
    size = args.size_mib << 20

    os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"] = AK, SK
    os.environ["AWS_REGION"] = "us-east-1"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    tmp = tempfile.TemporaryDirectory(prefix="oss-bench-", dir="/dev/shm")
    data, src, out = (os.path.join(tmp.name, d) for d in ("data", "big.bin", "out"))
    os.mkdir(data)
    ours = [perf, f"-endpoint={url}", f"-bucket={BUCKET}", f"-event_engine={args.engine}"]
    s5 = ["s5cmd", "--endpoint-url", url]
    curl = ["curl", "-sS", "--fail", "--aws-sigv4", "aws:amz:us-east-1:s3", "--user",
            f"{AK}:{SK}", "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD"]
    results = {}
    gw = ["taskset", "-c", str(args.server_cpu), "versitygw", "--access", AK, "--secret", SK,
          "--port", f"127.0.0.1:{port}", "posix", data]
    try:
        with Server("versitygw", gw, port) as server:
            srv = server.proc

            def setup(cmd, what):
                r = run_timed(cmd, srv, args.client_cpu, stdout=subprocess.PIPE)
                check(r, what)

            def ours_run(extra, what):
                with tempfile.TemporaryFile(mode="w+") as o:
                    r = run_timed(ours + extra, srv, args.client_cpu, stdout=o)
                    o.seek(0)
                    r["out"] = o.read()
                check(r, what)
                return r

            def verify(key, digest):
                r = ours_run([f"-op=get", f"-key={key}", f"-verify={digest}"],
                             f"reading back {key}")
                if summary_field(r["out"], "sha256") != digest:
                    sys.exit(f"oss-bench: {key} read back with a wrong sha256")

            setup(s5 + ["mb", f"s3://{BUCKET}"], "making the bucket")
            with open(src, "wb") as f:
                for _ in range(args.size_mib):
                    f.write(os.urandom(1 << 20))
            digest = sha256_file(src)
            if "get" in tests:
                r = ours_run(["-op=put", "-key=big", f"-src={src}", "-sha256", "-crc32c"],
                             "uploading big")
                if summary_field(r["out"], "sha256") != digest:
                    sys.exit("oss-bench: oss-perf uploaded other bytes than the file's")
                verify("big", digest)
            if "small" in tests:
                ours_run(["-op=fill_small", f"-count={args.small_count}", "-inflight=64"],
                         "making the small objects")

            def record(test, name, r, amount):
                r["amount"] = amount
                results.setdefault((test, name), []).append(r)
                unit = "MiB/s" if test != "small" else "req/s"
                rate = amount / r["wall"] / (1 << 20 if test != "small" else 1)
                print(f"round {rnd + 1} {test} {name}: {rate:.1f} {unit} wall={r['wall']:.2f}s "
                      f"client_cpu={r['cpu']:.2f}s server_cpu={r['server_cpu']:.2f}s",
                      flush=True)

            for rnd in range(args.rounds):
                if "get" in tests:
                    def ours_get(extra, what):
                        r = ours_run(["-op=get", "-key=big"] + extra, what)
                        if summary_field(r["out"], "bytes") != str(size):
                            sys.exit(f"oss-bench: {what} read {summary_field(r['out'], 'bytes')}")
                        return r

                    def s5cmd_get():
                        r = run_timed(s5 + ["cat", f"s3://{BUCKET}/big"], srv, args.client_cpu)
                        check(r, "s5cmd cat")
                        return r

                    def curl_get():
                        with tempfile.TemporaryFile(mode="w+") as o:
                            r = run_timed(curl + ["-o", "/dev/null", "-w", "%{size_download}",
                                                  f"{url}/{BUCKET}/big"], srv, args.client_cpu,
                                          stdout=o)
                            o.seek(0)
                            got = o.read().strip()
                        check(r, "curl GET")
                        if got != str(size):
                            sys.exit(f"oss-bench: curl read {got} bytes of {size}")
                        return r

                    runs = [("photon", lambda: ours_get([], "oss-perf get")),
                            ("photon, no MD5 check",
                             lambda: ours_get(["-md5=false"], "oss-perf get -md5=false")),
                            ("photon, CRC32C check",
                             lambda: ours_get(["-md5=false", "-crc32c"],
                                              "oss-perf get -crc32c")),
                            ("s5cmd", s5cmd_get), ("curl", curl_get)]
                    for name, fn in rotated(runs, rnd):
                        record("get", name, fn(), size)
                if "put" in tests:
                    runs = [
                        ("photon", lambda: ours_run(
                            ["-op=put", "-key=put-photon", f"-src={src}",
                             f"-part_size={args.part_size_mib << 20}",
                             f"-parallel={args.parallel}"], "oss-perf put"), "put-photon"),
                        ("photon single PUT", lambda: ours_run(
                            ["-op=put", "-single", "-key=put-single", f"-src={src}"],
                            "oss-perf put -single"), "put-single"),
                        ("photon, no MD5 check", lambda: ours_run(
                            ["-op=put", "-key=put-nomd5", f"-src={src}", "-md5=false",
                             f"-part_size={args.part_size_mib << 20}",
                             f"-parallel={args.parallel}"], "oss-perf put -md5=false"),
                         "put-nomd5"),
                        ("photon single PUT, no MD5 check", lambda: ours_run(
                            ["-op=put", "-single", "-key=put-single-nomd5", f"-src={src}",
                             "-md5=false"], "oss-perf put -single -md5=false"),
                         "put-single-nomd5"),
                        ("photon, CRC32C, no MD5 check", lambda: ours_run(
                            ["-op=put", "-key=put-crc32c", f"-src={src}", "-md5=false",
                             "-crc32c", f"-part_size={args.part_size_mib << 20}",
                             f"-parallel={args.parallel}"], "oss-perf put -crc32c"),
                         "put-crc32c"),
                        ("photon single PUT, CRC32C, no MD5 check", lambda: ours_run(
                            ["-op=put", "-single", "-key=put-single-crc32c", f"-src={src}",
                             "-md5=false", "-crc32c"], "oss-perf put -single -crc32c"),
                         "put-single-crc32c"),
                        ("s5cmd", lambda: run_timed(
                            s5 + ["cp", "-c", str(args.parallel), "-p", str(args.part_size_mib),
                                  src, f"s3://{BUCKET}/put-s5cmd"], srv, args.client_cpu),
                         "put-s5cmd"),
                        ("curl", lambda: run_timed(
                            curl + ["-o", "/dev/null", "-T", src, f"{url}/{BUCKET}/put-curl"],
                            srv, args.client_cpu), "put-curl"),
                    ]
                    for name, fn, key in rotated(runs, rnd):
                        r = fn()
                        check(r, f"{name} PUT")
                        record("put", name, r, size)
                        if rnd == 0:
                            verify(key, digest)
                if "small" in tests:
                    r = ours_run(["-op=get_small", f"-count={args.small_count}",
                                  f"-inflight={args.inflight}", f"-duration={args.duration}"],
                                 "oss-perf get_small")
                    n = int(summary_field(r["out"], "requests") or 0)
                    if n <= 0 or summary_field(r["out"], "errors") != "0":
                        sys.exit(f"oss-bench: oss-perf get_small: {r['out'][-1000:]}")
                    record("small", "photon", r, n)
                    shutil.rmtree(out, ignore_errors=True)
                    os.mkdir(out)
                    r = run_timed(s5 + ["--numworkers", str(args.inflight), "cp",
                                        f"s3://{BUCKET}/small/*", out + "/"], srv,
                                  args.client_cpu)
                    check(r, "s5cmd cp small/*")
                    got = len(os.listdir(out))
                    if got != args.small_count:
                        sys.exit(f"oss-bench: s5cmd copied {got} of {args.small_count} objects")
                    record("small", "s5cmd", r, args.small_count)
                    shutil.rmtree(out, ignore_errors=True)
    finally:
        tmp.cleanup()

    def med(xs):
        xs = [x for x in xs if x == x]
        return statistics.median(xs) if xs else float("nan")

    print()
    print(f"versitygw (posix, objects in /dev/shm) on CPU {args.server_cpu}, each client on CPU "
          f"{args.client_cpu}; {args.size_mib} MiB object, multipart in {args.part_size_mib} MiB "
          f"parts x {args.parallel} in flight (photon and s5cmd); {args.small_count} objects "
          f"of 4 KiB, {args.inflight} in flight; medians of {args.rounds} rounds")
    print("| test | client | throughput | client CPU-s | client CPU | CPU-us per MiB or req "
          "| server CPU | photon/this: throughput | photon/this: per client core |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for test in tests:
        names = [n for (t, n) in results if t == test]
        ph = results.get((test, "photon"), [])
        for name in names:
            rows = results[(test, name)]
            div = 1 << 20 if test != "small" else 1
            unit = "MiB/s" if test != "small" else "req/s"
            rate = [x["amount"] / div / x["wall"] for x in rows]
            per = [x["cpu"] * 1e6 / (x["amount"] / div) for x in rows]
            t_ratio = [a["amount"] / a["wall"] / (b["amount"] / b["wall"])
                       for a, b in zip(ph, rows)]
            c_ratio = [(b["cpu"] / b["amount"]) / (a["cpu"] / a["amount"])
                       for a, b in zip(ph, rows)]
            other = name != "photon"
            print(f"| {test.upper()} | {name} | {med(rate):.1f} {unit} | "
                  f"{med([x['cpu'] for x in rows]):.2f} | "
                  f"{med([x['cpu'] / x['wall'] * 100 for x in rows]):.0f}% | {med(per):.1f} | "
                  f"{med([x['server_cpu'] / x['wall'] * 100 for x in rows]):.0f}% | "
                  f"{'%.2fx' % med(t_ratio) if other else ''} | "
                  f"{'%.2fx' % med(c_ratio) if other else ''} |")
    print()
    print("per client core: the other client's CPU per MiB (or per request) / photon's; "
          "> 1 means photon spends less CPU for the same work.")


if __name__ == "__main__":
    main()
