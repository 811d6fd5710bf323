#!/usr/bin/env python3
"""How well can anyone place tags from these sightings? An offline classifier that sees the future: for every second a
tag is truly in a zone, the mean RSSI of each gateway over a window centred on that second, and the zone of the
loudest gateway wins. No live engine can do better than a look-ahead like this by much; docs/accuracy.md uses it to
show where the radio, not the engine, limits accuracy.

    scripts/window-oracle.py VENUE.yaml DIR [--windows 1 2 4]

DIR holds `beacon-sim run` output (sightings.jsonl, truth.jsonl; not .gz). Tags are matched to beacons by the venue's
`tags:` entries, expanded as the simulator expands them (`count`: the last part of the beacon id counts up).
"""
import argparse
import bisect
import collections
import json
import os
import re
import sys


def venue_tables(path):
    """gateway → zone, and beacon → tag, read from the venue file's flow-style entries."""
    gateway_zone, beacons = {}, {}
    for line in open(path):
        gateway = re.search(r"\{ id: ([^,]+), zone: ([^,]+),", line)
        if gateway and "position" in line:
            gateway_zone[gateway.group(1)] = gateway.group(2)
        tag = re.search(r'\{ id: ([^,]+), beacon: "([^"]+)"', line)
        if tag:
            count = re.search(r"count: (\d+)", line)
            name, beacon = tag.group(1), tag.group(2).lower()
            for index in range(int(count.group(1)) if count else 1):
                parts = beacon.split(":")
                if index:
                    if parts[0] == "eddystone-uid":
                        parts[-1] = "%012x" % ((int(parts[-1], 16) + index) & 0xFFFFFFFFFFFF)
                    else:
                        parts[-1] = str((int(parts[-1]) + index) % 65536)
                beacons[":".join(parts)] = "%s-%03d" % (name, index + 1) if count else name
    return gateway_zone, beacons


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("venue")
    parser.add_argument("dir")
    parser.add_argument("--windows", type=float, nargs="+", default=[1, 2, 4])
    args = parser.parse_args()
    gateway_zone, beacons = venue_tables(args.venue)
    if not gateway_zone or not beacons:
        sys.exit(f"{args.venue}: found no gateways or tags — is it a venue file (docs/venue.md)?")
    truth = collections.defaultdict(list)
    for line in open(os.path.join(args.dir, "truth.jsonl")):
        interval = json.loads(line)
        truth[interval["tag"]].append((interval["enter"], interval["exit"], interval["zone"]))
    sightings = collections.defaultdict(list)
    for line in open(os.path.join(args.dir, "sightings.jsonl")):
        s = json.loads(line)
        if s["beacon"] in beacons and s["gateway"] in gateway_zone:
            sightings[beacons[s["beacon"]]].append((s["t"], s["gateway"], s["rssi"]))
    for window in args.windows:
        right = total = 0
        for tag, intervals in truth.items():
            seen = sorted(sightings[tag])
            times = [s[0] for s in seen]
            for enter, exit_, zone in intervals:
                if zone is None:
                    continue
                t = enter + 0.5
                while t < exit_:
                    levels = collections.defaultdict(list)
                    for _, gateway, rssi in seen[bisect.bisect_left(times, t - window) : bisect.bisect_right(times, t + window)]:
                        levels[gateway].append(rssi)
                    if levels:
                        loudest = max(levels, key=lambda g: sum(levels[g]) / len(levels[g]))
                        right += gateway_zone[loudest] == zone
                    total += 1
                    t += 1
        print(f"window ±{window:g} s: loudest mean gateway's zone right in {100 * right / max(total, 1):.1f} % of in-zone seconds")


if __name__ == "__main__":
    main()
