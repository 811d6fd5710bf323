#!/usr/bin/env bash
# Where a moved gateway is now (`gateway-moved` alerts): on random venues whose gateways advertise their own
# beacons, one gateway is taken to a random place in another zone after MOVE-AT of settled links; the hub replays the
# whole run with the venue file as it was, and its `gateway-moved` alert's `estimatedPosition` is compared with where
# the gateway went. The gateway and its new place are drawn from the seed. The venue's tags are left out: only the
# gateways' beacons are heard.
# Prints one JSON line per venue: the gateway, how far it was taken, whether (and how long after the move) the hub
# raised `gateway-moved` for it, the estimate's error and its stated radius, and the alerts raised for other gateways;
# then a summary line. With --steady nothing is moved (the control: every alert is a false one).
# --keep-sightings keeps each venue's sightings (OUT-DIR/SEED/sightings.jsonl.gz, 20–40 MB a venue); --replay then
# simulates nothing: BIN-DIR's beacon-hub (the only program it needs) replays the sightings kept in OUT-DIR by an
# earlier run of the same seeds, so that two hubs are compared on the same runs (seeds 1 and 2: 60 s against 80 s).
#
#   scripts/gateway-moves.sh BIN-DIR OUT-DIR SEED... [--move-at 40m] [--after 40m] [--jobs 2] [--steady]
#       [--keep-sightings | --replay]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$1
out=$2
shift 2
move_at=2400
after=2400
jobs=2
steady=0
keep=0
replay=0
seeds=()
minutes() { # 40m or seconds → seconds
    case "$1" in
        *m) echo $((${1%m} * 60)) ;;
        *) echo "$1" ;;
    esac
}
while [ $# -gt 0 ]; do
    case "$1" in
        --move-at) move_at=$(minutes "$2"); shift 2 ;;
        --after) after=$(minutes "$2"); shift 2 ;;
        --jobs) jobs=$2; shift 2 ;;
        --steady) steady=1; shift ;;
        --keep-sightings) keep=1; shift ;;
        --replay) replay=1; shift ;;
        --*) echo "gateway-moves.sh: unknown option $1 (see the script's header)" >&2; exit 2 ;;
        *) seeds+=("$1"); shift ;;
    esac
