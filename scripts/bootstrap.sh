#!/usr/bin/env bash
# Installs the Debian packages Whereabouts needs to build and test, if any are missing.
# Safe to run again: it does nothing when everything is present.
set -euo pipefail

# bluez: btmon, which the btsnoop tests read files back with; bluez-test-tools: btvirt, the controller emulator
# the HCI tests run the agent against (docs/agent.md, "Without a board"); systemd: systemd-analyze and
# systemd-sysusers, which deploy/check-units.sh checks the shipped units with; prometheus: the real one the metrics
# endpoint's end-to-end test starts and queries (about 100 MB).
packages=(pkg-config libmosquitto-dev mosquitto mosquitto-clients libbluetooth-dev openssl bluez bluez-test-tools systemd
    prometheus)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done

if ((${#missing[@]})); then
    echo "bootstrap: installing ${missing[*]}" >&2
    sudo_cmd=()
    [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

command -v swift >/dev/null || export PATH="/opt/swift/usr/bin:$PATH"
command -v swift >/dev/null || { echo "bootstrap: no Swift toolchain found (expected /opt/swift)" >&2; exit 1; }
