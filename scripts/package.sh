#!/usr/bin/env bash
# Builds the Debian packages whereabouts-agent and whereabouts-locator for this machine's architecture.
#
# Usage: scripts/package.sh [--version V] [--out DIR] [--no-build]
#
#   --version V   the packages' version (default 0.N, N the number of commits on this branch)
#   --out DIR     where the .deb files go (default dist/)
#   --no-build    package what .build/static/release holds instead of building it
#
# whereabouts-agent:   /usr/bin/whereabouts-agent, its unit, a commented /etc/whereabouts/agent.conf (a conffile:
#                      an upgrade never overwrites a changed one), its system user (sysusers.d).
# whereabouts-locator: /usr/bin/whereabouts-locator and /usr/bin/whereabouts, the units of the locator, of
#                      `whereabouts web` and of the daily battery round (whereabouts-battery.service and .timer),
#                      commented locator.conf and web.conf, their users, and in
#                      /usr/share/whereabouts the broker's config and ACL, the account and certificate scripts and
#                      the Grafana dashboard.
# The Swift runtime is linked statically, so a machine needs no Swift; the C libraries (libmosquitto, libbluetooth,
# glibc, libstdc++) come as dependencies, with the versions dpkg-shlibdeps reads off the binaries. The glibc each
# package needs is printed and written into its control file's Depends. Maintainer scripts create the user on
# configure, enable (not start) the unit on a first install and restart it on an upgrade, stop and disable it on
# removal, and on purge remove the state directory and the user too. docs/packages.md says more.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bootstrap.sh
command -v dpkg-shlibdeps >/dev/null || {
    echo "package: installing dpkg-dev (dpkg-shlibdeps)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends dpkg-dev >&2
}

version=0.$(git rev-list --count HEAD 2>/dev/null || echo 0)
out=dist
build=yes
while (($#)); do
    case $1 in
        --version) version=$2 && shift ;;
        --out) out=$2 && shift ;;
        --no-build) build=no ;;
        *) echo "usage: $0 [--version V] [--out DIR] [--no-build]" >&2 && exit 2 ;;
    esac
    shift
done
[[ $version =~ ^[0-9][A-Za-z0-9.+~-]*$ ]] || { echo "package: '$version' is not a Debian version" >&2 && exit 2; }
arch=$(dpkg --print-architecture)
# Its own build directory: the static runtime changes every module's flags, so sharing .build/release with the
# usual release build (the benchmarks') would rebuild everything each time one follows the other.
scratch=.build/static
if [ "$build" = yes ]; then
    for product in whereabouts-agent whereabouts-locator whereabouts; do
        swift build -c release --static-swift-stdlib --scratch-path "$scratch" --product "$product" >&2
    done
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

# stage PACKAGE: an empty tree for PACKAGE under $work.
stage() {
    root=$work/$1
    install -d "$root/DEBIAN" "$root/usr/bin" "$root/lib/systemd/system" "$root/usr/lib/sysusers.d" "$root/etc/whereabouts" \
        "$root/usr/share/doc/$1"
    printf 'Whereabouts, BLE indoor positioning: https://github.com/whereabouts/whereabouts\n' >"$root/usr/share/doc/$1/README"
}

# binary NAME: a stripped release executable into the staged tree.
binary() {
    install -m 755 "$scratch/release/$1" "$root/usr/bin/$1"
    strip --strip-unneeded "$root/usr/bin/$1"
}

# unit FILE: a shipped unit, its executables moved from /usr/local/bin to /usr/bin.
unit() {
    sed 's|/usr/local/bin/|/usr/bin/|g' "$1" >"$root/lib/systemd/system/$(basename "$1")"
    chmod 644 "$root/lib/systemd/system/$(basename "$1")"
}

# conffile SOURCE NAME: SOURCE as /etc/whereabouts/NAME, declared a conffile.
conffile() {
    install -m 644 "$1" "$root/etc/whereabouts/$2"
    echo "/etc/whereabouts/$2" >>"$root/DEBIAN/conffiles"
}

