#!/usr/bin/env python3
"""Converts the Kolakowski flat recordings into the hub's sighting lines, with the truth and a calibration plan.

Source: M. Kolakowski, "Automated Calibration of RSS Fingerprinting Based Systems Using a Mobile Robot and Machine
Learning", Sensors 21(18):6270, 2021, doi 10.3390/s21186270; data doi 10.5281/zenodo.5457591, CC BY 4.0. A copy
lives in data/recorded/flat_ble_uwb_kolakowski/ (see its README for the columns and the licence).

    scripts/kolakowski-to-sightings.py [--data DIR] --out OUT

writes, for each run (calibration, test_robot, test_walk), OUT/<run>/sightings.jsonl and, for the robot runs
(the only ones with positions), OUT/<run>/truth.jsonl, OUT/<run>/positions.jsonl (the robot's position at every row,
for `beacon-sim score --positions`: accuracy away from zone boundaries) and OUT/<run>/plan.yaml (the stretches the
robot spent in one zone, and its route: its position at every row; usable by `beacon-hub calibrate --plan`). The
venue is config/venues/flat-kolakowski.yaml; docs/accuracy.md has the figures and the choices made here:

- ts (ns) becomes seconds; every receiver's value in a row becomes one sighting from gateway rx-<n> (empty = not
  received); the authors' averaged fractional RSSI is rounded to whole dBm, as a scanner reports it.
- The recordings have pauses between sessions (the calibration run has three of 20 to 90 minutes). A pause longer
  than MAX_GAP seconds is closed up to one row interval, so that replay sees one continuous run; shorter gaps stay.
- The truth zone of a row is the zone whose polygon holds the robot's x, y; a point on a wall (between polygons)
  takes the nearest zone. A truth interval runs from one row to the next row in another zone.
"""
import argparse
import csv
import json
import math
import os
import sys

from recordings import truth_intervals, write_plan, write_truth

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA = os.path.join(HERE, "..", "data", "recorded", "flat_ble_uwb_kolakowski")
BEACON = "ibeacon:4b6f6c61-6b6f-7773-6b69-000000000001:1:1"  # the one tag; "Kolakowski" in the UUID's first bytes
TAG = "robot-tag"
MAX_GAP = 60.0
MIN_STOP = 20.0  # a calibration stop: at least this long in one zone…
STOP_MARGIN = 3.0  # …less this much at each end, where the robot may still be in the doorway
RUNS = ["calibration", "test_robot", "test_walk"]

# The flat's rooms, drawn from layout.csv (the walls' inner faces). Keep in step with config/venues/flat-kolakowski.yaml.
ZONES = {
    "room-west": [(0, 2.18), (2.58, 2.18), (2.58, 7.1), (0, 7.1)],
    "hall": [(0, 0), (3.88, 0), (3.88, 2.12), (0, 2.12)],
    "room-south": [(4.05, 0), (6.22, 0), (6.22, 1.93), (4.05, 1.93)],
    "living-room": [(2.7, 2.12), (6.27, 2.12), (6.27, 4.19), (9.07, 4.19), (9.07, 7.1), (2.7, 7.1)],
}


def inside(polygon, x, y):
    hit = False
    for (x1, y1), (x2, y2) in zip(polygon, polygon[1:] + polygon[:1]):
        if (y1 > y) != (y2 > y) and x < x1 + (y - y1) * (x2 - x1) / (y2 - y1):
            hit = not hit
    return hit


def distance_to(polygon, x, y):
    best = math.inf
    for (x1, y1), (x2, y2) in zip(polygon, polygon[1:] + polygon[:1]):
        dx, dy = x2 - x1, y2 - y1
        u = max(0.0, min(1.0, ((x - x1) * dx + (y - y1) * dy) / (dx * dx + dy * dy)))
        best = min(best, math.hypot(x - (x1 + u * dx), y - (y1 + u * dy)))
    return best


def zone_of(x, y):
    for zone, polygon in ZONES.items():
        if inside(polygon, x, y):
            return zone
    return min(ZONES, key=lambda zone: distance_to(ZONES[zone], x, y))


def read_rows(path):
    """Rows as (t seconds with long pauses closed, x, y or None, [rssi or None] × 6)."""
    with open(path, newline="") as file:
        rows = list(csv.DictReader(file))
    if not rows:
        sys.exit(f"{path}: no rows — is this the Kolakowski data folder?")
    missing = [c for c in ["ts"] + [f"rssi_{n}" for n in range(1, 7)] if c not in rows[0]]
    if missing:
        sys.exit(f"{path}: missing columns {', '.join(missing)} — is this the Kolakowski data folder?")
    out, shift, previous = [], 0.0, None
    for row in rows:
        t = float(row["ts"]) / 1e9
        if previous is not None and t - previous > MAX_GAP:
            shift += t - previous - 1 / 3
        previous = t
        x, y = row.get("x"), row.get("y")
        position = (float(x), float(y)) if x and y else None
        rssi = [float(row[f"rssi_{n}"]) if row[f"rssi_{n}"] else None for n in range(1, 7)]
        out.append((round(t - shift, 3), position, rssi))
    return out


def write_run(rows, directory):
    os.makedirs(directory, exist_ok=True)
    count = 0
    with open(os.path.join(directory, "sightings.jsonl"), "w") as file:
        for t, _, rssi in rows:
            for n, value in enumerate(rssi, start=1):
                if value is None:
                    continue
                line = {"t": t, "gateway": f"rx-{n}", "beacon": BEACON, "rssi": round(value), "kind": "ibeacon"}
                file.write(json.dumps(line, separators=(",", ":")) + "\n")
                count += 1
    if rows[0][1] is None:
        return count, None
    # Where the robot was (its UWB position) at every row: the truth, and the plan's route for the position map.
    moments = [(t, x, y) for t, (x, y), _ in rows]
    intervals = truth_intervals(moments, zone_of)
    write_truth(directory, TAG, moments, intervals)
    write_plan(
        os.path.join(directory, "plan.yaml"),
        "Calibration plan written by scripts/kolakowski-to-sightings.py: the robot's stays in one zone.",
        BEACON, moments, intervals, MIN_STOP, STOP_MARGIN)
    return count, intervals


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=DEFAULT_DATA, help="the flat_ble_uwb_kolakowski folder")
    parser.add_argument("--out", required=True, help="output folder (one sub-folder per run)")
    args = parser.parse_args()
    for run in RUNS:
        path = os.path.join(args.data, f"{run}_df.csv")
        if not os.path.exists(path):
            sys.exit(f"{path} not found — pass --data with the flat_ble_uwb_kolakowski folder")
        rows = read_rows(path)
        count, intervals = write_run(rows, os.path.join(args.out, run))
        span = rows[-1][0] - rows[0][0]
        detail = ""
        if intervals:
            seconds = {}
            for zone, enter, exit_ in intervals:
                seconds[zone] = seconds.get(zone, 0) + exit_ - enter
            detail = f", {len(intervals) - 1} zone changes; " + ", ".join(
                f"{zone} {s:.0f} s" for zone, s in sorted(seconds.items()))
        print(f"{run}: {len(rows)} rows, {count} sightings over {span:.0f} s{detail}")


if __name__ == "__main__":
    main()
