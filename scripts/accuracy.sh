#!/usr/bin/env bash
# Regenerates docs/accuracy.md: the real recordings (the Kolakowski flat: its calibration run is training data,
# test_robot test data; the TETAM hall: its straight walks are training data, the other tracks test data; each beside
# the strongest gateway and the fingerprint reference, `beacon-sim fingerprint`), the test set of random venues
# (every family, uncalibrated and calibrated, beside the oracle, the nominal model and the baseline), the hand-made
# venues (training data) and the confirmation-time table.
#
#   scripts/accuracy.sh [--out DIR] [--venues N] [--duration 10m] [--links-venues N] [--links-learn 30m]
#                       [--phone-venues N] [--phone-seconds S] [--foreign-venues N] [--report FILE] [--smoke]
#                       [--recordings] [--debug] [--static-swift-stdlib] [--bin DIR]
#
# Builds release binaries (--debug: the debug build instead, which optimizes the targets that compute and runs the
# smoke about as fast; --static-swift-stdlib: builds them as `make deb` does, with the Swift runtime linked in; --bin:
# builds nothing and runs the programs already built in DIR, as `make test` does beside a running `swift test`, which
# holds the build directory's lock), simulates into DIR (default .build/accuracy) and writes the report (default
# docs/accuracy.md). The defaults keep the whole report within an hour on two cores (docs/simulator.md gives the
# measured time of each part):
#   - the test set: the first --venues N (default 100: all) of seeds 1001..1100, --duration (10m) each, uncalibrated
#     and calibrated from a strolling walk;
#   - the first --foreign-venues (default 100) of them again with the foreign radio (`beacon-sim bench --radio
#     foreign`);
#   - the gateways' links (scripts/links-accuracy.sh) on the first --links-venues (default 10), 30 simulated minutes
#     scored after --links-learn (30m) of learning (0: the whole run from the start), with a phone walk of
#     --phone-seconds a zone (strolling, zones tapped: the calibration page's default) replayed with the links off
#     and on (unless --phone-venues 0); and the links' fit alone on every test venue (the tags left out);
#   - the first --phone-venues (default 50) calibrated from a phone walk of --phone-seconds (60) a zone: standing,
#     strolling (zones tapped) and strolling with a point tapped every 5 s, over the test set's own runs (`beacon-sim
#     bench --runs-from`); the strolling runs also with the hub given each run's exact radio map (the limit of any
#     calibration) and the maps a walk by zones could know at best (scripts/map-limits.sh);
#   - the hand-made venues, the confirmation-time table and the real recordings.
# --smoke is the quick check `make test` runs: two venues, two simulated minutes, one hand-made venue, the recordings,
# one venue's links; the report goes to DIR/accuracy.md and is checked for its tables. --recordings runs the real
# recordings alone (about a minute) into DIR/accuracy.md. Needs python3 and data/recorded (or
# $BEACONTRACKER_RECORDED_DATA).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
command_line="scripts/accuracy.sh $*"
out=.build/accuracy
venues=100
duration=10m
shipped_duration=30m
links_venues=10
links_duration=30m
links_learn=30m
phone_venues=50
phone_seconds=60
foreign_venues=100
report=
smoke=0
recordings_only=0
configuration=release
static=()
shipped="museum store museum-harsh"
seeds="1 2"
usage="usage: scripts/accuracy.sh [--out DIR] [--venues N] [--duration 10m] [--links-venues N] [--links-learn 30m] [--phone-venues N] [--phone-seconds S] [--foreign-venues N] [--report FILE] [--smoke] [--recordings] [--debug] [--static-swift-stdlib] [--bin DIR]"
built=
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out=$2; shift 2 ;;
        --venues) venues=$2; shift 2 ;;
        --duration) duration=$2; shift 2 ;;
        --report) report=$2; shift 2 ;;
        --links-venues) links_venues=$2; shift 2 ;;
        --links-learn) links_learn=$2; shift 2 ;;
        --phone-venues) phone_venues=$2; shift 2 ;;
        --phone-seconds) phone_seconds=$2; shift 2 ;;
        --foreign-venues) foreign_venues=$2; shift 2 ;;
        --smoke) smoke=1; shift ;;
        --recordings) recordings_only=1; shift ;;
        --debug) configuration=debug; shift ;;
        --static-swift-stdlib) static=(--static-swift-stdlib); shift ;;
        --bin) built=$2; shift 2 ;;
        *) echo "$usage" >&2; exit 64 ;;
    esac
done
if [ "$smoke" = 1 ]; then
    venues=2
    duration=2m
    shipped_duration=2m
    shipped=museum
    seeds=1
    links_venues=1
    links_duration=2m
    links_learn=1m
    phone_venues=1
    foreign_venues=2
