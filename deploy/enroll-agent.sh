#!/bin/sh
# Installs on a board the bundle `whereabouts-setup-server --agent ID` made for it (ID.tar: agent.env,
# agent.password, ca.crt) and starts the agent. Packaged with the agent as /usr/sbin/whereabouts-enroll-agent.
#
# Usage: whereabouts-enroll-agent BUNDLE.tar [--no-start]
#
# The bundle is checked before anything is written: exactly those three files, no paths; agent.env holds only the
# settings the server writes, with an id that is one clean topic level. They go to /etc/whereabouts as agent.env
# (which the unit reads over agent.conf; agent.conf is left to the administrator), agent.password (root:whereabouts-
# agent 640) and ca.crt. Then the agent is (re)started, unless --no-start or systemd is not running.
#
# Exit codes: 0 done, 1 a command failed, 2 bad usage or a bundle that is not one.
set -eu

etc=${WHEREABOUTS_ETC:-/etc/whereabouts}
usage() {
    echo "usage: $0 BUNDLE.tar [--no-start]" >&2
    exit 2
}
refuse() {
    echo "error: $bundle is not an agent bundle: $*" >&2
    exit 2
}

[ $# -ge 1 ] && [ $# -le 2 ] || usage
bundle=$1
start=yes
[ $# -eq 1 ] || [ "$2" = --no-start ] || usage
[ $# -eq 1 ] || start=no
[ "$(id -u)" -eq 0 ] || { echo "error: run as root: it writes $etc" >&2 && exit 1; }
id whereabouts-agent >/dev/null 2>&1 || { echo "error: no user whereabouts-agent: install the agent's package first" >&2 && exit 1; }
[ -f "$bundle" ] || { echo "error: no file $bundle" >&2 && exit 1; }

# Exactly the three files, each a plain file at the top: nothing else is extracted, so no path can escape.
listing=$(tar -tvf "$bundle" 2>/dev/null) || refuse "tar cannot read it"
[ "$(printf '%s\n' "$listing" | wc -l)" -eq 3 ] || refuse "it should hold 3 files"
for name in agent.env agent.password ca.crt; do
    printf '%s\n' "$listing" | grep -Eq "^-[^ ]* .* $name\$" || refuse "no plain file $name"
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
tar -C "$work" --no-same-owner --no-same-permissions -xf "$bundle" agent.env agent.password ca.crt

# Only the settings the server writes, and an id the broker's ACL can hold.
while IFS= read -r line; do
    case $line in
        '' | '#'*) ;;
        WHEREABOUTS_ID=* | WHEREABOUTS_SITE=* | WHEREABOUTS_BROKER=* | WHEREABOUTS_CA_FILE=* | WHEREABOUTS_PASSWORD_FILE=*) ;;
        *) refuse "agent.env has a line it should not: '$line'" ;;
    esac
done <"$work/agent.env"
agent=$(sed -n 's/^WHEREABOUTS_ID=//p' "$work/agent.env")
printf '%s' "$agent" | grep -Eq '^[A-Za-z0-9_-]{1,64}$' || refuse "agent.env names no valid WHEREABOUTS_ID"
[ -s "$work/agent.password" ] || refuse "agent.password is empty"
grep -q 'BEGIN CERTIFICATE' "$work/ca.crt" || refuse "ca.crt holds no certificate"

install -d -m 755 "$etc"
install -m 640 -o root -g whereabouts-agent "$work/agent.env" "$etc/agent.env"
install -m 640 -o root -g whereabouts-agent "$work/agent.password" "$etc/agent.password"
install -m 644 "$work/ca.crt" "$etc/ca.crt"
echo "enrolled this board as agent '$agent' ($etc/agent.env, agent.password, ca.crt)"
if [ "$start" = yes ] && [ -d /run/systemd/system ]; then
    systemctl enable whereabouts-agent >/dev/null 2>&1
    systemctl restart whereabouts-agent
    echo "started whereabouts-agent; 'journalctl -u whereabouts-agent' shows what it hears"
else
    echo "now: systemctl enable --now whereabouts-agent"
fi
