#!/bin/sh
# Sets up the server of a site in one go, after `apt-get install mosquitto ./whereabouts-locator_*.deb`: the site's
# CA and the broker's certificate, the broker's config and ACL, an account for the locator, the live page, Home
# Assistant and the operator (GATT jobs: `whereabouts tag`, the daily battery round), one per agent, the settings
# the locator, the page and the operator's tools read, and for each agent a bundle its board takes with
# `whereabouts-enroll-agent`. Packaged as /usr/sbin/whereabouts-setup-server.
#
# Usage: whereabouts-setup-server --name HOST_OR_IP [--name ...] --map FILE [--agent ID]... [--out DIR] [--no-start]
#
#   --name NAME   a DNS name or address the boards reach the broker by (the first is the one they are told);
#                 every name goes into the broker's certificate
#   --map FILE    the site's floor map; checked, then installed as /etc/whereabouts/map.json. Its site UUID is the
#                 one the agents are told.
#   --agent ID    an agent account and its bundle OUT/ID.tar (mode 600: it holds the board's password); agents can
#                 be added by running the script again with more --agent (what exists is kept)
#   --out DIR     where the bundles go (default ./whereabouts-agents)
#   --no-start    write everything but do not restart mosquitto or start the services (also when systemd is not
#                 running, as in a container; the commands to run are printed)
#
# What it writes: /etc/whereabouts/ca/ (the CA; its key never leaves this machine), /etc/whereabouts/ca.crt and
# map.json; /etc/mosquitto/conf.d/whereabouts.conf, whereabouts.acl, whereabouts.passwd and certs/; the accounts'
# passwords in /etc/whereabouts/{locator,web,homeassistant,operator}.password; and /etc/whereabouts/locator.env and
# web.env (which the units read over locator.conf and web.conf), and operator.env (whereabouts-battery.service's
# settings; an administrator runs `whereabouts tag` with them: `set -a; . /etc/whereabouts/operator.env; set +a`). An env file it did not write is never overwritten.
# Running it again is safe: the CA, accounts and passwords are kept; the broker's certificate is made anew for the
# names given.
#
# Exit codes: 0 done, 1 a command failed, 2 bad usage, a bad map or a refused name or id.
set -eu

share=${WHEREABOUTS_SHARE:-/usr/share/whereabouts}
etc=${WHEREABOUTS_ETC:-/etc/whereabouts}
mosquitto_etc=${WHEREABOUTS_MOSQUITTO_ETC:-/etc/mosquitto}
marker="# Written by whereabouts-setup-server; it rewrites this file when run again."

usage() {
    echo "usage: $0 --name HOST_OR_IP [--name ...] --map FILE [--agent ID]... [--out DIR] [--no-start]" >&2
    exit 2
}
fail() {
    echo "error: $*" >&2
    exit 1
}

names=
first_name=
map=
agents=
out=./whereabouts-agents
start=yes
while [ $# -gt 0 ]; do
    case $1 in
        --name)
            [ $# -ge 2 ] || usage
            names="$names --name $2"
            first_name=${first_name:-$2}
            shift
            ;;
        --map) [ $# -ge 2 ] || usage && map=$2 && shift ;;
        --agent) [ $# -ge 2 ] || usage && agents="$agents $2" && shift ;;
        --out) [ $# -ge 2 ] || usage && out=$2 && shift ;;
        --no-start) start=no ;;
        *) usage ;;
    esac
    shift
done
[ -n "$first_name" ] && [ -n "$map" ] || usage
[ "$(id -u)" -eq 0 ] || fail "run as root: it writes /etc/mosquitto and /etc/whereabouts"
for tool in mosquitto_passwd openssl whereabouts tar; do
    command -v "$tool" >/dev/null 2>&1 || fail "$tool not found (apt-get install mosquitto openssl ./whereabouts-locator_*.deb)"
done
[ -d "$mosquitto_etc/conf.d" ] || fail "no $mosquitto_etc/conf.d: install Debian's mosquitto first"
for user in mosquitto whereabouts whereabouts-web whereabouts-operator; do
    id "$user" >/dev/null 2>&1 || fail "no user '$user' (install mosquitto and the whereabouts-locator package)"
done

# The map first: nothing is written for a map the locator would refuse.
if ! summary=$(whereabouts map check "$map" 2>&1); then
    printf '%s\n' "$summary" >&2
    echo "error: $map is not a map the locator can load (above: each problem with its JSON path)" >&2
    exit 2
fi
site=$(printf '%s\n' "$summary" | sed -n 's/^site .*(\([0-9a-fA-F-]\{36\}\))$/\1/p' | head -1)
[ -n "$site" ] || fail "could not read the site UUID from 'whereabouts map check $map'"
install -d -m 755 "$etc"
install -m 644 "$map" "$etc/map.json"

