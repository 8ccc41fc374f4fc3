"""What the benchmark drivers in tools/ share: ports, the CPU time of a process, and a server
run for the length of a `with` block (its output kept in a file for the error message)."""
import os
import signal
import socket
import subprocess
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc=None, timeout=10.0):
    """Whether 127.0.0.1:port accepts a connection within timeout s (False at once if proc,
    the server, has exited)."""
    end = time.time() + timeout
    while time.time() < end and (proc is None or proc.poll() is None):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def cpu_seconds(pid):
    """utime + stime of pid, every thread, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stop_process(proc):
    """SIGTERM to proc if it still runs, SIGKILL after 10 s; waits for it."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Server:
    """Runs cmd while the `with` block lasts, once it listens on port and tls_port (either may
    be None); SIGTERM at the end, SIGKILL after 10 s."""

    def __init__(self, name, cmd, port, tls_port=None):
        self.name, self.cmd, self.port, self.tls_port = name, cmd, port, tls_port

    def __enter__(self):
        # Output to a file: a pipe nobody reads would stop a server that logs.
        self.log = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(self.cmd, stdout=self.log, stderr=subprocess.STDOUT)
        for p in (self.port, self.tls_port):
            if p and not wait_port(p, self.proc):
                self.proc.kill()
                self.log.seek(0)
                raise RuntimeError(f"{self.name} did not listen on {p}: {self.log.read()[-2000:]}")
        return self

    def __exit__(self, *exc):
        stop_process(self.proc)
