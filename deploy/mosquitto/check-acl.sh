#!/bin/sh
# Checks whereabouts.conf, whereabouts.acl and create-agent-account.sh against a real mosquitto on loopback.
#
# Starts a broker from the production config the way Debian runs it (see scratch-broker.sh: as root, it drops
# to the user mosquitto before reading its files), creates accounts with the real script, publishes allowed and
# forbidden messages and checks which ones each observer received, adds an account and reloads, and finally
# has agents connect with the locator's client id while a locator-like client runs (none may take it over).
#
# Usage: deploy/mosquitto/check-acl.sh     Exit 0 when every check passes, 1 otherwise.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
. "$here/scratch-broker.sh"
scratch_init acl
# Background clients run as `as ... &`, a subshell whose child is the client: stop both, by their ids.
stop_client() {
    pkill -TERM -P "$1" 2>/dev/null || true
    kill "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}
cleanup() {
    for pid in $observer_pids; do stop_client "$pid"; done
    scratch_kill TERM
    [ -n "${KEEP_WORK:-}" ] && echo "kept $work" || rm -rf "$work"
}
observer_pids=
trap cleanup EXIT INT TERM

failures=0
pass() { echo "ok   $1"; }
fail() {
    echo "FAIL $1"
    failures=$((failures + 1))
}

# --- Accounts, through the real script --------------------------------------------------------------------
# The service accounts are the shipped ACL's users: that file is the one list of them (create-agent-account.sh
# reads it too). Read here with awk, not the script's sed, so that the check does not share the script's parser.
services=$(awk '$1 == "user" && NF == 2 { print $2 }' "$here/whereabouts.acl")
[ -n "$services" ] && pass "the shipped ACL names its service accounts: $(printf '%s' "$services" | tr '\n' ' ')" \
    || fail "the shipped ACL names its service accounts (no 'user' lines in $here/whereabouts.acl)"
# Service accounts first, by hand as docs/broker.md says (the agent script refuses their reserved names), each with
# a second account, `-2`, for its observer below; the agent script then has to leave the file readable by the broker
# whatever state it found it in.
(umask 077 && : >"$passwd")
for id in $services $(for role in $services; do echo "$role-2"; done); do
    openssl rand -base64 24 >"$work/$id.password"
    mosquitto_passwd -b "$passwd" "$id" "$(cat "$work/$id.password")"
done
for id in agent-a agent-b agent-spy agent-d; do
    WHEREABOUTS_PASSWORD_OUT="$work/$id.password" "$here/../create-agent-account.sh" "$id" "$passwd" >/dev/null
done
[ "$(stat -c %a "$work/agent-a.password")" = 600 ] && pass "agent password file is mode 600" \
    || fail "agent password file is mode 600"
case $(stat -c %a "$passwd") in
    600 | 640) pass "broker password file is unreadable to others ($(stat -c '%a %U:%G' "$passwd"))" ;;
    *) fail "broker password file is unreadable to others ($(stat -c '%a %U:%G' "$passwd"))" ;;
esac

for bad in "a/b" "a+b" "#" "\$SYS" ".." "a b" "" "$(printf 'a%.0s' $(seq 65))" "$(printf 'a\nb')" $services; do
    if WHEREABOUTS_PASSWORD_OUT="$work/refused" "$here/../create-agent-account.sh" "$bad" "$passwd" 2>/dev/null; then
        fail "create-agent-account.sh refuses '$bad'"
    else
        status=$?
        [ "$status" -eq 2 ] && pass "create-agent-account.sh refuses '$bad' (exit 2)" \
            || fail "create-agent-account.sh refuses '$bad' with exit 2 (got $status)"
    fi
done
if WHEREABOUTS_PASSWORD_OUT="$work/again" "$here/../create-agent-account.sh" agent-a "$passwd" 2>/dev/null; then
    fail "create-agent-account.sh refuses an existing account"
else
    pass "create-agent-account.sh refuses an existing account"
fi
# The ACL is the script's only list: a copy of the script beside an ACL with one more user refuses that name too,
# and with no ACL beside it the script refuses to run (exit 1) rather than guess which names are free.
mkdir -p "$work/layout/mosquitto"
cp "$here/../create-agent-account.sh" "$work/layout/"
{ cat "$here/whereabouts.acl" && printf '\nuser check-service\ntopic read whereabouts/v1/+/events\n'; } \
    >"$work/layout/mosquitto/whereabouts.acl"
