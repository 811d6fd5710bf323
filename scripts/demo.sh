#!/usr/bin/env bash
# The demo: installs what is missing, builds, starts a local mosquitto on loopback, the hub, and the simulated
# museum (config/venues/museum.yaml) whose nine gateways run as real agents publishing into the broker; shows the
# gateways' and the hub's status. Ctrl-C stops everything cleanly (gateways and hub publish "offline", then the broker
# stops). DEMO_SECONDS=N stops by itself after N seconds (used by the test suite). DEMO_DIR=DIR keeps its files in
# DIR instead of run/demo (from a new DIR: a cold start, no database and no broker state); DEMO_BIN=DIR runs the
# programs built in DIR without installing or building (the cold-start test, which runs inside `swift test`).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -n "${DEMO_BIN:-}" ]; then
  bin=$DEMO_BIN
else
  bash scripts/setup.sh
  echo "demo: building (swift build)…"
  swift build 2>&1 | tail -n 1
  bin=$(swift build --show-bin-path)
fi

run=${DEMO_DIR:-run/demo}
mkdir -p "$run"
dir=$(cd "$run" && pwd)   # the same folder as an absolute path, for the programs' files
rm -rf "$run"/*.log "$run"/outboxes

port=${BROKER_PORT:-18830}
while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done

user_line=""
[ "$(id -u)" -eq 0 ] && user_line="user root"   # root would otherwise drop to user mosquitto, which cannot write run/
sed -e "s|@PORT@|$port|; s|@DIR@|$dir|; s|@USER@|$user_line|" config/mosquitto/local.conf > "$run/mosquitto.conf"

# A demo killed outright (its terminal closed) leaves its session-detached programs behind: stop those first.
# (A demo still running in another terminal is stopped the same way: two would share run/demo.)
if [ -f "$run/pids" ]; then
  left=()
  while read -r pid; do
    if [ -r "/proc/$pid/cmdline" ] && grep -qaE 'mosquitto|beacon-' "/proc/$pid/cmdline"; then
      kill -TERM "$pid"
      left+=("$pid")
    fi
  done <"$run/pids"
  rm -f "$run/pids"
  # The hub releases its database's writer lock only once it has stopped: wait for them (at most 15 s).
  for _ in $(seq 1 150); do
    alive=0
    for pid in "${left[@]}"; do [ -d "/proc/$pid" ] && alive=1; done
    [ "$alive" -eq 0 ] && break
    sleep 0.1
  done
fi

pids=()
cleanup() {
  trap - INT TERM HUP EXIT
  trap '' PIPE   # whoever read our output may be gone; stopping the programs matters more than telling
  set +e
  echo
  echo "demo: stopping agents and hub…"
  # Reverse start order: agents, then hub, then the watcher, so the gateways' last events are still shown.
  for ((i = ${#pids[@]} - 1; i >= 1; i--)); do
    kill -TERM "${pids[i]}" 2>/dev/null || true
    wait "${pids[i]}" 2>/dev/null || true
    # The agents' goodbyes are on their way to the hub: give it a moment to take them before it stops.
    [ "$i" -eq $((${#pids[@]} - 1)) ] && sleep 1
  done
  echo "demo: stopping mosquitto…"
  kill -TERM "${pids[0]}" 2>/dev/null || true
  wait "${pids[0]}" 2>/dev/null || true
  rm -f "$run/pids"
  echo "demo: stopped. Logs are in $run/."
}
trap cleanup INT TERM HUP PIPE EXIT

# Every program runs in its own session (setsid): a terminal Ctrl-C signals the whole foreground process group, which
# would stop the broker before the agents could say goodbye. Only this script gets it, and stops them in order.
setsid mosquitto -c "$run/mosquitto.conf" 2>>"$run/mosquitto.stderr" &
pids+=($!)
for _ in $(seq 1 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.1
done
(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "demo: mosquitto did not start; see $run/mosquitto.log" >&2; exit 1; }
echo "demo: mosquitto listening on 127.0.0.1:$port"

# The dashboard's port: DASHBOARD_PORT, or the first free one from 8080.
http_port=${DASHBOARD_PORT:-8080}
while (exec 3<>"/dev/tcp/127.0.0.1/$http_port") 2>/dev/null; do http_port=$((http_port + 1)); done

# The shipped hub.yaml, pointed at this broker, database and dashboard port.
sed -e "s|^venue: venues/|venue: $PWD/config/venues/|; s|^  port: 1883|  port: $port|; s|^  path: /var/lib/beacontracker/hub.db|  path: $dir/hub.db|; s|^  port: 8080|  port: $http_port|" \
  config/hub.yaml > "$run/hub.yaml"

# The events as alert subscribers see them. Process substitution keeps $! the program's own pid, so cleanup signals
# the program, not its log filter.
setsid "$bin/beacon-hub" watch --config "$run/hub.yaml" > >(sed -u 's/^/event /') 2>&1 &
pids+=($!)

setsid "$bin/beacon-hub" run --config "$run/hub.yaml" > >(sed -u 's/^/hub   /') 2>&1 &
pids+=($!)

# The museum's nine gateways, each a real agent (decode → filter → batches → outbox → MQTT) fed by the simulator.
setsid "$bin/beacon-sim" run config/venues/museum.yaml --mqtt "127.0.0.1:$port" --outbox-dir "$dir/outboxes" \
  >"$run/beacon-sim.log" 2>&1 &
pids+=($!)

printf '%s\n' "${pids[@]}" >"$run/pids"
echo "demo: hub and the simulated museum (9 gateways, 24 tags) running; printing the hub's events (Ctrl-C to stop)"
echo "demo: raw events:  mosquitto_sub -p $port -t 'beacontracker/museum/events/#' -v"
echo "demo: tag states:  $bin/beacon-hub watch --config $run/hub.yaml --states"
echo "demo: history:     $bin/beacon-hub visits --config $run/hub.yaml   (also dwell --by zone, routes, occupancy --at …)"
echo "demo: API:         curl -s http://127.0.0.1:$http_port/api/occupancy   (docs/openapi.yaml)"
for _ in $(seq 1 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$http_port") 2>/dev/null && break
  sleep 0.1
done
if ! kill -0 "${pids[2]}" 2>/dev/null || ! (exec 3<>"/dev/tcp/127.0.0.1/$http_port") 2>/dev/null; then
  echo "demo: the hub did not start (its error is above, lines starting with 'hub'); stopping" >&2
  exit 1
fi
echo "demo: dashboard:   http://127.0.0.1:$http_port/   ← open this in a browser: the museum, live"
if [ -n "${DEMO_SECONDS:-}" ]; then
  sleep "$DEMO_SECONDS"
else
  wait "${pids[0]}"
fi
