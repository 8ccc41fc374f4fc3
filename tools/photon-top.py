#!/usr/bin/env python3
"""photon-top: a live view of a photon process, like top.

Reads the process's metrics endpoint (net::http::new_metrics_handler, Prometheus text) every
INTERVAL seconds and shows, per vCPU, the rates of the interval: context switches, coroutines
created, wake-ups (timer and cross-thread), engine polls, the share of time spent idle, and the
run-queue delay and engine interval percentiles of the interval's samples; then each HTTP
server's requests and errors, each HTTP client's calls, dials, bytes and head times, and each
RPC skeleton's calls, bytes and errors. With --dump URL
(new_thread_dump_handler), it also lists the coroutines that have waited longest, with what
they wait on.

    tools/photon-top.py http://127.0.0.1:8080/metrics --dump http://127.0.0.1:8080/debug/coroutines
    tools/photon-top.py URL --once     # one screen after one interval, no terminal control
"""
import argparse
import json
import math
import re
import sys
import time
import urllib.request

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(text):
    """{(name, frozenset(labels)): value} of every sample in a Prometheus text scrape."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith('#'):
            continue
        m = SAMPLE.match(line)
        if not m:
            raise ValueError('not a sample line: %r' % line)
        labels = frozenset(LABEL.findall(m.group(3) or ''))
        out[(m.group(1), labels)] = float(m.group(4))
    return out


def fetch(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode('utf-8', 'replace')


def series(samples, name):
    """{labels dict as a tuple: value} of one metric."""
    return {k[1]: v for k, v in samples.items() if k[0] == name}


def by_label(samples, name, label):
    out = {}
    for labels, v in series(samples, name).items():
        d = dict(labels)
        if label in d:
            out[d[label]] = (d, v)
    return out


def quantile(buckets, q):
    """The q-quantile (upper bound, seconds) of a cumulative histogram [(le, count)], or None."""
    if not buckets or buckets[-1][1] <= 0:
        return None
    want = q * buckets[-1][1]
    for le, n in buckets:
        if n >= want:
            return le
    return buckets[-1][0]


def histogram_delta(now, before, name, label, value):
    """The cumulative buckets [(le, count)] gained in the interval by name{label=value}."""
    out = []
    for (n, labels), v in now.items():
        if n != name + '_bucket':
            continue
        d = dict(labels)
        if d.get(label) != value:
            continue
        le = math.inf if d['le'] == '+Inf' else float(d['le'])
        out.append((le, v - before.get((n, labels), 0.0)))
    return sorted(out)


def fmt_seconds(s):
    if s is None:
        return '-'
    if s == math.inf:
        return 'inf'
    if s < 1e-3:
        return '%.0fus' % (s * 1e6)
    if s < 1:
        return '%.1fms' % (s * 1e3)
    return '%.2fs' % s


def rate(now, before, name, labels, dt):
    return (now.get((name, labels), 0.0) - before.get((name, labels), 0.0)) / dt


def rate_of_all(now, before, name, label, value, dt):
    """The rate of the sum of the series of `name` whose `label` is `value` (all its kinds)."""
    return sum(rate(now, before, name, labels, dt) for labels in series(now, name)
               if dict(labels).get(label) == value)


def vcpu_table(now, before, dt):
    lines = ['%-5s %6s %5s %10s %9s %9s %9s %8s %9s %6s %9s %9s %9s' %
             ('vCPU', 'coros', 'runq', 'switch/s', 'new/s', 'timer/s', 'xwake/s', 'polls/s',
              'io/s', 'idle%', 'rqd p50', 'rqd p99', 'eng p99')]
    for vid, (d, coros) in sorted(by_label(now, 'photon_vcpu_coroutines', 'vcpu').items(),
                                  key=lambda kv: int(kv[0])):
        labels = frozenset(d.items())
        r = lambda n: rate(now, before, n, labels, dt)
        idle_s = (now.get(('photon_vcpu_idle_wait_seconds_sum', labels), 0.0) -
                  before.get(('photon_vcpu_idle_wait_seconds_sum', labels), 0.0))
        rqd = histogram_delta(now, before, 'photon_vcpu_run_queue_delay_seconds', 'vcpu', vid)
        eng = histogram_delta(now, before, 'photon_vcpu_engine_interval_seconds', 'vcpu', vid)
        lines.append('%-5s %6d %5d %10.0f %9.0f %9.0f %9.0f %8.0f %9.0f %6.1f %9s %9s %9s' % (
            vid, coros, now.get(('photon_vcpu_run_queue', labels), 0),
            r('photon_vcpu_switches_total'),
            r('photon_vcpu_coroutines_created_total'), r('photon_vcpu_timer_wakeups_total'),
            r('photon_vcpu_cross_wakeups_total'), r('photon_vcpu_engine_polls_total'),
            rate_of_all(now, before, 'photon_vcpu_io_completions_total', 'vcpu', vid, dt),
            min(100.0, 100.0 * idle_s / dt), fmt_seconds(quantile(rqd, 0.5)),
            fmt_seconds(quantile(rqd, 0.99)), fmt_seconds(quantile(eng, 0.99))))
    return lines


def http_table(now, before, dt):
    servers = by_label(now, 'photon_http_server_connections', 'server')
    if not servers:
        return []
    lines = ['', '%-16s %6s %9s %8s %8s %8s %8s %9s %9s' %
             ('HTTP server', 'conns', 'req/s', '2xx/s', '4xx/s', '5xx/s', 'errors/s',
              'hdl p50', 'hdl p99')]
    for name, (d, conns) in sorted(servers.items()):
        def per_code(code):
            return rate(now, before, 'photon_http_server_requests_total',
                        frozenset(dict(d, code=code).items()), dt)
        total = sum(per_code(c) for c in ('other', '1xx', '2xx', '3xx', '4xx', '5xx'))
        errs = rate_of_all(now, before, 'photon_http_server_errors_total', 'server', name, dt)
        hdl = histogram_delta(now, before, 'photon_http_server_handler_seconds', 'server', name)
        lines.append('%-16s %6d %9.0f %8.0f %8.0f %8.0f %8.0f %9s %9s' % (
            name[:16], conns, total, per_code('2xx'), per_code('4xx'), per_code('5xx'), errs,
            fmt_seconds(quantile(hdl, 0.5)), fmt_seconds(quantile(hdl, 0.99))))
    return lines


def http_client_table(now, before, dt):
    clients = by_label(now, 'photon_http_client_requests_total', 'client')
    if not clients:
        return []
    lines = ['', '%-16s %9s %8s %8s %8s %9s %10s %10s %9s %9s' %
             ('HTTP client', 'req/s', '2xx/s', '5xx/s', 'errors/s', 'dials/s', 'in KiB/s',
              'out KiB/s', 'head p50', 'head p99')]
    for name, (d, _) in sorted(clients.items()):
        r = lambda n, **more: rate(now, before, n, frozenset(dict(d, **more).items()), dt)
        errs = rate_of_all(now, before, 'photon_http_client_errors_total', 'client', name, dt)
        head = histogram_delta(now, before, 'photon_http_client_request_seconds', 'client', name)
        lines.append('%-16s %9.0f %8.0f %8.0f %8.0f %9.0f %10.1f %10.1f %9s %9s' % (
            name[:16], r('photon_http_client_requests_total'),
            r('photon_http_client_responses_total', code='2xx'),
            r('photon_http_client_responses_total', code='5xx'), errs,
            r('photon_http_client_connections_total', how='new'),
            r('photon_http_client_received_bytes_total') / 1024,
            r('photon_http_client_sent_bytes_total') / 1024,
            fmt_seconds(quantile(head, 0.5)), fmt_seconds(quantile(head, 0.99))))
    return lines


def rpc_table(now, before, dt):
    skeletons = by_label(now, 'photon_rpc_server_connections', 'skeleton')
    if not skeletons:
        return []
    lines = ['', '%-16s %6s %9s %10s %10s %8s %9s %9s' %
             ('RPC skeleton', 'conns', 'calls/s', 'in KiB/s', 'out KiB/s', 'errors/s', 'hdl p50',
              'hdl p99')]
    for name, (d, conns) in sorted(skeletons.items()):
        labels = frozenset(d.items())
        r = lambda n: rate(now, before, n, labels, dt)
        errs = rate_of_all(now, before, 'photon_rpc_server_errors_total', 'skeleton', name, dt)
        hdl = histogram_delta(now, before, 'photon_rpc_server_handler_seconds', 'skeleton', name)
        lines.append('%-16s %6d %9.0f %10.1f %10.1f %8.0f %9s %9s' % (
            name[:16], conns, r('photon_rpc_server_requests_total'),
            r('photon_rpc_server_received_bytes_total') / 1024,
            r('photon_rpc_server_sent_bytes_total') / 1024, errs,
            fmt_seconds(quantile(hdl, 0.5)), fmt_seconds(quantile(hdl, 0.99))))
    return lines


def dump_table(url, top):
    try:
        d = json.loads(fetch(url + ('&' if '?' in url else '?') + 'format=json&frames=0'))
    except Exception as e:  # the view goes on without it
        return ['', 'dump: %s' % e]
    coros = []
    for part in d.get('parts', []):
        for c in part.get('coroutines', []):
            c['vcpu'] = part.get('vcpu')
            coros.append(c)
    states = {}
    for c in coros:
        states[c['state']] = states.get(c['state'], 0) + 1
    lines = ['', 'coroutines: %d (%s)' % (len(coros), ', '.join(
        '%s %d' % kv for kv in sorted(states.items())))]
    waiting = sorted((c for c in coros if 'sleeping_us' in c), key=lambda c: -c['sleeping_us'])
    lines.append('%-5s %-18s %-9s %10s  %-28s %s' %
                 ('vCPU', 'id', 'state', 'for', 'waits on', 'entry'))
    for c in waiting[:top]:
        lines.append('%-5s %-18s %-9s %10s  %-28s %s' % (
            c['vcpu'], c['id'], c['state'], fmt_seconds(c['sleeping_us'] / 1e6),
            str(c.get('waits_on', ''))[:28], str(c.get('entry', ''))[:60]))
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('url', help='the metrics endpoint, e.g. http://127.0.0.1:8080/metrics')
    ap.add_argument('--dump', help='the coroutine dump endpoint, for the longest waiters')
    ap.add_argument('--interval', type=float, default=2.0, help='seconds between scrapes')
    ap.add_argument('--top', type=int, default=10, help='coroutines listed from the dump')
    ap.add_argument('--once', action='store_true', help='one screen, then exit')
    args = ap.parse_args()
    before = parse(fetch(args.url))
    t0 = time.monotonic()
    while True:
        time.sleep(args.interval)
        now = parse(fetch(args.url))
        t1 = time.monotonic()
        lines = ['photon-top  %s  every %.1fs' % (args.url, args.interval), '']
        lines += vcpu_table(now, before, t1 - t0)
        lines += http_table(now, before, t1 - t0)
        lines += http_client_table(now, before, t1 - t0)
        lines += rpc_table(now, before, t1 - t0)
        if args.dump:
            lines += dump_table(args.dump, args.top)
        if args.once:
            print('\n'.join(lines))
            return 0
        sys.stdout.write('\x1b[H\x1b[2J' + '\n'.join(lines) + '\n')
        sys.stdout.flush()
        before, t0 = now, t1


if __name__ == '__main__':
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(0)
