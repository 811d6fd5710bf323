"""The zones and gateways of a venue file as `beacon-sim venue --random` writes it (one entry a line), for the
scripts that move a gateway: read with regular expressions, so that they need nothing beyond Python's standard
library."""
import re


def zones(text):
    """Zone id → polygon (a list of (x, y)), for `rect:` and `polygon:` zones."""
    found = {}
    for line in text.splitlines():
        m = re.match(r"\s*- \{ id: ([^,]+),.*rect: \{ x: ([-0-9.]+), y: ([-0-9.]+), width: ([0-9.]+), height: ([0-9.]+) \}",
                     line)
        if m:
            x, y, w, h = map(float, m.groups()[1:])
            found[m.group(1)] = [(x, y), (x + w, y), (x + w, y + h), (x, y + h)]
            continue
        m = re.match(r"\s*- \{ id: ([^,]+),.*polygon: \[(.*)\] \}", line)
        if m:
            found[m.group(1)] = [tuple(map(float, p.split(","))) for p in re.findall(r"\[([^\[\]]+)\]", m.group(2))]
    return found


def gateways(text):
    """(id, zone or None, x, y) of each gateway."""
    return [(m.group(1), m.group(2), float(m.group(3)), float(m.group(4)))
            for line in text.splitlines()
            if (m := re.match(r"\s*- \{ id: ([^,]+),(?:.*zone: ([^,]+),)?.*position: \[([-0-9.]+), ([-0-9.]+)\]", line))]


def inside(p, polygon):
    """Whether point p lies inside the polygon (even-odd rule)."""
    x, y = p
    hit = False
    for (x1, y1), (x2, y2) in zip(polygon, polygon[1:] + polygon[:1]):
        if (y1 > y) != (y2 > y) and x < x1 + (y - y1) * (x2 - x1) / (y2 - y1):
            hit = not hit
    return hit


def zone_at(shapes, p):
    """The id of the first zone whose polygon holds p, or None."""
    return next((zone for zone, polygon in shapes.items() if inside(p, polygon)), None)


def moved(text, gateway, p, zone):
    """The venue text with `gateway` at point p, serving `zone` (a venue file wants a gateway's zone to hold it)."""
    def take(m):
        entry = re.sub(r"position: \[[-0-9.]+, [-0-9.]+\]", f"position: [{p[0]}, {p[1]}]", m.group(0))
        return re.sub(r"zone: [^,]+,", f"zone: {zone},", entry)
    return re.sub(r"- \{ id: " + re.escape(gateway) + r",.*", take, text)
