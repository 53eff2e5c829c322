# Sourced by the demo and the benchmarks: starts a private mosquitto on a free loopback port (the machine may be
# shared: never assume 1883) and waits until it accepts connections.
#   start_private_broker BIN_DIR OUT_DIR [extra config lines...]
# Sets `port` and `broker` (mqtt://127.0.0.1:PORT) and appends the broker's pid to the caller's `pids` array.
start_private_broker() {
    local bin=$1 out=$2
    shift 2
    port=$("$bin/whereabouts" free-port)
    {
        echo "listener $port 127.0.0.1"
        echo "allow_anonymous true"
        echo "persistence false"
        echo "log_dest file $PWD/$out/mosquitto.log"
        for line in "$@"; do echo "$line"; done
        # Started as root, mosquitto would switch to its own user and could not write the log here.
        if [ "$(id -u)" -eq 0 ]; then echo "user root"; fi
    } > "$out/mosquitto.conf"
    mosquitto -c "$out/mosquitto.conf" &
    pids+=($!)
    for _ in $(seq 50); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
        sleep 0.1
    done
    broker=mqtt://127.0.0.1:$port
}
