#!/usr/bin/env bash
# Times `whereabouts map check` on maps with huge outlines (issue 12, item 9: a 64,000-vertex outline took 28.6 s,
# a 10 MB one did not finish in 120 s). Prints the vertex count, the file size and the seconds for each; the goal is
# under 2 s for any map up to 10 MB. Release build; no timing is asserted in `swift test`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bootstrap.sh
swift build -c release --product whereabouts >&2
bin=$(swift build -c release --show-bin-path)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for vertices in 8000 64000 420000; do
    python3 - "$vertices" "$work/map.json" <<'PY'
import json, math, sys
n = int(sys.argv[1])
def ring(i):
    angle = 2 * math.pi * i / n
    radius = 50 * (1 + 0.02 * math.sin(37 * angle))
    return [round(60 + radius * math.cos(angle), 6), round(60 + radius * math.sin(angle), 6)]
document = {
    "site": {"uuid": "f7826da6-4fa2-4e98-8024-bc5b71e0893e", "name": "Scale"},
    "floors": [{"major": 1, "name": "Ground", "height": 0, "outline": [ring(i) for i in range(n)]}],
    "zones": [{"floor": 1, "minor": 1, "name": "A", "polygon": [[50, 50], [60, 50], [60, 60], [50, 60]]}],
    "agents": [{"id": "a%d" % i, "floor": 1, "x": 40 + 5 * i, "y": 60, "z": 2.4} for i in range(6)],
}
json.dump(document, open(sys.argv[2], "w"))
PY
    bytes=$(stat -c %s "$work/map.json")
    start=$(date +%s.%N)
    "$bin/whereabouts" map check "$work/map.json" > /dev/null
    end=$(date +%s.%N)
    printf 'map check: %7d outline vertices, %9d bytes: %.2f s\n' "$vertices" "$bytes" \
        "$(python3 -c "print($end - $start)")"
done