fi
if [ "$recordings_only" = 1 ]; then
    links_venues=0
    phone_venues=0
    foreign_venues=0
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
report=${report:-$([ "$smoke" = 1 ] || [ "$recordings_only" = 1 ] && echo "$out/accuracy.md" || echo docs/accuracy.md)}
rm -rf "$out/test" "$out/foreign" "$out/shipped" "$out/confirm" "$out/flat" "$out/hall" "$out/links" "$out/gains" "$out/phone"
mkdir -p "$out/test" "$out/shipped" "$out/confirm" "$out/flat" "$out/hall"

build_began=$(date +%s)
if [ -n "$built" ]; then
    for program in beacon-hub beacon-sim; do
        [ -x "$built/$program" ] || { echo "accuracy: $built/$program is not there: build first (swift build)" >&2; exit 66; }
    done
    bin=$(cd "$built" && pwd)
    configuration=$(basename "$bin")
else
    build=(swift build -c "$configuration" "${static[@]}")
    # BEACONTRACKER_SCRATCH: a build directory of its own (for a build beside a running `swift test`, which holds
    # .build's lock for as long as it runs).
    if [ -n "${BEACONTRACKER_SCRATCH:-}" ]; then build+=(--scratch-path "$BEACONTRACKER_SCRATCH"); fi
    "${build[@]}" --product beacon-hub >/dev/null
    "${build[@]}" --product beacon-sim >/dev/null
    bin=$("${build[@]}" --show-bin-path)
fi
# The commit the binaries were built from (HEAD may move while the run goes on).
commit="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources || echo "+changes")"
began=$(date +%s)
start=1763812800

if [ "$recordings_only" = 0 ]; then
    echo "accuracy: test set, $venues venues of seeds 1001..1100, $duration each (uncalibrated and calibrated)"
    "$bin/beacon-sim" bench --venues "$venues" --seeds 1001..1100 --duration "$duration" --also-calibrated --json \
        --out "$out/test/venues" >"$out/test/bench.json" 2>"$out/test/bench.log" || {
        cat "$out/test/bench.log" >&2
        exit 1
    }
    grep -E "venues in" "$out/test/bench.log" | sed "s/^/  /"
fi

if [ "$foreign_venues" -gt 0 ]; then
    echo "accuracy: the foreign radio, $foreign_venues venues of seeds 1001..1100, $duration each"
    mkdir -p "$out/foreign"
    "$bin/beacon-sim" bench --venues "$foreign_venues" --seeds 1001..1100 --duration "$duration" --also-calibrated \
        --radio foreign --json --out "$out/foreign/venues" >"$out/foreign/bench.json" 2>"$out/foreign/bench.log" || {
        cat "$out/foreign/bench.log" >&2
        exit 1
    }
    grep -E "venues in" "$out/foreign/bench.log" | sed "s/^/  /"
fi

# hub.yaml with an absolute venue path and, optionally, a calibration and extra inference lines.
config() { # BASE CALIBRATION EXTRA OUT
    sed "s|^venue: venues/|venue: $root/config/venues/|" "$1" | grep -v "^calibration:" >"$4"
    [ -n "$2" ] && echo "calibration: $2" >>"$4"
    if [ -n "$3" ]; then
        if grep -q "^inference:" "$4"; then sed -i "s|^inference:|inference:\n$3|" "$4"; else printf "inference:\n%s\n" "$3" >>"$4"; fi
    fi
    return 0
}

score() { # VENUE-FILE DIR CONFIG EVENTS [SCORE ARGUMENTS…] → JSON on standard output
    local venue=$1 dir=$2 hub=$3 events=$4
    shift 4
    "$bin/beacon-hub" replay --config "$hub" "$dir/sightings.jsonl" --events "$dir/$events" >"$dir/$events.replay.txt"
    "$bin/beacon-sim" score --venue "$venue" --truth "$dir/truth.jsonl" --events "$dir/$events" --json "$@"
}

