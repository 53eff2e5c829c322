#!/usr/bin/env python3
"""Converts the Kolakowski flat BLE dataset into Whereabouts readings and truth recordings (JSON Lines).

Source: M. Kolakowski, "Automated Calibration of RSS Fingerprinting Based Systems Using a Mobile Robot and Machine
Learning", Sensors 21(18):6270, 2021; data at https://github.com/marckolak/ble-rss-fingerprints-calib2021 and
Zenodo 10.5281/zenodo.5457591, licensed CC BY 4.0.

Readings come from the RAW anchor reports (what a scanner would publish), one reading per BLE group with a non-zero
RSSI, stamped with the report's time; both receivers of an anchor count as that anchor. Truth comes from the robot's
LiDAR poses. See docs/formats.md for the formats.

usage: scripts/convert-kolakowski.py DATASET_DIR OUTPUT_DIR
"""

import csv
import gzip
import json
import sys
from pathlib import Path

# Raw anchor ids in the reports -> anchors.csv ids 1..6 (dataset_description.pdf, section IV).
ANCHORS = {3: 1, 4: 2, 5: 3, 8: 4, 10: 5, 11: 6}
SITE = "6b6f6c61-6b6f-7773-6b69-000000000001"
MAJOR = 1
FLOOR = 1
BLE_FIELDS = 8  # rx_id tag_id ble_ts rssi pres volt steps alert
HEADER_FIELDS = 7  # ts_ms an_id an_sqn len an_pressure n_ble n_uwb


def tag_id(raw_tag):
    return f"ibeacon-{SITE}-{MAJOR}-{raw_tag}"


def line(members):
    return json.dumps(members, separators=(",", ":"), ensure_ascii=True) + "\n"


def number(value):
    """Integers without a fraction, as the Swift writer does."""
    return int(value) if float(value).is_integer() else value


def convert_reports(path):
    """Yields (time, reading line) for every heard BLE group of a raw report file; counts what it skips."""
    skipped = 0
    out = []
    with open(path) as source:
        for number_, text in enumerate(source, 1):
            fields = text.rstrip("\n").split("\t")
            try:
                values = [int(f) for f in fields]
                ts_ms, raw_anchor, _, _, _, n_ble, _ = values[:HEADER_FIELDS]
                if len(values) < HEADER_FIELDS + n_ble * BLE_FIELDS:
                    raise ValueError("short line")
            except ValueError:
                skipped += 1
                continue
            anchor = ANCHORS.get(raw_anchor)
            if anchor is None:
                skipped += 1
                continue
            for group in range(n_ble):
                base = HEADER_FIELDS + group * BLE_FIELDS
                _, raw_tag, _, rssi = values[base : base + 4]
                if rssi == 0 or rssi < -127 or rssi > 20:  # 0 means not heard
                    continue
                time = number(round(ts_ms / 1000, 3))
                out.append(
                    (time, line({"t": time, "agent": f"anchor-{anchor}", "tag": tag_id(raw_tag), "rssi": rssi}))
                )
    return out, skipped


def convert_poses(path, raw_tag=1):
    out = []
    with open(path) as source:
        for row in csv.DictReader(source):
            time = number(round(float(row["ts"]) / 1e9, 3))
            x = number(round(float(row["x"]), 3))
            y = number(round(float(row["y"]), 3))
            out.append((time, line({"t": time, "tag": tag_id(raw_tag), "x": x, "y": y, "floor": FLOOR})))
    return out


def write(path, rows, compress=False):
    rows.sort(key=lambda row: row[0])  # stable: file order among equal times
    data = "".join(text for _, text in rows).encode()
    if compress:
        # mtime 0 and no file name: the same input always gives the same bytes.
        data = gzip.compress(data, compresslevel=9, mtime=0)
    path.write_bytes(data)
    print(f"{path}: {len(rows)} lines, {len(data)} bytes", file=sys.stderr)


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    dataset, output = Path(sys.argv[1]), Path(sys.argv[2])
    output.mkdir(parents=True, exist_ok=True)

    readings, skipped = convert_reports(dataset / "tests" / "test_robot_ble.txt")
    write(output / "robot-readings.jsonl", readings)
    write(output / "robot-truth.jsonl", convert_poses(dataset / "tests" / "test_robot_df.csv"))
    print(f"robot: {skipped} report lines skipped", file=sys.stderr)

    calibration = []
    for part in range(1, 5):
        rows, skipped = convert_reports(dataset / "calibration" / f"calib{part}_ble.txt")
        calibration += rows
        print(f"calibration {part}: {skipped} report lines skipped", file=sys.stderr)
    # The calibration readings are 6 MB as text; gzip keeps the repository small (`gzip -dc` reads them).
    write(output / "calibration-readings.jsonl.gz", calibration, compress=True)
    write(output / "calibration-truth.jsonl", convert_poses(dataset / "calibration" / "calibration_df.csv"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
