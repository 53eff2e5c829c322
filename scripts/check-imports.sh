#!/usr/bin/env bash
# The house rules on who may import what, checked by grepping the sources.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
fail() { echo "import rule broken: $*" >&2; status=1; }

for module in WhereaboutsJSON WhereaboutsSettings WhereaboutsCore WhereaboutsMapFile WhereaboutsWire WhereaboutsAdvertising WhereaboutsGATT WhereaboutsDrawing WhereaboutsSimulation WhereaboutsLocator WhereaboutsCalibration WhereaboutsAgent WhereaboutsDashboard WhereaboutsSession WhereaboutsEditor WhereaboutsSurvey; do
    # Pure modules: no Foundation, no C libraries, no adapters.
    if grep -rnE '^\s*(public |internal |package )?import (Foundation|FoundationEssentials|CMosquitto|CBlueZ|WhereaboutsMQTT|WhereaboutsHCI|Dispatch)\b' "Sources/$module" ; then
        fail "$module must stay pure"
    fi
done
# The engine owns no file format: Core imports none of ours (no JSON, no map file).
if grep -rnE '^\s*(public |internal |package )?import (WhereaboutsJSON|WhereaboutsMapFile)\b' Sources/WhereaboutsCore; then
    fail "WhereaboutsCore must not import a file format"
fi
# Pure means pure: the engine starts no threads; the runtime decides how its pieces of work run (WorkRunner).
if grep -rnE '^\s*(@testable |public |internal |package )?import DetachedThread\b' Sources/WhereaboutsCore Sources/WhereaboutsLocator; then
    fail "WhereaboutsCore and WhereaboutsLocator must not import DetachedThread (threads are the runtime's)"
fi
# The web dashboard: its page and state are pure (above) and know no sockets; the HTTP server is a generic adapter
# that knows no dashboard, map or broker (it imports none of our modules but DetachedThread, which imports nothing).
if grep -rnE '^\s*(public |internal |package )?import WhereaboutsHTTPServer\b' Sources/WhereaboutsDashboard; then
    fail "WhereaboutsDashboard must not import the HTTP server"
fi
# The editor, likewise: pure, no sockets, no files (the shell hands it an EditorStore).
if grep -rnE '^\s*(public |internal |package )?import (WhereaboutsHTTPServer|CommandLineSupport)\b' Sources/WhereaboutsEditor; then
    fail "WhereaboutsEditor must not import the HTTP server or the command line's files"
fi
# The dashboard draws floors with WhereaboutsDrawing; the simulation (walking tags, a radio channel) is no part of it.
if grep -rnE '^\s*(public |internal |package )?import WhereaboutsSimulation\b' Sources/WhereaboutsDashboard; then
    fail "WhereaboutsDashboard must not import the simulation"
fi
# Drawing is values in, text out: the engine's values and the recordings' records, nothing that runs.
if grep -rnE '^\s*(public |internal |package )?import (Whereabouts(Simulation|Locator|Agent|Dashboard|Calibration|Session|Runtime)|CommandLineSupport)\b' Sources/WhereaboutsDrawing; then
    fail "WhereaboutsDrawing imports more than the engine and the wire"
fi
if grep -rnE '^\s*(public |internal |package )?import (Whereabouts[A-Za-z]*|CommandLineSupport|C[A-Z][A-Za-z]*)\b' Sources/WhereaboutsHTTPServer; then
    fail "WhereaboutsHTTPServer must import none of our modules"
fi
# Adapters translate C to Swift values; settings and command lines belong to the executables.
for adapter in WhereaboutsMQTT WhereaboutsHCI; do
    if grep -rnE '^\s*(public |internal |package )?import CommandLineSupport\b' "Sources/$adapter"; then
        fail "$adapter imports CommandLineSupport"
    fi
done
# Test support (a broker to test against, shared data files) is for test targets only: nothing shipped imports it.
if grep -rnE '^\s*(@testable |public |internal |package )?import (BrokerFixture|TestFixtures|GATTPeripheral|ControllerEmulator)\b' Sources; then
    fail "a Sources/ module imports a test-support target"
fi
# The operator's tool's and the bench's commands are libraries only so that their executables stay wiring: nothing
# else imports them.
for library in WhereaboutsTool WhereaboutsBench; do
    if grep -rnE "^\s*(@testable |public |internal |package )?import $library\b" Sources | grep -vE '^Sources/(whereabouts|whereabouts-bench)/'; then
        fail "only its executable imports $library"
    fi
done
# Only adapters import C modules.
for dir in Sources/*/; do
    name=$(basename "$dir")
    case "$name" in WhereaboutsMQTT|WhereaboutsHCI|C*|whereabouts-fuzz-hci) continue ;; esac
    if grep -rnE '^\s*(public |internal )?import C(Mosquitto|BlueZ)\b' "$dir"; then fail "$name imports a C module"; fi
done
exit $status
