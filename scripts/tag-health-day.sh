#!/usr/bin/env bash
# A simulated day of tag health: the shipped museum with four Eddystone audio guides beside its tags, each
# battery telling a story, simulated for 24 h into files and replayed through `beacon-hub replay` with
# `tagHealth: { batteryLowMilliVolts: 2600, missingAfterSeconds: 14400 }`. Prints the tag alerts, by time of day.
#   guide-a  2700 mV, −5 mV/h           low at ~20:00
#   guide-b  2620 mV, −10 mV/h, flat below 2450 mV (silent from ~17:00): low at ~02:00, missing 4 h after it fell silent
#   guide-c  2560 mV, −2 mV/h, a new cell (also 2560 mV) at 10:00: low from the start, a TLM reset at 10:00, and no
#            second low (the cell never read 2800 mV, so the first episode never ended)
#   guide-d  3000 mV, −1 mV/h           nothing
#   lost-badge as shipped (2950 mV, −0.5 mV/h): nothing
#
#   scripts/tag-health-day.sh BIN-DIR OUT-DIR [--seed 1001]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$1
out=$2
shift 2
seed=1001
while [ $# -gt 0 ]; do
    case "$1" in
        --seed) seed=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 64 ;;
    esac
done
mkdir -p "$out"
uid=eddystone-uid:edd1ebeac04e5defa017
guides="\
  - { id: guide-a, beacon: \"$uid:00000000a001\", carrier: staff, interval: 1, start: entrance, battery: { milliVolts: 2700, drainPerHour: 5 } }
  - { id: guide-b, beacon: \"$uid:00000000a002\", carrier: staff, interval: 1, start: entrance, battery: { milliVolts: 2620, drainPerHour: 10, deadBelowMilliVolts: 2450 } }
  - { id: guide-c, beacon: \"$uid:00000000a003\", carrier: still, interval: 1, start: cafe, battery: { milliVolts: 2560, drainPerHour: 2, replacedAfterSeconds: 36000 } }
  - { id: guide-d, beacon: \"$uid:00000000a004\", carrier: staff, interval: 1, start: entrance, battery: { milliVolts: 3000, drainPerHour: 1 } }"
# The guides go right after the lost badge, the museum's last tag.
awk -v guides="$guides" '{ print } /id: lost-badge/ { print guides }' config/venues/museum.yaml >"$out/venue.yaml"
cat >"$out/hub.yaml" <<EOF
hub: tag-health-day
site: museum
venue: venue.yaml
tagHealth: { batteryLowMilliVolts: 2600, missingAfterSeconds: 14400 }
EOF
# Midnight UTC, so that the times printed are the day's.
"$bin/beacon-sim" run "$out/venue.yaml" --out "$out/run" --duration 24h --seed "$seed" --start 1795564800 --no-oracle
"$bin/beacon-hub" replay --config "$out/hub.yaml" "$out/run/sightings.jsonl" --events "$out/run/events.jsonl"
python3 - "$out/run/events.jsonl" <<'EOF'
import datetime, json, sys
for line in open(sys.argv[1]):
    event = json.loads(line)
    if (event.get("code") or "").startswith("tag-"):
        at = datetime.datetime.fromtimestamp(event["t"], datetime.timezone.utc).strftime("%H:%M")
        print(f"{at}  {event['code']:<16} {event['reason']}")
EOF
