#!/usr/bin/env bash
# Self-calibration from the gateways' own beacons (issue 22), on random venues: every gateway advertises its beacon,
# the hub fits the gateway-to-gateway links as the run goes on and feeds what they teach (gains, walls' losses) to the
# engine. Per venue, the same run is replayed three ways and scored against the truth:
#   off    — links not applied (inference.linkFitSeconds: 0): the engine with the venue file alone;
#   links  — the default: fitted every 5 minutes over the last 30, applied live;
#   true   — the engine given the simulator's true receive gains (a calibration file of offsets only).
# Prints one JSON line per venue: accuracies and the last fit's gain errors (both sides with Σ = 0).
#
#   scripts/links-accuracy.sh BIN-DIR OUT-DIR SEED... [--duration 30m] [--jobs 2]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$1
out=$2
shift 2
duration=30m
jobs=2
seeds=()
while [ $# -gt 0 ]; do
    case "$1" in
        --duration) duration=$2; shift 2 ;;
        --jobs) jobs=$2; shift 2 ;;
        *) seeds+=("$1"); shift ;;
    esac
done
start=1763812800
mkdir -p "$out"

one() { # SEED
    local seed=$1 dir=$out/$1
    rm -rf "$dir" && mkdir -p "$dir"
    "$bin/beacon-sim" venue --random --seed "$seed" --gateway-beacons --out "$dir/venue.yaml" >/dev/null
    "$bin/beacon-sim" run "$dir/venue.yaml" --out "$dir" --duration "$duration" --seed "$seed" --start $start \
        --gateway-beacons --no-oracle >"$dir/run.txt"
    local site
    site=$(sed -n 's/^site: //p' "$dir/venue.yaml")
    printf 'hub: links\nsite: %s\nvenue: venue.yaml\n' "$site" >"$dir/hub-links.yaml"
    printf 'hub: links\nsite: %s\nvenue: venue.yaml\ninference:\n  linkFitSeconds: 0\n' "$site" >"$dir/hub-off.yaml"
    python3 - "$dir/venue.yaml" "$site" >"$dir/calibration-true.yaml" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
print(f"site: {sys.argv[2]}\ncreated: 0\nreferencePower: -59\nzones: {{}}\ngatewayOffsets:")
for line in text.splitlines():
    m = re.match(r"\s*- \{ id: ([^,]+),.*gainOffset: (-?[0-9.]+)", line)
    if m:
        print(f"  {m.group(1)}: {m.group(2)}")
PY
    printf 'hub: links\nsite: %s\nvenue: venue.yaml\ncalibration: calibration-true.yaml\ninference:\n  linkFitSeconds: 0\n' \
        "$site" >"$dir/hub-true.yaml"
    for way in off links true; do
        "$bin/beacon-hub" replay --config "$dir/hub-$way.yaml" "$dir/sightings.jsonl" --events "$dir/events-$way.jsonl" \
            >"$dir/replay-$way.txt"
        "$bin/beacon-sim" score --venue "$dir/venue.yaml" --truth "$dir/truth.jsonl" --events "$dir/events-$way.jsonl" \
            --json >"$dir/score-$way.json"
    done
    python3 - "$dir" "$seed" <<'PY'
import json, re, sys
d, seed = sys.argv[1], int(sys.argv[2])
# The true gains, as the calibration above wrote them ("  gateway: gain" under gatewayOffsets).
truth = {}
for line in open(f"{d}/calibration-true.yaml"):
    m = re.match(r"  ([^ :]+): (-?[0-9.]+)$", line)
    if m:
        truth[m.group(1)] = float(m.group(2))
fitted = {}
for line in open(f"{d}/replay-links.txt"):
    if "gains (dB)" in line:
        for gw, value, sigma in re.findall(r"([^ ,]+) ([+-][0-9.]+)±([0-9.]+)", line.split("gains (dB)")[1]):
            fitted[gw] = (float(value), float(sigma))
errors = []
if fitted:
    mean = sum(truth.values()) / len(truth)
    errors = [abs(fitted[g][0] - (truth[g] - mean)) for g in truth if g in fitted]
score = {w: json.load(open(f"{d}/score-{w}.json"))["hub"]["accuracy"] for w in ("off", "links", "true")}
print(json.dumps({"seed": seed, "gateways": len(truth), "gainErrors": errors, "accuracy": score}))
PY
}

running=0
for seed in "${seeds[@]}"; do
    if [ "$running" -ge "$jobs" ]; then
        wait -n
        running=$((running - 1))
    fi
    one "$seed" >"$out/$seed.json" &
    running=$((running + 1))
done
wait
cat "$out"/*.json
