"""What the converters of real recordings share (scripts/kolakowski-to-sightings.py, scripts/tetam-to-sightings.py):
the truth intervals of a tag's positions, and the files written from them."""
import json
import os


def truth_intervals(moments, zone_of, until=None):
    """[zone, enter, exit] for each stretch of `moments` ((t, x, y), in time order) in one zone: a stretch runs from
    its first moment to the first moment in another zone; the last ends at its last moment, or at `until`."""
    intervals = []
    for t, x, y in moments:
        zone = zone_of(x, y)
        if intervals and intervals[-1][0] == zone:
            intervals[-1][2] = t
        else:
            if intervals:
                intervals[-1][2] = t
            intervals.append([zone, t, t])
    if intervals and until is not None:
        intervals[-1][2] = until
    return intervals


def write_truth(directory, tag, moments, intervals):
    """positions.jsonl (the tag's position at each moment, for `beacon-sim score --positions`) and truth.jsonl."""
    with open(os.path.join(directory, "positions.jsonl"), "w") as file:
        for t, x, y in moments:
            file.write(json.dumps({"tag": tag, "t": t, "x": round(x, 3), "y": round(y, 3)}, separators=(",", ":")))
            file.write("\n")
    with open(os.path.join(directory, "truth.jsonl"), "w") as file:
        for zone, enter, exit_ in intervals:
            file.write(json.dumps({"tag": tag, "zone": zone, "enter": enter, "exit": exit_}) + "\n")


def write_plan(path, comment, beacon, moments, intervals, min_stop, margin):
    """A calibration plan (`beacon-hub calibrate --plan`): the stays of at least `min_stop` seconds in one zone, less
    `margin` at each end, and the route (the tag's position at every moment)."""
    stops = [(zone, enter, exit_) for zone, enter, exit_ in intervals if exit_ - enter >= min_stop]
    with open(path, "w") as file:
        file.write(f"# {comment}\n")
        file.write(f'beacon: "{beacon}"\nstops:\n')
        for zone, enter, exit_ in stops:
            file.write(f"  - {{ zone: {zone}, from: {enter + margin:.3f}, to: {exit_ - margin:.3f} }}\n")
        if not stops:
            file.write("  []\n")
        file.write("route:\n")
        for t, x, y in moments:
            file.write(f"  - {{ t: {t}, x: {round(x, 3)}, y: {round(y, 3)} }}\n")