shipped_venue() { # VENUE SEED: one hand-made venue's run, scores and calibrations, in its own folder
    local venue=$1 seed=$2 base=config/hub.yaml dir=$out/shipped/$1-$2 walk flag
    [ "$venue" != museum ] && base=config/hub-$venue.yaml
    mkdir -p "$dir"
    "$bin/beacon-sim" run "config/venues/$venue.yaml" --out "$dir" --duration "$shipped_duration" --seed "$seed" \
        --start $start >"$dir/run.txt"
    config "$base" "" "" "$dir/hub.yaml"
    score "config/venues/$venue.yaml" "$dir" "$dir/hub.yaml" events.jsonl --sightings "$dir/sightings.jsonl" \
        --oracle "$dir/oracle.jsonl" --nominal "$dir/nominal.jsonl" --near-boundary "$dir/near-boundary.jsonl" \
        >"$dir/score.json"
    for walk in stroll stand; do
        flag=--stroll
        [ $walk = stand ] && flag=
        "$bin/beacon-sim" calibration-walk "config/venues/$venue.yaml" --out "$dir/walk-$walk" --seed "$seed" \
            --start 1763800000 $flag >/dev/null
        "$bin/beacon-hub" calibrate --config "$dir/hub.yaml" "$dir/walk-$walk/sightings.jsonl" \
            --plan "$dir/walk-$walk/plan.yaml" --out "$dir/calibration-$walk.yaml" >"$dir/calibrate-$walk.txt"
        config "$base" "$dir/calibration-$walk.yaml" "" "$dir/hub-$walk.yaml"
        score "config/venues/$venue.yaml" "$dir" "$dir/hub-$walk.yaml" "events-$walk.jsonl" \
            --near-boundary "$dir/near-boundary.jsonl" >"$dir/score-$walk.json"
    done
}

[ "$recordings_only" = 1 ] && shipped=
[ -n "$shipped" ] && echo "accuracy: hand-made venues ($shipped), seeds $seeds, $shipped_duration each, two at a time"
running=0
for venue in $shipped; do
    for seed in $seeds; do
        if [ "$running" -ge 2 ]; then
            wait -n
            running=$((running - 1))
        fi
        shipped_venue "$venue" "$seed" &
        running=$((running + 1))
    done
done
while [ "$running" -gt 0 ]; do
    wait -n
    running=$((running - 1))
done

if [ "$smoke" = 0 ] && [ "$recordings_only" = 0 ]; then
    echo "accuracy: museum seed 1, confirmSeconds"
    dir=$out/shipped/museum-1
    for confirm in 0 0.5 1 2 3 5 8; do
        config config/hub.yaml "" "  confirmSeconds: $confirm" "$dir/hub-confirm.yaml"
        score config/venues/museum.yaml "$dir" "$dir/hub-confirm.yaml" events-confirm.jsonl >"$out/confirm/$confirm.json"
    done
fi

if [ "$links_venues" -gt 0 ]; then
    echo "accuracy: self-calibration from the gateways' links, $links_venues test venues, $links_duration each after $links_learn"
    # With a phone walk as well (--phone-walk): the walk's calibration with the links off and on.
    # shellcheck disable=SC2046
    scripts/links-accuracy.sh "$bin" "$out/links" $(seq 1001 $((1000 + links_venues))) --duration "$links_duration" \
        --learn "$links_learn" $([ "$phone_venues" -gt 0 ] && echo --phone-walk "$phone_seconds" --phone-stroll) \
        >/dev/null
    # The fit alone takes a second or two a venue: always 30 minutes, on every test venue.
    echo "accuracy: the links' fit alone, $venues test venues, 30m each"
    # shellcheck disable=SC2046
    scripts/links-accuracy.sh "$bin" "$out/gains" $(seq 1001 $((1000 + venues))) --duration 30m --gains-only \
        >/dev/null
fi

if [ "$phone_venues" -gt 0 ]; then
    echo "accuracy: calibrated from a phone walk of $phone_seconds s a zone, $phone_venues test venues, $duration each"
    mkdir -p "$out/phone"
    for walk in standing stroll stroll-points; do
        case $walk in
            standing) name=bench walking=() ;;
            stroll) name=bench-stroll walking=(--phone-stroll --exact-map) ;;
            stroll-points) name=bench-stroll-points walking=(--phone-stroll --phone-stroll-points) ;;
        esac
        # The runs, uncalibrated replays and reference scores are the test set's: taken from its bench, not made again.
        reuse=()
        [ "$phone_venues" -le "$venues" ] && reuse=(--runs-from "$out/test/venues")
        "$bin/beacon-sim" bench --venues "$phone_venues" --seeds 1001..1100 --duration "$duration" --also-calibrated \
            --phone-walk "$phone_seconds" "${walking[@]}" "${reuse[@]}" --json \
            --out "$out/phone/venues-$walk" >"$out/phone/$name.json" 2>"$out/phone/$name.log" || {
            cat "$out/phone/$name.log" >&2
            exit 1
        }
    done
    echo "accuracy: what a walk by zones can reach (scripts/map-limits.sh), the strolling walk's $phone_venues venues"
    scripts/map-limits.sh "$bin" "$out/phone/venues-stroll" >"$out/phone/map-limits.txt"
