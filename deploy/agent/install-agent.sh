#!/bin/sh
# Installs the Whereabouts agent on a Raspberry Pi OS / Debian board.
#
# Usage: sudo install-agent.sh PATH/TO/whereabouts-agent
#
# Installs the binary as /usr/local/bin/whereabouts-agent, creates the system user whereabouts-agent, writes an
# example /etc/whereabouts/agent.conf (mode 640) unless one exists, installs whereabouts-agent.service (from this
# directory) and enables it. Safe to run again: an existing agent.conf is kept, the user is reused, and a running
# agent is restarted onto the new binary.
#
# Build the binary with the Swift runtime linked in, so the board needs no Swift installation:
#   swift build -c release --static-swift-stdlib --product whereabouts-agent
# The board needs libmosquitto1 and libbluetooth3 (apt-get install libmosquitto1 libbluetooth3).
#
# Exit codes: 0 done, 1 a step failed, 2 bad usage.
set -eu

user=whereabouts-agent
binary_target=/usr/local/bin/whereabouts-agent
config_dir=/etc/whereabouts
config=$config_dir/agent.conf
unit_target=/etc/systemd/system/whereabouts-agent.service
here=$(cd "$(dirname "$0")" && pwd)

if [ "$#" -ne 1 ]; then
    echo "usage: $0 PATH/TO/whereabouts-agent" >&2
    exit 2
fi
binary=$1

if [ "$(id -u)" -ne 0 ]; then
    echo "error: install-agent.sh must run as root (it creates a user and writes to /usr/local and /etc):" >&2
    echo "       sudo $0 $binary" >&2
    exit 1
fi
if [ ! -f "$binary" ] || [ ! -x "$binary" ]; then
    echo "error: $binary is not an executable file" >&2
    exit 2
fi
for file in whereabouts-agent.service agent.conf; do
    if [ ! -f "$here/$file" ]; then
        echo "error: $file not found beside this script in $here" >&2
        exit 1
    fi
done

# The binary: copied to a temporary name and renamed, so a running agent never sees a half-written file.
install -d -m 755 /usr/local/bin
install -m 755 "$binary" "$binary_target.new"
mv -f "$binary_target.new" "$binary_target"
echo "installed $binary_target"

# The user: a system account with no home and no shell; raw HCI comes from the unit's capabilities.
if ! getent passwd "$user" >/dev/null; then
    useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$user"
    echo "created system user $user"
fi

install -d -m 755 -o root -g root "$config_dir"
if [ ! -e "$config" ]; then
    umask 027
    install -m 640 "$here/agent.conf" "$config"
    chown root:"$user" "$config"
    chmod 640 "$config"
    echo "wrote an example $config (mode 640): set WHEREABOUTS_ID, WHEREABOUTS_SITE and WHEREABOUTS_BROKER"
    fresh_config=yes
else
    echo "kept the existing $config"
    fresh_config=no
fi

install -m 644 "$here/whereabouts-agent.service" "$unit_target"
echo "installed $unit_target"

if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    systemctl daemon-reload
    systemctl enable whereabouts-agent.service >/dev/null
    echo "enabled whereabouts-agent.service"
    if [ "$fresh_config" = yes ]; then
        echo "edit $config, then: systemctl start whereabouts-agent"
    else
        systemctl try-restart whereabouts-agent.service
        echo "restarted whereabouts-agent if it was running; start it with: systemctl start whereabouts-agent"
    fi
else
    echo "warning: systemd is not running here; enable the unit later with: systemctl enable --now whereabouts-agent" >&2
fi
