#!/usr/bin/env bash
# Before and after in one run: alternates two builds of whereabouts-bench over the engine (grid filter and
# trilateration at 1,000 tags, the grid at 10,000) and the locator's service loop at 10,000 tags, ROUNDS times, and
# prints each figure's runs, medians and the ratio of the medians. The shared machine is noisy, so only alternated
# runs in one go compare (docs/benchmarks.md).
#
#   scripts/bench-compare.sh BEFORE_BIN AFTER_BIN [ROUNDS]
#
# Build a "before" with: git worktree add /tmp/before REV && (cd /tmp/before && swift build -c release
# --product whereabouts-bench), then BEFORE_BIN is /tmp/before/.build/release/whereabouts-bench.
set -euo pipefail
[ $# -ge 2 ] || { sed -n 2,11p "$0" >&2; exit 2; }
before=$1 after=$2 rounds=${3:-3}
runs=(
    "grid_1000 readings_per_cpu_second engine --agents 50 --tags 1000 --seconds 20 --warm-up 5 --positioning grid"
    "trilateration_1000 readings_per_cpu_second engine --agents 50 --tags 1000 --seconds 30 --warm-up 10 --positioning trilateration"
    "grid_10000 readings_per_cpu_second engine --agents 50 --tags 10000 --seconds 10 --warm-up 5 --positioning grid"
    "loop_10000 loop_readings_per_cpu_second loop --agents 200 --tags 10000 --seconds 20 --warm-up 5"
)
lines=$(mktemp)
trap 'rm -f "$lines"' EXIT
for round in $(seq "$rounds"); do
    for run in "${runs[@]}"; do
        read -r name field arguments <<<"$run"
        for which in before after; do
            # shellcheck disable=SC2086 # the arguments are words
            value=$("${!which}" $arguments | python3 -c "import json, sys; print(json.load(sys.stdin)['$field'])")
            echo "$name $which $value" | tee -a "$lines" >&2
        done
    done
done
python3 - "$lines" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    name, which, value = line.split()
    runs.setdefault(name, {"before": [], "after": []})[which].append(float(value))
for name, both in runs.items():
    b, a = statistics.median(both["before"]), statistics.median(both["after"])
    print(f"{name:20} before {b:12,.0f}  after {a:12,.0f}  after/before {a / b:.3f}  (runs: {len(both['after'])} each)")
PY
