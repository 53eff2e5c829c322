#!/usr/bin/env python3
"""Floods a real whereabouts-locator with distinct tag ids through a real mosquitto, and measures its memory.

Issue 48, items 1 and 2. Starts mosquitto on a free loopback port (no packet limit) and the locator on
maps/demo-office.json, then, from one MQTT client:
  - `--ids` distinct tag ids of the site, `--per-batch` to a batch, at `--rate` ids a second, as agent g-corridor;
  - all the while, the map's named tags (Alice, Bob, Forklift 3) heard by four other agents twice a second, walking, so
    that their positions must keep being published (counted from a subscriber, per 5-second slice of the flood);
  - with `--oversized MB`, one payload of that many megabytes on a readings topic, before and after which VmHWM is read.
Prints one JSON object: the locator's VmHWM and VmRSS (kB) at start, after the flood and at exit, its last metrics,
the named tags' positions per slice, and the log lines that speak of the outbox or of messages left at exit.

  scripts/locator-flood.py --locator .build/release/whereabouts-locator --ids 1000000
  scripts/locator-flood.py --locator .build/release/whereabouts-locator --ids 0 --oversized 100
"""

import argparse
import json
import math
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

SITE = "f7826da6-4fa2-4e98-8024-bc5b71e0893e"
PREFIX = f"whereabouts/v1/{SITE}"
NAMED = [f"ibeacon-{SITE}-100-{minor}" for minor in (1, 2, 3)]
# The listening agents of floor 1 and where they stand (maps/demo-office.json), for the named tags' readings.
LISTENERS = {"g-lobby": (3, 3), "g-reception": (13, 3), "g-west-1": (3, 11), "g-west-2": (11, 11)}
FLOODER = "g-corridor"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def remaining_length(n):
    out = bytearray()
    while True:
        byte, n = n % 128, n // 128
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def utf8(text):
    data = text.encode()
    return struct.pack("!H", len(data)) + data


class Client:
    """A bare MQTT 3.1.1 client: CONNECT, then QoS 0 PUBLISH only (what a flood needs, and nothing to wait for)."""

    def __init__(self, port, client_id):
        self.sock = socket.create_connection(("127.0.0.1", port))
        body = utf8("MQTT") + bytes([4, 0x02]) + struct.pack("!H", 60) + utf8(client_id)
        self.sock.sendall(bytes([0x10]) + remaining_length(len(body)) + body)
        if self.sock.recv(4)[:2] != b"\x20\x02":
            raise SystemExit("the broker refused the connection")

    def publish(self, topic, payload, retain=False):
        body = utf8(topic) + payload
        self.sock.sendall(bytes([0x30 | (1 if retain else 0)]) + remaining_length(len(body)) + body)


