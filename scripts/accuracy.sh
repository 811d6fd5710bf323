#!/usr/bin/env bash
# Reproduces the figures of docs/accuracy.md: every shipped venue, two seeds, uncalibrated and calibrated, beside the
# strongest-gateway baseline; the confirmation-time table; the recorded Kolakowski flat.
#
#   scripts/accuracy.sh [--out DIR] [--duration 30m] [--seeds "1 2"]
#
# Builds release binaries, simulates into DIR (default .build/accuracy), and prints the tables. About 5 minutes on
# two cores. Needs python3 for the Kolakowski conversion and data/recorded (or $BEACONTRACKER_RECORDED_DATA).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out=.build/accuracy
duration=30m
seeds="1 2"
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out=$2; shift 2 ;;
        --duration) duration=$2; shift 2 ;;
        --seeds) seeds=$2; shift 2 ;;
        *) echo "usage: scripts/accuracy.sh [--out DIR] [--duration 30m] [--seeds \"1 2\"]" >&2; exit 64 ;;
    esac
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
swift build -c release --product beacon-hub >/dev/null
swift build -c release --product beacon-sim >/dev/null
bin=$(swift build -c release --show-bin-path)
start=1763812800

# hub.yaml with an absolute venue path and, optionally, a calibration and extra inference lines.
config() { # BASE CALIBRATION EXTRA OUT
    sed "s|^venue: venues/|venue: $root/config/venues/|" "$1" | grep -v "^calibration:" >"$4"
    [ -n "$2" ] && echo "calibration: $2" >>"$4"
    if [ -n "$3" ]; then
        if grep -q "^inference:" "$4"; then sed -i "s|^inference:|inference:\n$3|" "$4"; else printf "inference:\n%s\n" "$3" >>"$4"; fi
    fi
}

score() { # VENUE DIR CONFIG EVENTS → the score table
    "$bin/beacon-hub" replay --config "$3" "$2/sightings.jsonl" --events "$2/$4" >"$2/$4.replay.txt"
    "$bin/beacon-sim" score --venue "config/venues/$1.yaml" --truth "$2/truth.jsonl" --events "$2/$4" \
        --sightings "$2/sightings.jsonl"
}

for venue in museum store museum-harsh; do
    base=config/hub.yaml
    [ "$venue" != museum ] && base=config/hub-$venue.yaml
    for seed in $seeds; do
        dir=$out/$venue-$seed
        mkdir -p "$dir"
        [ -f "$dir/sightings.jsonl" ] || "$bin/beacon-sim" run "config/venues/$venue.yaml" --out "$dir" \
            --duration "$duration" --seed "$seed" --start $start >/dev/null
        config "$base" "" "" "$dir/hub.yaml"
        echo "== $venue seed $seed, uncalibrated ($base)"
        score "$venue" "$dir" "$dir/hub.yaml" events.jsonl >"$dir/score.txt"
        sed -n '5,7p' "$dir/score.txt"
        # The tags left lying (stationary): they have their own goal.
        grep -A1 -E "^(audio-guide-spare|lost-badge|shelf-scanner)" "$dir/score.txt" | grep -v "^--" || true
        for walk in stroll stand; do
            flag=--stroll
            [ $walk = stand ] && flag=
            "$bin/beacon-sim" calibration-walk "config/venues/$venue.yaml" --out "$dir/walk-$walk" --seed "$seed" \
                --start 1763800000 $flag >/dev/null
            "$bin/beacon-hub" calibrate --config "$dir/hub.yaml" "$dir/walk-$walk/sightings.jsonl" \
                --plan "$dir/walk-$walk/plan.yaml" --out "$dir/calibration-$walk.yaml" >"$dir/calibrate-$walk.txt"
            config "$base" "$dir/calibration-$walk.yaml" "" "$dir/hub-$walk.yaml"
            echo "== $venue seed $seed, calibrated ($walk walk)"
            score "$venue" "$dir" "$dir/hub-$walk.yaml" "events-$walk.jsonl" >"$dir/score-$walk.txt"
            sed -n '6,7p' "$dir/score-$walk.txt"
            grep -A1 -E "^(audio-guide-spare|lost-badge|shelf-scanner)" "$dir/score-$walk.txt" | grep -v "^--" || true
        done
    done
done

echo "== museum seed 1: confirmSeconds"
dir=$out/museum-1
for confirm in 0 0.5 1 2 3 5 8; do
    config config/hub.yaml "" "  confirmSeconds: $confirm" "$dir/hub-confirm.yaml"
    echo "confirmSeconds $confirm: $(score museum "$dir" "$dir/hub-confirm.yaml" events-confirm.jsonl | sed -n 6p)"
done

echo "== flat-kolakowski (recorded)"
flat=$out/flat-kolakowski
python3 scripts/kolakowski-to-sightings.py --out "$flat" ${BEACONTRACKER_RECORDED_DATA:+--data "$BEACONTRACKER_RECORDED_DATA/flat_ble_uwb_kolakowski"}
config config/hub-flat-kolakowski.yaml "" "" "$flat/hub.yaml"
for run in calibration test_robot; do
    echo "-- $run, uncalibrated"
    score flat-kolakowski "$flat/$run" "$flat/hub.yaml" events.jsonl | sed -n '6,7p'
done
"$bin/beacon-hub" calibrate --config "$flat/hub.yaml" "$flat/calibration/sightings.jsonl" \
    --plan "$flat/calibration/plan.yaml" --out "$flat/calibration.yaml"
config config/hub-flat-kolakowski.yaml "$flat/calibration.yaml" "" "$flat/hub-calibrated.yaml"
echo "-- test_robot, calibrated from the calibration run"
score flat-kolakowski "$flat/test_robot" "$flat/hub-calibrated.yaml" events-calibrated.jsonl | sed -n '6,7p'
