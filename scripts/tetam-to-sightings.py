#!/usr/bin/env python3
"""Converts the TETAM hall recordings into the hub's sighting lines, with the truth, positions and calibration plans.

Source: F. S. Daniş, A. T. Naskali, A. T. Cemgil and C. Ersoy, "An Indoor Localization Dataset and Data Collection
Framework with High Precision Position Annotation", Pervasive and Mobile Computing 81, 2022; CC0 1.0. A copy lives
in data/recorded/tetam_hall_philotuxo/ (its README and LICENSE.md; data/recorded/README.md).

    scripts/tetam-to-sightings.py [--data DIR] --out OUT

writes, for each track of trk/, OUT/<track>/sightings.jsonl, truth.jsonl, positions.jsonl (the beacon's position at
every line, for `beacon-sim score --positions`) and plan.yaml (its stays in one zone and its route, for
`beacon-hub calibrate --plan`), OUT/calibration/ the same for the calibration walks one after another,
OUT/calibration-without-<track>/ the same for every calibration walk but one (to score that one against a
calibration that never saw it: leave one walk out), and OUT/training.txt and OUT/test.txt, the names of the training and the test tracks, one a line. The
venue is config/venues/tetam-hall.yaml; which tracks are calibration and which are test is fixed here (TRAINING,
TEST) and in docs/accuracy.md, chosen before any figure was looked at.

- Each line of a track is one reception: timestamp, receiver MAC, beacon MAC, RSSI, the beacon's x, y, z (the
  authors' camera system) and its orientation. It becomes one sighting of gateway sensorNN (the receiver's alias in
  cnf/tetam.dev) of the one beacon. Lines out of time order are sorted; receptions with an RSSI of 0 dBm or more (two
  in the whole set: 29 and 42) cannot be real and are dropped, and counted.
- The zones are the hall's four quadrants, split at the centre of its limits (cnf/tetam.par); each holds one of the
  four receiver groups (sensor1x … sensor4x). The truth zone of a line is the quadrant holding its x, y (a point
  outside the limits takes the nearest); a truth interval runs from one line to the next line in another zone.
- The calibration run puts the calibration walks end to end, each gap closed to one second, so that
  `beacon-hub calibrate` reads one walk.
"""
import argparse
import json
import os
import sys

from recordings import truth_intervals, write_plan, write_truth

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA = os.path.join(HERE, "..", "data", "recorded", "tetam_hall_philotuxo")
BEACON = "ibeacon:7e7a3000-0000-4000-8000-e78f135624ce:1:1"  # the one beacon; its MAC in the UUID's last bytes
TAG = "hall-beacon"
TRAINING = ["straight_01", "straight_02", "straight_03", "straight_04", "straight_05"]
TEST = [
    "rectangular_without_rotation",
    "rectangular_with_rotation",
    "zigzagging_without_rotation",
    "zigzagging_with_rotation",
]
MIN_STOP = 20.0  # a calibration stay: at least this long in one zone…
STOP_MARGIN = 3.0  # …less this much at each end
# The hall's limits (cnf/tetam.par), metres; the quadrants split at their centre. Keep in step with
# config/venues/tetam-hall.yaml.
WIDTH, HEIGHT = 20.660, 17.641
MID_X, MID_Y = 10.330, 8.821


def zone_of(x, y):
    west = x < MID_X
    south = y < MID_Y
    if west:
        return "quadrant-1" if south else "quadrant-2"
    return "quadrant-4" if south else "quadrant-3"


def read_devices(path):
    """Receiver MAC → alias, from the Dongles line of tetam.dev."""
    with open(path) as file:
        for line in file:
            if line.startswith("Dongles:"):
                dongles = json.loads(line[len("Dongles:"):])
                return {mac: entry[2] for mac, entry in dongles.items()}
    sys.exit(f"{path}: no Dongles line — is this the TETAM data folder?")


