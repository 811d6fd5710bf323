#!/usr/bin/env bash
# Replays a bench's runs with another beacon-hub: for tuning the engine's decisions on the training set without
# running the venues again. Takes the folder of `beacon-sim bench --out DIR` (each venue keeps its run, its hub.yaml
# files and its scores there). Per venue, BIN-DIR's beacon-hub replays the run (`beacon-hub replay`) with the bench's
# own hub.yaml of each kind the venue has — uncalibrated (hub.yaml), calibrated by the bench (hub-calibrated.yaml,
# with --also-calibrated), given the exact radio map (hub-exact.yaml, with --exact-map) — and BIN-DIR's beacon-sim
# scores it. Prints one JSON line per venue (seed, family; per kind the bench's accuracy and the replay's) and a
# summary per kind: means and medians of venues, bench → replayed, the venues that lost or gained most, and the false
# zone changes per tag-hour (median of venues) and true crossings missed, bench → replayed.
# Extra hub.yaml `inference:` settings for the replays can be given as KEY=VALUE (e.g. confirmSeconds=2).
# Nothing is written into BENCH-DIR: the replays go to a temporary folder, removed.
#
#   scripts/bench-replay.sh BIN-DIR BENCH-DIR [--jobs 2] [KEY=VALUE...]
set -euo pipefail
usage="usage: scripts/bench-replay.sh BIN-DIR BENCH-DIR [--jobs 2] [KEY=VALUE...]"
. "$(dirname "$0")/replay-lib.sh"
replay_start bench-replay "$usage" "$@"
set -- "${rest[@]}"
settings=()
while [ $# -gt 0 ]; do
    case $1 in
        --jobs) jobs=$2; shift 2 ;;
        *=*) settings+=("$1"); shift ;;
        *) echo "bench-replay: unknown argument $1 (see the script's header)" >&2; exit 2 ;;
    esac
done
replay_prepare bench-replay "${settings[@]}"

venue() { # SEED-DIR: one JSON line
    local dir=$1 name out kind config scores=()
    name=$(basename "$dir")
    out=$work/$name
    mkdir -p "$out"
    [ -f "$dir/run/sightings.jsonl" ] && [ -f "$dir/hub.yaml" ] && [ -f "$dir/score.out" ] || {
        echo "bench-replay: $dir has no run, hub.yaml or score: give it the --out folder of beacon-sim bench" >&2
        return 1
    }
    for kind in uncalibrated calibrated exact; do
        case $kind in
            uncalibrated) config=hub.yaml ;;
            calibrated) config=hub-calibrated.yaml ;;
            exact) config=hub-exact.yaml ;;
        esac
        [ -f "$dir/$config" ] || continue
        # The bench's paths are relative to the venue's folder: made absolute, so the replay runs from anywhere.
        sed -e "s|^venue: \([^/].*\)|venue: $dir/\1|" -e "s|^calibration: \([^/].*\)|calibration: $dir/\1|" \
            "$dir/$config" | grep -v '^inference:' >"$out/$config"
        [ -z "$inference" ] || printf 'inference:\n%s' "$inference" >>"$out/$config"
        "$bin/beacon-hub" replay --config "$out/$config" "$dir/run/sightings.jsonl" --events "$out/$kind.jsonl" \
            >"$out/$kind.txt"
        "$bin/beacon-sim" score --venue "$dir/venue.yaml" --truth "$dir/run/truth.jsonl" \
            --events "$out/$kind.jsonl" --json >"$out/$kind.json"
        scores+=("$kind")
        rm -f "$out/$kind.jsonl"
    done
    python3 - "$dir" "$out" "${scores[@]}" <<'PY'
import json, os, re, sys
folder, out, kinds = sys.argv[1], sys.argv[2], sys.argv[3:]
bench_file = {"uncalibrated": "score.out", "calibrated": "score-calibrated.out", "exact": "score-exact.out"}
hub = lambda path: json.load(open(path))["hub"]
family = re.search(r"family (\w+)", open(f"{folder}/venue.yaml").readline())
row = {"seed": int(os.path.basename(folder).split("-")[1]), "family": family[1] if family else None}
for kind in kinds:
    before, after = hub(f"{folder}/{bench_file[kind]}"), hub(f"{out}/{kind}.json")
    row[kind] = {"bench": before["accuracy"], "replayed": after["accuracy"],
                 "falsePerHour": [before.get("falseTransitionsPerTagHour"), after.get("falseTransitionsPerTagHour")],
                 "missed": [before.get("missedTransitions"), after.get("missedTransitions")],
                 "transitions": before.get("trueTransitions")}
print(json.dumps(row))
PY
}
export -f venue
export bin work inference
replay_venues bench-replay "$jobs"
cat "$work"/seed-*.json | python3 -c '
import json, statistics, sys
rows = [json.loads(line) for line in sys.stdin]
if not rows:
    sys.exit("bench-replay: no venue in the bench folder")
for kind in ("uncalibrated", "calibrated", "exact"):
    have = [row for row in rows if kind in row]
    if not have:
        continue
    bench = [100 * row[kind]["bench"] for row in have]
    replayed = [100 * row[kind]["replayed"] for row in have]
    change = sorted((100 * (row[kind]["replayed"] - row[kind]["bench"]), row["seed"], row["family"]) for row in have)
    print(f"{kind}: {len(have)} venues, mean {statistics.mean(bench):.2f} → {statistics.mean(replayed):.2f} %, "
          f"median {statistics.median(bench):.2f} → {statistics.median(replayed):.2f} %; "
          f"most lost {change[0][0]:+.1f} (seed {change[0][1]}, {change[0][2]}), "
          f"most gained {change[-1][0]:+.1f} (seed {change[-1][1]}, {change[-1][2]})")
    false = [row[kind].get("falsePerHour") for row in have]
    if all(pair and None not in pair for pair in false):
        missed = [row[kind]["missed"] for row in have]
        crossings = sum(row[kind]["transitions"] or 0 for row in have)
        print(f"  false changes per tag-hour, median of venues {statistics.median(p[0] for p in false):.2f} → "
              f"{statistics.median(p[1] for p in false):.2f}; true crossings missed "
              f"{sum(m[0] for m in missed)} → {sum(m[1] for m in missed)} of {crossings}")
'
