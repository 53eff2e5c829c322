#!/usr/bin/env bash
# Soak for issue 12, item 2: the locator's --record file under `kill -9`. At two rates (one batch every 0.8 s,
# and 8,000 readings a second), an agent-like publisher streams QoS 1 batches through a private mosquitto while the
# locator is killed with SIGKILL and restarted 20 times; then the recording is checked line by line.
# Prints, per rate: readings published, recorded, lost, and torn lines (lines that do not parse).
# A kill can lose what the locator had acknowledged but not yet processed: at most its inbox (35 batches, see
# LocatorService.inboxLimit), so the high rate may lose up to that per kill; nothing else may be lost or torn.
# Usage: scripts/soak-recording.sh [KILLS]   (default 20; about 3 minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bootstrap.sh
source scripts/private-broker.sh
kills=${1:-20}
swift build -c release --product whereabouts --product whereabouts-locator >&2
bin=$(swift build -c release --show-bin-path)
out=out/soak-recording
rm -rf "$out" && mkdir -p "$out"
pids=()
cleanup() { for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT
start_private_broker "$bin" "$out" "max_queued_messages 0"
map=maps/demo-office.json
site=f7826da6-4fa2-4e98-8024-bc5b71e0893e

run_rate() {
    local name=$1 interval=$2 per_batch=$3
    local record=$out/$name.jsonl published=$out/$name.published
    : > "$record"
    start_locator() {
        "$bin/whereabouts-locator" --map "$map" --broker "$broker" --record "$record" --client-id "soak-$name" \
            --log-level warning 2>> "$out/$name.locator.log" &
        locator=$!
    }
    start_locator
    sleep 1
    # The publisher: one JSON batch a line, paced, into mosquitto_pub at QoS 1; every reading its own tag.
    python3 - "$interval" "$per_batch" "$published" "$site" <<'PY' |
import json, sys, time
interval, per_batch, published, site = float(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
epoch = int(time.time() * 1000)
end = time.time() + 60
seq = 0
with open(published, "w") as log:
    while time.time() < end:
        now = time.time()
        readings = []
        for index in range(per_batch):
            n = seq * per_batch + index
            tag = "ibeacon-%s-%d-%d" % (site, 1 + n // 65536, n % 65536)
            readings.append({"tag": tag, "t": now, "rssi": -60, "n": 3})
            log.write(tag + "\n")
        print(json.dumps({"v": 1, "agent": "g-lobby", "epoch": epoch, "seq": seq, "sent": now, "readings": readings}),
              flush=True)
        seq += 1
        time.sleep(max(0, interval - (time.time() - now)))
PY
    mosquitto_pub -h 127.0.0.1 -p "$port" -q 1 -l -t "whereabouts/v1/$site/agents/g-lobby/readings" &
    local publisher=$!
    pids+=("$publisher")
    for _ in $(seq "$kills"); do
        sleep "$(python3 -c 'import random; print(round(random.uniform(0.8, 2.2), 2))')"
        kill -9 "$locator" 2>/dev/null || true
        wait "$locator" 2>/dev/null || true
        start_locator
    done
    wait "$publisher" || true
    sleep 5
    kill -TERM "$locator"
    wait "$locator" || true
    python3 - "$published" "$record" "$name" <<'PY'
import json, sys
published = [line.strip() for line in open(sys.argv[1]) if line.strip()]
recorded, torn = set(), 0
for line in open(sys.argv[2]):
    try:
        recorded.add(json.loads(line)["tag"])
    except Exception:
        torn += 1
lost = len(set(published) - recorded)
print("%-6s readings published %7d, recorded %7d, lost %6d, torn lines %d" % (
    sys.argv[3], len(published), len(recorded & set(published)), lost, torn))
PY
}

echo "== $kills kill -9s at each rate" >&2
run_rate sparse 0.8 1
run_rate busy 0.0125 100
