#!/usr/bin/env python3
"""Aggregates the Kolakowski calibration readings into one reading per anchor and second, as an agent would.

The converted calibration readings (scripts/convert-kolakowski.py) are single adverts, 6 MB as text, shipped
gzipped. The calibration tests read plain JSON Lines without zlib, so this script turns them into the readings a
Whereabouts agent would have published with 1 s windows: per (anchor, tag, whole second), adverts more than
2.5 robust sigmas from the window's median dropped (never trusting less than 1.5 dB of spread), the rest averaged;
`n` counts the adverts kept, `var` is their sample variance (absent for one advert), `t` is the window's end.
This is the rule of the simulator's AdvertAggregator (docs/formats.md).

usage: scripts/aggregate-kolakowski-calibration.py calibration-readings.jsonl.gz OUTPUT.jsonl
"""

import gzip
import json
import statistics
import sys


def summarize(values):
    kept = values
    if len(values) >= 4:
        middle = statistics.median(values)
        deviation = statistics.median([abs(v - middle) for v in values])
        limit = 2.5 * max(1.4826 * deviation, 1.5)
        kept = [v for v in values if abs(v - middle) <= limit] or values
    mean = sum(kept) / len(kept)
    variance = None
    if len(kept) >= 2:
        variance = sum((v - mean) ** 2 for v in kept) / (len(kept) - 1)
    return mean, variance, len(kept)


def number(value):
    return int(value) if float(value).is_integer() else value


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    windows = {}
    order = []
    with gzip.open(sys.argv[1], "rt") as source:
        for text in source:
            reading = json.loads(text)
            key = (int(reading["t"] // 1) + 1, reading["agent"], reading["tag"])
            if key not in windows:
                windows[key] = []
                order.append(key)
            windows[key].append(reading["rssi"])
    lines = []
    for key in sorted(order):
        end, agent, tag = key
        mean, variance, count = summarize(windows[key])
        members = {"t": end, "agent": agent, "tag": tag, "rssi": number(round(mean, 2))}
        if count != 1:
            members["n"] = count
        if variance is not None:
            members["var"] = number(round(variance, 2))
        lines.append(json.dumps(members, separators=(",", ":"), ensure_ascii=True) + "\n")
    with open(sys.argv[2], "w") as output:
        output.writelines(lines)
    print(f"{sys.argv[2]}: {len(lines)} readings from {sum(len(v) for v in windows.values())} adverts", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
