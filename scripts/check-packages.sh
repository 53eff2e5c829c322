#!/usr/bin/env bash
# Installs the Debian packages that scripts/package.sh makes into a clean Debian 12 root (debootstrap, minbase: no
# Swift, no systemd), runs the agent from its package against a real mosquitto, upgrades over a changed conffile,
# and purges: afterwards the root holds exactly the files, users and groups it held before.
#
# Usage (as root): scripts/check-packages.sh [--root DIR]   Exit 0 when every check passes, 1 otherwise.
#   --root DIR   a bookworm root made earlier by `debootstrap --variant=minbase bookworm DIR` (copied, not changed);
#                without it one is made (about 1-2 minutes, from deb.debian.org).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bootstrap.sh
[ "$(id -u)" -eq 0 ] || { echo "check-packages: run as root (debootstrap, chroot)" >&2 && exit 1; }
command -v debootstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >&2
base=
while (($#)); do
    case $1 in
        --root) base=$2 && shift ;;
        *) echo "usage: $0 [--root DIR]" >&2 && exit 2 ;;
    esac
    shift
done

work=$(mktemp -d /tmp/whereabouts-packages.XXXXXX)
root=$work/root
broker_pid=
cleanup() {
    [ -z "$broker_pid" ] || kill "$broker_pid" 2>/dev/null || true
    umount "$root/proc" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT INT TERM
failures=0
pass() { echo "ok    $1"; }
fail() {
    echo "FAIL  $1"
    failures=$((failures + 1))
}
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive "$@"; }

# --- The packages: this tree's, and the same again one version up, for the upgrade --------------------------------
version=0.$(git rev-list --count HEAD 2>/dev/null || echo 0)
bash scripts/package.sh --version "$version" --out "$work/dist"
bash scripts/package.sh --no-build --version "$version.1" --out "$work/next" >/dev/null
arch=$(dpkg --print-architecture)

if [ -n "$base" ]; then
    cp -a "$base" "$root"
else
    debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 || {
        tail -5 "$work/debootstrap.log" >&2
        exit 1
    }
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
in_root apt-get update -qq >/dev/null
# What the packages depend on and recommend, from Debian, before the first snapshot: the purge below must take away
# what our packages brought and nothing else (Debian's own packages, systemd's among them, leave their users behind).
in_root apt-get install -y -qq libmosquitto1 libbluetooth3 systemd openssl >"$work/dependencies.log" 2>&1 \
    || { tail -3 "$work/dependencies.log" >&2 && exit 1; }

