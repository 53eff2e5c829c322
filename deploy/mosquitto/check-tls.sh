#!/bin/sh
# Checks deploy/make-certs.sh against a real mosquitto on loopback: the broker's certificate it makes is verified by
# name, and its agent certificates authenticate boards on the shipped config's TLS listener with the client
# certificate lines enabled (require_certificate true, use_identity_as_username true), under the shipped ACL.
#
# Starts a broker from the production config the way Debian runs it (scratch-broker.sh), with certificates from
# make-certs.sh. Usage: deploy/mosquitto/check-tls.sh     Exit 0 when every check passes, 1 otherwise.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
. "$here/scratch-broker.sh"
scratch_init tls
observer=
cleanup() {
    [ -z "$observer" ] || kill "$observer" 2>/dev/null || true
    scratch_kill TERM
    [ -n "${KEEP_WORK:-}" ] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT INT TERM

failures=0
pass() { echo "ok   $1"; }
fail() {
    echo "FAIL $1"
    failures=$((failures + 1))
}
site=whereabouts/v1/e2c56db5-dffb-48d2-b060-d0f5a71096e0
pki=$work/pki

# --- What make-certs.sh writes ----------------------------------------------------------------------------
scratch_certs --agent agent-a --agent agent-b
[ "$(stat -c %a "$pki/ca.key")" = 600 ] && [ "$(stat -c %a "$pki/agents/agent-a.key")" = 600 ] \
    && [ "$(stat -c %a "$pki/ca.crt")" = 644 ] && pass "keys are mode 600, certificates 644" \
    || fail "keys are mode 600, certificates 644"
purpose() { openssl verify -CAfile "$pki/ca.crt" -purpose "$1" "$2" >/dev/null 2>&1; }
purpose sslserver "$pki/server.crt" && ! purpose sslclient "$pki/server.crt" \
    && pass "the broker's certificate serves and cannot connect" || fail "the broker's certificate serves and cannot connect"
purpose sslclient "$pki/agents/agent-a.crt" && ! purpose sslserver "$pki/agents/agent-a.crt" \
    && pass "an agent's certificate connects and cannot serve" || fail "an agent's certificate connects and cannot serve"
ca_before=$(openssl x509 -in "$pki/ca.crt" -noout -fingerprint)
sh "$here/../make-certs.sh" --out "$pki" --agent agent-c >/dev/null
[ "$(openssl x509 -in "$pki/ca.crt" -noout -fingerprint)" = "$ca_before" ] && purpose sslclient "$pki/agents/agent-c.crt" \
    && pass "a later run adds an agent under the same CA" || fail "a later run adds an agent under the same CA"
for bad in "a/b" "a b" "\$SYS" ""; do
    status=0
    sh "$here/../make-certs.sh" --out "$pki" --agent "$bad" >/dev/null 2>&1 || status=$?
    [ "$status" -eq 2 ] || fail "make-certs.sh refuses agent id '$bad' with exit 2 (got $status)"
done
for bad in "a;b" "-x" "a..b" "$(printf 'a\nb')"; do
    status=0
    sh "$here/../make-certs.sh" --out "$pki" --name "$bad" >/dev/null 2>&1 || status=$?
    [ "$status" -eq 2 ] || fail "make-certs.sh refuses --name '$bad' with exit 2 (got $status)"
done
[ "$failures" -eq 0 ] && pass "make-certs.sh refuses odd agent ids and names (exit 2)"
sh "$here/../make-certs.sh" --out "$work/other-ca" --agent agent-a >/dev/null

# --- The broker, authenticating agents by certificate -------------------------------------------------------
for id in locator; do
    openssl rand -base64 24 >"$work/$id.password"
    (umask 077 && : >"$passwd")
    mosquitto_passwd -b "$passwd" "$id" "$(cat "$work/$id.password")"
done
[ "$(id -u)" -ne 0 ] || chown "$broker_user" "$passwd"
scratch_config -e 's|^require_certificate false$|require_certificate true|' \
    -e 's|^#use_identity_as_username true$|use_identity_as_username true|'
grep -q '^use_identity_as_username true$' "$etc_dir/mosquitto.conf" || {
    echo "could not enable the client certificate lines of whereabouts.conf" >&2
    exit 1
}
scratch_start || exit 1
mosquitto_sub -h 127.0.0.1 -p "$plain_port" -u locator -P "$(cat "$work/locator.password")" -q 1 -v \
    -t "$site/agents/+/readings" >"$work/locator.seen" 2>&1 &
observer=$!
sleep 0.5

tls_pub() { # tls_pub HOST CERT KEY TOPIC MARKER: 0 when the broker took the connection
    mosquitto_pub -h "$1" -p "$tls_port" --cafile "$etc_dir/certs/ca.crt" --cert "$2" --key "$3" -q 1 -t "$4" \
        -m "$5" 2>/dev/null
}
agent=$pki/agents/agent-a
tls_pub 127.0.0.1 "$agent.crt" "$agent.key" "$site/agents/agent-a/readings" ok-cert-a \
    && pass "agent-a connects by certificate, no password, to 127.0.0.1" || fail "agent-a connects by certificate to 127.0.0.1"
tls_pub localhost "$agent.crt" "$agent.key" "$site/agents/agent-a/readings" ok-cert-a-localhost \
    && pass "and by the name localhost" || fail "agent-a connects by the name localhost"
tls_pub 127.0.0.1 "$agent.crt" "$agent.key" "$site/agents/agent-b/readings" bad-cert-a-as-b || true
tls_pub 127.0.0.1 "$pki/server.crt" "$pki/server.key" "$site/agents/agent-a/readings" bad-server-as-client \
    && fail "the broker's own certificate is refused as a client's" || pass "the broker's own certificate is refused as a client's"
tls_pub 127.0.0.1 "$work/other-ca/agents/agent-a.crt" "$work/other-ca/agents/agent-a.key" \
    "$site/agents/agent-a/readings" bad-other-ca && fail "a certificate from another CA is refused" \
    || pass "a certificate from another CA is refused"
mosquitto_pub -h 127.0.0.1 -p "$tls_port" --cafile "$etc_dir/certs/ca.crt" -u locator -P "$(cat "$work/locator.password")" \
    -t "$site/agents/agent-a/readings" -m bad-no-cert 2>/dev/null \
    && fail "a client without a certificate is refused" || pass "a client without a certificate is refused"
verify_name() { # verify_name NAME: 0 when the broker's certificate verifies for NAME
    openssl s_client -connect "127.0.0.1:$tls_port" -CAfile "$pki/ca.crt" -cert "$agent.crt" -key "$agent.key" \
        -verify_hostname "$1" -verify_return_error </dev/null >/dev/null 2>&1
}
verify_name localhost && ! verify_name broker.example \
    && pass "the broker's certificate holds for its names only" || fail "the broker's certificate holds for its names only"

# Renewing the broker's certificate: same CA, so no client needs anything new; a reload serves the new one.
serial() {
    openssl s_client -connect "127.0.0.1:$tls_port" -CAfile "$pki/ca.crt" -cert "$agent.crt" -key "$agent.key" \
        </dev/null 2>/dev/null | openssl x509 -noout -serial
}
old_serial=$(serial)
sh "$here/../make-certs.sh" --out "$pki" --name 127.0.0.1 --name localhost >/dev/null
cp "$pki/server.crt" "$pki/server.key" "$etc_dir/certs/"
kill -HUP "$broker_pid"
sleep 0.5
[ "$(serial)" != "$old_serial" ] && [ "$(serial)" = "$(openssl x509 -in "$pki/server.crt" -noout -serial)" ] \
    && tls_pub 127.0.0.1 "$agent.crt" "$agent.key" "$site/agents/agent-a/readings" ok-cert-a-renewed \
    && pass "a renewed broker certificate is served after a reload and the agents' certificates still connect" \
    || fail "a renewed broker certificate is served after a reload and the agents' certificates still connect"

sleep 1
kill "$observer" 2>/dev/null || true
wait "$observer" 2>/dev/null || true
observer=
for marker in ok-cert-a ok-cert-a-localhost ok-cert-a-renewed; do
    grep -q "/agents/agent-a/readings $marker\$" "$work/locator.seen" && pass "the locator receives $marker" \
        || fail "the locator receives $marker"
done
for marker in bad-cert-a-as-b bad-server-as-client bad-other-ca bad-no-cert; do
    grep -q " $marker\$" "$work/locator.seen" && fail "nobody receives $marker" || pass "nobody receives $marker"
done

echo
if [ "$failures" -eq 0 ]; then
    echo "all TLS checks passed"
else
    echo "$failures TLS check(s) FAILED"
    exit 1
fi
