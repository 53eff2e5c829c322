#!/usr/bin/env python3
"""How far the Kolakowski flat's readings can tell two places of the West room apart (issue 45).

Usage: scripts/kolakowski-separability.py [FIXTURES_DIR]

The robot path's p90 goals are missed on one stretch: the robot stands in the West room's north-west corner, beside
anchor 2, and the tracker puts it in the room's middle, about 2.8 m south. This script asks the data, not the
tracker, whether that can be helped. For each window length it takes the per-anchor mean RSSI over the window (the
"fingerprint") wherever the truth stayed inside one of the two places for the whole window, and:

- fits the best linear rule between the two places on the calibration walk (per-place means, pooled per-anchor
  variance: a Gaussian classifier, which is what a Bayes filter with a perfect radio map does with one window);
- prints its separation d' (the means' distance in pooled deviations over the six anchors) and the error that
  separation allows (Phi(-d'/2), two places equally likely);
- applies the rule to the robot path's windows in the corner and prints the share it puts in the middle.

Then, for scale, a plain fingerprint lookup of every robot second (7 nearest 3 s fingerprints of the calibration
walk, their positions averaged) and how many of the robot path's fixes stand in the corner. Standard library only;
reads the fixtures in Tests/TestFixtures/Fixtures/kolakowski (CC BY 4.0, see CREDIT.md there).
"""
import bisect
import json
import math
import os
import statistics
import sys
from collections import defaultdict

AGENTS = [f"anchor-{index}" for index in range(1, 7)]
PLACES = {
    "north-west corner": lambda x, y: x < 1.3 and y > 5.9,
    "middle of the room": lambda x, y: x < 1.5 and 3.0 < y < 4.2,
}


def track(directory, truth_name, readings_name):
    """Per whole second: the truth at the second's middle, and each agent's readings in it."""
    truth = [json.loads(line) for line in open(os.path.join(directory, truth_name))]
    times = [row["t"] for row in truth]

    def position(t):
        index = bisect.bisect_left(times, t)
        if index <= 0 or index >= len(times):
            return None
        before, after = truth[index - 1], truth[index]
        share = (t - before["t"]) / (after["t"] - before["t"])
        return (before["x"] + share * (after["x"] - before["x"]), before["y"] + share * (after["y"] - before["y"]))

    seconds = defaultdict(lambda: defaultdict(list))
    for line in open(os.path.join(directory, readings_name)):
        reading = json.loads(line)
        seconds[math.floor(reading["t"])][reading["agent"]].append(reading["rssi"])
    return {second: (position(second + 0.5), levels) for second, levels in seconds.items()}


def fingerprints(seconds, window):
    """(second, [mean RSSI per agent], [truth per second of the window]) for each window every agent was heard in."""
    result = []
    for second in sorted(seconds):
        span = [seconds.get(earlier) for earlier in range(second - window + 1, second + 1)]
        if any(entry is None or entry[0] is None for entry in span):
            continue
        vector = []
        for agent in AGENTS:
            levels = [level for _, heard in span for level in heard.get(agent, [])]
            vector.append(statistics.fmean(levels) if levels else None)
        if None not in vector:
            result.append((second, vector, [entry[0] for entry in span]))
    return result


def inside(place, truths):
    return all(PLACES[place](x, y) for x, y in truths)


def separation(calibration, robot, window):
    walk = fingerprints(calibration, window)
    groups = {place: [vector for _, vector, truths in walk if inside(place, truths)] for place in PLACES}
    if min(len(group) for group in groups.values()) < 5:
        return None
    means = {place: [statistics.fmean(column) for column in zip(*group)] for place, group in groups.items()}
    total = sum(len(group) for group in groups.values())
    variances = [
        sum(statistics.pvariance([vector[index] for vector in group]) * len(group) for group in groups.values()) / total
        for index in range(len(AGENTS))
    ]
    corner, middle = PLACES
    d = math.sqrt(sum((means[corner][i] - means[middle][i]) ** 2 / variances[i] for i in range(len(AGENTS))))

    def distance(vector, place):
        return sum((vector[i] - means[place][i]) ** 2 / variances[i] for i in range(len(AGENTS)))

    tests = [vector for _, vector, truths in fingerprints(robot, window) if inside(corner, truths)]
    wrong = sum(distance(vector, middle) < distance(vector, corner) for vector in tests)
    return len(groups[corner]), len(groups[middle]), d, 0.5 * math.erfc(d / 2 / math.sqrt(2)), len(tests), wrong


def quantile(values, share):
    ordered = sorted(values)
    return ordered[max(math.ceil(share * len(ordered)) - 1, 0)]


def lookup(calibration, robot, window=3, nearest=7):
    walk = [(vector, truths[-1]) for _, vector, truths in fingerprints(calibration, window)]
    errors = []
    for _, vector, truths in fingerprints(robot, window):
        ranked = sorted(walk, key=lambda entry: sum((a - b) ** 2 for a, b in zip(vector, entry[0])))[:nearest]
        x = statistics.fmean(point[0] for _, point in ranked)
        y = statistics.fmean(point[1] for _, point in ranked)
        errors.append(math.hypot(x - truths[-1][0], y - truths[-1][1]))
    return len(errors), statistics.median(errors), quantile(errors, 0.9)


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    directory = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "Tests/TestFixtures/Fixtures/kolakowski")
    calibration = track(directory, "calibration-truth.jsonl", "calibration-readings-1s.jsonl")
    robot = track(directory, "robot-truth.jsonl", "robot-readings.jsonl")

    print("West room: north-west corner (x < 1.3, y > 5.9 m) against its middle (x < 1.5, 3.0 < y < 4.2 m)")
    print("window  walk windows (corner / middle)  d'     error allowed  robot's corner windows put in the middle")
    for window in (1, 3, 10):
        figures = separation(calibration, robot, window)
        if figures is None:
            print(f"{window:>4} s  too few windows in one place")
            continue
        corner, middle, d, allowed, tests, wrong = figures
        print(
            f"{window:>4} s  {corner:>5} / {middle:<27} {d:5.2f}  {100 * allowed:5.1f} %        "
            f"{wrong} of {tests} ({100 * wrong / max(tests, 1):.0f} %)")

    seconds = [entry for entry in robot.values() if entry[0] is not None]
    in_corner = sum(PLACES["north-west corner"](*entry[0]) for entry in seconds)
    print(f"robot path: {len(seconds)} seconds with truth, {in_corner} of them in the north-west corner; "
          f"a p90 allows {len(seconds) // 10} fixes beyond it")
    count, median, p90 = lookup(calibration, robot)
    print(f"fingerprint lookup (7 nearest 3 s fingerprints of the calibration walk): {count} seconds, "
          f"median {median:.2f} m, p90 {p90:.2f} m")


if __name__ == "__main__":
    main()
