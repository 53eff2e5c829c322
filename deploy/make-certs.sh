#!/bin/sh
# Makes the site's TLS certificates with openssl: a CA, the broker's certificate for the names clients use to
# reach it, and optionally a client certificate per agent (for brokers that authenticate boards by certificate).
#
# Usage: make-certs.sh [--out DIR] [--days N] [--ca-days N] [--name HOST_OR_IP]... [--agent AGENT_ID]...
#
#   --out DIR        where the files go (default ./whereabouts-certs); made mode 700
#   --name NAME      a DNS name or IPv4/IPv6 address the broker is reached by, as every client writes it in its
#                    broker URL (mqtts://NAME:8883); give all of them. Makes server.key and server.crt (the first
#                    name is also the certificate's CN). Without --name the broker's certificate is left alone.
#   --agent ID       makes agents/ID.key and agents/ID.crt with CN = ID (the broker's username for the board under
#                    use_identity_as_username); the id must be one clean topic level, as create-agent-account.sh
#                    asks (^[A-Za-z0-9_-]{1,64}$)
#   --days N         validity of the broker's and agents' certificates (default 825)
#   --ca-days N      validity of a new CA (default 3650)
#
# The CA (ca.key, ca.crt) is made on the first run and reused after, so agents can be added later and the broker's
# certificate renewed without handing every client a new ca.crt. Keep ca.key off the broker (it signs anything).
# Keys are EC P-256, written mode 600; certificates mode 644. The broker's certificate may only serve
# (extendedKeyUsage serverAuth) and an agent's only connect (clientAuth), so neither can stand in for the other.
# Nothing is overwritten but server.* when --name is given (the old pair is kept as server.*.old).
#
# Install: ca.crt, server.crt and server.key into /etc/mosquitto/certs (server.key root:mosquitto 640,
# docs/broker.md); ca.crt into /etc/whereabouts/ca.crt on every agent, locator and dashboard host
# (WHEREABOUTS_CA_FILE); an agent's ID.crt and ID.key beside it (WHEREABOUTS_CERT_FILE, WHEREABOUTS_KEY_FILE).
#
# Exit codes: 0 done, 1 a command failed, 2 bad usage or a refused name or id.
set -eu

usage() {
    echo "usage: $0 [--out DIR] [--days N] [--ca-days N] [--name HOST_OR_IP]... [--agent AGENT_ID]..." >&2
    exit 2
}

# check_name NAME: appends NAME to alt_names as an IP or DNS entry, or refuses it. Checked as each option is read,
# so that nothing odd reaches a file name, a subject or an extension line.
alt_names=
check_name() {
    if [ "$(printf '%s' "$1" | wc -l)" -ne 0 ]; then
        echo "error: refused --name with a line break in it" >&2
        exit 2
    elif printf '%s' "$1" | grep -Eq '^[0-9]{1,3}(\.[0-9]{1,3}){3}$' \
        || printf '%s' "$1" | grep -Eq '^[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*$'; then
        alt_names="$alt_names${alt_names:+,}IP:$1"
    elif printf '%s' "$1" | grep -Eq '^[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}))*$'; then
        alt_names="$alt_names${alt_names:+,}DNS:$1"
    else
        echo "error: refused --name '$1': give a DNS name (letters, digits, '-', '.') or an IP address" >&2
        exit 2
    fi
}
check_agent() {
    printf '%s' "$1" | grep -Eq '^[A-Za-z0-9_-]{1,64}$' && [ "$(printf '%s' "$1" | wc -l)" -eq 0 ] || {
        echo "error: refused agent id '$1': use 1 to 64 characters from A-Z a-z 0-9 _ -" >&2
        exit 2
    }
}

out=./whereabouts-certs
days=825
ca_days=3650
names=
agents=
while [ $# -gt 0 ]; do
    [ $# -ge 2 ] || usage
    case $1 in
        --out) out=$2 ;;
        --days) days=$2 ;;
        --ca-days) ca_days=$2 ;;
        --name)
            check_name "$2"
            names="$names $2"
            ;;
        --agent)
            check_agent "$2"
            agents="$agents $2"
            ;;
        *) usage ;;
    esac
    shift 2
done
for number in "$days" "$ca_days"; do
    printf '%s' "$number" | grep -Eq '^[1-9][0-9]{0,4}$' || {
        echo "error: --days and --ca-days take a whole number of days (1 to 99999), not '$number'" >&2
        exit 2
    }
done
command -v openssl >/dev/null 2>&1 || {
    echo "error: openssl not found (apt-get install openssl)" >&2
    exit 1
}

umask 077
mkdir -p "$out/agents"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# new_key FILE: an EC P-256 key, mode 600.
new_key() {
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>"$work/err" || {
        cat "$work/err" >&2
        exit 1
    }
}

# sign SUBJECT KEY CERT EXTENSIONS: a certificate for KEY signed by the CA, with the extension lines given.
sign() {
    printf '%s\n' "$4" >"$work/ext"
    openssl req -new -key "$2" -subj "$1" -out "$work/csr" 2>"$work/err" \
        && openssl x509 -req -in "$work/csr" -CA "$out/ca.crt" -CAkey "$out/ca.key" -CAcreateserial \
            -CAserial "$out/ca.srl" -days "$days" -sha256 -extfile "$work/ext" -out "$3" 2>"$work/err" || {
        cat "$work/err" >&2
        exit 1
    }
    chmod 644 "$3"
}

if [ -f "$out/ca.crt" ] && [ -f "$out/ca.key" ]; then
    echo "using the CA in $out/ca.crt"
else
    new_key "$out/ca.key"
    openssl req -new -x509 -key "$out/ca.key" -subj "/CN=Whereabouts site CA" -days "$ca_days" -sha256 \
        -addext "basicConstraints=critical,CA:TRUE,pathlen:0" -addext "keyUsage=critical,keyCertSign,cRLSign" \
        -out "$out/ca.crt" 2>"$work/err" || {
        cat "$work/err" >&2
        exit 1
    }
    chmod 644 "$out/ca.crt"
    echo "made a CA: $out/ca.crt (give it to every client) and $out/ca.key (keep it safe, off the broker)"
fi

if [ -n "$names" ]; then
    for old in server.crt server.key; do
        [ ! -f "$out/$old" ] || mv "$out/$old" "$out/$old.old"
    done
    first=$(echo $names | cut -d' ' -f1)
    new_key "$out/server.key"
    sign "/CN=$first" "$out/server.key" "$out/server.crt" "basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=$alt_names"
    echo "made the broker's certificate for $alt_names: $out/server.crt, $out/server.key"
fi

for agent in $agents; do
    if [ -f "$out/agents/$agent.crt" ]; then
        echo "kept $out/agents/$agent.crt (remove it to make a new one)"
        continue
    fi
    new_key "$out/agents/$agent.key"
    sign "/CN=$agent" "$out/agents/$agent.key" "$out/agents/$agent.crt" "basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth"
    echo "made agent $agent's certificate: $out/agents/$agent.crt, $out/agents/$agent.key"
done
