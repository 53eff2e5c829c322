#!/usr/bin/env bash
# Fuzzes the radio-byte decoders (HCI events, AD structures, beacon frames, btsnoop) with libFuzzer and
# AddressSanitizer for N seconds (default 60), seeded from the fixture's real events. The build is optimised
# (about 4x the runs of a debug build); Swift keeps its bounds and overflow checks there.
# Prints the number of runs and of crashes; exits 1 if there was a crash.
# Usage: scripts/fuzz-hci.sh [seconds]   (FUZZ_SCRATCH_PATH, FUZZ_WORK_DIR override the build and work paths)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v swift >/dev/null || export PATH="/opt/swift/usr/bin:$PATH"

seconds=${1:-60}
scratch=${FUZZ_SCRATCH_PATH:-.build-fuzz}
work=${FUZZ_WORK_DIR:-$(mktemp -d /tmp/whereabouts-fuzz-hci.XXXXXX)}
# A crashing sanitizer binary can hang in Swift's backtracer; print the crash and exit instead.
export SWIFT_BACKTRACE=enable=no

swift build -c release --product whereabouts-fuzz-hci -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING \
    --scratch-path "$scratch" >&2
binary="$scratch/release/whereabouts-fuzz-hci"

mkdir -p "$work/corpus" "$work/artifacts"
"$binary" --make-seed-corpus Tests/TestFixtures/Fixtures/hci-events/hci_events.jsonl "$work/corpus"

status=0
"$binary" -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
    "$work/corpus" >"$work/fuzz.log" 2>&1 || status=$?

runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/fuzz.log" | tail -1)
if [ -z "$runs" ]; then
    runs=$(sed -n 's/^.*#\([0-9][0-9]*\).*$/\1/p' "$work/fuzz.log" | tail -1)
fi
crashes=$(find "$work/artifacts" -type f \( -name 'crash-*' -o -name 'oom-*' -o -name 'timeout-*' -o -name 'leak-*' \) | wc -l)
echo "fuzz-hci: ${runs:-0} runs in ${seconds} s, ${crashes} crashes (log and artifacts in $work)"
if [ "$crashes" -ne 0 ] || [ "$status" -ne 0 ]; then
    tail -40 "$work/fuzz.log" >&2
    exit 1
fi
