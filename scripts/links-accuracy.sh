#!/usr/bin/env bash
# Self-calibration from the gateways' own beacons, on random venues: every gateway advertises its beacon,
# the hub fits the gateway-to-gateway links as the run goes on and feeds what they teach (gains, walls' losses) to the
# engine. Per venue, the same run is replayed three ways and scored against the truth:
#   off    — links not applied (inference.linkFitSeconds: 0): the engine with the venue file alone;
#   links  — the default: fitted every 5 minutes over the last 30, applied live;
#   true   — the engine given the simulator's true receive gains (a calibration file of offsets only).
# Prints one JSON line per venue: accuracies and the last fit's gain errors (both sides with Σ = 0), also per gateway
# (signed, fitted − true) with its antenna's front-to-back ratio (0: none).
# With --learn L the run lasts L longer and each way is scored over the DURATION after it, the hub having learned for
# L (what a hub that has been running does), as `accuracy`; the first L, while it learns, as `accuracyLearning`.
# With --diagnose, two more ways, to see where the links fall short of the true gains:
#   centred — the true gains less their mean (Σ = 0): all that links can know, since only differences are measurable;
#   settled — the last fit's gains as the hub applies them (known within 3 dB), from the run's start: without the
#             first fits' learning.
# With --gains-only, the venue's tags are left out and only the links way is replayed: the row has the last fit's gain
# errors and no accuracy (about a second a venue, so the whole test set can be run).
# With --phone-walk S, two more ways: a phone walk of S seconds a zone in the same radio (`beacon-sim calibration-walk
# --dwell S [--stroll]`, then `beacon-hub calibrate --taps points|zones`, as the calibration page computes it; with
# --phone-stroll the walker strolls round each zone and taps it):
#   walk       — that calibration, links not applied: a venue whose gateways do not advertise;
#   walk-links — that calibration with the links applied as well: what a hub whose gateways advertise does after a walk.
# Each venue's recorded sightings (OUT-DIR/SEED/sightings.jsonl: 60–250 MB a venue) are deleted once it is scored,
# unless --keep-sightings.
#
#   scripts/links-accuracy.sh BIN-DIR OUT-DIR SEED... [--duration 30m] [--learn 0] [--jobs 2] [--diagnose]
#                             [--gains-only] [--phone-walk SECONDS [--phone-stroll]] [--keep-sightings]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$1
out=$2
shift 2
duration=30m
learn=0
jobs=2
diagnose=0
gains_only=0
phone_walk=
phone_stroll=0
keep_sightings=0
seeds=()
while [ $# -gt 0 ]; do
    case "$1" in
        --duration) duration=$2; shift 2 ;;
        --learn) learn=$2; shift 2 ;;
        --jobs) jobs=$2; shift 2 ;;
        --diagnose) diagnose=1; shift ;;
        --gains-only) gains_only=1; shift ;;
        --phone-walk) phone_walk=$2; shift 2 ;;
        --phone-stroll) phone_stroll=1; shift ;;
        --keep-sightings) keep_sightings=1; shift ;;
        *) seeds+=("$1"); shift ;;
    esac
done
if [ "$phone_stroll" = 1 ] && [ -z "$phone_walk" ]; then
    echo "links-accuracy.sh: --phone-stroll needs --phone-walk SECONDS" >&2
    exit 2
fi
start=1763812800
walk_start=1763800000 # before the run, as `beacon-sim bench` walks
mkdir -p "$out"
seconds() { # 90, 90s, 30m, 2h30m, 1d12h, 1.5h → whole seconds (durations as beacon-sim reads them)
    python3 - "$1" <<'PY'
import re, sys
text = sys.argv[1]
try:
    print(round(float(text)))
    sys.exit()
except ValueError:
    pass
parts = re.findall(r"(\d+(?:\.\d+)?)([dhms])", text)
if not parts or "".join(number + unit for number, unit in parts) != text:
    sys.exit(f"links-accuracy.sh: not a duration: {text} (seconds, or parts such as 30m, 2h30m, 1d12h)")
print(round(sum(float(number) * {"d": 86400, "h": 3600, "m": 60, "s": 1}[unit] for number, unit in parts)))
PY
}
learn_s=$(seconds "$learn")
total_s=$(($(seconds "$duration") + learn_s))