status=0
WHEREABOUTS_PASSWORD_OUT="$work/refused" sh "$work/layout/create-agent-account.sh" check-service "$passwd" \
    2>/dev/null || status=$?
[ "$status" -eq 2 ] && pass "create-agent-account.sh refuses a user added to the ACL beside it (exit 2)" \
    || fail "create-agent-account.sh refuses a user added to the ACL beside it with exit 2 (got $status)"
rm "$work/layout/mosquitto/whereabouts.acl"
status=0
WHEREABOUTS_PASSWORD_OUT="$work/no-acl.password" sh "$work/layout/create-agent-account.sh" agent-x "$passwd" \
    2>/dev/null || status=$?
[ "$status" -eq 1 ] && [ ! -e "$work/no-acl.password" ] \
    && pass "create-agent-account.sh with no ACL beside it makes nothing (exit 1)" \
    || fail "create-agent-account.sh with no ACL beside it makes nothing (exit 1; got $status)"

# --- The production config, moved into the scratch layout -------------------------------------------------
scratch_certs
SCRATCH_EXTRA='sys_interval 1' scratch_config
# The shipped config allows one connection per account (use_username_as_clientid), and the observers below run
# beside publishers of the same role. So each service role gets a second account for its observer, made the way
# docs/broker.md says to add a second dashboard: a copy of the role's block under the new name.
for role in $services; do
    printf '\n'
    sed -n "/^user $role\$/,/^\$/p" "$etc_dir/whereabouts.acl" \
        | sed -e "s|^user $role\$|user $role-2|" -e "s|/agents/$role/#|/agents/$role-2/#|"
done >>"$etc_dir/whereabouts.acl"
if scratch_start; then
    pass "mosquitto starts as $broker_user with the files the README's steps made"
else
    fail "mosquitto starts as $broker_user with the files the README's steps made"
    echo
    echo "$failures ACL check(s) failed"
    exit 1
fi

site=whereabouts/v1/e2c56db5-dffb-48d2-b060-d0f5a71096e0
as() { # as USER mosquitto_pub|mosquitto_sub ARGS...
    user=$1
    tool=$2
    shift 2
    "$tool" -h 127.0.0.1 -p "$plain_port" -V mqttv311 -u "$user" -P "$(cat "$work/$user.password")" "$@"
}
observe() { # observe NAME USER FILTERS...
    name=$1
    user=$2
    shift 2
    filters=
    for filter in "$@"; do filters="$filters -t $filter"; done
    # shellcheck disable=SC2086
    as "$user" mosquitto_sub -v -q 1 $filters >"$work/$name.seen" 2>&1 &
    observer_pids="$observer_pids $!"
}

observe locator locator-2 "$site/agents/+/readings" "$site/agents/+/status" "$site/floors/#" homeassistant/status \
    "$site/locator/lease" "$site/agents/+/gatt/results" "$site/agents/+/gatt/requests"
# The pair's second locator reads the GATT results too (the battery levels), and no jobs.
observe locator-b locator-b-2 "$site/agents/+/gatt/results" "$site/agents/+/gatt/requests"
observe dashboard dashboard-2 "$site/floors/#" "$site/tags/#" "$site/events" "$site/agents/+/status" "$site/locator/#" \
    "$site/agents/+/gatt/results" "$site/agents/+/gatt/requests"
observe ha homeassistant-2 'homeassistant/#' "$site/agents/+/status" "$site/agents/+/readings" \
    "$site/agents/+/gatt/results" "$site/agents/+/gatt/requests"
observe agent-a agent-spy '#' "$site/agents/+/readings" '$SYS/#'
# The surveyor asks for everything; it may get the readings and nothing else.
observe surveyor surveyor-2 '#' "$site/agents/+/readings" "$site/agents/+/status" "$site/floors/#" "$site/tags/#" \
    "$site/events" "$site/locator/#" 'homeassistant/#' '$SYS/#'
# GATT jobs: agent-d reads its own requests (and asks for every agent's); the operator reads the results.
observe agent-d-jobs agent-d "$site/agents/agent-d/gatt/requests" "$site/agents/+/gatt/requests"
observe operator operator-2 "$site/agents/+/gatt/results" "$site/agents/+/gatt/requests" "$site/agents/+/readings" \
    "$site/tags/#"