# maintainer PACKAGE "USER:GROUP-READABLE-CONFFILE..." "UNIT..." "STATE-DIRECTORY...": the maintainer scripts.
maintainer() {
    local package=$1 accounts=$2 units=$3 states=$4
    sed -e "s|@ACCOUNTS@|$accounts|" -e "s|@UNITS@|$units|" -e "s|@STATES@|$states|" -e "s|@PACKAGE@|$package|" \
        scripts/package/postinst >"$root/DEBIAN/postinst"
    sed -e "s|@UNITS@|$units|" scripts/package/prerm >"$root/DEBIAN/prerm"
    sed -e "s|@ACCOUNTS@|$accounts|" -e "s|@STATES@|$states|" scripts/package/postrm >"$root/DEBIAN/postrm"
    chmod 755 "$root/DEBIAN/postinst" "$root/DEBIAN/prerm" "$root/DEBIAN/postrm"
}

# control PACKAGE DESCRIPTION [RECOMMENDS]: the control file, its Depends from dpkg-shlibdeps; builds the .deb.
control() {
    local package=$1 description=$2 recommends=${3:+, $3} depends glibc
    mkdir -p "$work/shlibs/debian"
    printf 'Source: whereabouts\n\nPackage: %s\nArchitecture: any\n' "$package" >"$work/shlibs/debian/control"
    depends=$(cd "$work/shlibs" && dpkg-shlibdeps -O "$root"/usr/bin/* 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
    glibc=$(for file in "$root"/usr/bin/*; do objdump -T "$file"; done | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
    cat >"$root/DEBIAN/control" <<CONTROL
Package: $package
Version: $version
Architecture: $arch
Maintainer: Whereabouts <whereabouts@localhost>
Depends: $depends
Recommends: systemd$recommends
Section: net
Priority: optional
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Description: $description
 Part of Whereabouts, an open indoor positioning system for Bluetooth LE tags:
 scanner agents on small Linux boards, a central locator, MQTT in between.
 The Swift runtime is linked in; the newest glibc symbol used is $glibc.
CONTROL
    dpkg-deb --root-owner-group -Zxz --build "$root" "$out/${package}_${version}_$arch.deb" >/dev/null
    echo "$out/${package}_${version}_$arch.deb  (needs $glibc; Depends: $depends)"
}

stage whereabouts-agent
binary whereabouts-agent
unit deploy/agent/whereabouts-agent.service
conffile deploy/agent/agent.conf agent.conf
grep '^u *whereabouts-agent ' deploy/sysusers.d/whereabouts.conf >"$root/usr/lib/sysusers.d/whereabouts-agent.conf"
install -D -m 755 deploy/enroll-agent.sh "$root/usr/sbin/whereabouts-enroll-agent"
maintainer whereabouts-agent "whereabouts-agent:/etc/whereabouts/agent.conf" "whereabouts-agent.service" \
    "/var/lib/whereabouts-agent"
control whereabouts-agent "Whereabouts scanner agent (BLE beacons to MQTT)"

stage whereabouts-locator
binary whereabouts-locator
binary whereabouts
unit deploy/locator/whereabouts-locator.service
unit deploy/web/whereabouts-web.service
unit deploy/operator/whereabouts-battery.service
unit deploy/operator/whereabouts-battery.timer
conffile deploy/locator/locator.conf locator.conf
conffile deploy/web/web.conf web.conf
grep -E '^u *whereabouts(-web|-operator)? ' deploy/sysusers.d/whereabouts.conf >"$root/usr/lib/sysusers.d/whereabouts-locator.conf"
install -d "$root/usr/share/whereabouts/mosquitto"
install -m 644 deploy/mosquitto/whereabouts.conf deploy/mosquitto/whereabouts.acl deploy/mosquitto/whereabouts-bridge.conf \
    "$root/usr/share/whereabouts/mosquitto/"
install -m 755 deploy/create-agent-account.sh deploy/make-certs.sh "$root/usr/share/whereabouts/"
install -D -m 755 deploy/setup-server.sh "$root/usr/sbin/whereabouts-setup-server"
install -d "$root/usr/share/whereabouts/grafana"
install -m 644 deploy/grafana/whereabouts.json "$root/usr/share/whereabouts/grafana/"
# The operator's user has no conffile of its own (its settings are operator.env, which whereabouts-setup-server
# writes); the timer is the unit enabled, and the round it starts is skipped until operator.env exists.
maintainer whereabouts-locator \
    "whereabouts:/etc/whereabouts/locator.conf whereabouts-web:/etc/whereabouts/web.conf whereabouts-operator:" \
    "whereabouts-locator.service whereabouts-web.service whereabouts-battery.timer" \
    "/var/lib/whereabouts /var/lib/whereabouts-web"
# whereabouts-setup-server makes the certificates and passwords with openssl.
control whereabouts-locator "Whereabouts locator, live page and tools (positions and zones from BLE readings)" openssl
