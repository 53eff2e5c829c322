#!/usr/bin/env bash
# The benchmarks: builds in release mode, installs what it needs, measures engine, pipeline, agent and scale
# against references run in the same session, prints a table and writes out/bench/results.json (and .md).
# Every figure is a ratio against a reference measured here and now, because these machines are shared and noisy.
# docs/benchmarks.md says what each figure means. Takes about 5 minutes; nothing listens beyond 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bootstrap.sh

out=${BENCH_OUT:-out/bench}
mkdir -p "$out"
raw=$out/raw.jsonl
: > "$raw"
site=f7826da6-4fa2-4e98-8024-bc5b71e0893e
fixture=Tests/TestFixtures/Fixtures/hci-events/hci_events.jsonl

# Python references: Debian's venv module, then scipy, numpy and bluetooth-data-tools from PyPI.
if ! apt-cache policy python3-venv 2>/dev/null | grep -q 'Installed: [0-9]'; then
    echo "== installing python3-venv" >&2
    sudo_cmd=()
    [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends python3-venv >&2
fi
venv=$out/venv
if ! "$venv/bin/python" -c 'import scipy, numpy, bluetooth_data_tools' 2>/dev/null; then
    echo "== Python references (scipy, numpy, bluetooth-data-tools)" >&2
    /usr/bin/python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check scipy numpy bluetooth-data-tools >&2
fi
python=$venv/bin/python
# One core each: no BLAS threads for scipy.
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1

echo "== building (release)" >&2
swift build -c release >&2
bin=$(swift build -c release --show-bin-path)
# The agent as the packages ship it (scripts/package.sh): the Swift runtime linked in, in its own build directory.
echo "== building the packaged agent (release, --static-swift-stdlib)" >&2
swift build -c release --static-swift-stdlib --scratch-path .build/static --product whereabouts-agent >&2
packaged_agent=$(swift build -c release --static-swift-stdlib --scratch-path .build/static --show-bin-path)/whereabouts-agent
bench=$bin/whereabouts-bench

pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

record() { tee -a "$raw" >&2; }

# Ours and the reference take turns, three rounds each, and the best of each counts: on a shared machine, other
# work only ever slows a run down.
# Trilateration here: scipy solves the same trilateration problems, which its fixes write. Every other engine
# figure is the default tracker's, the grid filter.
echo "== engine, trilateration: 1,000 tags, 50 agents; scipy least_squares on the same ranges (3 rounds)" >&2
for round in 1 2 3; do
    problems=()
    [ "$round" -eq 1 ] && problems=(--problems "$out/problems.jsonl")
    "$bench" engine --agents 50 --tags 1000 --seconds 30 --warm-up 10 --positioning trilateration \
        "${problems[@]}" | record
    "$python" scripts/bench/trilateration_scipy.py "$out/problems.jsonl" --k 4 --seconds 3 | record
done

cores=$(getconf _NPROCESSORS_ONLN)  # not nproc: it heeds the OMP_NUM_THREADS=1 set for the Python references
echo "== engine on every core: one worker against $cores, per wall second (3 rounds each, alternated)" >&2
for round in 1 2 3; do
    for workers in 1 "$cores"; do
        "$bench" engine --agents 50 --tags 1000 --seconds 30 --warm-up 10 --workers "$workers" \
            | sed 's/"figure":"engine"/"figure":"engine_workers"/' | record
    done
done

echo "== engine, grid filter (issue 11): 1,000 tags and 50 agents (3 rounds), then its memory at 10,000 tags" >&2
for round in 1 2 3; do
    "$bench" engine --agents 50 --tags 1000 --seconds 20 --warm-up 5 --positioning grid \
        | sed 's/"figure":"engine"/"figure":"engine_grid"/' | record
done
"$bench" engine --agents 50 --tags 10000 --seconds 10 --warm-up 5 --positioning grid \
    | sed 's/"figure":"engine"/"figure":"engine_grid_10000"/' | record

# Alternated, the best of three each, as the other engine figures: one short run of each swung the ratio from 1.1
# to 1.7 on a shared machine. The 100-tag runs are 1,500 simulated seconds (about 1.8 M readings; 10,000 tags make
# about 1.2 M in 10). Both ends leave out the same first 40 s, while the tags' windows start wide and their power
# offsets are unlearnt: a tag costs more then, and with 5 s left out (10 s at 100 tags) the 10,000-tag end measured
# tags 5-15 s old against the 100-tag end's 10-1,510 s, which made it 4 % slower by age alone (docs/benchmarks.md).
echo "== engine: cost per reading from 100 to 10,000 tags (3 rounds each, alternated)" >&2
for round in 1 2 3; do
    "$bench" engine --agents 50 --tags 100 --seconds 1500 --warm-up 40 \
        | sed 's/"figure":"engine"/"figure":"engine_100"/' | record
    "$bench" engine --agents 50 --tags 10000 --seconds 10 --warm-up 40 \
        | sed 's/"figure":"engine"/"figure":"engine_10000"/' | record
done

echo "== agent decoding: fixture events, ours and bluetooth-data-tools (3 rounds)" >&2
for round in 1 2 3; do
    "$bench" decode --fixture "$fixture" --seconds 2 | record
    "$python" scripts/bench/decode_bluetooth_data_tools.py "$fixture" --seconds 2 | record
done

echo "== locator batch decoding: straight from the bytes, against the JSON tree (same payloads, same run)" >&2
"$bench" batches --seconds 2 | record

echo "== the locator's service loop alone at 10,000 tags and 200 agents, no broker (3 rounds)" >&2
for round in 1 2 3; do
    "$bench" loop --agents 200 --tags 10000 --seconds 20 --warm-up 5 | record
done

# A private mosquitto on a free loopback port (never 1883), with unbounded queues so that a slow subscriber
# makes the stream wait rather than lose messages.
source scripts/private-broker.sh
start_private_broker "$bin" "$out" "max_queued_messages 0" "max_queued_bytes 0"
"$bench" map --agents 50 --out "$out/map50.json"
"$bench" map --agents 200 --out "$out/map200.json"

# Each locator run gets a client id of its own: with the default one, the broker would keep the last run's
# session and hand the next run whatever was published in between. And each run's session is ended after it: the
# locator's outlives its connection by an hour, so the broker went on queueing every later stream for every locator
# that had gone (unbounded here), which made each round slower than the one before, the ceiling's too (3.7 M
# readings/s in the first round, 1.4 M in the fifth).
runs=0
start_locator() {  # map, extra options…
    local map=$1
    shift
    runs=$((runs + 1))
    locator_id=bench-locator-$$-$runs
    "$bin/whereabouts-locator" --map "$map" --broker "$broker" --client-id "$locator_id" --warm-up 2 \
        --no-discovery --log-level warning "$@" 2>> "$out/locator.log" &
    locator=$!
    pids+=($locator)
    sleep 1
}
stop_locator() {
    kill -TERM "$locator"
    wait "$locator" || true
    # A clean start with the same id and no session expiry (MQTT v5) ends the session the locator left.
    mosquitto_sub -h 127.0.0.1 -p "$port" -V 5 -i "$locator_id" -t whereabouts/bench/none -E
}

echo "== pipeline: the broker's ceiling (mosquitto_sub) and the locator, on the same stream, twice" >&2
windows=200
for round in 1 2; do
    mosquitto_sub -h 127.0.0.1 -p "$port" -q 1 -t "whereabouts/v1/$site/agents/+/readings" -C $((windows * 50)) \
        > /dev/null &
    subscriber=$!
    sleep 0.5
    line=$("$bench" stream --broker "$broker" --windows $windows --label ceiling)
    wait "$subscriber"
    end=$(date +%s.%N)
    echo "${line%\}},\"end\":$end,\"round\":$round}" | record

    start_locator "$out/map50.json" --metrics-interval 0.1
    "$bench" stream --broker "$broker" --windows $windows --wait-locator --locator-pid "$locator" --label locator \
        | sed "s/}\$/,\"round\":$round}/" | record
    stop_locator
done

echo "== latency: reading to occupancy, 1,000 tags at 1 batch per agent per second (60 s)" >&2
start_locator "$out/map50.json"
"$bench" latency --broker "$broker" --seconds 60 | record
stop_locator

echo "== real time at 10,000 tags and 200 agents: latency and the locator's share of the cores (60 s)" >&2
start_locator "$out/map200.json"
"$bench" latency --broker "$broker" --agents 200 --tags 10000 --seconds 60 --locator-pid "$locator" \
    --label latency_10000 | record
stop_locator

# The other tracker, for comparison: the default is the grid filter (docs/tracker.md).
echo "== real time at 10,000 tags and 200 agents with trilateration (60 s)" >&2
start_locator "$out/map200.json" --positioning trilateration
"$bench" latency --broker "$broker" --agents 200 --tags 10000 --seconds 60 --locator-pid "$locator" \
    --label latency_10000_trilateration | record
stop_locator

echo "== agent: replaying 1,000 adverts/s for 30 s into the broker, as packaged, then as built from source" >&2
"$bench" capture --out "$out/adverts.btsnoop" --rate 1000 --seconds 30 --tags 200 > /dev/null
for build in packaged source; do
    executable=$packaged_agent label=agent
    [ "$build" = packaged ] || executable=$bin/whereabouts-agent label=agent_source
    "$executable" --id a0 --site "$site" --broker "$broker" --source "btsnoop:$out/adverts.btsnoop" \
        --replay-speed 1 --no-advertise --config /dev/null --log-level warning 2> "$out/$label.log" &
    agent=$!
    pids+=($agent)
    "$bench" watch-process --pid "$agent" --interval 0.1 --label "$label" | record
    wait "$agent" || { echo "the agent failed; see $out/$label.log" >&2; exit 1; }
done

echo "== scale: the locator with 10,000 tags and 200 agents" >&2
start_locator "$out/map200.json" --metrics-interval 0.1
"$bench" stream --broker "$broker" --agents 200 --tags 10000 --windows 20 --distinct 4 --lead 1 --wait-locator \
    --locator-pid "$locator" --label scale | record
stop_locator

"$python" scripts/bench/report.py "$raw" --json "$out/results.json" --markdown "$out/results.md"
