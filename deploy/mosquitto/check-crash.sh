#!/bin/sh
# Measures what a broker crash (kill -9 of mosquitto) loses with the shipped persistence settings.
#
# For each autosave setting: start the shipped configuration (as Debian runs it, see scratch-broker.sh), give
# the locator its persistent session and disconnect it, queue N QoS 1 readings for it (each acknowledged by
# the broker), wait SETTLE seconds, kill -9 the broker, start it again, reconnect the locator and count what
# arrives. Also prints how long queuing took, since saving more often costs broker time. SETTLE defaults to
# 3 s, just beyond the shipped settings' save period; -s 0 shows what a crash right after a burst loses.
#
# Usage: deploy/mosquitto/check-crash.sh [-n N] [-s SETTLE] [-p PAYLOAD_BYTES] [SETTING...]
#   SETTING  autosave lines separated by ';', e.g. 'autosave_on_changes true;autosave_interval 100'.
#            Without any, the shipped settings are measured.
# Exit 0 when the shipped settings (if measured) lost nothing, 1 otherwise (with -s 0 they lose the burst).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
. "$here/scratch-broker.sh"

count=1000
settle=3
payload_bytes=1000
while getopts n:s:p: option; do
    case $option in
        n) count=$OPTARG ;;
        s) settle=$OPTARG ;;
        p) payload_bytes=$OPTARG ;;
        *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
shipped=$(grep '^autosave_' "$here/whereabouts.conf" | paste -sd';' -)
[ $# -gt 0 ] || set -- "$shipped"

scratch_init crash
cleanup() {
    scratch_kill KILL
    [ -n "${KEEP_WORK:-}" ] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT INT TERM
scratch_certs
(umask 077 && : >"$passwd")
for id in locator agent-a; do
    openssl rand -base64 24 >"$work/$id.password"
    mosquitto_passwd -b "$passwd" "$id" "$(cat "$work/$id.password")"
done
[ "$(id -u)" -ne 0 ] || chown "$broker_user:" "$passwd"

site=whereabouts/v1/e2c56db5-dffb-48d2-b060-d0f5a71096e0
as() { # as USER mosquitto_pub|mosquitto_sub ARGS...
    user=$1
    tool=$2
    shift 2
    "$tool" -h 127.0.0.1 -p "$plain_port" -u "$user" -P "$(cat "$work/$user.password")" "$@"
}
filler=$(head -c "$payload_bytes" /dev/zero | tr '\0' x)

status=0
echo "queued QoS 1 readings of $payload_bytes bytes for a disconnected persistent subscriber; kill -9 ${settle}s after the last PUBACK"
printf '%-55s %8s %9s %6s %7s %9s\n' setting queued delivered lost "lost %" "queue s"
for setting in "$@"; do
    rm -f "$work/lib/mosquitto.db"
    autosave_lines=$(printf '%s\n' "$setting" | tr ';' '\n')
    SCRATCH_EXTRA=$autosave_lines scratch_config -e '/^autosave_/d'
    scratch_start || exit 1
    as locator mosquitto_sub -i whereabouts-locator -c -q 1 -t "$site/agents/+/readings" -E
    started=$(date +%s.%N)
    seq "$count" | sed "s/\$/ $filler/" | as agent-a mosquitto_pub -q 1 -t "$site/agents/agent-a/readings" -l
    queued_seconds=$(echo "$(date +%s.%N) - $started" | bc)
    sleep "$settle"
    scratch_kill KILL
    scratch_start || exit 1
    delivered=$(as locator mosquitto_sub -i whereabouts-locator -c -q 1 -t "$site/agents/+/readings" \
        -C "$count" -W 10 2>/dev/null | cut -d' ' -f1 | sort -u | wc -l)
    scratch_kill TERM
    lost=$((count - delivered))
    printf '%-55s %8d %9d %6d %6.1f%% %9.2f\n' "$setting" "$count" "$delivered" "$lost" \
        "$(echo "100 * $lost / $count" | bc -l)" "$queued_seconds"
    [ "$setting" != "$shipped" ] || [ "$lost" -eq 0 ] || status=1
done
exit "$status"
