#!/usr/bin/env python3
"""The reference for the agent's decoding: Home Assistant's bluetooth-data-tools on the same HCI events.

bluetooth-data-tools parses advertisement data (the AD structures); it has no HCI event parser, so this script
does the little that is left in plain Python, as a Python scanner would: check the LE Meta event's lengths, walk
its legacy (0x02) or extended (0x0D) reports, take each report's address, RSSI and data, parse the data with
`parse_advertisement_data_bytes`, and read iBeacon, AltBeacon and Eddystone-UID frames out of the manufacturer
and service data. Over-long legacy reports are accepted, as the Swift side is told to accept them too, so both do
the same work on all 287 events.

`parse_advertisement_data_bytes` is memoised (an LRU cache of 1,024 payloads). The fixture's 287 payloads fit in it,
so after the first pass the cached run measures a cache lookup, not a parse. Both are measured: `cached` is the
public function as Home Assistant calls it; `uncached` the same Cython parser without the cache.

Prints one line of JSON with events per CPU second for each.
"""
import argparse
import json
import time

import bluetooth_data_tools
from bluetooth_data_tools import gap

EDDYSTONE = "0000feaa-0000-1000-8000-00805f9b34fb"


def reports(event):
    """(address, rssi, data) of every report in one H4 event, or [] if the event does not add up."""
    if len(event) < 5 or event[0] != 0x04 or event[1] != 0x3E or event[2] != len(event) - 3:
        return []
    subevent, count, offset, end = event[3], event[4], 5, len(event)
    found = []
    for _ in range(count):
        if subevent == 0x02:
            if end - offset < 10:
                return []
            length = event[offset + 8]
            if end - offset < 10 + length:
                return []
            data = event[offset + 9 : offset + 9 + length]
            rssi = event[offset + 9 + length]
            address = event[offset + 2 : offset + 8]
            offset += 10 + length
        elif subevent == 0x0D:
            if end - offset < 24:
                return []
            length = event[offset + 23]
            if end - offset < 24 + length:
                return []
            data = event[offset + 24 : offset + 24 + length]
            rssi = event[offset + 13]
            address = event[offset + 3 : offset + 9]
            offset += 24 + length
        else:
            return []
        rssi = rssi - 256 if rssi > 127 else rssi
        if rssi > 20:
            continue
        found.append((int.from_bytes(address, "little"), rssi, bytes(data)))
    return found if offset == end else []


def sightings(event, parse):
    result = []
    for address, rssi, data in reports(event):
        _name, _uuids, service_data, manufacturer_data, _power = parse(data)
        mac = bluetooth_data_tools.int_to_bluetooth_address(address)
        apple = manufacturer_data.get(0x004C)
        if apple is not None and len(apple) >= 23 and apple[0] == 0x02 and apple[1] == 0x15:
            uuid = apple[2:18].hex()
            major = int.from_bytes(apple[18:20], "big")
            minor = int.from_bytes(apple[20:22], "big")
            power = apple[22] - 256 if apple[22] > 127 else apple[22]
            result.append((f"ibeacon-{uuid}-{major}-{minor}", mac, rssi, power))
        for value in manufacturer_data.values():
            if len(value) >= 24 and value[0] == 0xBE and value[1] == 0xAC:
                uuid = value[2:18].hex()
                major = int.from_bytes(value[18:20], "big")
                minor = int.from_bytes(value[20:22], "big")
                result.append((f"altbeacon-{uuid}-{major}-{minor}", mac, rssi, value[22] - 256))
        frame = service_data.get(EDDYSTONE)
        if frame is not None and len(frame) >= 18 and frame[0] == 0x00:
            result.append((f"eddystone-{frame[2:12].hex()}-{frame[12:18].hex()}", mac, rssi, frame[1] - 256))
    return result


def measure(events, parse, seconds):
    per_pass = sum(len(sightings(event, parse)) for event in events)
    passes = 0
    start = time.process_time()
    while True:
        for _ in range(20):
            for event in events:
                sightings(event, parse)
        passes += 20
        elapsed = time.process_time() - start
        if elapsed >= seconds:
            break
    return {"sightings_per_pass": per_pass, "events": passes * len(events), "cpu_seconds": elapsed,
            "events_per_cpu_second": passes * len(events) / elapsed}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("fixture")
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    with open(args.fixture) as handle:
        events = [bytes.fromhex(json.loads(line)["hex"]) for line in handle if line.strip()]
    cached = measure(events, bluetooth_data_tools.parse_advertisement_data_bytes, args.seconds)
    uncached = measure(events, gap._uncached_parse_advertisement_bytes, args.seconds)
    print(json.dumps({"figure": "bluetooth_data_tools_decode", "events_per_pass": len(events),
                      "cached": cached, "uncached": uncached}))


if __name__ == "__main__":
    main()
