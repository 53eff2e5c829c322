#!/usr/bin/env bash
# The issue-48 fairness goal against a release build of the HTTP server: builds the server's module in release, links
# scripts/http-fairness/main.swift against it, starts it, and runs scripts/http-fairness.py measure (2,000 hostile
# connections of each kind by default; COUNT=N to change). Prints the measure's JSON report and the server's
# statistics. Exit status: the measure's (0 when at least 95 of 100 page loads succeeded within 2 s and the stream
# reader kept receiving).
set -euo pipefail
cd "$(dirname "$0")/.."
count=${COUNT:-2000}
swift build -c release --target WhereaboutsHTTPServer >/dev/null
release=$(swift build -c release --show-bin-path)
out=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$out"' EXIT
swiftc -O -I "$release/Modules" scripts/http-fairness/main.swift \
    "$release"/WhereaboutsHTTPServer.build/*.o "$release"/DetachedThread.build/*.o -o "$out/server"
"$out/server" 300 >"$out/stdout" 2>"$out/log" &
server=$!
until [ -s "$out/stdout" ]; do sleep 0.1; done
port=$(head -1 "$out/stdout")
status=0
python3 scripts/http-fairness.py measure "$port" --count "$count" --loads 100 || status=$?
grep statistics "$out/stdout" | tail -1
echo "refusal log lines: $(wc -l <"$out/log")"; head -3 "$out/log"
exit $status
