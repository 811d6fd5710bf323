#!/usr/bin/env bash
# What placing a moved gateway is worth (`POST /api/gateways/{gateway}/place`): for each venue of a
# `scripts/gateway-moves.sh` run (its move.json: which gateway went where; its events.jsonl: the `gateway-moved` alert
# and where its links placed the gateway), the venue is simulated with its tags after the move, and three hubs replay
# the same run: with the venue file as it was (the gateway where it no longer stands), with the gateway placed where
# its links placed it (the alert's `estimatedPosition`: what the panel's form holds), and placed where it went (a
# measured place). Each is scored against the run's truth (`beacon-sim score`). A venue whose move was not named (no
# estimate) is left out of the estimate's column.
# Prints one JSON line per venue and a summary line (mean and median of venues, accuracy in %).
#
#   scripts/placement-accuracy.sh BIN-DIR MOVES-DIR OUT-DIR SEED... [--duration 20m] [--jobs 2]
#
# BIN-DIR holds beacon-sim and beacon-hub (a release build: swift build -c release; .build/release). MOVES-DIR is
# gateway-moves.sh's OUT-DIR for the same seeds.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 4 ]; then
    echo "usage: scripts/placement-accuracy.sh BIN-DIR MOVES-DIR OUT-DIR SEED... [--duration 20m] [--jobs 2]" >&2
    exit 2
fi
bin=$1
moves=$2
out=$3
shift 3
duration=20m
jobs=2
seeds=()
while [ $# -gt 0 ]; do
    case "$1" in
        --duration) duration=$2; shift 2 ;;
        --jobs) jobs=$2; shift 2 ;;
        --*) echo "placement-accuracy.sh: unknown option $1 (see the script's header)" >&2; exit 2 ;;
        *) seeds+=("$1"); shift ;;
    esac
done
for program in beacon-sim beacon-hub; do
    [ -x "$bin/$program" ] || { echo "placement-accuracy.sh: no $bin/$program (swift build -c release)" >&2; exit 2; }
done
for seed in "${seeds[@]}"; do
    [ -f "$moves/$seed/move.json" ] && [ -f "$moves/$seed/events.jsonl" ] || {
        echo "placement-accuracy.sh: no $moves/$seed/move.json or events.jsonl: run scripts/gateway-moves.sh for seed $seed first" >&2
        exit 2
    }
done
mkdir -p "$out"

one() { # SEED
    set -euo pipefail
    local seed=$1 dir=$out/$1
    rm -rf "$dir" && mkdir -p "$dir"
    "$bin/beacon-sim" venue --random --seed "$seed" --gateway-beacons --out "$dir/venue.yaml" >/dev/null
    # The venue as the simulator plays it after the move (the gateway at its new place, serving the zone it went to;
    # only the run after the move is simulated, so its radio need not match the run before it), and the placements:
    # where the alert's estimate put it, and where it went.
    python3 - "$dir" "$moves/$seed" <<'PY'
import json, re, sys
sys.path.insert(0, "scripts")
import venue_shapes
d, m = sys.argv[1], sys.argv[2]
text = open(f"{d}/venue.yaml").read()
move = json.load(open(f"{m}/move.json"))
zones = venue_shapes.zones(text)
gateway, to, target = move["gateway"], move["to"], move["zone"]
moved = venue_shapes.moved(text, gateway, to, target)
open(f"{d}/venue-moved.yaml", "w").write(moved)
site = re.search(r"^site: (.*)$", text, re.M).group(1)
def calibration(name, x, y, zone):
    placement = {"x": x, "y": y}
    if zone:
        placement["zone"] = zone
    body = {"site": site, "created": 0, "referencePower": -59, "gatewayOffsets": {}, "zones": {},
            "placements": {gateway: placement}}
    json.dump(body, open(f"{d}/{name}.json", "w"))
    open(f"{d}/hub-{name}.yaml", "w").write(f"hub: placed\nsite: {site}\nvenue: venue.yaml\ncalibration: {name}.json\n")
calibration("true", to[0], to[1], target)
estimate = None
for line in open(f"{m}/events.jsonl"):
    event = json.loads(line)
    if event.get("type") == "alert" and event.get("code") == "gateway-moved" and event.get("gateway") == gateway \
            and event.get("estimatedPosition"):
        estimate = event["estimatedPosition"]
        break
if estimate:
    calibration("estimate", estimate["x"], estimate["y"], venue_shapes.zone_at(zones, (estimate["x"], estimate["y"])))
open(f"{d}/hub-file.yaml", "w").write(f"hub: placed\nsite: {site}\nvenue: venue.yaml\n")
PY
    "$bin/beacon-sim" run "$dir/venue-moved.yaml" --out "$dir/run" --duration "$duration" --seed "$seed" \
        --start 1763815200 --gateway-beacons --no-oracle >"$dir/run.txt"
    local name
    for name in file estimate true; do
        [ -f "$dir/hub-$name.yaml" ] || continue
        "$bin/beacon-hub" replay --config "$dir/hub-$name.yaml" "$dir/run/sightings.jsonl" \
            --events "$dir/events-$name.jsonl" >"$dir/replay-$name.txt"
        "$bin/beacon-sim" score --venue "$dir/venue.yaml" --truth "$dir/run/truth.jsonl" \
            --events "$dir/events-$name.jsonl" --json >"$dir/score-$name.json"
    done
    rm -f "$dir/run/sightings.jsonl"
    python3 - "$dir" "$seed" "$moves/$seed" <<'PY'
import json, math, os, sys
d, seed, m = sys.argv[1], int(sys.argv[2]), sys.argv[3]
move = json.load(open(f"{m}/move.json"))
row = {"seed": seed, "gateway": move["gateway"], "takenMetres": round(math.dist(move["from"], move["to"]), 1)}
estimate = json.load(open(f"{d}/estimate.json"))["placements"][move["gateway"]] if os.path.exists(f"{d}/estimate.json") else None
if estimate:
    row["estimateErrorMetres"] = round(math.dist((estimate["x"], estimate["y"]), move["to"]), 1)
for name in ("file", "estimate", "true"):
    if os.path.exists(f"{d}/score-{name}.json"):
        row[name] = round(100 * json.load(open(f"{d}/score-{name}.json"))["hub"]["accuracy"], 1)
print(json.dumps(row))
PY
}
export -f one
export bin moves out duration

printf '%s\n' "${seeds[@]}" | xargs -P "$jobs" -I{} bash -c 'one {}' | tee "$out/rows.jsonl"
python3 - "$out/rows.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
summary = {"venues": len(rows)}
for name in ("file", "estimate", "true"):
    values = [row[name] for row in rows if name in row]
    if values:
        summary[name] = {"venues": len(values), "mean": round(statistics.mean(values), 1),
                         "median": round(statistics.median(values), 1)}
named = [row for row in rows if "estimate" in row]
if named:
    # Medians of venues' differences (points), and on how many venues the estimate did better or worse.
    summary["estimateMinusFile"] = round(statistics.median(row["estimate"] - row["file"] for row in named), 1)
    summary["estimateBetter"] = sum(row["estimate"] > row["file"] for row in named)
    summary["estimateWorse"] = sum(row["estimate"] < row["file"] for row in named)
    summary["trueMinusEstimate"] = round(statistics.median(row["true"] - row["estimate"] for row in named), 1)
summary["trueMinusFile"] = round(statistics.median(row["true"] - row["file"] for row in rows), 1)
print(json.dumps({"summary": summary}))
PY
