#!/usr/bin/env python3
"""Hostile clients against a Whereabouts HTTP server (`whereabouts web`, or the tests' server), and the fairness check.

    scripts/http-fairness.py flood PORT KIND COUNT [--stream PATH]
        Keeps COUNT connections of one KIND open until killed, opening a new one whenever the server closes one:
          idle       connects and sends nothing
          slowloris  sends the start of a head, then one byte a second, never finishing it
          sse        asks for the event stream and never reads
        Prints one line "ready" once all COUNT have connected for the first time. KIND "all": COUNT of each.

    scripts/http-fairness.py measure PORT [--count N] [--loads L] [--page PATH] [--stream PATH]
        The issue's goal: a stream reader connects; N hostile connections of each kind join (3 N in all, kept up as
        above); then L page loads, one after another, each allowed 2 s. Prints a JSON report: loads answered 200
        within 2 s, their latencies, the stream reader's events before and during the attack, and the flood's
        reconnects. Exit 0 when at least 95 % succeeded and the reader kept receiving.

Raises its own soft descriptor limit to the hard one (3 N sockets need it). Loopback only.
"""

import json
import resource
import select
import socket
import subprocess
import sys
import threading
import time

HOST = "127.0.0.1"


def raise_descriptor_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


class Flood:
    """COUNT connections per kind, each reopened when the server closes it. One poll loop, its own thread."""

    def __init__(self, port, kinds, stream_path="/stream"):
        self.port = port
        self.kinds = kinds  # {kind: count}
        self.stream_path = stream_path
        self.sockets = {}  # fd -> [socket, kind, state, last_drip]
        self.poller = select.poll()
        self.reopened = 0
        self.failed_connects = 0
        self.first_round = sum(kinds.values())
        self.ready = threading.Event()
        self.stopping = False

    def open(self, kind):
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect((HOST, self.port))
        except BlockingIOError:
            pass
        except OSError:
            s.close()
            self.failed_connects += 1
            return False
        self.sockets[s.fileno()] = [s, kind, "connecting", 0.0]
        self.poller.register(s, select.POLLOUT)
        return True

    def drop(self, fd):
        entry = self.sockets.pop(fd)
        self.poller.unregister(fd)
        entry[0].close()
        return entry[1]

    def connected(self, fd, entry, now):
        s, kind = entry[0], entry[1]
        if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) != 0:
            return False
        entry[2] = "open"
        try:
            if kind == "slowloris":
                s.send(b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                entry[3] = now
            elif kind == "sse":
                s.send(("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % self.stream_path).encode())
        except OSError:
            return False
        # A stream's bytes are never read, so only the peer's close is watched (no POLLIN: it would fire forever).
        mask = select.POLLRDHUP if kind == "sse" else select.POLLIN | select.POLLRDHUP
        self.poller.modify(fd, mask)
        return True

    def run(self):
        for kind, count in self.kinds.items():
            for _ in range(count):
                self.open(kind)
        opened_first = 0
        while not self.stopping:
            now = time.monotonic()
            lost = []
            for fd, events in self.poller.poll(100):
                entry = self.sockets.get(fd)
                if entry is None:
                    continue
                if entry[2] == "connecting":
                    if events & (select.POLLERR | select.POLLHUP) or not self.connected(fd, entry, now):
                        lost.append(fd)
                    else:
                        opened_first += 1
                    continue
                if entry[1] != "sse" and events & select.POLLIN:
                    try:
                        data = entry[0].recv(4096)
                    except OSError:
                        data = b""
                    if data and not events & (select.POLLRDHUP | select.POLLHUP):
                        continue
                lost.append(fd)
            for fd in lost:
                kind = self.drop(fd)
                self.reopened += 1
                self.open(kind)
            for entry in self.sockets.values():
                if entry[1] == "slowloris" and entry[2] == "open" and now - entry[3] >= 1.0:
                    entry[3] = now
                    try:
                        entry[0].send(b"x")
                    except OSError:
                        pass
            if opened_first >= self.first_round:
                self.ready.set()
        for fd in list(self.sockets):
            self.drop(fd)


class StreamReader(threading.Thread):
    """One well-behaved reader of the event stream: counts events (blank-line separated) and when they came."""

    def __init__(self, port, path):
        super().__init__(daemon=True)
        self.port, self.path = port, path
        self.times = []
        self.status = None
        self.closed_at = None

    def run(self):
        s = socket.create_connection((HOST, self.port), timeout=10)
        s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % self.path).encode())
        s.settimeout(None)
        buffer = b""
        while True:
            data = s.recv(65536)
            if not data:
                self.closed_at = time.monotonic()
                return
            buffer += data
            if self.status is None and b"\r\n\r\n" in buffer:
                head, buffer = buffer.split(b"\r\n\r\n", 1)
                self.status = int(head.split(b" ")[1])
            while self.status is not None and b"\n\n" in buffer:
                event, buffer = buffer.split(b"\n\n", 1)
                if event.strip() and not event.startswith(b":"):
                    self.times.append(time.monotonic())


def page_load(port, path, allowance=2.0):
    """One GET on a new connection; (status or what went wrong, seconds). Everything within `allowance` seconds."""
    start = time.monotonic()
    try:
        s = socket.create_connection((HOST, port), timeout=allowance)
        s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % path).encode())
        response = b""
        while True:
            left = allowance - (time.monotonic() - start)
            if left <= 0:
                return "timeout", time.monotonic() - start
            s.settimeout(left)
            data = s.recv(65536)
            if not data:
                break
            response += data
        s.close()
        parts = response.split(b" ", 2)
        return (int(parts[1]) if len(parts) > 2 else "empty"), time.monotonic() - start
    except socket.timeout:
        return "timeout", time.monotonic() - start
    except OSError as error:
        return type(error).__name__, time.monotonic() - start


