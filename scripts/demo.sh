#!/usr/bin/env bash
# The demo: a private broker, the locator on the demo office, and 20 simulated tags walking it ten times faster
# than real time, watched live as a dashboard would: in the terminal, and on the live map in a browser (the address
# is printed first; DEMO_WEB_PORT picks the port, else a free one). After about a minute it prints the accuracy, an
# SVG of the final state, and the recording with the command that replays it; the page stays up until the demo ends.
# Ctrl-C stops everything it started.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bootstrap.sh

duration=${DEMO_SECONDS:-60}      # wall-clock seconds
speed=${DEMO_SPEED:-10}           # simulated seconds per real second
tags=${DEMO_TAGS:-20}
map=maps/demo-office.json

echo "== building (release)" >&2
swift build -c release >&2
bin=$(swift build -c release --show-bin-path)

out=out/demo-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

source scripts/private-broker.sh
start_private_broker "$bin" "$out"
origin=$(date +%s)
# The simulation's clock starts at the origin and runs `speed` times faster for duration*speed simulated seconds:
# it ends at origin + duration. The page and the terminal are told, so that afterwards they say the simulation
# ended rather than read its silent agents as an outage.
ends=$((origin + duration))

"$bin/whereabouts-locator" --map "$map" --broker "$broker" --record "$out/readings.jsonl" \
    --time-scale "$speed" --time-origin "$origin" --warm-up 5 --log-level warning 2> "$out/locator.log" &
locator=$!
pids+=($locator)
"$bin/whereabouts" sim --map "$map" --tags "$tags" --seed 7 --duration $((duration * speed)) --broker "$broker" \
    --speed "$speed" --time-origin "$origin" --truth "$out/truth.jsonl" 2> "$out/sim.log" &
sim=$!
pids+=($sim)

web_port=${DEMO_WEB_PORT:-$("$bin/whereabouts" free-port)}
"$bin/whereabouts" web --map "$map" --broker "$broker" --listen "127.0.0.1:$web_port" --simulation-end "$ends" \
    > "$out/web.out" 2> "$out/web.log" &
pids+=($!)
web=http://127.0.0.1:$web_port/
for _ in $(seq 50); do grep -q http "$out/web.out" 2>/dev/null && break; sleep 0.1; done
grep -q http "$out/web.out" || { echo "whereabouts web did not start; see $out/web.log" >&2; exit 1; }
echo "== live map: $web  (open it in a browser; it follows the demo until the end)"
sleep 3

"$bin/whereabouts" watch --map "$map" --broker "$broker" --duration "$duration" --simulation-end "$ends"
wait "$sim" || { echo "the simulator failed; see $out/sim.log" >&2; exit 1; }
kill -TERM "$locator"
wait "$locator" || true

echo
echo "== accuracy (the recording replayed through the same engine, against the simulated truth)"
"$bin/whereabouts" replay --map "$map" --readings "$out/readings.jsonl" --positions "$out/positions.jsonl" \
    --events "$out/events.jsonl" 2>> "$out/replay.log"
"$bin/whereabouts" evaluate --positions "$out/positions.jsonl" --truth "$out/truth.jsonl" --map "$map"
"$bin/whereabouts" render --map "$map" --positions "$out/positions.jsonl" --out "$out/final.svg" 2>> "$out/replay.log"
echo
echo "live map:                $web (served until the demo exits)"
echo "SVG of the final state:  $out/final.svg"
echo "recording:               $out/readings.jsonl ($(wc -l < "$out/readings.jsonl") readings)"
echo "replay it:               $bin/whereabouts replay --map $map --readings $out/readings.jsonl --positions positions.jsonl"
if [ -t 0 ]; then
    read -r -p "the live map is still up at $web (the last state); press Enter to stop it " _ || true
fi
