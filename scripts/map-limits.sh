#!/usr/bin/env bash
# What a kind of calibration could teach the engine at best, on a bench's runs. Takes the folder of `beacon-sim bench
# --also-calibrated --exact-map --out DIR` (each venue keeps its run, its walk's calibration and the score of the hub
# given the run's exact radio map). Per venue, BIN-DIR's beacon-hub first replays the run with the walk's calibration
# as the bench did, which gives the calibrated accuracy and the path-loss exponent the hub ends with (its report's
# "position map at the end" line). Then BIN-DIR's beacon-sim writes the run's radio map three more ways
# (`beacon-sim radio-map --shadowing`): with each zone's shadowing averaged over the zone, per gateway (`zone-mean`:
# all a walk that learns one level per zone and gateway could know, with the true geometry besides); the hub's own
# geometry at that exponent plus each zone's mean difference of the exact map to it (`engine-zone-mean`: what such a
# walk would teach this hub if it measured each zone's level exactly); and without the shadowing (`none`: the true
# geometry, gains, antennas and walls alone). BIN-DIR's beacon-hub replays the run with each as the bench replayed the
# exact map, and beacon-sim scores it. Prints one JSON line per venue (seed; the exponent; accuracy uncalibrated,
# calibrated by the walk, given each of the three maps and the exact map; and the oracle's, from the bench's
# score-oracle.out, when the bench has it) and a summary: means and medians of venues, and the median of each venue's
# differences between the maps and to the oracle, with how many venues are within 2 points.
# Nothing is written into BENCH-DIR: the replays go to a temporary folder, removed.
#
#   scripts/map-limits.sh BIN-DIR BENCH-DIR [--jobs 2]
set -euo pipefail
usage="usage: scripts/map-limits.sh BIN-DIR BENCH-DIR [--jobs 2]"
. "$(dirname "$0")/replay-lib.sh"
replay_start map-limits "$usage" "$@"
set -- "${rest[@]}"
while [ $# -gt 0 ]; do
    case $1 in
        --jobs) jobs=$2; shift 2 ;;
        *) echo "map-limits: unknown argument $1 (see the script's header)" >&2; exit 2 ;;
    esac
done
replay_prepare map-limits

venue() { # SEED-DIR: one JSON line
    local dir=$1 name out seed shadowing exponent
    name=$(basename "$dir")
    seed=${name#seed-}
    out=$work/$name
    mkdir -p "$out"
    [ -f "$dir/hub-exact.yaml" ] && [ -f "$dir/score-exact.out" ] && [ -f "$dir/calibration.yaml" ] || {
        echo "map-limits: $dir has no exact-map score or calibration: bench it with --also-calibrated" \
            "--exact-map --out" >&2
        return 1
    }
    # replay MAP CALIBRATION: the bench's hub.yaml for the exact map, its files taken from the venue's folder, the
    # calibration replaced; the run replayed and scored into $out/score-MAP.json.
    replay() {
        sed -e "s|^venue: .*|venue: $dir/venue.yaml|" -e "s|^calibration: .*|calibration: $2|" \
            "$dir/hub-exact.yaml" >"$out/hub-$1.yaml"
        "$bin/beacon-hub" replay --config "$out/hub-$1.yaml" "$dir/run/sightings.jsonl" \
            --events "$out/events-$1.jsonl" >"$out/replay-$1.txt"
        "$bin/beacon-sim" score --venue "$dir/venue.yaml" --truth "$dir/run/truth.jsonl" \
            --events "$out/events-$1.jsonl" --json >"$out/score-$1.json"
        rm -f "$out/events-$1.jsonl"
    }
    replay calibrated "$dir/calibration.yaml"
    exponent=$(sed -n 's/.*position map at the end: path-loss exponent \([0-9.]*\).*/\1/p' "$out/replay-calibrated.txt")
    [ -n "$exponent" ] || {
        echo "map-limits: $bin/beacon-hub replay names no exponent: build beacon-hub at or after this script" >&2
        return 1
    }
    for shadowing in zone-mean engine-zone-mean none; do
        local exponentOption=()
        [ "$shadowing" != engine-zone-mean ] || exponentOption=(--exponent "$exponent")
        "$bin/beacon-sim" radio-map "$dir/venue.yaml" --seed "$seed" --shadowing "$shadowing" \
            "${exponentOption[@]}" --out "$out/calibration-$shadowing.yaml" >/dev/null
        replay "$shadowing" "$out/calibration-$shadowing.yaml"
        rm -f "$out/calibration-$shadowing.yaml"
    done
    python3 - "$dir" "$out" "$exponent" <<'PY'
import json, os, sys
hub = lambda path: json.load(open(path))["hub"]["accuracy"]
folder, out, exponent = sys.argv[1:4]
row = {"seed": int(os.path.basename(folder).split("-")[1]), "exponent": float(exponent),
       "uncalibrated": hub(f"{folder}/score.out"), "calibrated": hub(f"{out}/score-calibrated.json"),
       "unshadowedMap": hub(f"{out}/score-none.json"), "engineZoneMeanMap": hub(f"{out}/score-engine-zone-mean.json"),
       "zoneMeanMap": hub(f"{out}/score-zone-mean.json"), "exactMap": hub(f"{folder}/score-exact.out")}
oracle = f"{folder}/score-oracle.out"
if os.path.exists(oracle) and os.path.getsize(oracle) > 0:
    row["oracle"] = hub(oracle)
print(json.dumps(row))
PY
}
export -f venue
export bin work
replay_venues map-limits "$jobs"
cat "$work"/seed-*.json | python3 -c '
import json, statistics, sys
rows = [json.loads(line) for line in sys.stdin]
if not rows:
    sys.exit("map-limits: no venue in the bench folder")
# The oracle only where every venue has its score: a difference over some of the venues would read as over all.
oracle = all("oracle" in row for row in rows)
keys = ("uncalibrated", "calibrated", "unshadowedMap", "engineZoneMeanMap", "zoneMeanMap", "exactMap")
for key in keys + (("oracle",) if oracle else ()):
    values = [100 * row[key] for row in rows]
    print(f"{key}: mean {statistics.mean(values):.1f} %, median {statistics.median(values):.1f} %")
pairs = [("calibrated", "exactMap"), ("unshadowedMap", "exactMap"), ("zoneMeanMap", "exactMap"),
         ("calibrated", "zoneMeanMap"), ("calibrated", "engineZoneMeanMap"), ("engineZoneMeanMap", "zoneMeanMap")]
if oracle:
    pairs += [(key, "oracle") for key in ("calibrated", "engineZoneMeanMap", "zoneMeanMap", "exactMap")]
else:
    print("oracle: not in every venue of the bench (score-oracle.out), so no differences to it")
for key, against in pairs:
    gaps = [100 * (row[key] - row[against]) for row in rows]
    near = sum(gap >= -2 for gap in gaps)
    print(f"{key} - {against}: median {statistics.median(gaps):+.1f}, mean {statistics.mean(gaps):+.1f} points; "
          f"within 2 points on {near} of {len(rows)}")
'