fi

echo "accuracy: the recorded flat"
flat=$out/flat
python3 scripts/kolakowski-to-sightings.py --out "$flat" \
    ${BEACONTRACKER_RECORDED_DATA:+--data "$BEACONTRACKER_RECORDED_DATA/flat_ble_uwb_kolakowski"} >"$flat/convert.txt"
config config/hub-flat-kolakowski.yaml "" "" "$flat/hub.yaml"
for run in calibration test_robot; do
    score config/venues/flat-kolakowski.yaml "$flat/$run" "$flat/hub.yaml" events.jsonl \
        --sightings "$flat/$run/sightings.jsonl" --positions "$flat/$run/positions.jsonl" >"$flat/$run/score.json"
done
# The calibration run calibrates three ways: as a plan with the robot's route (no suffix), and as the calibration
# page would take it, each of the robot's stays tapped as its zone (the page's default) or as a point. Calibrating on
# the run it is scored on would be tuning on the test: only the test run gets the calibrated rows.
for taps in "" zones points; do
    suffix=${taps:+-$taps}
    "$bin/beacon-hub" calibrate --config "$flat/hub.yaml" "$flat/calibration/sightings.jsonl" \
        --plan "$flat/calibration/plan.yaml" ${taps:+--taps "$taps"} --out "$flat/calibration$suffix.yaml" \
        >"$flat/calibrate$suffix.txt"
    config config/hub-flat-kolakowski.yaml "$flat/calibration$suffix.yaml" "" "$flat/hub-calibrated$suffix.yaml"
    score config/venues/flat-kolakowski.yaml "$flat/test_robot" "$flat/hub-calibrated$suffix.yaml" \
        "events-calibrated$suffix.jsonl" --positions "$flat/test_robot/positions.jsonl" \
        >"$flat/test_robot/score-calibrated$suffix.json"
done

# The fingerprint reference (docs/simulator.md): trained on the calibration run alone, as the calibration is.
"$bin/beacon-sim" fingerprint --venue config/venues/flat-kolakowski.yaml --train "$flat/calibration" \
    --sightings "$flat/test_robot/sightings.jsonl" --events "$flat/test_robot/fingerprint.jsonl" >"$flat/fingerprint.txt"
"$bin/beacon-sim" score --venue config/venues/flat-kolakowski.yaml --truth "$flat/test_robot/truth.jsonl" \
    --events "$flat/test_robot/fingerprint.jsonl" --positions "$flat/test_robot/positions.jsonl" --json \
    >"$flat/test_robot/score-fingerprint.json"

echo "accuracy: the recorded TETAM hall"
hall=$out/hall
hall_venue=config/venues/tetam-hall.yaml
python3 scripts/tetam-to-sightings.py --out "$hall" \
    ${BEACONTRACKER_RECORDED_DATA:+--data "$BEACONTRACKER_RECORDED_DATA/tetam_hall_philotuxo"} >"$hall/convert.txt"
mapfile -t hall_training <"$hall/training.txt"
mapfile -t hall_test <"$hall/test.txt"
config config/hub-tetam-hall.yaml "" "" "$hall/hub.yaml"
for track in "${hall_training[@]}" "${hall_test[@]}"; do
    score "$hall_venue" "$hall/$track" "$hall/hub.yaml" events.jsonl --sightings "$hall/$track/sightings.jsonl" \
        --positions "$hall/$track/positions.jsonl" >"$hall/$track/score.json"
done
# Calibrated from the training walks end to end: with their route, and tapped as zones as the calibration page does.
for taps in "" zones; do
    suffix=${taps:+-$taps}
    "$bin/beacon-hub" calibrate --config "$hall/hub.yaml" "$hall/calibration/sightings.jsonl" \
        --plan "$hall/calibration/plan.yaml" ${taps:+--taps "$taps"} --out "$hall/calibration$suffix.yaml" \
        >"$hall/calibrate$suffix.txt"
    config config/hub-tetam-hall.yaml "$hall/calibration$suffix.yaml" "" "$hall/hub-calibrated$suffix.yaml"
    for track in "${hall_test[@]}"; do
        score "$hall_venue" "$hall/$track" "$hall/hub-calibrated$suffix.yaml" "events-calibrated$suffix.jsonl" \
            --positions "$hall/$track/positions.jsonl" >"$hall/$track/score-calibrated$suffix.json"
    done
    # Each training walk calibrated from the other four (leave one walk out): what calibration does to a walk, and
    # to a zone, it did not learn from, on training data.
    for track in "${hall_training[@]}"; do
        others=$hall/calibration-without-$track
        "$bin/beacon-hub" calibrate --config "$hall/hub.yaml" "$others/sightings.jsonl" --plan "$others/plan.yaml" \
            ${taps:+--taps "$taps"} --out "$others/calibration$suffix.yaml" >"$others/calibrate$suffix.txt"
        config config/hub-tetam-hall.yaml "$others/calibration$suffix.yaml" "" "$others/hub-calibrated$suffix.yaml"
        score "$hall_venue" "$hall/$track" "$others/hub-calibrated$suffix.yaml" "events-calibrated$suffix.jsonl" \
            --positions "$hall/$track/positions.jsonl" >"$hall/$track/score-calibrated$suffix.json"
    done