def read_track(path, aliases):
    """Lines as (t, gateway, rssi, x, y), in time order; and how many were dropped."""
    rows, dropped = [], 0
    with open(path) as file:
        for number, line in enumerate(file, start=1):
            fields = line.strip().split(",")
            if len(fields) < 7:
                sys.exit(f"{path}:{number}: expected at least 7 fields, found {len(fields)}")
            gateway = aliases.get(fields[1])
            if gateway is None:
                sys.exit(f"{path}:{number}: receiver {fields[1]} is not in cnf/tetam.dev")
            rssi = int(fields[3])
            if rssi >= 0:
                dropped += 1
                continue
            rows.append((float(fields[0]), gateway, rssi, float(fields[4]), float(fields[5])))
    if not rows:
        sys.exit(f"{path}: no receptions")
    rows.sort(key=lambda row: row[0])
    return rows, dropped


def write_run(rows, directory):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "sightings.jsonl"), "w") as file:
        for t, gateway, rssi, _, _ in rows:
            line = {"t": round(t, 3), "gateway": gateway, "beacon": BEACON, "rssi": rssi, "kind": "ibeacon"}
            file.write(json.dumps(line, separators=(",", ":")) + "\n")
    # The beacon's position at every line where it moved (receptions of one moment share it).
    positions = []
    for t, _, _, x, y in rows:
        if not positions or (positions[-1][1], positions[-1][2]) != (x, y):
            positions.append((round(t, 3), x, y))
    intervals = truth_intervals(positions, zone_of, until=round(rows[-1][0], 3))
    write_truth(directory, TAG, positions, intervals)
    write_plan(
        os.path.join(directory, "plan.yaml"),
        "Calibration plan written by scripts/tetam-to-sightings.py: the beacon's stays in one zone.",
        BEACON, positions, intervals, MIN_STOP, STOP_MARGIN)
    return intervals


def end_to_end(runs):
    """The runs one after another, each gap closed to one second: one walk for `beacon-hub calibrate`."""
    joined = []
    for rows in runs:
        shift = 0.0 if not joined else rows[0][0] - joined[-1][0] - 1.0
        joined += [(t - shift, gateway, rssi, x, y) for t, gateway, rssi, x, y in rows]
    return joined


def describe(name, rows, intervals):
    seconds = {}
    for zone, enter, exit_ in intervals:
        seconds[zone] = seconds.get(zone, 0) + exit_ - enter
    print(
        f"{name}: {len(rows)} sightings over {rows[-1][0] - rows[0][0]:.0f} s, {len(intervals) - 1} zone changes; "
        + ", ".join(f"{zone} {s:.0f} s" for zone, s in sorted(seconds.items()))
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=DEFAULT_DATA, help="the tetam_hall_philotuxo folder")
    parser.add_argument("--out", required=True, help="output folder (one sub-folder per track, and calibration/)")
    args = parser.parse_args()
    aliases = read_devices(os.path.join(args.data, "cnf", "tetam.dev"))
    calibration, dropped_all, walks = [], 0, {}
    for track in TRAINING + TEST:
        path = os.path.join(args.data, "trk", f"{track}_all_sensors.mbd")
        if not os.path.exists(path):
            sys.exit(f"{path} not found — pass --data with the tetam_hall_philotuxo folder")
        rows, dropped = read_track(path, aliases)
        dropped_all += dropped
        describe(track, rows, write_run(rows, os.path.join(args.out, track)))
        if track in TRAINING:
            walks[track] = rows
    calibration = end_to_end([walks[track] for track in TRAINING])
    describe("calibration", calibration, write_run(calibration, os.path.join(args.out, "calibration")))
    for left_out in TRAINING:
        rest = end_to_end([walks[track] for track in TRAINING if track != left_out])
        write_run(rest, os.path.join(args.out, f"calibration-without-{left_out}"))
    for name, tracks in (("training", TRAINING), ("test", TEST)):
        with open(os.path.join(args.out, f"{name}.txt"), "w") as file:
            file.write("".join(track + "\n" for track in tracks))
    print(f"dropped {dropped_all} receptions with an RSSI of 0 dBm or more")


if __name__ == "__main__":
    main()