done
if [ ${#seeds[@]} = 0 ]; then
    echo "gateway-moves.sh: no seeds (usage: scripts/gateway-moves.sh BIN-DIR OUT-DIR SEED... [--move-at 40m] [--after 40m] [--jobs 2] [--steady] [--keep-sightings | --replay])" >&2
    exit 2
fi
if [ "$keep" = 1 ] && [ "$replay" = 1 ]; then
    echo "gateway-moves.sh: --replay keeps the sightings it replays; give --keep-sightings or --replay, not both" >&2
    exit 2
fi
start=1763812800
mkdir -p "$out"

simulate() { # SEED DIR SIGHTINGS: the venue, the move and the run before and after it, into SIGHTINGS
    set -euo pipefail
    local seed=$1 dir=$2 sightings=$3
    rm -rf "$dir" && mkdir -p "$dir"
    "$bin/beacon-sim" venue --random --seed "$seed" --gateway-beacons --out "$dir/venue.yaml" >/dev/null
    # The gateways alone, and the venue with one of them moved (drawn from the seed) to a point inside another zone.
    python3 - "$dir" "$seed" "$steady" <<'PY'
import json, random, re, sys
sys.path.insert(0, "scripts")
import venue_shapes
d, seed, steady = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
text = re.sub(r"\ntags:\n(  - .*\n)+", "\ntags: []\n", open(f"{d}/venue.yaml").read())
open(f"{d}/venue.yaml", "w").write(text)
zones = venue_shapes.zones(text)
gateways = venue_shapes.gateways(text)
inside = venue_shapes.inside
rng = random.Random(seed)
gateway, zone, x0, y0 = rng.choice(gateways)
target = rng.choice(sorted(z for z in zones if z != zone))
polygon = zones[target]
xs, ys = [p[0] for p in polygon], [p[1] for p in polygon]
while True:
    p = (round(rng.uniform(min(xs) + 0.3, max(xs) - 0.3), 2), round(rng.uniform(min(ys) + 0.3, max(ys) - 0.3), 2))
    if inside(p, polygon):
        break
moved = venue_shapes.moved(text, gateway, p, target)
# The simulator's shadowing fields cover the box around the zones and the gateways: a sliver of a zone with a corner
# where the gateway stood keeps that box, so the move changes the moved gateway's links and no others (the run without
# it drew every field afresh when the gateway had stood at the box's edge, as outside gateways do).
inner = polygon[0]
moved = moved.replace("\ndoors:\n", f"\n  - {{ id: sim-bounds, polygon: [[{x0}, {y0}], [{inner[0]}, {inner[1]}], "
                      f"[{inner[0]}, {inner[1] + 0.01}]] }}\ndoors:\n", 1)
open(f"{d}/venue-moved.yaml", "w").write(text if steady else moved)
if steady:
    p = (x0, y0)
json.dump({"gateway": gateway, "from": [x0, y0], "to": list(p), "zone": target}, open(f"{d}/move.json", "w"))
PY
    "$bin/beacon-sim" run "$dir/venue.yaml" --out "$dir/before" --duration "$move_at" --seed "$seed" --start $start \
        --gateway-beacons --no-oracle >"$dir/run-before.txt"
    "$bin/beacon-sim" run "$dir/venue-moved.yaml" --out "$dir/after" --duration "$after" --seed "$seed" \
        --start $((start + move_at)) --gateway-beacons --no-oracle >"$dir/run-after.txt"
    cat "$dir/before/sightings.jsonl" "$dir/after/sightings.jsonl" >"$sightings"
    rm -rf "$dir/before" "$dir/after"
}

one() { # SEED
    set -euo pipefail
    local seed=$1 dir=$out/$1 sightings=$out/$1/sightings.jsonl
    if [ "$replay" = 1 ]; then
        sightings+=.gz
        [ -f "$sightings" ] || {
            echo "gateway-moves.sh: no $sightings: run these seeds with --keep-sightings first" >&2
            return 1
        }
    else
        simulate "$seed" "$dir" "$sightings"
    fi
    local site
    site=$(sed -n 's/^site: //p' "$dir/venue.yaml")
    printf 'hub: moves\nsite: %s\nvenue: venue.yaml\n' "$site" >"$dir/hub.yaml"
    "$bin/beacon-hub" replay --config "$dir/hub.yaml" "$sightings" --events "$dir/events.jsonl" >"$dir/replay.txt"
    if [ "$keep" = 1 ]; then
        gzip -1 -f "$sightings"
    elif [ "$replay" = 0 ]; then
        rm -f "$sightings"
    fi
    python3 - "$dir" "$seed" $((start + move_at)) <<'PY'
import json, math, sys
d, seed, moved_at = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
move = json.load(open(f"{d}/move.json"))
row = {"seed": seed, "gateway": move["gateway"], "takenMetres": round(math.dist(move["from"], move["to"]), 1)}
steady = row["takenMetres"] == 0
others = []
for line in open(f"{d}/events.jsonl"):
    event = json.loads(line)
    if event.get("type") != "alert" or event.get("code") not in ("gateway-moved", "gateway-degraded"):
        continue
    if event["gateway"] != move["gateway"] or steady:
        others.append(f"{event['code']} {event['gateway']} at {event['t'] - moved_at:+.0f} s")
        continue
    if "alertSeconds" in row:
        continue
    row["code"] = event["code"]
    row["alertSeconds"] = round(event["t"] - moved_at)
    fix = event.get("estimatedPosition")
    if fix:
        row["errorMetres"] = round(math.dist((fix["x"], fix["y"]), move["to"]), 1)
        row["withinMetres"] = fix["withinMetres"]
        row["movedMetres"] = fix["movedMetres"]
row["otherAlerts"] = others
print(json.dumps(row))
PY
}
export -f one simulate
export bin out move_at after start steady keep replay
printf '%s\n' "${seeds[@]}" | xargs -P "$jobs" -I{} bash -c 'one {} > "$out/row-{}.json" 2>"$out/err-{}.txt" || { echo "seed {} failed: $(tail -3 "$out/err-{}.txt")" >&2; exit 255; }'
rows=()
for seed in "${seeds[@]}"; do rows+=("$out/row-$seed.json"); done
cat "${rows[@]}"
python3 - "${rows[@]}" <<'PY'
import json, statistics, sys
rows = [json.loads(open(p).read()) for p in sys.argv[1:]]
moved = [r for r in rows if r.get("code") == "gateway-moved"]
fixed = [r for r in moved if "errorMetres" in r]
summary = {
    "venues": len(rows),
    "alertedMoved": len(moved),
    "alertedOther": sum(1 for r in rows if "code" in r and r["code"] != "gateway-moved"),
    "notAlerted": sum(1 for r in rows if "code" not in r),
    "withEstimate": len(fixed),
    "medianTakenMetres": statistics.median(r["takenMetres"] for r in rows) if rows else None,
    "medianErrorMetres": statistics.median(r["errorMetres"] for r in fixed) if fixed else None,
    "errorWithin3m": sum(1 for r in fixed if r["errorMetres"] <= 3),
    "errorWithinStated": sum(1 for r in fixed if r["errorMetres"] <= r["withinMetres"]),
    "medianWithinMetres": statistics.median(r["withinMetres"] for r in fixed) if fixed else None,
    "medianAlertMinutes": round(statistics.median(r["alertSeconds"] for r in moved) / 60, 1) if moved else None,
    "venuesWithOtherAlerts": sum(1 for r in rows if r["otherAlerts"]),
}
print(json.dumps({"summary": summary}))
PY