done
# The fingerprint reference two ways: trained on the training walks (each training walk scored with the other
# training walks: leave one walk out), and trained on every other track of the hall, test tracks included (what the
# hall's labelled data allow at best; the engine never sees a test track).
fingerprint() { # TRACK NAME TRAINING-TRACKS…
    local track=$1 name=$2
    shift 2
    local runs=() other
    for other in "$@"; do [ "$other" != "$track" ] && runs+=(--train "$hall/$other"); done
    "$bin/beacon-sim" fingerprint --venue "$hall_venue" "${runs[@]}" --sightings "$hall/$track/sightings.jsonl" \
        --events "$hall/$track/$name.jsonl" >"$hall/$track/$name.txt"
    "$bin/beacon-sim" score --venue "$hall_venue" --truth "$hall/$track/truth.jsonl" --events "$hall/$track/$name.jsonl" \
        --positions "$hall/$track/positions.jsonl" --json >"$hall/$track/score-$name.json"
}
for track in "${hall_training[@]}" "${hall_test[@]}"; do
    fingerprint "$track" fingerprint "${hall_training[@]}"
    fingerprint "$track" fingerprint-all "${hall_training[@]}" "${hall_test[@]}"
done

ended=$(date +%s)
cat >"$out/meta.json" <<EOF
{"command": "$command_line", "commit": "$commit",
 "date": "$(date -u +%Y-%m-%d)", "cores": $(nproc), "seconds": $((ended - began)),
 "buildSeconds": $((began - build_began)), "duration": "$duration", "shippedDuration": "$shipped_duration",
 "venues": $venues, "configuration": "$configuration"}
EOF
python3 scripts/accuracy-report.py "$out" >"$report.tmp"
mv "$report.tmp" "$report"
echo "accuracy: $report written in $((ended - began)) s (build $((began - build_began)) s)"

if [ "$smoke" = 1 ]; then
    for expected in '^## The test set, per family' '^\| \*\*all\*\* \| 2 \|' \
        '^## The foreign radio family' '^\| target \(foreign radio\) \|' \
        '^## The hand-made venues' '^## Real data: a recorded flat' '^\*\*test_robot \(test\)\*\*' \
        '^\| fingerprint reference, trained on the calibration run \| [0-9.]+ % \|' \
        '^## The engine.s targets on the real recordings' '^## Real data: the TETAM hall' \
        '^\| \*\*all test tracks, pooled by time\*\* \| [0-9.]+ % / [0-9.]+ % \|' \
        '^## Self-calibration from the gateways' '^\| after 1 minute of learning, mean of venues' \
        '^\*\*The fit alone, on 2 venues of the test set' \
        '^## Calibrated from a phone walk' '^\*\*The engine.s own limit\.\*\* ' \
        '^\| the same \(strolling\) against the same engine given the exact map .* points \|' \
        '^\| the same \(strolling\) against the same engine given each zone.s exact level .* points \|' \
        '^\| the hub.s geometry with each zone.s exact level \| 1 \| [0-9.]+ % \|'; do
        grep -qE "$expected" "$report" || { echo "accuracy: the report lacks /$expected/: $report" >&2; exit 1; }
    done
    # Every figure of the family table is a number: hub, oracle, nominal, baseline, both differences, calibrated.
    if grep -E '^\| [a-z]+ \(|^\| \*\*all' "$report" | grep -q '–'; then
        grep -E '^\| [a-z]+ \(|^\| \*\*all' "$report" >&2
        echo "accuracy: a family row of the report has a missing figure: $report" >&2
        exit 1
    fi
    # Every cell of the hall's test tracks is a figure: each method, all moments and away from boundaries.
    if grep -E '^\| `(rectangular|zigzagging)_' "$report" | grep -q '–'; then
        grep -E '^\| `(rectangular|zigzagging)_' "$report" >&2
        echo "accuracy: a test track of the hall has a missing figure: $report" >&2
        exit 1
    fi
    echo "accuracy: smoke report ok"
fi
