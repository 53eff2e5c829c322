#!/usr/bin/env bash
# The Kolakowski robot path's error at cell sizes close to each other: one figure at one cell size is not a
# measurement of that size. Each size lays the cells at another alignment to the map (walls 0.11-0.17 m thick drawn
# into the outline block or not depending on whether a row of cell centres falls inside them; the posterior's modes
# shift), and on the calibrated map the p90 moves by 0.5 m between 0.46 and 0.54 m cells. Compare sizes by the
# mean over a group around each (issue 45: 0.22-0.28 m against 0.46-0.54 m).
#
#   scripts/cell-size-sweep.sh WHEREABOUTS_BIN MAP [GROUP...]
#
# A GROUP is a space-separated list of sizes in one argument (default: "0.22 0.23 0.24 0.25 0.26 0.27 0.28" and
# "0.46 0.47 0.48 0.49 0.5 0.51 0.52 0.53 0.54"). Prints, per group, each size's median / p90 (m) and their means.
set -euo pipefail
[ $# -ge 2 ] || { sed -n 2,10p "$0" >&2; exit 2; }
bin=$1 map=$2
shift 2
groups=("$@")
[ ${#groups[@]} -gt 0 ] || groups=("0.22 0.23 0.24 0.25 0.26 0.27 0.28" "0.46 0.47 0.48 0.49 0.5 0.51 0.52 0.53 0.54")
fixtures=$(cd "$(dirname "$0")/.." && pwd)/Tests/TestFixtures/Fixtures/kolakowski
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for group in "${groups[@]}"; do
    figures=""
    for size in $group; do
        python3 -c "import json, sys; m = json.load(open(sys.argv[1])); m.setdefault('model', {})['cell_size'] = \
float(sys.argv[2]); json.dump(m, open(sys.argv[3], 'w'))" "$map" "$size" "$work/map.json"
        "$bin" replay --map "$work/map.json" --readings "$fixtures/robot-readings.jsonl" \
            --positions "$work/positions.jsonl" >/dev/null 2>&1
        figure=$("$bin" evaluate --positions "$work/positions.jsonl" --truth "$fixtures/robot-truth.jsonl" \
            --map "$work/map.json" | awk '/^error median/ { m = $NF } /^error p90/ { p = $NF } END { print m "/" p }')
        figures="$figures $size:$figure"
    done
    python3 -c "
import sys
pairs = [item.split(':') for item in sys.argv[1].split()]
values = [tuple(map(float, figure.split('/'))) for _, figure in pairs]
print('  '.join(f'{size} {m:.2f}/{p:.2f}' for (size, _), (m, p) in zip(pairs, values)))
print(f'  mean {sum(m for m, _ in values) / len(values):.3f} / {sum(p for _, p in values) / len(values):.3f}'
      f'  (p90 {min(p for _, p in values):.2f}-{max(p for _, p in values):.2f})')" "$figures"
done