# Certificates: the CA is made once and kept; the broker's certificate is made for the names given.
install -d -m 700 "$etc/ca"
# shellcheck disable=SC2086 # the names are checked by make-certs.sh, one word each
sh "$share/make-certs.sh" --out "$etc/ca" $names >/dev/null
install -d -m 755 "$mosquitto_etc/certs"
install -m 644 "$etc/ca/ca.crt" "$mosquitto_etc/certs/ca.crt"
install -m 644 "$etc/ca/server.crt" "$mosquitto_etc/certs/server.crt"
install -m 640 -o root -g mosquitto "$etc/ca/server.key" "$mosquitto_etc/certs/server.key"
install -m 644 "$etc/ca/ca.crt" "$etc/ca.crt"

# The broker's config and ACL, as shipped.
install -m 644 "$share/mosquitto/whereabouts.conf" "$mosquitto_etc/conf.d/whereabouts.conf"
install -m 644 "$share/mosquitto/whereabouts.acl" "$mosquitto_etc/whereabouts.acl"
passwd_file=$mosquitto_etc/whereabouts.passwd

# service_account NAME PASSWORD_FILE GROUP: the account NAME with a new password in PASSWORD_FILE (root:GROUP 640),
# unless both exist already.
service_account() {
    if [ -f "$passwd_file" ] && cut -d: -f1 "$passwd_file" | grep -Fxq -- "$1" && [ -s "$2" ]; then
        echo "kept the account '$1' ($2)"
        return
    fi
    password=$(openssl rand -base64 24)
    [ -e "$passwd_file" ] || (umask 077 && : >"$passwd_file")
    mosquitto_passwd -b "$passwd_file" "$1" "$password"
    (umask 077 && printf '%s\n' "$password" >"$2")
    chown "root:$3" "$2" && chmod 640 "$2"
    echo "made the account '$1' ($2)"
}
service_account locator "$etc/locator.password" whereabouts
service_account dashboard "$etc/web.password" whereabouts-web
service_account homeassistant "$etc/homeassistant.password" root
service_account operator "$etc/operator.password" whereabouts-operator
chown mosquitto: "$passwd_file" && chmod 600 "$passwd_file"

# write_env FILE USERNAME PASSWORD_FILE: the settings a service reads over its .conf, unless the file is not ours.
write_env() {
    if [ -e "$1" ] && ! grep -Fxq "$marker" "$1"; then
        echo "left $1 alone: it was not written by this script (its broker settings win over the .conf)"
        return
    fi
    {
        echo "$marker"
        echo "WHEREABOUTS_MAP=$etc/map.json"
        echo "WHEREABOUTS_BROKER=mqtts://$first_name:8883"
        echo "WHEREABOUTS_CA_FILE=$etc/ca.crt"
        echo "WHEREABOUTS_USERNAME=$2"
        echo "WHEREABOUTS_PASSWORD_FILE=$3"
    } >"$1"
    chmod 644 "$1"
    echo "wrote $1"
}
write_env "$etc/locator.env" locator "$etc/locator.password"
write_env "$etc/web.env" dashboard "$etc/web.password"
write_env "$etc/operator.env" operator "$etc/operator.password"

# One bundle per agent: its settings, password and the CA, for `whereabouts-enroll-agent` on the board.
install -d -m 700 "$out"
for agent in $agents; do
    if [ -e "$out/$agent.tar" ]; then
        echo "kept $out/$agent.tar (remove it and the account to make it anew)"
        continue
    fi
    bundle=$(mktemp -d)
    WHEREABOUTS_PASSWORD_OUT=$bundle/agent.password sh "$share/create-agent-account.sh" "$agent" "$passwd_file" \
        >/dev/null || { rm -rf "$bundle" && fail "could not make the account of agent '$agent' (above)"; }
    {
        echo "# Written by whereabouts-setup-server for this board; whereabouts-enroll-agent installs it."
        echo "WHEREABOUTS_ID=$agent"
        echo "WHEREABOUTS_SITE=$site"
        echo "WHEREABOUTS_BROKER=mqtts://$first_name:8883"
        echo "WHEREABOUTS_CA_FILE=/etc/whereabouts/ca.crt"
        echo "WHEREABOUTS_PASSWORD_FILE=/etc/whereabouts/agent.password"
    } >"$bundle/agent.env"
    cp "$etc/ca.crt" "$bundle/ca.crt"
    (umask 077 && tar -C "$bundle" -cf "$out/$agent.tar" agent.env agent.password ca.crt)
    rm -rf "$bundle"
    echo "made the account '$agent' and its bundle $out/$agent.tar: copy it to the board, then delete it here"
done

if [ "$start" = yes ] && [ -d /run/systemd/system ]; then
    systemctl restart mosquitto
    systemctl enable --now whereabouts-locator whereabouts-web whereabouts-battery.timer >/dev/null 2>&1
    systemctl restart whereabouts-locator whereabouts-web
    echo "restarted mosquitto; started whereabouts-locator, whereabouts-web and the daily battery timer (site $site)"
else
    echo "now: systemctl restart mosquitto && systemctl enable --now whereabouts-locator whereabouts-web" \
        "whereabouts-battery.timer (site $site)"
fi