# snapshot NAME: every file and link of the root (bar apt's and dpkg's own records, logs and caches) with its
# owner and mode, and the users and groups.
snapshot() {
    (cd "$root" && find . -xdev \( -path ./proc -o -path ./tmp -o -path ./var/lib/apt -o -path ./var/lib/dpkg \
        -o -path ./var/cache -o -path ./var/log -o -path ./etc/ld.so.cache \) -prune -o -printf '%p %U:%G %m\n' \
        | sort) >"$work/$1.files"
    cut -d: -f1 "$root/etc/passwd" "$root/etc/group" | sort >"$work/$1.accounts"
}
snapshot before
[ ! -e "$root/usr/bin/swift" ] && ! ls "$root"/usr/lib/*/libswiftCore.so >/dev/null 2>&1 \
    && pass "the clean root has no Swift" || fail "the clean root has no Swift"

# --- Install -------------------------------------------------------------------------------------------------
cp "$work/dist"/*.deb "$work/next"/*.deb "$root/tmp/"
agent_deb=/tmp/whereabouts-agent_${version}_$arch.deb
locator_deb=/tmp/whereabouts-locator_${version}_$arch.deb
if in_root apt-get install -y -qq "$agent_deb" "$locator_deb" >"$work/install.log" 2>&1; then
    pass "both packages install with apt into a clean Debian 12 root (their dependencies from Debian)"
else
    fail "both packages install into a clean Debian 12 root: $(tail -3 "$work/install.log")"
fi
for binary in whereabouts-agent whereabouts-locator whereabouts; do
    in_root "/usr/bin/$binary" --help >/dev/null 2>&1 && pass "/usr/bin/$binary runs without Swift installed" \
        || fail "/usr/bin/$binary runs without Swift installed: $(in_root "/usr/bin/$binary" --help 2>&1 | head -2)"
done
for user in whereabouts-agent whereabouts whereabouts-web whereabouts-operator; do
    in_root getent passwd "$user" >/dev/null && pass "the user $user exists" || fail "the user $user exists"
done
mode=$(in_root stat -c '%U:%G %a' /etc/whereabouts/agent.conf)
[ "$mode" = "root:whereabouts-agent 640" ] && pass "agent.conf is root:whereabouts-agent 640" \
    || fail "agent.conf is root:whereabouts-agent 640 (got $mode)"
for unit in whereabouts-battery.service whereabouts-battery.timer; do
    [ -f "$root/lib/systemd/system/$unit" ] && pass "the daily battery round's $unit is installed" \
        || fail "the daily battery round's $unit is installed"
done
grep -q '^ExecStart=/usr/bin/whereabouts tag battery --all ' "$root/lib/systemd/system/whereabouts-battery.service" \
    && pass "whereabouts-battery.service runs the packaged /usr/bin/whereabouts" \
    || fail "whereabouts-battery.service runs the packaged /usr/bin/whereabouts"
# The installed agent-account script takes its reserved names from the installed ACL beside it (the ACL's users are
# the one list): each is refused as an agent id, before anything is written.
acl=$root/usr/share/whereabouts/mosquitto/whereabouts.acl
services=$(awk '$1 == "user" && NF == 2 { print $2 }' "$acl" 2>/dev/null | tr '\n' ' ')
accepted=
for name in $services; do
    status=0
    in_root sh /usr/share/whereabouts/create-agent-account.sh "$name" /tmp/refused.passwd >/dev/null 2>&1 || status=$?
    [ "$status" = 2 ] || accepted="$accepted $name (exit $status)"
done
[ -n "$services" ] && [ -z "$accepted" ] && [ ! -e "$root/tmp/refused.passwd" ] \
    && pass "the packaged create-agent-account.sh refuses every user of the packaged ACL: $services" \
    || fail "the packaged create-agent-account.sh refuses every user of the packaged ACL ($services; not:$accepted)"
cp maps/demo-office.json "$root/tmp/map.json"
in_root /usr/bin/whereabouts map check /tmp/map.json >/dev/null && pass "the packaged tool checks a map" \
    || fail "the packaged tool checks a map"

# --- The agent from its package, against a real mosquitto ------------------------------------------------------
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf 'listener %s 127.0.0.1\nallow_anonymous true\n' "$port" >"$work/mosquitto.conf"
mosquitto -c "$work/mosquitto.conf" >"$work/mosquitto.log" 2>&1 &
broker_pid=$!
# The real HCI events of Tests/TestFixtures/Fixtures/hci-events (MIT, see its SOURCE.md) as a btsnoop capture.
python3 - "$root/tmp/capture.btsnoop" <<'PY'
import json, struct, sys
events = [bytes.fromhex(json.loads(line)["hex"]) for line in open("Tests/TestFixtures/Fixtures/hci-events/hci_events.jsonl")]
epoch = 0x00DCDDB30F2F8000  # btsnoop counts microseconds from year 0
with open(sys.argv[1], "wb") as out:
    out.write(b"btsnoop\0" + struct.pack(">II", 1, 1002))
    for index, event in enumerate(events * 4):
        stamp = epoch + (1_764_475_200 + index // 50) * 1_000_000 + (index % 50) * 20_000
        out.write(struct.pack(">IIIIq", len(event), len(event), 3, 0, stamp) + event)
PY
sleep 0.3
mosquitto_sub -p "$port" -t 'whereabouts/v1/+/agents/pkg-agent/readings' -q 1 >"$work/batches.json" 2>&1 &
subscriber=$!
sleep 0.3
in_root /usr/bin/whereabouts-agent --id pkg-agent --site e2c56db5-dffb-48d2-b060-d0f5a71096e0 \
    --broker "mqtt://127.0.0.1:$port" --source btsnoop:/tmp/capture.btsnoop --replay-speed fast >"$work/agent.log" 2>&1 \
    || true
sleep 0.5
kill "$subscriber" 2>/dev/null || true
grep -q '"tag":"ibeacon-e2c56db5-dffb-48d2-b060-d0f5a71096e0' "$work/batches.json" \
    && pass "the packaged agent publishes the capture's site iBeacons to the broker" \
    || fail "the packaged agent publishes the capture's site iBeacons: $(head -c 300 "$work/batches.json") $(tail -3 "$work/agent.log")"

# --- Upgrade over a changed conffile, then purge -----------------------------------------------------------------
echo "WHEREABOUTS_ID=hall-7  # the administrator's" >>"$root/etc/whereabouts/agent.conf"
chmod 600 "$root/etc/whereabouts/agent.conf"
in_root apt-get install -y -qq "/tmp/whereabouts-agent_${version}.1_$arch.deb" "/tmp/whereabouts-locator_${version}.1_$arch.deb" \
    >"$work/upgrade.log" 2>&1 || fail "the upgrade installs: $(tail -3 "$work/upgrade.log")"
[ "$(in_root dpkg-query -W -f='${Version}' whereabouts-agent)" = "$version.1" ] \
    && grep -q '^WHEREABOUTS_ID=hall-7' "$root/etc/whereabouts/agent.conf" \
    && [ "$(stat -c %a "$root/etc/whereabouts/agent.conf")" = 600 ] \
    && pass "an upgrade keeps the administrator's agent.conf, its mode too" \
    || fail "an upgrade keeps the administrator's agent.conf, its mode too"
mkdir -p "$root/var/lib/whereabouts-agent" && echo state >"$root/var/lib/whereabouts-agent/outbox"
mkdir -p "$root/var/lib/whereabouts-web" && echo "{}" >"$root/var/lib/whereabouts-web/web-state.json"
in_root apt-get purge -y -qq whereabouts-agent whereabouts-locator >"$work/purge.log" 2>&1 \
    || fail "purge: $(tail -3 "$work/purge.log")"
snapshot after
if diff "$work/before.files" "$work/after.files" >"$work/files.diff" && diff "$work/before.accounts" "$work/after.accounts" >/dev/null; then
    pass "purge leaves the root as it was: $(wc -l <"$work/before.files") files, users and groups the same"
else
    fail "purge leaves the root as it was: $(head -c 600 "$work/files.diff"; diff "$work/before.accounts" "$work/after.accounts")"
fi

# --- The README's path: a server and a board, each in the commands the README gives ------------------------------
# Installed anew after the purge. In a network namespace of its own, so that the broker takes 8883 and 1883 as on a
# real server; the host's tools probe it from inside the namespace. No systemd runs here: the services are started
# as their units would start them (their users, their env files).
sed 's/f7826da6-4fa2-4e98-8024-bc5b71e0893e/e2c56db5-dffb-48d2-b060-d0f5a71096e0/' maps/demo-office.json >"$root/tmp/site.json"
cat >"$root/tmp/readme-path.sh" <<'PATH_SCRIPT'
set -eu
# The server: set up, start (installed before, outside the namespace, which has no way out to Debian's mirror).
whereabouts-setup-server --name broker.example --name 127.0.0.1 --map /tmp/site.json --agent g-lobby --out /root/agents
mkdir -p /run/mosquitto && chown mosquitto: /run/mosquitto
mosquitto -d -c /etc/mosquitto/mosquitto.conf
sleep 0.5
setpriv --reuid whereabouts --regid whereabouts --init-groups whereabouts-locator --env-file /etc/whereabouts/locator.env \
    >/tmp/locator.log 2>&1 &
echo $! >/tmp/locator.pid
# The board: enroll; then the agent as its unit runs it, on the capture instead of a radio.
whereabouts-enroll-agent /root/agents/g-lobby.tar
sleep 1
timeout 120 setpriv --reuid whereabouts-agent --regid whereabouts-agent --init-groups whereabouts-agent --config /etc/whereabouts/agent.conf \
    --env-file /etc/whereabouts/agent.env --source btsnoop:/tmp/capture.btsnoop --replay-speed fast >/tmp/agent.log 2>&1
PATH_SCRIPT
# The server's name, as a site's DNS would give it (a debootstrap root has no /etc/hosts at all).
printf '127.0.0.1 localhost broker.example\n' >"$root/etc/hosts"
in_root apt-get install -y -qq mosquitto "$locator_deb" "$agent_deb" >"$work/path-install.log" 2>&1 \
    || fail "the README's path installs mosquitto and both packages: $(tail -3 "$work/path-install.log")"
# shellcheck disable=SC2016 # expanded inside the namespace
if unshare -n bash -c '
    set -eu
    ip link set lo up
    chroot "$1" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive sh /tmp/readme-path.sh
    # What the live page and Home Assistant would read: the locator online, over TLS with the dashboard account.
    etc=$1/etc/whereabouts
    mosquitto_sub -h 127.0.0.1 -p 8883 --cafile "$etc/ca.crt" -u dashboard -P "$(cat "$etc/web.password")" \
        -t "whereabouts/v1/+/locator/#" -v -W 15 >"$2/path-locator.txt" 2>&1 || true
    # An agent account reads nothing; the locator account may not pose as the agent.
    mosquitto_sub -h 127.0.0.1 -p 8883 --cafile "$etc/ca.crt" -u locator -P "$(cat "$etc/locator.password")" \
        -t "whereabouts/v1/+/agents/g-lobby/status" -C 1 -W 5 >"$2/path-status.txt" 2>&1 || true
    kill "$(cat "$1/tmp/locator.pid")" "$(cat "$1/run/mosquitto/mosquitto.pid")" || true
' path "$root" "$work" >"$work/path.log" 2>&1; then
    pass "the README's server path runs: whereabouts-setup-server, the broker on TLS, the locator from its env file"
else
    fail "the README's server path runs: $(tail -5 "$work/path.log")"
fi
grep -q '^whereabouts/v1/e2c56db5-dffb-48d2-b060-d0f5a71096e0/locator/status online' "$work/path-locator.txt" \
    && pass "the set-up locator is online to the set-up dashboard account, over TLS with the site CA" \
    || fail "the set-up locator is online over TLS: $(head -c 300 "$work/path-locator.txt") $(tail -3 "$root/tmp/locator.log")"
grep -Eq '"readings_accepted":[1-9]' "$work/path-locator.txt" && grep -Eq '^(online|offline)$' "$work/path-status.txt" \
    && pass "the enrolled agent g-lobby reached the set-up locator over TLS (readings taken; its status there)" \
    || fail "the enrolled agent reached the locator: $(head -c 300 "$work/path-status.txt") $(tail -3 "$root/tmp/agent.log")"
mode=$(in_root stat -c "%U:%G %a" /etc/whereabouts/agent.password)
[ "$mode" = "root:whereabouts-agent 640" ] && pass "the enrolled password is root:whereabouts-agent 640" \
    || fail "the enrolled password is root:whereabouts-agent 640 (got $mode)"
mode=$(in_root stat -c "%U:%G %a" /etc/whereabouts/operator.password)
[ "$mode" = "root:whereabouts-operator 640" ] && grep -q '^WHEREABOUTS_USERNAME=operator$' "$root/etc/whereabouts/operator.env" \
    && pass "setup made the operator account for the battery round (operator.env; its password root:whereabouts-operator 640)" \
    || fail "setup made the operator account for the battery round (password $mode; $(cat "$root/etc/whereabouts/operator.env" 2>&1 | head -c 200))"

# Bundles that are not what the server makes are refused before anything is written: a setting the server never
# writes (here one that would point the agent at another source), and a member that climbs out of the directory.
python3 - "$root/tmp" <<'PY'
import io, sys, tarfile
def bundle(path, members):
    with tarfile.open(path, "w") as tar:
        for name, text in members:
            info = tarfile.TarInfo(name)
            info.size = len(text)
            tar.addfile(info, io.BytesIO(text))
cert = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
good_env = b"WHEREABOUTS_ID=g-west-1\n"
bundle(sys.argv[1] + "/extra-setting.tar", [("agent.env", good_env + b"WHEREABOUTS_SOURCE=btsnoop:/dev/zero\n"),
                                           ("agent.password", b"x\n"), ("ca.crt", cert)])
bundle(sys.argv[1] + "/climbing.tar", [("agent.env", good_env), ("../../etc/whereabouts/agent.password", b"x\n"),
                                       ("ca.crt", cert)])
PY
before=$(md5sum "$root/etc/whereabouts/agent.env" "$root/etc/whereabouts/agent.password")
for bad in extra-setting climbing; do
    status=0
    in_root whereabouts-enroll-agent "/tmp/$bad.tar" --no-start >"$work/enroll-$bad.log" 2>&1 || status=$?
    [ "$status" = 2 ] && [ "$(md5sum "$root/etc/whereabouts/agent.env" "$root/etc/whereabouts/agent.password")" = "$before" ] \
        && pass "a bundle with $bad is refused (exit 2), the enrolled files untouched: $(head -1 "$work/enroll-$bad.log")" \
        || fail "a bundle with $bad is refused: exit $status, $(cat "$work/enroll-$bad.log")"
done
echo
[ "$failures" -eq 0 ] && echo "package check passed" || { echo "package check FAILED: $failures" && exit 1; }
