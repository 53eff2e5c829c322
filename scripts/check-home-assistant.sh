#!/usr/bin/env bash
# Proves the Home Assistant side the way a user would see it: installs Home Assistant Core from PyPI into a venv
# under out/ (Python >= 3.13), starts a private mosquitto and a fresh Home Assistant on free loopback ports,
# onboards it through its REST API (owner user, token, the MQTT config entry through the config-flow API), runs the
# locator with `whereabouts sim --broker`, and checks through Home Assistant's REST and websocket APIs: entities,
# names, devices and areas; counts and who is in each zone against the retained occupancy; zone.home counting the
# people whose tags are heard; the README's automations, a device trigger and an event entity counted against the
# events published; the battery sensors (the TLM voltage, and a GATT job's level in percent from a result published
# as an agent would) and the agent sensors; agents silent past the tag timeout without a tag lost; the locator killed
# (unavailable) and Home Assistant restarted (entities kept); unknown when the agents go offline; a lost tag without
# errors in home-assistant.log; a person following a tag's device tracker and leaving home; nothing left after a zone
# and a tag are removed (SIGHUP, and a restart), and a tag put back with its entity ids; state writes per tag per
# minute.
#
# Slow (the first install took 17 minutes on a loaded machine; a run about 5), so it is not part of `swift test`;
# scripts/test.sh runs it last, required. It needs a Python >= 3.13 (Debian 12 has 3.11: pyenv's 3.13, as on CI, is
# found) and PyPI. Exits 0 when every check passed, 1 when one failed. Where it cannot run at all (no Python
# >= 3.13, no PyPI, no mosquitto) it prints SKIPPED loudly and exits 0; HA_CHECK_REQUIRED=1 turns that into a failure.
#   HA_VERSION (default 2025.4.4)  HA_CHECK_WINDOW seconds of measured traffic (default 120)  HA_CHECK_TAGS (5)
#   HA_CHECK_BIN: a directory with whereabouts and whereabouts-locator to use instead of building them
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bootstrap.sh

version=${HA_VERSION:-2025.4.4}
window=${HA_CHECK_WINDOW:-120}
tags=${HA_CHECK_TAGS:-5}

skip() {
    echo
    echo "################################################################"
    echo "## SKIPPED: check-home-assistant: $*"
    echo "################################################################"
    if [ "${HA_CHECK_REQUIRED:-0}" = 1 ]; then exit 1; fi
    exit 0
}

# Home Assistant 2025.x needs Python 3.13 or newer: look on PATH, then in pyenv's versions.
python=""
for candidate in python3.14 python3.13 python3 $(ls -d /root/.pyenv/versions/3.1[3-9]*/bin/python 2>/dev/null) \
    $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.1[3-9]*/bin/python 2>/dev/null); do
    path=$(command -v "$candidate" 2>/dev/null) || continue
    if "$path" -c 'import sys, venv; sys.exit(0 if sys.version_info >= (3, 13) else 1)' 2>/dev/null; then
        python=$path
        break
    fi
done
[ -n "$python" ] || skip "no Python >= 3.13 found (Home Assistant $version needs it); install one (pyenv) and rerun"
command -v mosquitto >/dev/null || skip "no mosquitto binary (apt-get install mosquitto)"

# Something on a shared machine can leave /dev/null a regular file; Home Assistant's helpers then fail oddly.
[ -c /dev/null ] || { echo "check-home-assistant: /dev/null is not a character device; fix the machine first" >&2; exit 1; }

venv=out/ha-venv
integrations=(frontend mqtt recorder person onboarding config api websocket_api http auth automation device_automation)
if ! "$venv/bin/python" -c "import homeassistant.const as c, hass_frontend, paho.mqtt, sys
sys.exit(0 if c.__version__ == '$version' else 1)" 2>/dev/null; then
    echo "== installing Home Assistant Core $version into $venv with $("$python" -V) (takes a few minutes)" >&2
    rm -rf "$venv"
    "$python" -m venv "$venv"
    "$venv/bin/pip" install -q --upgrade pip >&2 || skip "pip could not reach PyPI"
    "$venv/bin/pip" install -q "homeassistant==$version" >&2 ||
        skip "pip could not install homeassistant==$version (no PyPI?)"
    # The integrations' own requirements (the frontend, paho-mqtt, …): Home Assistant runs with --skip-pip.
    mapfile -t requirements < <("$venv/bin/python" scripts/home-assistant/requirements.py "${integrations[@]}")
    "$venv/bin/pip" install -q "${requirements[@]}" >&2 || skip "pip could not install ${requirements[*]}"
fi

if [ -n "${HA_CHECK_BIN:-}" ]; then
    bin=$HA_CHECK_BIN # executables built elsewhere (another commit's, to see a check fail before a change)
else
    echo "== building" >&2
    swift build --product whereabouts-locator >&2
    swift build --product whereabouts >&2
    bin=$(swift build --show-bin-path)
fi

out=out/check-ha-$(date +%Y%m%d-%H%M%S)
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
ha_port=$("$bin/whereabouts" free-port)
echo "== mosquitto on 127.0.0.1:$port, Home Assistant $version on 127.0.0.1:$ha_port; logs in $out" >&2

timeout --kill-after 30 $((window + 960)) "$venv/bin/python" scripts/home-assistant/check.py \
    --bin "$bin" --hass "$venv/bin/hass" --map maps/demo-office.json --broker-port "$port" --ha-port "$ha_port" \
    --out "$out" --tags "$tags" --window "$window"