def option(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def flood_main():
    port, kind, count = int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    raise_descriptor_limit()
    kinds = {"slowloris": count, "idle": count, "sse": count} if kind == "all" else {kind: count}
    flood = Flood(port, kinds, option("--stream", "/stream"))
    thread = threading.Thread(target=flood.run, daemon=True)
    thread.start()
    flood.ready.wait(120)
    print("ready", flush=True)
    thread.join()


def measure_main():
    port = int(sys.argv[2])
    count = int(option("--count", "2000"))
    loads = int(option("--loads", "100"))
    page, stream = option("--page", "/"), option("--stream", "/stream")
    limit = raise_descriptor_limit()
    reader = StreamReader(port, stream)
    reader.start()
    time.sleep(2)
    before = len(reader.times)
    # The flood runs in a process of its own, so that it never holds this one's interpreter lock while a page loads.
    attack_start = time.monotonic()
    flood = subprocess.Popen(
        [sys.executable, __file__, "flood", str(port), "all", str(count), "--stream", stream], stdout=subprocess.PIPE)
    flood.stdout.readline()
    ramp = time.monotonic() - attack_start
    results = [page_load(port, page) for _ in range(loads) if not time.sleep(0.05)]
    during = [t for t in reader.times if t >= attack_start]
    gaps = [b - a for a, b in zip(during, during[1:])]
    report = {
        "descriptor_limit": limit,
        "hostile_per_kind": count,
        "flood_ready_after_s": round(ramp, 2),
        "loads": loads,
        "ok_within_2s": sum(1 for status, _ in results if status == 200),
        "outcomes": {str(k): sum(1 for s, _ in results if s == k) for k in {s for s, _ in results}},
        "latency_ms_median": round(sorted(t for _, t in results)[loads // 2] * 1000, 1),
        "latency_ms_max": round(max(t for _, t in results) * 1000, 1),
        "stream_status": reader.status,
        "stream_events_before_attack": before,
        "stream_events_during_attack": len(during),
        "stream_attack_seconds": round(time.monotonic() - attack_start, 1),
        "stream_longest_gap_s": round(max(gaps), 2) if gaps else None,
        "stream_closed": reader.closed_at is not None,
    }
    flood.kill()
    flood.wait()
    print(json.dumps(report), flush=True)
    good = report["ok_within_2s"] >= 0.95 * loads and len(during) > 0 and not report["stream_closed"]
    sys.exit(0 if good else 1)


if __name__ == "__main__":
    if len(sys.argv) >= 5 and sys.argv[1] == "flood":
        flood_main()
    elif len(sys.argv) >= 3 and sys.argv[1] == "measure":
        measure_main()
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