def memory(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmHWM", "VmRSS"):
                fields[key] = int(value.split()[0])
    return fields


def rssi(position, agent):
    dx, dy = position[0] - agent[0], position[1] - agent[1]
    distance = math.sqrt(dx * dx + dy * dy + (2.5 - 1.2) ** 2)
    return round(-59 - 20 * math.log10(max(distance, 0.1)))


def batch(agent, epoch, seq, readings, now):
    body = ",".join(readings)
    return f'{{"v":1,"agent":"{agent}","epoch":{epoch},"seq":{seq},"sent":{now:.3f},"readings":[{body}]}}'.encode()


def named_loop(port, stop, epoch):
    """The named tags, heard by four agents twice a second, walking along the lobby."""
    client = Client(port, "named-agents")
    for agent in LISTENERS:
        client.publish(f"{PREFIX}/agents/{agent}/status", b"online", retain=True)
    seq = 0
    while not stop.is_set():
        now = time.time()
        for agent, place in LISTENERS.items():
            readings = []
            for index, tag in enumerate(NAMED):
                position = (4 + 3 * index + 2 * math.sin(now / 5 + index), 6)
                readings.append(f'{{"tag":"{tag}","t":{now:.3f},"rssi":{rssi(position, place)},"n":4,"var":2}}')
            client.publish(f"{PREFIX}/agents/{agent}/readings", batch(agent, epoch, seq, readings, now))
        seq += 1
        stop.wait(0.5)


def collect(port, positions, metrics, stop, children):
    """Counts the named tags' positions by arrival time, and keeps the last metrics."""
    topics = [f"{PREFIX}/tags/{tag}/position" for tag in NAMED] + [f"{PREFIX}/locator/metrics"]
    command = ["mosquitto_sub", "-p", str(port), "-h", "127.0.0.1", "-v"]
    for topic in topics:
        command += ["-t", topic]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    children.append(process)
    for line in process.stdout:
        topic, _, payload = line.rstrip("\n").partition(" ")
        if topic.endswith("/metrics"):
            metrics["last"] = payload
        elif payload:
            positions.append(time.time())
        if stop.is_set():
            break
    process.terminate()


def flood(port, ids, per_batch, rate, epoch):
    client = Client(port, "flooder")
    client.publish(f"{PREFIX}/agents/{FLOODER}/status", b"online", retain=True)
    start = time.time()
    sent = 0
    seq = 0
    while sent < ids:
        now = time.time()
        readings = []
        for number in range(sent, min(sent + per_batch, ids)):
            # Majors from 1000 on: never a named tag's (100).
            tag = f"ibeacon-{SITE}-{1000 + number // 65536}-{number % 65536}"
            readings.append(f'{{"tag":"{tag}","t":{now:.3f},"rssi":-70}}')
        client.publish(f"{PREFIX}/agents/{FLOODER}/readings", batch(FLOODER, epoch, seq, readings, now))
        seq += 1
        sent += len(readings)
        ahead = start + sent / rate - time.time()
        if ahead > 0:
            time.sleep(ahead)
    return time.time() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--locator", default=".build/release/whereabouts-locator")
    parser.add_argument("--map", default="maps/demo-office.json")
    parser.add_argument("--ids", type=int, default=1_000_000)
    parser.add_argument("--per-batch", type=int, default=100)
    parser.add_argument("--rate", type=float, default=17_500, help="ids a second (the issue's: 1,000,000 in 57 s)")
    parser.add_argument("--oversized", type=float, default=0, help="megabytes of one oversized payload")
    parser.add_argument("--locator-option", action="append", default=[], help="passed on to the locator")
    parser.add_argument("--settle", type=float, default=5, help="seconds before and after the flood")
    options = parser.parse_args()

    scratch = tempfile.mkdtemp(prefix="locator-flood-")
    port = free_port()
    with open(f"{scratch}/mosquitto.conf", "w") as conf:
        conf.write(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\nlog_dest none\n")
    broker = subprocess.Popen(["mosquitto", "-c", f"{scratch}/mosquitto.conf"])
    time.sleep(0.5)
    log = open(f"{scratch}/locator.log", "w")
    locator = subprocess.Popen(
        [options.locator, "--map", options.map, "--broker", f"mqtt://127.0.0.1:{port}", "--client-id", "flooded",
         "--metrics-interval", "1", "--warm-up", "1"] + options.locator_option, stdout=log, stderr=subprocess.STDOUT)
    stop = threading.Event()
    positions, metrics, children = [], {}, []
    threads = [threading.Thread(target=collect, args=(port, positions, metrics, stop, children), daemon=True),
               threading.Thread(target=named_loop, args=(port, stop, int(time.time() * 1000)), daemon=True)]
    result = {"ids": options.ids, "per_batch": options.per_batch, "rate": options.rate}
    try:
        for thread in threads:
            thread.start()
        time.sleep(options.settle)
        result["start"] = memory(locator.pid)
        if options.oversized > 0:
            client = Client(port, "oversized")
            client.publish(f"{PREFIX}/agents/{FLOODER}/readings", b" " * int(options.oversized * 1_000_000))
            time.sleep(options.settle)
            result["after_oversized"] = memory(locator.pid)
        flood_start = time.time()
        if options.ids > 0:
            result["flood_seconds"] = round(flood(port, options.ids, options.per_batch, options.rate,
                                                  int(time.time() * 1000)), 1)
            time.sleep(options.settle)
            result["after_flood"] = memory(locator.pid)
        flood_end = time.time()
        slices = max(1, math.ceil((flood_end - flood_start) / 5))
        result["named_positions_per_5s"] = [
            sum(1 for t in positions if flood_start + 5 * k <= t < flood_start + 5 * (k + 1)) for k in range(slices)]
        result["metrics"] = json.loads(metrics["last"]) if "last" in metrics else None
        final = memory(locator.pid)
        locator.send_signal(signal.SIGTERM)
        locator.wait(timeout=60)
        result["exit"] = final
        result["exit_status"] = locator.returncode
    finally:
        stop.set()
        for process in [locator, broker] + children:
            if process.poll() is None:
                process.kill()
        log.close()
    with open(f"{scratch}/locator.log") as text:
        result["log"] = [line.strip() for line in text
                         if "outbox" in line or "unacknowledged" in line or "evicted" in line][-6:]
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    sys.exit(main())