one() { # SEED
    local seed=$1 dir=$out/$1
    rm -rf "$dir" && mkdir -p "$dir"
    "$bin/beacon-sim" venue --random --seed "$seed" --gateway-beacons --out "$dir/venue.yaml" >/dev/null
    if [ "$gains_only" = 1 ]; then
        # The gateways alone: the tags' list emptied (the file's comment still counts them).
        python3 - "$dir/venue.yaml" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
open(sys.argv[1], "w").write(re.sub(r"\ntags:\n(  - .*\n)+", "\ntags: []\n", text))
PY
    fi
    "$bin/beacon-sim" run "$dir/venue.yaml" --out "$dir" --duration "$total_s" --seed "$seed" --start $start \
        --gateway-beacons --no-oracle >"$dir/run.txt"
    # The truth while the hub learns and after it (the whole run when not learning first).
    python3 - "$dir" $((start + learn_s)) <<'PY'
import json, sys
d, cut = sys.argv[1], float(sys.argv[2])
with open(f"{d}/truth-learning.jsonl", "w") as learning, open(f"{d}/truth-scored.jsonl", "w") as scored:
    for line in open(f"{d}/truth.jsonl"):
        interval = json.loads(line)
        if interval["enter"] < cut:
            learning.write(json.dumps(dict(interval, exit=min(interval["exit"], cut))) + "\n")
        if interval["exit"] > cut:
            scored.write(json.dumps(dict(interval, enter=max(interval["enter"], cut))) + "\n")
PY
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
    replay() { # WAY...
        local way
        for way in "$@"; do
            "$bin/beacon-hub" replay --config "$dir/hub-$way.yaml" "$dir/sightings.jsonl" \
                --events "$dir/events-$way.jsonl" >"$dir/replay-$way.txt"
            "$bin/beacon-sim" score --venue "$dir/venue.yaml" --truth "$dir/truth-scored.jsonl" \
                --events "$dir/events-$way.jsonl" --json >"$dir/score-$way.json"
            if [ "$learn_s" -gt 0 ]; then
                "$bin/beacon-sim" score --venue "$dir/venue.yaml" --truth "$dir/truth-learning.jsonl" \
                    --events "$dir/events-$way.jsonl" --json >"$dir/score-learning-$way.json"
            fi
        done
    }
    if [ "$gains_only" = 1 ]; then
        "$bin/beacon-hub" replay --config "$dir/hub-links.yaml" "$dir/sightings.jsonl" \
            --events "$dir/events-links.jsonl" >"$dir/replay-links.txt"
    else
        replay off links true
    fi
    if [ -n "$phone_walk" ] && [ "$gains_only" = 0 ]; then
        local taps=points stroll=()
        if [ "$phone_stroll" = 1 ]; then
            taps=zones
            stroll=(--stroll)
        fi
        "$bin/beacon-sim" calibration-walk "$dir/venue.yaml" --out "$dir/walk" --seed "$seed" --start $walk_start \
            --dwell "$phone_walk" "${stroll[@]}" >"$dir/walk.txt"
        "$bin/beacon-hub" calibrate --config "$dir/hub-off.yaml" "$dir/walk/sightings.jsonl" --plan "$dir/walk/plan.yaml" \
            --taps "$taps" --out "$dir/calibration-walk.yaml" >"$dir/calibrate.txt"
        echo "$taps" >"$dir/walk-taps"
        printf 'hub: links\nsite: %s\nvenue: venue.yaml\ncalibration: calibration-walk.yaml\n' "$site" \
            >"$dir/hub-walk-links.yaml"
        printf 'inference:\n  linkFitSeconds: 0\n' | cat "$dir/hub-walk-links.yaml" - >"$dir/hub-walk.yaml"
        replay walk walk-links
    fi
    if [ "$diagnose" = 1 ] && [ "$gains_only" = 0 ]; then
        # The true gains centred, and the last fit's applied gains (σ ≤ 3 dB), each as a calibration of offsets.
        python3 - "$dir" <<'PY'
import re, sys
d = sys.argv[1]
lines = open(f"{d}/calibration-true.yaml").read().splitlines()
entry = re.compile(r"  ([^ :]+): (-?[0-9.]+)$")
head = [l for l in lines if not entry.match(l) and l != "gatewayOffsets:"]
true = [(m.group(1), float(m.group(2))) for l in lines if (m := entry.match(l))]
mean = sum(g for _, g in true) / len(true)
fitted = []
for line in open(f"{d}/replay-links.txt"):
    if "gains (dB)" in line:
        fitted = [(g, float(v)) for g, v, s in re.findall(r"([^ ,]+) ([+-][0-9.]+)±([0-9.]+)", line.split("gains (dB)")[1])
                  if float(s) <= 3]
for way, gains in (("centred", [(g, v - mean) for g, v in true]), ("settled", fitted)):
    body = ["gatewayOffsets:"] + [f"  {g}: {v:.2f}" for g, v in gains] if gains else ["gatewayOffsets: {}"]
    open(f"{d}/calibration-{way}.yaml", "w").write("\n".join(head + body) + "\n")
PY
        for way in centred settled; do
            sed "s/calibration-true.yaml/calibration-$way.yaml/" "$dir/hub-true.yaml" >"$dir/hub-$way.yaml"
        done
        replay centred settled
    fi
    python3 - "$dir" "$seed" "$learn_s" <<'PY'
import json, os, re, sys
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
# Each gateway's directional antenna, if the venue gives it one (the simulator's truth: the hub does not read it).
antennas = {}
for line in open(f"{d}/venue.yaml"):
    m = re.match(r"\s*- \{ id: ([^,]+),.*gainOffset: .*frontToBackDB: ([0-9.]+)", line)
    if m:
        antennas[m.group(1)] = float(m.group(2))
errors, signed = [], {}
if fitted:
    mean = sum(truth.values()) / len(truth)
    signed = {g: fitted[g][0] - (truth[g] - mean) for g in truth if g in fitted}
    errors = [abs(signed[g]) for g in truth if g in signed]
# A way's key in the row: its file name in camel case (walk-links → walkLinks).
names = {w: re.sub(r"-(.)", lambda m: m.group(1).upper(), w)
         for w in ("off", "links", "true", "centred", "settled", "walk", "walk-links")}
ways = [w for w in names if os.path.exists(f"{d}/score-{w}.json")]
score = {names[w]: json.load(open(f"{d}/score-{w}.json"))["hub"]["accuracy"] for w in ways}
row = {"seed": seed, "gateways": len(truth), "gainErrors": errors,
       "gains": {g: {"error": round(e, 3), "frontToBackDB": antennas.get(g, 0)} for g, e in sorted(signed.items())}}
if ways:
    row["accuracy"] = score
# How the phone walk tapped its stays: points (standing) or zones (strolling).
if os.path.exists(f"{d}/walk-taps"):
    row["walkTaps"] = open(f"{d}/walk-taps").read().strip()
if os.path.exists(f"{d}/score-learning-off.json"):
    row["learnSeconds"] = float(sys.argv[3])
    row["accuracyLearning"] = {
        names[w]: json.load(open(f"{d}/score-learning-{w}.json"))["hub"]["accuracy"] for w in ways
        if os.path.exists(f"{d}/score-learning-{w}.json")}
print(json.dumps(row))
PY
    if [ "$keep_sightings" = 0 ]; then
        rm -f "$dir/sightings.jsonl" "$dir/walk/sightings.jsonl"
    fi
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
