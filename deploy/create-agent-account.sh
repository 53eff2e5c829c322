#!/bin/sh
# Creates the broker account of one scanner agent.
#
# Usage: create-agent-account.sh AGENT_ID [PASSWORD_FILE]
#
# AGENT_ID becomes the MQTT username, which the broker ACL (whereabouts.acl) substitutes for %u: the agent
# may publish only whereabouts/v1/+/agents/AGENT_ID/readings, .../status and .../gatt/results, and read only its own
# .../gatt/requests. It must match
# ^[A-Za-z0-9_-]{1,64}$ so it is always one clean topic level, and must not be a reserved name: one that has a
# `user` block in the ACL shipped beside this script (mosquitto/whereabouts.acl, in the repository and in
# /usr/share/whereabouts alike), which is the one list of the service accounts.
#
# A random password is added to PASSWORD_FILE (default /etc/mosquitto/whereabouts.passwd) with
# mosquitto_passwd, and written to ./AGENT_ID.password (mode 600) for the agent's configuration; set
# WHEREABOUTS_PASSWORD_OUT to write it elsewhere. Existing accounts are not overwritten.
#
# Run as root, the script leaves PASSWORD_FILE mode 600, owned by the user the broker drops to (mosquitto on
# Debian; set WHEREABOUTS_BROKER_USER otherwise), which is the only user besides root that may read it.
#
# Exit codes: 0 done, 1 a command failed, 2 bad usage or a refused id.
set -eu

usage() {
    echo "usage: $0 AGENT_ID [PASSWORD_FILE]" >&2
    exit 2
}

[ $# -ge 1 ] && [ $# -le 2 ] || usage
agent_id=$1
password_file=${2:-/etc/mosquitto/whereabouts.passwd}
password_out=${WHEREABOUTS_PASSWORD_OUT:-./$agent_id.password}
broker_user=${WHEREABOUTS_BROKER_USER:-mosquitto}

# The id check happens before the id is used anywhere, including in file names.
if ! printf '%s' "$agent_id" | LC_ALL=C grep -Eq '^[A-Za-z0-9_-]{1,64}$' \
    || [ "$(printf '%s' "$agent_id" | wc -l)" -ne 0 ]; then
    echo "error: refused agent id '$agent_id': use 1 to 64 characters from A-Z a-z 0-9 _ -" >&2
    echo "       (no '/', '+', '#', '\$', '.', spaces or other characters: the id becomes an MQTT topic level)" >&2
    exit 2
fi
# The service accounts are the ACL's `user` lines; an agent under one of those names would get that service's
# rights (and lose its own agent topics to the service's deny line). No ACL, or one without users, is an error:
# the script never guesses which names are free.
acl=$(cd "$(dirname "$0")" && pwd)/mosquitto/whereabouts.acl
reserved=$(sed -n 's/^user[[:space:]]\{1,\}\([^[:space:]]\{1,\}\)[[:space:]]*$/\1/p' "$acl" 2>/dev/null) || reserved=
if [ -z "$reserved" ]; then
    echo "error: cannot read the reserved account names (the ACL's user lines) from $acl" >&2
    exit 1
fi
if printf '%s\n' "$reserved" | grep -Fxq -- "$agent_id"; then
    echo "error: refused agent id '$agent_id': it is a reserved account name (a user in $acl)" >&2
    exit 2
fi

for tool in mosquitto_passwd openssl; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "error: $tool not found (apt-get install mosquitto openssl)" >&2
        exit 1
    fi
done

if [ "$(id -u)" -eq 0 ] && ! id "$broker_user" >/dev/null 2>&1; then
    echo "error: no user '$broker_user' to own $password_file (set WHEREABOUTS_BROKER_USER to the broker's user)" >&2
    exit 1
fi

if [ -f "$password_file" ] && cut -d: -f1 "$password_file" | grep -Fxq -- "$agent_id"; then
    echo "error: $password_file already has an account '$agent_id'; remove it first with" >&2
    echo "       mosquitto_passwd -D $password_file $agent_id" >&2
    exit 1
fi
if [ -e "$password_out" ]; then
    echo "error: $password_out exists; move it away first" >&2
    exit 1
fi

# 24 random bytes, base64: 32 characters, 192 bits.
password=$(openssl rand -base64 24)

if [ ! -e "$password_file" ]; then
    (umask 077 && : >"$password_file")
fi
mosquitto_passwd -b "$password_file" "$agent_id" "$password"
# Debian starts mosquitto as root, but it reads the password file only after dropping to the user mosquitto
# (at start and on every reload): a root-only file stops the broker. Give the file to that user and nobody
# else, whatever owner and mode it had before (mosquitto_passwd keeps them when it rewrites the file). Owner
# and group mosquitto is also what later 2.0.x brokers ask for ("Future versions will refuse to load this
# file"). Not as root, the file is left to its owner, who runs the broker.
chmod 600 "$password_file"
if [ "$(id -u)" -eq 0 ]; then
    if ! chown "$broker_user:" "$password_file"; then
        echo "error: could not give $password_file to the broker's user '$broker_user'" >&2
        echo "       (set WHEREABOUTS_BROKER_USER if mosquitto runs as another user)" >&2
        exit 1
    fi
fi

(umask 077 && printf '%s\n' "$password" >"$password_out")
chmod 600 "$password_out"

echo "created account '$agent_id' in $password_file"
echo "its password is in $password_out (mode 600): copy it to the agent, then delete it here"
echo "reload mosquitto so it reads the new account: systemctl reload mosquitto   (or: kill -HUP <pid>)"
