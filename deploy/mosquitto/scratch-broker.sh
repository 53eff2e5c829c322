# Sourced by check-acl.sh and check-crash.sh: a scratch mosquitto built from the shipped whereabouts.conf and
# run the way Debian runs it.
#
# Debian starts mosquitto as root; mosquitto opens its listeners, drops to the user `mosquitto` and only then
# reads the password and ACL files (and re-reads them, and the TLS files, on every reload). A file only root
# can read therefore stops the broker at start. To catch that, the scratch broker is laid out like a Debian
# install inside a temporary directory:
#   $work/etc   root 755, like /etc/mosquitto: mosquitto.conf, whereabouts.acl, whereabouts.passwd, certs/
#   $work/lib   owned by mosquitto, like /var/lib/mosquitto (persistence)
#   $work/log   owned by mosquitto, like /var/log/mosquitto
# and, when the check runs as root, started as root with `user mosquitto`. Run as another user, mosquitto
# cannot switch users, so the file permissions are not checked; scratch_init says so.
#
# Listeners move to free loopback ports: never a fixed port.

# scratch_init NAME: makes the directories and picks the ports. Sets work, etc_dir, passwd, plain_port,
# tls_port, broker_user.
scratch_init() {
    work=$(mktemp -d "/tmp/whereabouts-$1.XXXXXX")
    chmod 755 "$work"
    etc_dir=$work/etc
    passwd=$etc_dir/whereabouts.passwd
    mkdir -m 755 "$etc_dir" "$etc_dir/certs" "$work/lib" "$work/log"
    if [ "$(id -u)" -eq 0 ]; then
        broker_user=mosquitto
        id "$broker_user" >/dev/null 2>&1 || {
            echo "error: no user '$broker_user' (apt-get install mosquitto creates it)" >&2
            exit 1
        }
        chown "$broker_user" "$work/lib" "$work/log"
    else
        broker_user=$(id -un)
        echo "note: not running as root, so mosquitto cannot drop to user mosquitto as it does on Debian;"
        echo "      the permissions of the password, ACL and TLS files are NOT checked. Run as root for that."
    fi
    plain_port=$(scratch_free_port)
    tls_port=$(scratch_free_port)
    broker_pid=
}

scratch_free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# scratch_certs [make-certs.sh options]: the site CA and the broker's certificate for 127.0.0.1 and localhost, made by
# deploy/make-certs.sh (the script users run) into $work/pki, and installed like /etc/mosquitto/certs (certificates
# world-readable, the key readable by root and the broker's group only). Extra options (`--agent ID`) go to the script.
scratch_certs() {
    certs=$etc_dir/certs
    sh "$(cd "$(dirname "$0")/.." && pwd)/make-certs.sh" --out "$work/pki" --days 1 --name 127.0.0.1 --name localhost \
        "$@" >/dev/null || {
        echo "deploy/make-certs.sh failed" >&2
        exit 1
    }
    cp "$work/pki/ca.crt" "$work/pki/server.crt" "$work/pki/server.key" "$certs/"
    chmod 644 "$certs/ca.crt" "$certs/server.crt"
    chmod 640 "$certs/server.key"
    [ "$(id -u)" -ne 0 ] || chgrp "$broker_user" "$certs/server.key"
}

# scratch_config [SED_EXPRESSION...]: writes $etc_dir/mosquitto.conf from the shipped whereabouts.conf, with
# the paths and listeners moved into the scratch directory, plus what Debian's main mosquitto.conf adds.
# Extra sed expressions (e.g. '/^autosave_/d') edit the shipped lines; SCRATCH_EXTRA lines are appended.
scratch_config() {
    here_conf=$(cd "$(dirname "$0")" && pwd)/whereabouts.conf
    cp "$(dirname "$here_conf")/whereabouts.acl" "$etc_dir/whereabouts.acl"
    chmod 644 "$etc_dir/whereabouts.acl"
    set -- -e "s|^password_file .*|password_file $passwd|" \
        -e "s|^acl_file .*|acl_file $etc_dir/whereabouts.acl|" \
        -e "s|^listener 8883\$|listener $tls_port 127.0.0.1|" \
        -e "s|^listener 1883 127.0.0.1\$|listener $plain_port 127.0.0.1|" \
        -e "s|^cafile .*|cafile $etc_dir/certs/ca.crt|" \
        -e "s|^certfile .*|certfile $etc_dir/certs/server.crt|" \
        -e "s|^keyfile .*|keyfile $etc_dir/certs/server.key|" \
        "$@"
    sed "$@" "$here_conf" >"$etc_dir/mosquitto.conf"
    # Debian's /etc/mosquitto/mosquitto.conf sets these; `user mosquitto` is also mosquitto's built-in default.
    printf 'user %s\npersistence_location %s/\nlog_dest file %s\n%s\n' \
        "$broker_user" "$work/lib" "$work/log/mosquitto.log" "${SCRATCH_EXTRA:-}" >>"$etc_dir/mosquitto.conf"
    chmod 644 "$etc_dir/mosquitto.conf"
    grep -q "listener $tls_port" "$etc_dir/mosquitto.conf" && grep -q "listener $plain_port" "$etc_dir/mosquitto.conf" \
        || {
            echo "could not rewrite the listeners of whereabouts.conf" >&2
            exit 1
        }
}

# scratch_start: starts mosquitto in the background and waits until it runs (it has read its password and ACL
# files by then). Returns 1, with the log on stderr, if it exited instead.
scratch_start() {
    log=$work/log/mosquitto.log
    running_before=$(scratch_log_count ' running$')
    mosquitto -c "$etc_dir/mosquitto.conf" >>"$work/mosquitto.out" 2>&1 &
    broker_pid=$!
    for _ in $(seq 100); do
        kill -0 "$broker_pid" 2>/dev/null || break
        [ "$(scratch_log_count ' running$')" -gt "$running_before" ] && return 0
        sleep 0.05
    done
    echo "mosquitto did not start:" >&2
    tail -n 5 "$log" "$work/mosquitto.out" >&2 2>/dev/null || true
    broker_pid=
    return 1
}

# scratch_log_count PATTERN: how many lines of the broker's log match PATTERN (0 before the log exists).
scratch_log_count() {
    cat "$work/log/mosquitto.log" 2>/dev/null | grep -c -- "$1" || true
}

# scratch_kill SIGNAL: sends SIGNAL to the broker and waits for it to exit.
scratch_kill() {
    [ -n "$broker_pid" ] || return 0
    kill "-$1" "$broker_pid" 2>/dev/null || true
    wait "$broker_pid" 2>/dev/null || true
    broker_pid=
}
