#!/usr/bin/env bash
# The browser check for `whereabouts web` (issue 15): a private broker, the locator on the demo office, simulated
# tags walking it at twice real time, and the live page opened in Debian's headless chromium (driven by
# python3-selenium). scripts/check-web.py compares the DOM with the broker's retained state (dots within 1 SVG pixel
# at 30 px/m, zone counts, unknown zones) and measures the time from a position's publication to its dot moving;
# then it takes the page's sources away one by one (web, the agents, the broker, the locator) and checks what the
# page says and greys (issue 49), its lists, framing by a configured origin, and the events and zone hours that a
# restart of web keeps in --state-dir. Screenshots are saved under out/.
#   CHECK_WEB_CONFIG=debug scripts/check-web.sh    # reuse a debug build (default: release, as the demo)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bootstrap.sh
scripts/bootstrap-browser.sh

config=${CHECK_WEB_CONFIG:-release}
speed=2
map=maps/demo-office.json
echo "== building ($config)" >&2
if [ "$config" = debug ]; then
    # The build scripts/test.sh makes (other flags would rebuild every module).
    swift build --build-tests -Xswiftc -warnings-as-errors >&2
else
    swift build -c "$config" >&2
fi
bin=$(swift build -c "$config" --show-bin-path)

out=out/check-web-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
pids=()
cleanup() {
    # Last started first (the broker last, so that its clients can say goodbye), and no waiting on a straggler.
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
        kill -CONT "${pids[i]}" 2>/dev/null || true
        kill "${pids[i]}" 2>/dev/null || true
    done
    for _ in $(seq 50); do
        alive=0
        for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
        ((alive)) || break
        sleep 0.1
    done
    for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

source scripts/private-broker.sh
start_private_broker "$bin" "$out"
origin=$(date +%s)
broker_pid=${pids[0]}
# A short keepalive: the check kills the locator and waits for its last will.
"$bin/whereabouts-locator" --map "$map" --broker "$broker" --time-scale "$speed" --time-origin "$origin" \
    --warm-up 2 --keepalive 5 --log-level warning 2> "$out/locator.log" &
locator=$!
pids+=($locator)
"$bin/whereabouts" sim --map "$map" --tags 12 --seed 11 --duration 100000 --broker "$broker" --speed "$speed" \
    --time-origin "$origin" 2> "$out/sim.log" &
sim=$!
pids+=($sim)
web_port=$("$bin/whereabouts" free-port)
web=("$bin/whereabouts" web --map "$map" --broker "$broker" --listen "127.0.0.1:$web_port" --state-dir "$out")
# The check restarts web once, allowing a page on another origin (which it serves) to frame it.
frame_port=$("$bin/whereabouts" free-port)
web_restart=("${web[@]}" --frame-ancestors "http://127.0.0.1:$frame_port")
"${web[@]}" > "$out/web.out" 2> "$out/web.log" &
web_pid=$!
pids+=($web_pid)
url=
for _ in $(seq 100); do
    url=$(grep -o 'http://[^ ]*' "$out/web.out" || true)
    [ -n "$url" ] && break
    sleep 0.1
done
[ -n "$url" ] || { echo "whereabouts web did not start; see $out/web.log" >&2; exit 1; }
web_restart_json=$(/usr/bin/python3 -c 'import json, sys; print(json.dumps(sys.argv[1:]))' "${web_restart[@]}")
echo "== page at $url; letting the locator warm up" >&2
sleep 8

/usr/bin/python3 scripts/check-web.py --url "$url" --broker-port "$port" --map "$map" --sim-pid "$sim" \
    --web-pid "$web_pid" --web-restart-command "$web_restart_json" --broker-pid "$broker_pid" \
    --broker-conf "$out/mosquitto.conf" --locator-pid "$locator" --frame-port "$frame_port" --out "$out"
