#!/usr/bin/env python3
"""Where a bench's hubs lose to the oracle: per kind of hub, the tag-hours it placed wrongly, how late it followed
each true stay, and the time a tag was outside the venue while the hub held it in a zone with no entrance.

    python3 scripts/bench-errors.py BENCH-DIR [--events NAME=FILE ...]

BENCH-DIR is the --out folder of `beacon-sim bench` (each venue's seed-N folder keeps run/truth.jsonl, the hub's
events.jsonl, events-calibrated.jsonl with --also-calibrated, events-exact.jsonl with --exact-map, and
run/oracle.jsonl). --events NAME=FILE adds a kind read from FILE in each venue's folder (e.g. the events of a replay
with another build). Every second from 10 s after a tag's truth begins is counted once; a state is the last enter or
exit event at or before it ("no zone" before the first enter). Printed per kind, summed over venues:

- wrong: tag-hours the reported state was not the true one (of all the tag-hours counted);
- late: per true stay of 10 s or more (after the first 20 s), the seconds until the kind first reported its zone (the
  whole stay when it never did): their median, mean, and tag-hours in total, then how many stays and tag-hours fell
  at 100 s or more, and how many of those stays were outside the venue (no zone);
- lost: per true stay of 10 s or more, the tag-hours the kind reported another state after it had first reported the
  stay's zone (it had the tag, then lost it: what the map says of places within the zone, not lateness), and how many
  of them fell in spells of 30 s or more;
- held inside: tag-hours the truth said "no zone" while the kind reported a zone without a door to outside.
"""
import bisect
import collections
import json
import os
import re
import statistics
import sys


def usage(message):
    sys.exit(f"bench-errors: {message}\nusage: python3 scripts/bench-errors.py BENCH-DIR [--events NAME=FILE ...]")


def read_lines(path):
    with open(path) as lines:
        return [json.loads(line) for line in lines if line.strip()]


def truth(path):
    stays = collections.defaultdict(list)
    for row in read_lines(path):
        stays[row["tag"]].append((row["enter"], row["exit"], row["zone"]))
    return stays


def events(path):
    moves = collections.defaultdict(list)
    for row in read_lines(path):
        if row.get("type") in ("enter", "exit"):
            moves[row["tag"]].append((row["t"], row["type"], row.get("zone")))
    return moves


def states(moves, times):
    """The reported state at each of `times` (sorted), from a tag's events in time order."""
    result, state, index = [], None, 0
    for t in times:
        while index < len(moves) and moves[index][0] <= t:
            _, kind, zone = moves[index]
            if kind == "enter":
                state = zone
            elif zone == state:
                state = None
            index += 1
        result.append(state)
    return result


def entrance_zones(venue_path):
    """Zones with a door whose other side is no zone (the venue file's `between: [outside, zone]`)."""
    text = open(venue_path).read()
    zones = set(re.findall(r"- \{ id: ([^,\s]+),", text.split("\ndoors:")[0]))
    entrances = set()
    for sides in re.findall(r"between: \[([^\]]+)\]", text):
        names = [name.strip().strip("\"'") for name in sides.split(",")]
        if any(name not in zones for name in names):
            entrances.update(name for name in names if name in zones)
    return entrances


def main():
    arguments = sys.argv[1:]
    if not arguments or arguments[0].startswith("-"):
        usage("give the --out folder of beacon-sim bench")
    bench = arguments[0]
    kinds = {"uncalibrated": "events.jsonl", "calibrated": "events-calibrated.jsonl", "exact": "events-exact.jsonl",
             "oracle": "run/oracle.jsonl"}
    rest = arguments[1:]
    while rest:
        if rest[0] != "--events" or len(rest) < 2 or "=" not in rest[1]:
            usage(f"unknown argument {rest[0]}")
        name, file = rest[1].split("=", 1)
        kinds[name] = file
        rest = rest[2:]
    folders = sorted((f for f in os.listdir(bench) if f.startswith("seed-")), key=lambda f: int(f.split("-")[1]))
    if not folders:
        usage(f"{bench} has no seed-N folders")
    wrong, seconds, held = collections.Counter(), collections.Counter(), collections.Counter()
    lags = collections.defaultdict(list)
    lost, lost_long = collections.Counter(), collections.Counter()
    for folder in folders:
        path = os.path.join(bench, folder)
        stays = truth(os.path.join(path, "run", "truth.jsonl"))
        entrances = entrance_zones(os.path.join(path, "venue.yaml"))
        for kind, file in kinds.items():
            if not os.path.exists(os.path.join(path, file)):
                continue
            moves = events(os.path.join(path, file))
            for tag, intervals in stays.items():
                begin, end = intervals[0][0], intervals[-1][1]
                times = [begin + 10 + k for k in range(int(end - begin - 10))]
                reported = states(moves.get(tag, []), times)
                index = 0
                for t, state in zip(times, reported):
                    while index < len(intervals) - 1 and intervals[index][1] <= t:
                        index += 1
                    actual = intervals[index][2]
                    seconds[kind] += 1
                    if state != actual:
                        wrong[kind] += 1
                        if actual is None and state not in entrances:
                            held[kind] += 1
                for enter, exit, zone in intervals:
                    if exit - enter < 10 or enter < begin + 20:
                        continue
                    # The counted seconds within the stay (one a second, as above): the first that reports its zone.
                    first = bisect.bisect_left(times, enter)
                    found = next((times[k] for k in range(first, len(times))
                                  if times[k] >= exit or reported[k] == zone), exit)
                    lags[kind].append((min(found, exit) - enter, zone))
                    # After that first second: spells of another state within the stay.
                    spell = 0
                    for k in range(bisect.bisect_left(times, found), len(times) + 1):
                        if k < len(times) and times[k] < exit and reported[k] != zone:
                            spell += 1
                            continue
                        lost[kind] += spell
                        if spell >= 30:
                            lost_long[kind] += spell
                        spell = 0
                        if k >= len(times) or times[k] >= exit:
                            break
    print(f"{len(folders)} venues of {bench}")
    for kind in kinds:
        if not seconds[kind]:
            continue
        late = [lag for lag, _ in lags[kind]]
        long = [lag for lag in late if lag >= 100]
        outside = sum(1 for lag, zone in lags[kind] if lag >= 100 and zone is None)
        print(f"{kind}: wrong {wrong[kind] / 3600:.1f} of {seconds[kind] / 3600:.1f} tag-hours; late: {len(late)} stays,"
              f" median {statistics.median(late):.0f} s, mean {statistics.mean(late):.1f} s,"
              f" {sum(late) / 3600:.1f} tag-hours, {len(long)} stays at 100 s or more ({sum(long) / 3600:.1f} tag-hours,"
              f" {outside} of them outside); lost {lost[kind] / 3600:.1f} tag-hours"
              f" ({lost_long[kind] / 3600:.1f} in spells of 30 s or more);"
              f" held inside while outside {held[kind] / 3600:.2f} tag-hours")


if __name__ == "__main__":
    main()
