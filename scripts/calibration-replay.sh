#!/usr/bin/env bash
# Replays a bench's calibration walks with another beacon-hub: for tuning the calibration's fit on the training set
# without running the venues again. Takes the folder of `beacon-sim bench --also-calibrated [--phone-walk S] --out DIR`
# (each venue keeps its walk, its run and its scores there). Per venue, BIN-DIR's beacon-hub calibrates again from
# the walk as the bench did (`beacon-hub calibrate`; --taps as the bench's walk was: points for a standing phone walk,
# the default; zones for a strolling one, --phone-stroll; route for a strolling one tapped where the walker was every
# 5 s, --phone-stroll-points; none for the strolling calibration walk, no --phone-walk, taken as a plan),
# replays the run with that calibration, and beacon-sim scores it. Prints one JSON line per venue (seed; accuracy
# uncalibrated, calibrated by the bench, calibrated again; and `check`, the walk's own expected accuracy before →
# after from calibrate's report, whole percents, to see how well it foretells the run) and a summary: means and
# medians of venues, and how many venues each calibration left below the uncalibrated hub.
# Extra hub.yaml `inference:` settings for the replays can be given as KEY=VALUE (e.g. learnsExponent=false).
# Nothing is written into BENCH-DIR: the replays go to a temporary folder, removed.
#
#   scripts/calibration-replay.sh BIN-DIR BENCH-DIR [--taps points|zones|route|none] [--jobs 2] [KEY=VALUE...]
set -euo pipefail
usage="usage: scripts/calibration-replay.sh BIN-DIR BENCH-DIR [--taps points|zones|route|none] [--jobs 2]"
usage+=" [KEY=VALUE...]"
. "$(dirname "$0")/replay-lib.sh"
replay_start calibration-replay "$usage" "$@"
set -- "${rest[@]}"
taps=points
settings=()
while [ $# -gt 0 ]; do
    case $1 in
        --jobs) jobs=$2; shift 2 ;;
        --taps) taps=$2; shift 2 ;;
        *=*) settings+=("$1"); shift ;;
        *) echo "calibration-replay: unknown argument $1 (see the script's header)" >&2; exit 2 ;;
    esac
done
case $taps in
    points | zones | route | none) ;;
    *) echo "calibration-replay: --taps is points, zones, route or none, not $taps" >&2; exit 2 ;;
esac
replay_prepare calibration-replay "${settings[@]}"

venue() { # SEED-DIR: one JSON line
    local dir=$1 name out site tapping=()
    name=$(basename "$dir")
    out=$work/$name
    mkdir -p "$out"
    [ -f "$dir/walk/plan.yaml" ] && [ -f "$dir/run/sightings.jsonl" ] && [ -f "$dir/score-calibrated.out" ] || {
        echo "calibration-replay: $dir has no walk, run or calibrated score: bench it with --also-calibrated --out" >&2
        return 1
    }
    [ "$taps" = none ] || tapping=(--taps "$taps")
    site=$(sed -n 's/^site: //p' "$dir/venue.yaml")
    {
        printf 'hub: replay\nsite: %s\nvenue: %s\n' "$site" "$dir/venue.yaml"
        [ -z "$inference" ] || printf 'inference:\n%s' "$inference"
    } >"$out/hub.yaml"
    "$bin/beacon-hub" calibrate --config "$out/hub.yaml" "$dir/walk/sightings.jsonl" --plan "$dir/walk/plan.yaml" \
        --out "$out/calibration.yaml" "${tapping[@]}" >"$out/calibrate.txt"
    printf 'calibration: %s\n' "$out/calibration.yaml" >>"$out/hub.yaml"
    "$bin/beacon-hub" replay --config "$out/hub.yaml" "$dir/run/sightings.jsonl" --events "$out/events.jsonl" \
        >"$out/replay.txt"
    "$bin/beacon-sim" score --venue "$dir/venue.yaml" --truth "$dir/run/truth.jsonl" --events "$out/events.jsonl" \
        --json >"$out/score.json"
    python3 - "$dir" "$out/score.json" "$out/calibrate.txt" <<'PY'
import json, os, re, sys
hub = lambda path: json.load(open(path))["hub"]["accuracy"]
folder, score, report = sys.argv[1:4]
row = {"seed": int(os.path.basename(folder).split("-")[1]), "uncalibrated": hub(f"{folder}/score.out"),
       "bench": hub(f"{folder}/score-calibrated.out"), "replayed": hub(score)}
# The walk's own check (`beacon-hub calibrate`'s "all" row): expected accuracy before → after, cross-validated.
check = re.search(r"^ +all +\d+ s +([\d.]+) % → +([\d.]+) %", open(report).read(), re.M)
if check:
    row["check"] = {"before": float(check[1]) / 100, "after": float(check[2]) / 100}
print(json.dumps(row))
PY
    rm -f "$out/events.jsonl"
}
export -f venue
export bin work inference taps
replay_venues calibration-replay "$jobs"
cat "$work"/seed-*.json | python3 -c '
import json, statistics, sys
rows = [json.loads(line) for line in sys.stdin]
if not rows:
    sys.exit("calibration-replay: no venue in the bench folder")
for key in ("uncalibrated", "bench", "replayed"):
    values = [row[key] for row in rows]
    worse = sum(row[key] < row["uncalibrated"] for row in rows)
    below = "" if key == "uncalibrated" else f", below uncalibrated on {worse} of {len(rows)}"
    print(f"{key}: mean {100 * statistics.mean(values):.1f} %, median {100 * statistics.median(values):.1f} %{below}")
checked = [row for row in rows if "check" in row]
flagged = [row for row in checked if row["check"]["after"] < row["check"]["before"]]
losses = [row for row in checked if row["replayed"] < row["uncalibrated"]]
print(f"check (replayed): worse on {len(flagged)} of {len(checked)} walks, {sum(row in losses for row in flagged)} of "
      f"them below uncalibrated in the run; {len(losses)} walks below uncalibrated in the run")
'
