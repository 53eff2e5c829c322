#!/usr/bin/env bash
# Usage: scripts/accuracy-figures.sh [WHEREABOUTS_BIN] [WORK_DIR]
# (EVALUATE_BIN=B scores with another build's `evaluate`, to score an older build's positions with today's metrics.)
#
# Prints issue 45's accuracy figures through the command line, as a user would get them: the Kolakowski robot path
# with the default map, calibrated on the whole calibration walk and on each half of the flat (calibrate's own
# spatial report beside what the robot path then gets), and the four harness scenarios (6 tags, 600 s, seed 42).
# Each row: median / p90 error (m), zone accuracy, zone changes per tag-hour reported and true, and the share of
# fixes within their own accuracy. The tests hold the goals (AccuracyHarnessTests, KolakowskiSpatialSplitTests);
# this script prints the same figures from a release build in about a minute.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-.build/release/whereabouts}
work=${2:-$(mktemp -d)}
mkdir -p "$work"
fixtures=Tests/TestFixtures/Fixtures
kolakowski=$fixtures/kolakowski
[ -x "$bin" ] || { echo "no executable at $bin (swift build -c release --product whereabouts)" >&2; exit 2; }

summary=$work/summary.py
cat > "$summary" <<'PYTHON'
import json, sys
report = json.loads([line for line in sys.stdin if line.startswith("{")][-1])
error = report["error_m"]
def fixed(value, places=2, scale=1):
    return "-" if value is None else format(value * scale, "." + str(places) + "f")
print(fixed(error["median"]), "/", fixed(error["p90"]), "m",
      " zones", fixed(report.get("zone_accuracy"), 1, 100), "%",
      " changes", fixed(report.get("zone_changes_per_tag_hour"), 1), "vs",
      fixed(report.get("true_zone_changes_per_tag_hour"), 1),
      " within own accuracy", fixed(report.get("within_accuracy"), 1, 100), "%")
PYTHON

figures() { # MAP POSITIONS TRUTH
    "${EVALUATE_BIN:-$bin}" evaluate --json --positions "$2" --truth "$3" --map "$1" | python3 "$summary"
}

robot() { # MAP NAME
    "$bin" replay --map "$1" --readings "$kolakowski/robot-readings.jsonl" --positions "$work/$2.positions.jsonl" \
        > /dev/null 2>&1
    printf '%-34s %s\n' "$2" "$(figures "$1" "$work/$2.positions.jsonl" "$kolakowski/robot-truth.jsonl")"
}

echo "== Kolakowski robot path (CC BY 4.0, see $kolakowski/CREDIT.md)"
robot maps/kolakowski-flat.json "default map"
calibrated() { # NAME PYTHON-CONDITION-ON-r
    python3 -c "
import json, sys
for line in open('$kolakowski/calibration-truth.jsonl'):
    r = json.loads(line)
    if $2: sys.stdout.write(line)" > "$work/$1.truth.jsonl"
    local status=0
    "$bin" calibrate --map maps/kolakowski-flat.json --readings "$kolakowski/calibration-readings-1s.jsonl" \
        --truth "$work/$1.truth.jsonl" --out "$work/$1.json" > "$work/$1.report.txt" 2>&1 || status=$?
    if [ "$status" -ne 0 ]; then
        printf '%-34s calibrate exit %s: %s\n' "calibrated, $1" "$status" "$(tail -1 "$work/$1.report.txt")"
        return
    fi
    robot "$work/$1.json" "calibrated, $1"
    printf '%-34s %s\n' "  calibrate's spatial report" \
        "$(grep -E '^all areas|^expected over the floor|position median' "$work/$1.report.txt" | tr -s ' ' | paste -sd ';')"
}
calibrated "whole walk" "True"
calibrated "south half" "r['y'] < 3.415"
calibrated "north half" "r['y'] >= 3.415"
calibrated "west half" "r['x'] < 4.535"
calibrated "east half" "r['x'] >= 4.535"

echo "== harness scenarios (6 tags, 600 s, seed 42)"
for scenario in open-office walled-rooms two-floors sparse-agents; do
    map=$fixtures/scenarios/$scenario.json
    "$bin" sim --map "$map" --tags 6 --duration 600 --seed 42 --readings "$work/$scenario.readings.jsonl" \
        --truth "$work/$scenario.truth.jsonl" > /dev/null 2>&1
    "$bin" replay --map "$map" --readings "$work/$scenario.readings.jsonl" \
        --positions "$work/$scenario.positions.jsonl" > /dev/null 2>&1
    printf '%-34s %s\n' "$scenario" "$(figures "$map" "$work/$scenario.positions.jsonl" "$work/$scenario.truth.jsonl")"
done

echo "== what the Kolakowski readings allow (scripts/kolakowski-separability.py, docs/tracker.md)"
python3 scripts/kolakowski-separability.py "$kolakowski"