sleep 1

publish() { # publish USER TOPIC MARKER
    as "$1" mosquitto_pub -q 1 -t "$2" -m "$3" 2>/dev/null || true
}
publish agent-a "$site/agents/agent-a/readings" ok-a-readings
publish agent-a "$site/agents/agent-a/status" ok-a-status
publish agent-b "$site/agents/agent-b/readings" ok-b-readings
publish agent-a "$site/agents/agent-b/readings" bad-a-as-b
publish agent-a "$site/agents/agent-a/../agent-b/readings" bad-a-dotdot
publish agent-a "$site/floors/1/zones/7/occupancy" bad-a-floor
publish agent-a "$site/tags/mac-001122334455/position" bad-a-tag
publish agent-a "homeassistant/sensor/x/y/config" bad-a-ha
publish agent-a "homeassistant/status" bad-a-hastatus
publish dashboard "$site/floors/1/zones/7/occupancy" bad-dash-floor
publish dashboard "$site/agents/dashboard/status" bad-dash-as-agent
publish locator "$site/agents/locator/readings" bad-loc-as-agent
publish homeassistant "$site/agents/homeassistant/status" bad-ha-as-agent
publish locator "$site/floors/1/zones/7/occupancy" ok-loc-floor
publish locator "$site/locator/status" ok-loc-status
publish locator "homeassistant/sensor/n/o/config" ok-loc-ha
publish locator "$site/locator/lease" ok-loc-lease
publish locator-b "$site/locator/lease" ok-locb-lease
publish locator-b "$site/floors/1/zones/7/occupancy" ok-locb-floor
publish locator-b "$site/agents/locator-b/readings" bad-locb-as-agent
publish homeassistant homeassistant/status ok-ha-status
publish homeassistant "$site/floors/1/zones/7/occupancy" bad-ha-floor
publish surveyor "$site/agents/surveyor/readings" bad-surveyor-as-agent
publish surveyor "$site/agents/agent-a/readings" bad-surveyor-as-a
publish surveyor "$site/agents/agent-a/status" bad-surveyor-status
publish surveyor "$site/floors/1/zones/7/occupancy" bad-surveyor-floor
publish surveyor "$site/tags/mac-001122334455/position" bad-surveyor-tag
publish surveyor "$site/locator/status" bad-surveyor-locator
publish surveyor homeassistant/status bad-surveyor-ha
publish operator "$site/agents/agent-d/gatt/requests" ok-op-request
publish locator "$site/tags/mac-001122334455/position" ok-loc-position
publish locator "$site/tags/mac-001122334455/battery" ok-loc-battery
publish operator "$site/tags/mac-001122334455/position" bad-op-position
publish operator "$site/agents/agent-b/gatt/requests" ok-op-request-for-b
publish agent-a "$site/agents/agent-d/gatt/requests" bad-agent-request
publish agent-d "$site/agents/agent-d/gatt/requests" bad-agent-own-request
publish dashboard "$site/agents/agent-d/gatt/requests" bad-dash-request
publish locator "$site/agents/agent-d/gatt/requests" bad-loc-request
publish homeassistant "$site/agents/agent-d/gatt/requests" bad-ha-request
publish surveyor "$site/agents/agent-d/gatt/requests" bad-surveyor-request
publish agent-d "$site/agents/agent-d/gatt/results" ok-d-result
publish agent-a "$site/agents/agent-d/gatt/results" bad-a-result-as-d
publish operator "$site/agents/agent-d/gatt/results" bad-op-result
publish dashboard "$site/agents/agent-d/gatt/results" bad-dash-result
publish locator "$site/agents/agent-d/gatt/results" bad-loc-result
publish locator-b "$site/agents/agent-d/gatt/results" bad-locb-result
publish operator "$site/agents/operator/readings" bad-op-as-agent
publish operator "$site/agents/operator/gatt/results" bad-op-as-agent-result

if mosquitto_pub -h 127.0.0.1 -p "$plain_port" -t "$site/agents/anon/readings" -m bad-anon 2>/dev/null; then
    fail "anonymous client refused"
else
    pass "anonymous client refused"
