#!/bin/sh
# Checks the shipped systemd units and sysusers entries with systemd's own tools.
#
# Usage: deploy/check-units.sh [BUILD_DIR]     (default .build/debug)    Exit 0 when every check passes, 1 otherwise.
#
# - `systemd-analyze verify` on every unit. It also checks that ExecStart names an executable, and the binaries are
#   not installed on this machine, so each unit is verified as a copy whose /usr/local/bin/ paths point into
#   BUILD_DIR (the built executables of the same names); nothing else in the unit is changed.
# - `systemd-analyze security --offline=true` on every unit: the exposure score, printed, at most 2.5 ("OK").
# - `systemd-sysusers --root` on deploy/sysusers.d/whereabouts.conf in a scratch root: it creates every User= and
#   Group= that the units name.
# - Every timer: `systemd-analyze verify` beside the service it starts (same name, same folder), and it says
#   Persistent=yes (a run missed while the machine was off comes when it is back) and RandomizedDelaySec= (sites'
#   servers do not all start their rounds at the same instant).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../.build/debug}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
pass() { echo "ok   $1"; }
fail() {
    echo "FAIL $1"
    failures=$((failures + 1))
}
for tool in systemd-analyze systemd-sysusers; do
    command -v "$tool" >/dev/null 2>&1 || {
        echo "error: $tool not found (apt-get install systemd)" >&2
        exit 1
    }
done

mkdir -p "$work/root/etc"
systemd-sysusers --root="$work/root" "$here/sysusers.d/whereabouts.conf" >/dev/null 2>&1 \
    && pass "sysusers.d/whereabouts.conf creates its users" || fail "sysusers.d/whereabouts.conf creates its users"

for unit in "$here"/*/*.service; do
    name=$(basename "$unit")
    sed "s|/usr/local/bin/|$build/|g" "$unit" >"$work/$name"
    for binary in $(sed -n 's|^ExecStart=/usr/local/bin/\([^ ]*\).*|\1|p' "$unit"); do
        [ -x "$build/$binary" ] || {
            echo "error: $build/$binary is not built (swift build first)" >&2
            exit 1
        }
    done
    if output=$(cd "$work" && systemd-analyze verify "$work/$name" 2>&1) && [ -z "$output" ]; then
        pass "$name passes systemd-analyze verify"
    else
        fail "$name passes systemd-analyze verify: $output"
    fi
    score=$(systemd-analyze security --offline=true "$unit" 2>/dev/null | sed -n 's/.*Overall exposure level for .*: \([0-9.]*\).*/\1/p')
    if [ -n "$score" ] && awk "BEGIN { exit !($score <= 2.5) }"; then
        pass "$name: systemd-analyze security exposure $score (at most 2.5)"
    else
        fail "$name: systemd-analyze security exposure '${score:-none}' (at most 2.5)"
    fi
    for account in $(sed -n 's/^\(User\|Group\)=//p' "$unit" | sort -u); do
        grep -q "^$account:" "$work/root/etc/passwd" "$work/root/etc/group" 2>/dev/null \
            || fail "$name: sysusers.d/whereabouts.conf creates its account '$account'"
    done
    case $(sed -n 's/^EnvironmentFile=//p' "$unit") in
        -* | "") ;;
        *) fail "$name: EnvironmentFile is optional (EnvironmentFile=-…): a missing file must not stop the service" ;;
    esac
done

for timer in "$here"/*/*.timer; do
    [ -e "$timer" ] || continue
    name=$(basename "$timer")
    service=${name%.timer}.service
    if [ ! -e "$(dirname "$timer")/$service" ]; then
        fail "$name: its service $service is beside it"
        continue
    fi
    # The service's copy (its executables in BUILD_DIR) was made above.
    cp "$timer" "$work/$name"
    if output=$(cd "$work" && systemd-analyze verify "$work/$name" 2>&1) && [ -z "$output" ]; then
        pass "$name passes systemd-analyze verify (with $service)"
    else
        fail "$name passes systemd-analyze verify (with $service): $output"
    fi
    grep -q '^Persistent=yes$' "$timer" && pass "$name: Persistent=yes" || fail "$name: Persistent=yes"
    grep -q '^RandomizedDelaySec=.' "$timer" && pass "$name: RandomizedDelaySec set" \
        || fail "$name: RandomizedDelaySec set"
    grep -q '^\[Install\]' "$(dirname "$timer")/$service" \
        && fail "$service: no [Install] section (its timer starts it)" || true
done

echo
if [ "$failures" -eq 0 ]; then
    echo "all unit checks passed"
else
    echo "$failures unit check(s) FAILED"
    exit 1
fi