fi
if mosquitto_pub -h 127.0.0.1 -p "$plain_port" -u agent-a -P wrong -t "$site/agents/agent-a/readings" -m bad-wrong-password 2>/dev/null; then
    fail "wrong password refused"
else
    pass "wrong password refused"
fi
if mosquitto_pub -h 127.0.0.1 -p "$tls_port" --cafile "$etc_dir/certs/ca.crt" -u agent-a -P "$(cat "$work/agent-a.password")" \
    -q 1 -t "$site/agents/agent-a/readings" -m ok-a-tls 2>/dev/null; then
    pass "agent publishes over TLS"
else
    fail "agent publishes over TLS"
fi
if mosquitto_pub -h 127.0.0.1 -p "$tls_port" -u agent-a -P "$(cat "$work/agent-a.password")" \
    -t "$site/agents/agent-a/readings" -m bad-tls-no-ca 2>/dev/null; then
    fail "TLS listener refuses plain MQTT"
else
    pass "TLS listener refuses plain MQTT"
fi

# MQTT v5 clients are told: PUBACK reason 0x87 "Not authorized" for a forbidden publish, none for an allowed one.
v5() { "$1" -h 127.0.0.1 -p "$plain_port" -V mqttv5 -u agent-a -P "$(cat "$work/agent-a.password")" -q 1 -t "$2" -m v5 2>&1; }
case $(v5 mosquitto_pub "$site/agents/agent-b/readings") in
    *"Not authorized"*) pass "v5 agent is told 'Not authorized' for another agent's topic" ;;
    *) fail "v5 agent is told 'Not authorized' for another agent's topic" ;;
esac
case $(v5 mosquitto_pub "$site/agents/agent-a/gatt/requests") in
    *"Not authorized"*) pass "v5 agent is told 'Not authorized' for a GATT request, even to itself" ;;
    *) fail "v5 agent is told 'Not authorized' for a GATT request, even to itself" ;;
esac
case $(v5 mosquitto_pub "$site/agents/agent-a/readings") in
    *"Not authorized"*) fail "v5 agent publishes to its own topic without complaint" ;;
    *) pass "v5 agent publishes to its own topic without complaint" ;;
esac

# The README's way to add an agent to a running broker: the script, then a reload (SIGHUP, as systemctl reload
# does). mosquitto re-reads the password file, the ACL and the TLS files as its own user then.
WHEREABOUTS_PASSWORD_OUT="$work/agent-c.password" "$here/../create-agent-account.sh" agent-c "$passwd" >/dev/null
kill -HUP "$broker_pid"
sleep 0.5
if kill -0 "$broker_pid" 2>/dev/null; then
    pass "mosquitto survives a reload after a new account"
else
    fail "mosquitto survives a reload after a new account ($(tail -n 2 "$work/log/mosquitto.log"))"
fi
publish agent-c "$site/agents/agent-c/readings" ok-c-after-reload
if mosquitto_pub -h 127.0.0.1 -p "$tls_port" --cafile "$etc_dir/certs/ca.crt" -u agent-c -P "$(cat "$work/agent-c.password")" \
    -q 1 -t "$site/agents/agent-c/readings" -m ok-c-tls-after-reload 2>/dev/null; then
    pass "TLS still works after the reload"
else
    fail "TLS still works after the reload"
fi

sleep 2.5 # long enough for a $SYS update (sys_interval 1) to reach the agent if it were allowed
for pid in $observer_pids; do stop_client "$pid"; done
observer_pids=

expect_seen() { # expect_seen OBSERVER MARKER
    grep -q " $2\$" "$work/$1.seen" && pass "$1 receives $2" || fail "$1 receives $2"
}
expect_unseen() { # expect_unseen MARKER
    if grep -q " $1\$" "$work"/*.seen; then fail "nobody receives $1"; else pass "nobody receives $1"; fi
}
expect_seen locator ok-a-readings
expect_seen locator ok-b-readings
expect_seen locator ok-a-status
expect_seen dashboard ok-a-status
expect_seen locator ok-a-tls
expect_seen dashboard ok-loc-floor
expect_seen dashboard ok-loc-status
expect_seen dashboard ok-loc-lease
expect_seen dashboard ok-locb-lease
expect_seen locator ok-locb-lease
expect_seen dashboard ok-locb-floor
expect_seen ha ok-loc-ha
expect_seen ha ok-a-status
expect_seen locator ok-ha-status
expect_seen locator ok-c-after-reload
expect_seen locator ok-c-tls-after-reload
expect_seen surveyor ok-a-readings
expect_seen surveyor ok-b-readings
expect_seen surveyor ok-c-after-reload
expect_seen agent-d-jobs ok-op-request
expect_seen operator ok-d-result
expect_seen operator ok-loc-position
expect_seen locator ok-d-result
expect_seen locator-b ok-d-result
for marker in bad-dash-as-agent bad-loc-as-agent bad-locb-as-agent bad-ha-as-agent bad-a-as-b bad-a-dotdot bad-a-floor bad-a-tag bad-a-ha bad-a-hastatus bad-dash-floor bad-ha-floor \
    bad-anon bad-wrong-password bad-tls-no-ca bad-surveyor-as-agent bad-surveyor-as-a bad-surveyor-status \
    bad-surveyor-floor bad-surveyor-tag bad-surveyor-locator bad-surveyor-ha bad-agent-request bad-agent-own-request \
    bad-dash-request bad-loc-request bad-ha-request bad-surveyor-request bad-a-result-as-d bad-op-result \
    bad-dash-result bad-op-as-agent bad-op-as-agent-result bad-loc-result bad-locb-result bad-op-position; do
    expect_unseen "$marker"
done
if grep -q " ok-a-readings\$" "$work/ha.seen"; then
    fail "Home Assistant reads the agents' status but not their readings"
else
    pass "Home Assistant reads the agents' status but not their readings"
fi
# Jobs and results go only where the ACL says: agent-d got its own job and not agent-b's; the operator got the
# result and no readings or jobs; the dashboard and Home Assistant, which asked for both, got neither.
for marker in ok-op-request-for-b ok-op-request ok-d-result; do
    for observer in dashboard ha agent-a surveyor; do
        grep -q " $marker\$" "$work/$observer.seen" && fail "$observer does not receive $marker" \
            || pass "$observer does not receive $marker"
    done
done
# The locators read the results for the battery levels, never the jobs.
for marker in ok-op-request-for-b ok-op-request; do
    for observer in locator locator-b; do
        grep -q " $marker\$" "$work/$observer.seen" && fail "$observer does not receive $marker" \
            || pass "$observer does not receive $marker"
    done
done
if grep -vE "^whereabouts/v1/[^/]+/agents/[^/]+/gatt/results " "$work/locator-b.seen" >/dev/null; then
    fail "locator-b, asking for results and jobs, reads results only (got: $(head -c 200 "$work/locator-b.seen"))"
else
    pass "locator-b, asking for results and jobs, reads results only"
fi
grep -q " ok-op-request-for-b\$" "$work/agent-d-jobs.seen" && fail "agent-d does not receive agent-b's job" \
    || pass "agent-d does not receive agent-b's job"
if grep -vE "^whereabouts/v1/[^/]+/(agents/[^/]+/gatt/results|tags/[^/]+/position) " "$work/operator.seen" >/dev/null
then
    fail "the operator reads results and tag positions, nothing else (got: $(head -c 200 "$work/operator.seen"))"
else
    pass "the operator reads results and tag positions, nothing else"
fi
if [ -s "$work/agent-a.seen" ]; then
    fail "an agent reads nothing (it got: $(head -c 200 "$work/agent-a.seen"))"
else
    pass "an agent reads nothing, not even \$SYS or other agents' readings"
fi

# The surveyor's lines are all readings: no status, no locator output, no Home Assistant, no $SYS.
if [ -s "$work/surveyor.seen" ] && ! grep -vE "^whereabouts/v1/[^/]+/agents/[^/]+/readings " "$work/surveyor.seen" >/dev/null; then
    pass "the surveyor reads the readings and nothing else"
else
    fail "the surveyor reads the readings and nothing else (got: $(grep -vE '/agents/[^/]+/readings ' "$work/surveyor.seen" | head -c 200))"
fi

# --- Client-id takeover (issue 12, item 3) ----------------------------------------------------------------
# A locator-like client: the locator's default client id, a persistent session, and a retained will on its
# status as the locator has. Agents then connect again and again with the locator's id and its username as
# id, persistent and not, v3.1.1 and v5, while sending readings. The locator must stay connected (no
# takeover in the broker's log, no will at the dashboard), receive every reading, and keep its session.
observe takeover-dashboard dashboard-2 "$site/locator/status"
as locator mosquitto_sub -i whereabouts-locator -c -q 1 -v -t "$site/agents/+/readings" \
    --will-topic "$site/locator/status" --will-payload takeover-locator-offline --will-qos 1 --will-retain \
    >"$work/takeover-locator.seen" 2>&1 &
locator_pid=$!
observer_pids="$observer_pids $locator_pid"
sleep 0.5
takeovers_before=$(scratch_log_count "Client locator already connected")
connections_before=$(scratch_log_count "as locator ")
sent=0
for round in 1 2 3; do
    for stolen_id in whereabouts-locator locator; do
        # agent-a: a persistent session under the stolen id, trying to read the locator's subscription;
        # agent-b: a v5 publish under the stolen id; agent-c: a reading the locator must not miss meanwhile.
        as agent-a mosquitto_sub -i "$stolen_id" -c -q 1 -v -t "$site/agents/+/readings" -W 1 \
            >>"$work/takeover-thief.seen" 2>&1 &
        thief_pid=$!
        sleep 0.2
        as agent-b mosquitto_pub -V mqttv5 -i "$stolen_id" -q 1 -t "$site/agents/agent-b/readings" \
            -m "takeover-$round-agent-b-as-$stolen_id" 2>/dev/null || true
        as agent-c mosquitto_pub -q 1 -t "$site/agents/agent-c/readings" -m "takeover-$round-agent-c" \
            2>/dev/null || true
        sent=$((sent + 2))
        wait "$thief_pid" 2>/dev/null || true
    done
done
takeovers=$(($(scratch_log_count "Client locator already connected") - takeovers_before))
connections=$(($(scratch_log_count "as locator ") - connections_before))
received=$(grep -c " takeover-" "$work/takeover-locator.seen" || true)
if kill -0 "$locator_pid" 2>/dev/null && [ "$takeovers" -eq 0 ] && [ "$connections" -eq 0 ]; then
    pass "agents using the locator's client id do not kick the locator off (0 takeovers in 6 attempts each)"
else
    fail "agents using the locator's client id do not kick the locator off ($takeovers takeovers, $connections new 'locator' connections)"
fi
[ "$received" -eq "$sent" ] && pass "the locator receives all $sent readings sent meanwhile" \
    || fail "the locator receives all $sent readings sent meanwhile (got $received)"
grep -q "as agent-a " "$work/log/mosquitto.log" && ! grep -q "as whereabouts-locator " "$work/log/mosquitto.log" \
    && pass "the broker names every client after its account" \
    || fail "the broker names every client after its account"

# The session: with the locator away, a reading is queued for it; thieves with its ids must not get it, and
# the locator, back, must.
stop_client "$locator_pid"
publish agent-b "$site/agents/agent-b/readings" takeover-queued-for-locator
for stolen_id in whereabouts-locator locator; do
    as agent-a mosquitto_sub -i "$stolen_id" -c -q 1 -v -t "$site/agents/+/readings" -W 1 \
        >>"$work/takeover-thief.seen" 2>&1 || true
done
as locator mosquitto_sub -i whereabouts-locator -c -q 1 -v -t "$site/agents/+/readings" -C 1 -W 5 \
    >"$work/takeover-resumed.seen" 2>&1 || true
grep -q " takeover-queued-for-locator\$" "$work/takeover-resumed.seen" \
    && pass "the locator resumes its own session and gets the reading queued meanwhile" \
    || fail "the locator resumes its own session and gets the reading queued meanwhile"
if grep -q "takeover-" "$work/takeover-thief.seen"; then
    fail "no agent reads the locator's readings or resumes its session (got: $(grep -m 3 takeover- "$work/takeover-thief.seen"))"
else
    pass "no agent reads the locator's readings or resumes its session"
fi
for pid in $observer_pids; do stop_client "$pid"; done
observer_pids=
if grep -q "takeover-locator-offline" "$work/takeover-dashboard.seen"; then
    fail "the dashboard never sees the locator go offline"
else
    pass "the dashboard never sees the locator go offline"
fi

echo
if [ "$failures" -eq 0 ]; then
    echo "all ACL checks passed"
else
    echo "$failures ACL check(s) failed"
    exit 1
fi
