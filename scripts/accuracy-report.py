#!/usr/bin/env python3
"""Writes docs/accuracy.md from the results scripts/accuracy.sh collected in its output folder.

    scripts/accuracy-report.py DIR > docs/accuracy.md

DIR holds meta.json (what was run, how long it took), foreign/bench.json (the test set's first venues with the
foreign radio, `--radio foreign`), test/bench.json (`beacon-sim bench --json` of the test
set), shipped/<venue>-<seed>/*.json and confirm/*.json (`beacon-sim score --json` of the hand-made venues) and
flat/<run>/*.json (the recorded flat), links/<seed>.json (`scripts/links-accuracy.sh`: self-calibration from the
gateways' own beacons). Every figure in the page comes from these files; the prose around the
tables says only what the figures say, computed here, so that a new run cannot leave a stale sentence behind.
"""
import json
import os
import statistics
import sys

FAMILIES = ["museum", "corridor", "gallery", "shop", "supermarket", "mixed"]
FAMILY_TEXT = {
    "museum": "rooms on a grid, doors",
    "corridor": "corridor with side rooms",
    "gallery": "L- or U-shaped row of rooms",
    "shop": "open plan, zones marked on the floor",
    "supermarket": "open plan, shelving rows",
    "mixed": "rooms off an open hall",
}


def load(path):
    try:
        with open(path) as file:
            return json.load(file)
    except FileNotFoundError:
        return None


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def pct(value):
    return "–" if value is None else f"{value * 100:.1f} %"


def pts(value):
    return "–" if value is None else f"{value * 100:+.1f}".replace("-", "−")


def num(value, digits=2):
    return "–" if value is None else f"{value:.{digits}f}"


def latency(score):
    if not score:
        return "–"
    a, b = score.get("latencyMedian"), score.get("latencyP90")
    return f"{num(a, 1)} / {num(b, 1)} s"


def acc(score):
    return None if not score else score.get("accuracy")


def away(score):
    return None if not score else score.get("awayAccuracy")


def missed_share(score):
    if not score or not score.get("trueTransitions"):
        return None
    return score["missedTransitions"] / score["trueTransitions"]


def diff(a, b):
    return None if a is None or b is None else a - b


def test_rows(root):
    report = load(os.path.join(root, "test", "bench.json"))
    return sorted(report["rows"], key=lambda row: row["seed"]) if report else []


def by_family(rows):
    """Each family that has venues, in the generator's order, then all of them: (name, rows)."""
    for family in FAMILIES + ["all"]:
        chosen = [r for r in rows if family == "all" or r["family"] == family]
        if chosen:
            yield family, chosen


def family_table(rows):
    lines = [
        "| family | venues | hub | oracle (exact map) | nominal model | baseline | hub − oracle (points) | hub − baseline (points)"
        " | hub, calibrated |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for family, chosen in by_family(rows):
        name = f"**{family}**" if family == "all" else f"{family} ({FAMILY_TEXT[family]})"
        lines.append(
            f"| {name} | {len(chosen)} | **{pct(median(acc(r['hub']) for r in chosen))}**"
            f" | {pct(median(acc(r.get('oracle')) for r in chosen))}"
            f" | {pct(median(acc(r.get('nominal')) for r in chosen))}"
            f" | {pct(median(acc(r.get('baseline')) for r in chosen))}"
            f" | {pts(median(diff(acc(r['hub']), acc(r.get('oracle'))) for r in chosen))}"
            f" | {pts(median(diff(acc(r['hub']), acc(r.get('baseline'))) for r in chosen))}"
            f" | {pct(median(acc(r.get('calibratedHub')) for r in chosen))} |")
    return "\n".join(lines)


def away_table(rows):
    lines = [
        "| family | time away from boundaries | hub | oracle | nominal model | baseline | hub − oracle (points) |",
        "|---|---|---|---|---|---|---|",
    ]
    for family, chosen in by_family(rows):
        share = median(r["hub"].get("awayShare") for r in chosen)
        lines.append(
            f"| {family} | {pct(share)} | **{pct(median(away(r['hub']) for r in chosen))}**"
            f" | {pct(median(away(r.get('oracle')) for r in chosen))}"
            f" | {pct(median(away(r.get('nominal')) for r in chosen))}"
            f" | {pct(median(away(r.get('baseline')) for r in chosen))}"
            f" | {pts(median(diff(away(r['hub']), away(r.get('oracle'))) for r in chosen))} |")
    return "\n".join(lines)


def behaviour_table(rows):
    lines = [
        "| family | false/h: hub / oracle / baseline | latency med / p90: hub | oracle | baseline"
        " | missed crossings: hub / oracle / baseline | worst hub venue (seed) |",
        "|---|---|---|---|---|---|---|",
    ]
    for family, chosen in by_family(rows):

        def m(method, key):
            return median((r.get(method) or {}).get(key) for r in chosen)

        def lat(method):
            return f"{num(m(method, 'latencyMedian'), 1)} / {num(m(method, 'latencyP90'), 1)} s"

        worst = min(chosen, key=lambda r: (r["hub"]["accuracy"], r["seed"]))
        missed = [pct(median(missed_share(r.get(method)) for r in chosen)) for method in ("hub", "oracle", "baseline")]
        lines.append(
            f"| {family} | {num(m('hub', 'falseTransitionsPerTagHour'), 1)} / "
            f"{num(m('oracle', 'falseTransitionsPerTagHour'), 1)} / "
            f"{num(m('baseline', 'falseTransitionsPerTagHour'), 1)} | {lat('hub')} | {lat('oracle')} | "
            f"{lat('baseline')} | {' / '.join(missed)} | {pct(worst['hub']['accuracy'])} ({worst['seed']}) |")
    return "\n".join(lines)


def venue_table(rows):
    lines = [
        "| seed | family | zones | gateways | hub | hub, calibrated | oracle | nominal | baseline | hub away"
        " | oracle away | false/h hub | latency hub |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['seed']} | {r['family']} | {r['zones']} | {r['gateways']} | {pct(acc(r['hub']))}"
            f" | {pct(acc(r.get('calibratedHub')))} | {pct(acc(r.get('oracle')))} | {pct(acc(r.get('nominal')))}"
            f" | {pct(acc(r.get('baseline')))} | {pct(away(r['hub']))} | {pct(away(r.get('oracle')))}"
            f" | {num(r['hub']['falseTransitionsPerTagHour'])} | {latency(r['hub'])} |")
    return "\n".join(lines)


def pooled(scores):
    """Scores taken together, weighted by their tag-hours: (tag-hours, accuracy, false changes per tag-hour)."""
    scores = [score for score in scores if score and score.get("tagHours")]
    hours = sum(score["tagHours"] for score in scores)
    if not hours:
        return None
    return (hours, sum(score["accuracy"] * score["tagHours"] for score in scores) / hours,
            sum(score["falseTransitions"] for score in scores) / hours)


def still_rows(rows):
    """Per family with still tags, then all: (family, {method: pooled})."""
    for family, chosen in by_family(rows):
        methods = {method: pooled(r.get(f"{method}Still") for r in chosen) for method in ("hub", "oracle", "baseline")}
        if methods["hub"]:
            yield family, methods


def still_table(rows):
    lines = [
        "| family | tag-hours | hub | oracle | baseline | false/h: hub / oracle / baseline |",
        "|---|---|---|---|---|---|",
    ]
    for family, m in still_rows(rows):
        def a(method):
            return pct(m[method][1]) if m[method] else "–"

        def f(method):
            return num(m[method][2], 1) if m[method] else "–"

        lines.append(
            f"| {family} | {num(m['hub'][0], 1)} | **{a('hub')}** | {a('oracle')} | {a('baseline')}"
            f" | {f('hub')} / {f('oracle')} / {f('baseline')} |")
    return "\n".join(lines)


def target_row(target, measured, met, short):
    verdict = "met" if met else f"not met: {short}"
    return f"| {target} | {measured} | {verdict} |"


def targets_section(rows, root):
    """The engine's targets (docs/inference.md) against the test set, each met or by how much not, and what the
    figures say of why."""
    if not rows:
        return ""

    def med(method, key="accuracy", chosen=rows):
        return median((r.get(method) or {}).get(key) for r in chosen)

    hub, oracle, nominal, calibrated = med("hub"), med("oracle"), med("nominal"), med("calibratedHub")
    out = [
        "## The engine's targets",
        "",
        "The targets the position engine was built to (docs/inference.md), measured on the test set above (medians"
        " over venues unless a row says otherwise). The targets on the real recordings are above, with them.",
        "",
        "| target | measured | verdict |",
        "|---|---|---|",
    ]
    why = []
    if hub is not None and oracle is not None:
        gap = oracle - hub
        out.append(target_row("uncalibrated: median accuracy within 8 points of the oracle",
                              f"hub {pct(hub)}, oracle {pct(oracle)}: {pts(-gap)} points", gap <= 0.08,
                              f"{(gap - 0.08) * 100:.1f} points short"))
        if nominal is not None:
            why.append(
                f"**Uncalibrated.** The nominal model — the same kind of position filter given the exact propagation"
                f" law (the venue's reference power, exponents and wall losses, which the hub has to guess) but not"
                f" the venue's shadowing, the gateways' gains nor the tags' powers — is itself"
                f" {(oracle - nominal) * 100:.1f} points from the oracle ({pct(nominal)}); the hub is"
                f" {abs(hub - nominal) * 100:.1f} points {'above' if hub >= nominal else 'below'} the nominal model. The gap to the oracle is what those unknowns"
                f" cost, and an uncalibrated hub has no data that tells them.")
    below_nominal = []
    for family, chosen in by_family(rows):
        if family == "all":
            continue
        h, n = med("hub", chosen=chosen), med("nominal", chosen=chosen)
        if h is not None and n is not None and h < n:
            below_nominal.append(f"{family} {pts(h - n)}")
    if below_nominal:
        why.append(
            f"**Families below the nominal model** ({len(below_nominal)} of {len(FAMILIES)}, by the points in the"
            f" table): the nominal model is given each venue's exponent and wall losses; the hub starts from"
            f" defaults (docs/inference.md, \"Settings\") and learns what the tags it hears let it.")
    out.append(target_row("uncalibrated: every family at least the nominal model",
                          "below it (points): " + ", ".join(below_nominal) if below_nominal else "none below it",
                          not below_nominal, f"{len(below_nominal)} of {len(FAMILIES)} families"))
    if calibrated is not None and oracle is not None:
        gap = oracle - calibrated
        out.append(target_row("calibrated (strolling walk): within 3 points of the oracle",
                              f"hub {pct(calibrated)}, oracle {pct(oracle)}: {pts(-gap)} points", gap <= 0.03,
                              f"{(gap - 0.03) * 100:.1f} points short"))
        gains = median(diff(acc(r.get("calibratedHub")), acc(r["hub"])) for r in rows)
        worse = [r for r in rows if r.get("calibratedHub") and r["calibratedHub"]["accuracy"] < r["hub"]["accuracy"]]
        closed = (calibrated - hub) / (oracle - hub) if oracle > hub else 0
        why.append(
            f"**Calibrated.** A strolling walk of 30 s a zone gains a median {pts(gains)} points a venue and"
            + (f" closes {closed * 100:.0f} % of the gap between the medians" if closed >= 0
               else " widens the gap between the medians")
            + f"; on {len(worse)} of {len(rows)} venues the calibrated hub is below the uncalibrated one. The"
            f" walk measures each zone at a few spots for half a minute: the residual map it fits is good near its"
            f" path and falls back to the fitted gains elsewhere, while the oracle knows every cell.")
    scored = [r for r in rows if r.get("baseline")]
    below = [r for r in scored if r["hub"]["accuracy"] < r["baseline"]["accuracy"]]
    fewer = [r for r in scored if r["hub"]["falseTransitionsPerTagHour"] < r["baseline"]["falseTransitionsPerTagHour"]]
    out.append(target_row("every venue at least the baseline's accuracy, with fewer false changes",
                          f"below the baseline on {len(below)} of {len(scored)} venues; fewer false changes on"
                          f" {len(fewer)} of {len(scored)}", not below and len(fewer) == len(scored),
                          f"{len(below)} venues below the baseline"))
    if below:
        nominal_below = [r for r in below if r.get("nominal") and r["nominal"]["accuracy"] < r["baseline"]["accuracy"]]
        why.append(
            f"**Below the baseline** on {len(below)} venues (seeds {', '.join(str(r['seed']) for r in below)}). On"
            f" {len(nominal_below)} of them the nominal model is below the baseline too: there the venue's unknowns"
            f" (a gateway's gain, the shadowing) favour the strongest gateway's zone, and a model that assumes"
            f" them away loses to the crude rule. On the other {len(below) - len(nominal_below)} the nominal model"
            f" beats the baseline: there what the hub has to guess and the nominal model is given (the exponent,"
            f" the wall losses) costs it.")
    hub_false, oracle_false = med("hub", "falseTransitionsPerTagHour"), med("oracle", "falseTransitionsPerTagHour")
    if hub_false is not None and oracle_false is not None:
        out.append(target_row("false changes per tag-hour no more than the oracle's (same decision rule)",
                              f"hub {num(hub_false, 1)}, oracle {num(oracle_false, 1)}",
                              hub_false <= oracle_false, f"{hub_false / oracle_false:.1f} times the oracle's"))
        close = [r for r in rows if r.get("oracle") and r["oracle"]["accuracy"] - r["hub"]["accuracy"] <= 0.05]
        if close:
            why.append(
                f"**False changes** follow the map's errors: on the {len(close)} venues where the hub is within 5"
                f" points of the oracle its median is {num(med('hub', 'falseTransitionsPerTagHour', close), 1)} false"
                f" changes a tag-hour against the oracle's {num(med('oracle', 'falseTransitionsPerTagHour', close), 1)}"
                f" there; over all venues {num(hub_false, 1)} against {num(oracle_false, 1)}.")
    hub_latency, oracle_latency = med("hub", "latencyMedian"), med("oracle", "latencyMedian")
    if hub_latency is not None:
        out.append(target_row("median latency ≤ 3 s", f"hub {num(hub_latency, 1)} s, oracle {num(oracle_latency, 1)} s",
                              hub_latency <= 3, f"{hub_latency - 3:.1f} s over"))
        why.append(
            f"**Latency.** With the exact map and the same decision rule the oracle takes {num(oracle_latency, 1)} s"
            f" (median over venues): the rule alone (a tick, then `confirmSeconds`) costs about 2 s of it. The"
            f" hub's {num(hub_latency, 1)} s is the oracle's plus the evidence an uncertain map needs before the"
            f" most likely zone holds `enterProbability`.")
    still = dict(still_rows(rows))
    families = [(family, m) for family, m in still.items() if family != "all"]
    if families:
        worst = min(families, key=lambda item: item[1]["hub"][1])
        flappy = max(families, key=lambda item: item[1]["hub"][2])
        met = all(m["hub"][1] >= 0.98 and m["hub"][2] <= 1 for _, m in families)
        out.append(target_row("tags standing still: ≥ 98 % and ≤ 1 false change a tag-hour in every family",
                              f"lowest family {worst[0]} {pct(worst[1]['hub'][1])}; most false changes"
                              f" {flappy[0]} {num(flappy[1]['hub'][2], 1)} a tag-hour (pooled over the family's"
                              " still tags)", met,
                              f"{(0.98 - worst[1]['hub'][1]) * 100:.1f} points and"
                              f" {flappy[1]['hub'][2] - 1:.1f} false changes a tag-hour over"))
        whole = still.get("all")
        if whole and whole.get("oracle"):
            why.append(
                f"**Still tags.** The oracle, with the exact map, places still tags {pct(whole['oracle'][1])} right"
                f" ({num(whole['oracle'][2], 1)} false changes a tag-hour); the hub {pct(whole['hub'][1])}"
                f" ({num(whole['hub'][2], 1)}). The oracle itself reaches 98 % in"
                f" {sum(1 for _, m in families if m['oracle'] and m['oracle'][1] >= 0.98)} of {len(families)}"
                f" families and at most 1 false change a tag-hour in"
                f" {sum(1 for _, m in families if m['oracle'] and m['oracle'][2] <= 1)}. A still tag that stands where the hub's map is wrong is wrong for"
                f" as long as it stands there: much of the hub's error is the map's, not flapping"
                f" (docs/inference.md, \"Tags that stand still\").")
    out += [""] + [line for sentence in why for line in (sentence, "")]
    out += [
        "Speed and memory (`beacon-bench engine`, `beacon-bench hub`) are benchmarks, not part of this run: their"
        " figures are in docs/inference.md and docs/hub.md.",
        "",
    ]
    return "\n".join(out)


def score_line(label, score, bold=False):
    if not score:
        return None
    cells = [
        pct(score.get("accuracy")), pct(score.get("awayAccuracy")), latency(score),
        num(score.get("falseTransitionsPerTagHour")),
        f"{score.get('missedTransitions')} of {score.get('trueTransitions')}", pct(score.get("noZoneShare")),
    ]
    if bold:
        label, cells = f"**{label}**", [f"**{c}**" for c in cells]
    return f"| {label} | " + " | ".join(cells) + " |"


SCORE_HEADER = (
    "| method | accuracy | away from boundaries | latency med / p90 | false/h | missed | no zone |\n"
    "|---|---|---|---|---|---|---|")


def shipped_section(root, meta):
    base = os.path.join(root, "shipped")
    if not os.path.isdir(base):
        return ""
    out = [
        "## The hand-made venues (training data)",
        "",
        "The three venues shipped in config/venues/ are the ones the engine's defaults were first tuned on, so their"
        " figures are training results: they show how the engine does where it was tuned, not what to expect"
        " elsewhere. Each run is " + meta.get("shippedDuration", "30m") + " of simulated time from `--start"
        " 1763812800`, replayed with the venue's own hub.yaml; calibrated runs use a strolling and a standing"
        " calibration walk (`beacon-sim calibration-walk`, with and without `--stroll`).",
        "",
    ]
    for name in sorted(os.listdir(base)):
        folder = os.path.join(base, name)
        score = load(os.path.join(folder, "score.json"))
        if not score:
            continue
        out += [f"**{name.replace('-', ' seed ').replace('museum seed harsh', 'museum-harsh')}**", "", SCORE_HEADER]
        rows = [
            score_line("hub", score["hub"], bold=True),
            score_line("hub, calibrated (strolling walk)", (load(os.path.join(folder, "score-stroll.json")) or {})
                       .get("hub")),
            score_line("hub, calibrated (standing walk)", (load(os.path.join(folder, "score-stand.json")) or {})
                       .get("hub")),
            score_line("baseline", score.get("baseline")),
            score_line("oracle (exact map)", score.get("oracle")),
            score_line("nominal model", score.get("nominal")),
        ]
        out += [row for row in rows if row] + [""]
    confirm = os.path.join(root, "confirm")
    if os.path.isdir(confirm) and os.listdir(confirm):
        values = sorted((float(name[:-5]), name) for name in os.listdir(confirm) if name.endswith(".json"))
        out += [
            "**The confirmation time** (`inference.confirmSeconds`) on museum seed 1 trades flapping for latency:",
            "",
            "| `confirmSeconds` | accuracy | latency med / p90 | false/h | missed |",
            "|---|---|---|---|---|",
        ]
        for value, name in values:
            hub = load(os.path.join(confirm, name))["hub"]
            label = f"{value:g}" + (" (default)" if value == 1 else "")
            out.append(
                f"| {label} | {pct(hub['accuracy'])} | {latency(hub)} | {num(hub['falseTransitionsPerTagHour'])}"
                f" | {hub['missedTransitions']} of {hub['trueTransitions']} |")
        out.append("")
    return "\n".join(out)


HALL_SPLIT = [
    "## Real data: the TETAM hall",
    "",
    "F. S. Daniş, A. T. Naskali, A. T. Cemgil and C. Ersoy's recordings of one BLE beacon carried through a 20.66 ×"
    " 17.64 m hall with twelve fixed receivers, each reception labelled with the beacon's position by a camera system"
    " (median error about 4 cm; Pervasive and Mobile Computing 81, 2022; CC0 1.0; in"
    " `data/recorded/tetam_hall_philotuxo/`). `scripts/tetam-to-sightings.py` turns each track into sighting lines"
    " (receivers sensor10 … sensor42, by their aliases in cnf/tetam.dev; two receptions of +29 and +42 dBm dropped),"
    " truth and positions. The venue `config/venues/tetam-hall.yaml` has four zones: the hall's quadrants, split at"
    " the centre of its limits (10.33, 8.82), each holding one group of three receivers; one open hall, each quadrant"
    " open to the two beside it. The beacon advertises no measured power. There is no oracle: nobody knows the hall's"
    " signal map; the reference that real data allow is a per-zone fingerprint model (naive Bayes over each"
    " receiver's level and whether it heard) trained on the training tracks, left out one walk at a time.",
    "",
    "The split, fixed before any figure of the hall was looked at:",
    "",
    "- **Training** (calibration walks; settings may be chosen by looking at them): the five straight walks,"
    " `straight_01` … `straight_05` (333 s in all). Four of them run along y ≈ 4.3 or 8.2–8.7 m, inside quadrants 1"
    " and 4 and, for the three near y = 8.5, within 1 m of the boundary with quadrants 2 and 3; `straight_03` runs"
    " along x ≈ 11.6 m through quadrants 4 and 3. Quadrant 2 is never walked: a calibration from them knows it only"
    " from the geometry. `beacon-hub calibrate` reads them end to end (`calibration/`, each gap closed to 1 s).",
    "- **Test** (reported only): `rectangular_without_rotation`, `rectangular_with_rotation` (84 s each, through all"
    " four quadrants), `zigzagging_without_rotation`, `zigzagging_with_rotation` (96–97 s, through quadrants 1, 2"
    " and 4). Scored over all moments and over the moments at least 1 m from a zone boundary.",
    "",
]

HALL_METHODS = [
    ("hub", "score.json", "hub"),
    ("hub, calibrated from the training walks", "score-calibrated.json", "hub"),
    ("… tapped as zones", "score-calibrated-zones.json", "hub"),
    ("fingerprint reference, training walks", "score-fingerprint.json", "hub"),
    ("fingerprint reference, every other track", "score-fingerprint-all.json", "hub"),
    ("strongest gateway", "score.json", "baseline"),
]


def recording_score(base, track, name, key):
    return (load(os.path.join(base, track, name)) or {}).get(key)


def pooled_scores(scores):
    """Scores of several runs as one: accuracy weighted by tag-time, away accuracy by the time away."""
    scores = [s for s in scores if s]
    hours = sum(s["tagHours"] for s in scores)
    if not scores or hours <= 0:
        return None
    result = {"accuracy": sum(s["accuracy"] * s["tagHours"] for s in scores) / hours, "tagHours": hours}
    away_hours = sum(s["tagHours"] * s["awayShare"] for s in scores if s.get("awayShare") is not None)
    if away_hours > 0:
        result["awayAccuracy"] = sum(
            s["awayAccuracy"] * s["tagHours"] * s["awayShare"] for s in scores
            if s.get("awayAccuracy") is not None) / away_hours
    return result


def both(score):
    """A cell of accuracy over all moments / away from boundaries."""
    if not score:
        return "–"
    return f"{pct(score.get('accuracy'))} / {pct(score.get('awayAccuracy'))}"


def hall_tracks(base, name):
    try:
        with open(os.path.join(base, f"{name}.txt")) as file:
            return [line.strip() for line in file if line.strip()]
    except FileNotFoundError:
        return []


def hall_section(root):
    base = os.path.join(root, "hall")
    training, test = hall_tracks(base, "training"), hall_tracks(base, "test")
    out = list(HALL_SPLIT)
    if not test:
        return "\n".join(out + ["Its figures are not in this report: scripts/accuracy.sh did not score the hall.", ""])
    methods = [m for m in HALL_METHODS if any(recording_score(base, t, m[1], m[2]) for t in test)]
    out += [
        "Each cell is the accuracy over all moments / over the moments at least 1 m from a zone boundary. *Calibrated*"
        " is `beacon-hub calibrate` on the training walks end to end with their route (`--plan`), or with each stay"
        " tapped as its zone (`--taps zones`, the calibration page's default). The *fingerprint reference*"
        " (`beacon-sim fingerprint`, docs/simulator.md) is trained on the training walks alone, the data the"
        " calibration has, and, as what the hall's labelled data allow at best, on every other track of the hall, test"
        " tracks included (the engine never sees a test track). A zone with no training data takes the pooled model"
        " of all of them: trained on the training walks, the reference knows quadrant 2 only as \"somewhere else\".",
        "",
        "**Test tracks**",
        "",
        "| track | " + " | ".join(label for label, _, _ in methods) + " |",
        "|---" * (len(methods) + 1) + "|",
    ]
    for track in test:
        out.append(f"| `{track}` | " + " | ".join(both(recording_score(base, track, n, k)) for _, n, k in methods) + " |")
    out.append("| **all test tracks, pooled by time** | " + " | ".join(
        both(pooled_scores([recording_score(base, t, n, k) for t in test])) for _, n, k in methods) + " |")
    out += [""]
    training_methods = [m for m in HALL_METHODS if any(recording_score(base, t, m[1], m[2]) for t in training)]
    if training:
        out += [
            "**Training walks** (calibrated, and the fingerprint reference on the training walks: from the other four,"
            " one walk left out at a time)",
            "",
            "| track | " + " | ".join(label for label, _, _ in training_methods) + " |",
            "|---" * (len(training_methods) + 1) + "|",
        ]
        for track in training:
            out.append(f"| `{track}` | " + " | ".join(
                both(recording_score(base, track, n, k)) for _, n, k in training_methods) + " |")
        out.append("| **all training walks, pooled by time** | " + " | ".join(
            both(pooled_scores([recording_score(base, t, n, k) for t in training])) for _, n, k in training_methods)
            + " |")
        out += [""]
    out += ["<details><summary>Every score of the hall's test tracks</summary>", ""]
    for track in test:
        out += [f"**{track}**", "", SCORE_HEADER]
        out += [row for row in (score_line(label, recording_score(base, track, n, k), bold=(label == "hub"))
                                for label, n, k in methods) if row] + [""]
    out += ["</details>", ""]
    return "\n".join(out)


def real_targets_section(root):
    """The engine's targets on the real test recordings: uncalibrated at least the strongest gateway + 5 points (all
    moments and away from boundaries); calibrated within 2 points of the fingerprint reference trained on the same
    data."""
    recordings = [("the flat, `test_robot`", os.path.join(root, "flat"), "test_robot")]
    hall = os.path.join(root, "hall")
    recordings += [(f"the hall, `{t}`", hall, t) for t in hall_tracks(hall, "test")]
    rows = []
    for label, base, run in recordings:
        hub, baseline = recording_score(base, run, "score.json", "hub"), recording_score(base, run, "score.json",
                                                                                          "baseline")
        if not hub or not baseline:
            continue
        margins = [hub["accuracy"] - baseline["accuracy"]]
        if hub.get("awayAccuracy") is not None and baseline.get("awayAccuracy") is not None:
            margins.append(hub["awayAccuracy"] - baseline["awayAccuracy"])
        worst = min(margins)
        rows.append(target_row(
            f"{label}, uncalibrated: at least the strongest gateway + 5 points, all moments and away",
            f"hub {both(hub)}, strongest gateway {both(baseline)}: " + " / ".join(pts(m) for m in margins) + " points",
            worst >= 0.05, f"{(0.05 - worst) * 100:.1f} points short"))
        calibrated = recording_score(base, run, "score-calibrated.json", "hub")
        reference = recording_score(base, run, "score-fingerprint.json", "hub")
        if calibrated and reference:
            gap = calibrated["accuracy"] - reference["accuracy"]
            rows.append(target_row(
                f"{label}, calibrated: within 2 points of the fingerprint reference trained on the same data",
                f"calibrated {pct(calibrated['accuracy'])}, reference {pct(reference['accuracy'])}: {pts(gap)} points",
                gap >= -0.02, f"{(-0.02 - gap) * 100:.1f} points short"))
    if not rows:
        return ""
    return "\n".join([
        "## The engine's targets on the real recordings",
        "",
        "Real recordings are the scoreboard: nobody on the team made them, so the engine shares no assumption with"
        " them. Default settings; calibrated from the recording's training part only.",
        "",
        "| target | measured | verdict |",
        "|---|---|---|",
    ] + rows + [""])


def flat_section(root):
    base = os.path.join(root, "flat")
    if not os.path.isdir(base):
        return ""
    out = [
        "## Real data: a recorded flat",
        "",
        "M. Kolakowski's recordings of a furnished 9 × 7 m flat with six BLE receivers (Sensors 21(18):6270, 2021,"
        " doi 10.3390/s21186270; data doi 10.5281/zenodo.5457591, CC BY 4.0; in"
        " `data/recorded/flat_ble_uwb_kolakowski/`). `scripts/kolakowski-to-sightings.py` turns each run into"
        " sighting lines (receivers rx-1 … rx-6; the authors' averaged RSSI rounded to whole dBm; pauses of over a"
        " minute between sessions closed up) and, for the robot runs (the only ones with positions), truth and the"
        " moments near a zone boundary. The venue `config/venues/flat-kolakowski.yaml` draws four rooms from the"
        " outline in layout.csv. The tag advertises no measured power. There is no oracle: nobody knows the flat's"
        " signal map.",
        "",
        "- **Training**: the calibration run (the robot, 1,375 s). Settings may be chosen by looking at it.",
        "- **Test**: `test_robot` (the robot, 352 s). Reported only. `test_walk` (a person walking) has no positions"
        " and so no truth: it is not scored.",
        "",
        "*Calibrated from the calibration run* takes the run as a plan with the robot's route (its position every"
        " third of a second). The rows below it take the same run as the calibration page would have recorded it:"
        " one tap as each of the robot's 16 stays in one zone began (`beacon-hub calibrate --taps zones|points`),"
        " marking the zone (the page's default) or the point where the stay began. The robot moves on during its"
        " stays, so the points are not where it stood.",
        "",
    ]
    for run, label in (("calibration", "calibration run (training)"), ("test_robot", "test_robot (test)")):
        score = load(os.path.join(base, run, "score.json"))
        if not score:
            continue
        out += [f"**{label}**", "", SCORE_HEADER]
        rows = [
            score_line("hub", score["hub"], bold=True),
            score_line("hub, calibrated from the calibration run",
                       (load(os.path.join(base, run, "score-calibrated.json")) or {}).get("hub")),
            score_line("… its stays tapped as zones, as the calibration page does by default",
                       (load(os.path.join(base, run, "score-calibrated-zones.json")) or {}).get("hub")),
            score_line("… its stays tapped as points where each began",
                       (load(os.path.join(base, run, "score-calibrated-points.json")) or {}).get("hub")),
            score_line("fingerprint reference, trained on the calibration run",
                       (load(os.path.join(base, run, "score-fingerprint.json")) or {}).get("hub")),
            score_line("baseline", score.get("baseline")),
        ]
        out += [row for row in rows if row] + [""]
    return "\n".join(out)


def foreign_section(root, rows, meta):
    """The test set's venues again with the foreign radio (`beacon-sim bench --radio foreign`): per family, the
    targets that concern it, and what the foreign radio costs each method over the same seeds."""
    report = load(os.path.join(root, "foreign", "bench.json"))
    if not report or not report.get("rows"):
        return None
    foreign = sorted(report["rows"], key=lambda row: row["seed"])
    count = len(foreign)
    standard = {r["seed"]: r for r in rows}
    out = [
        "## The foreign radio family",
        "",
        f"The first {count} venues of the test set again, same layouts, gateways, tags and walkers, with a radio the"
        f" engine does not model (`beacon-sim bench --venues {count} --seeds 1001..1100 --duration"
        f" {meta.get('duration', '?')} --also-calibrated --radio foreign`; docs/simulator.md, \"The foreign"
        " radio\"): Nakagami fading instead of Gaussian noise, shadowing at two scales, a field per advertising"
        " channel, receivers that differ by up to 10 dB in sensitivity and that quantise or saturate, bursts of deep"
        " fades, crowds, and tags that advertise no power. The oracle and the nominal model know the exact mean map"
        " but weigh readings with the standard noise model: here they are references, not limits.",
        "",
        family_table(foreign),
        "",
        "**Away from boundaries** (medians over venues):",
        "",
        away_table(foreign),
        "",
    ]
    paired = [(standard[r["seed"]], r) for r in foreign if r["seed"] in standard]
    if paired:
        out += [
            f"**What the foreign radio costs**, over the {len(paired)} seeds run both ways (median over venues of each"
            " venue's difference, foreign − standard, points):",
            "",
            "| method | standard radio | foreign radio | median difference (points) |",
            "|---|---|---|---|",
        ]
        for label, key in (("hub", "hub"), ("hub, calibrated", "calibratedHub"), ("oracle (exact map)", "oracle"),
                           ("nominal model", "nominal"), ("baseline", "baseline")):
            out.append(
                f"| {label} | {pct(median(acc(s.get(key)) for s, _ in paired))}"
                f" | {pct(median(acc(f.get(key)) for _, f in paired))}"
                f" | {pts(median(diff(acc(f.get(key)), acc(s.get(key))) for s, f in paired))} |")
        out.append("")
    hub, nominal = median(acc(r["hub"]) for r in foreign), median(acc(r.get("nominal")) for r in foreign)
    below = [r for r in foreign if r.get("baseline") and r["hub"]["accuracy"] < r["baseline"]["accuracy"]]
    families_below = []
    for family, chosen in by_family(foreign):
        if family == "all":
            continue
        h, n = median(acc(r["hub"]) for r in chosen), median(acc(r.get("nominal")) for r in chosen)
        if h is not None and n is not None and h < n:
            families_below.append(f"{family} {pts(h - n)}")
    calibrated = [r for r in foreign if r.get("calibratedHub")]
    costly = [r for r in calibrated if r["calibratedHub"]["accuracy"] < r["hub"]["accuracy"] - 0.01]
    out += ["| target (foreign radio) | measured | verdict |", "|---|---|---|"]
    if hub is not None and nominal is not None:
        out.append(target_row("uncalibrated: at least the nominal model (median of all venues)",
                              f"hub {pct(hub)}, nominal {pct(nominal)}: {pts(hub - nominal)} points", hub >= nominal,
                              f"{(nominal - hub) * 100:.1f} points short"))
    out.append(target_row("uncalibrated: every layout family at least the nominal model",
                          "below it (points): " + ", ".join(families_below) if families_below else "none below it",
                          not families_below, f"{len(families_below)} families"))
    out.append(target_row(f"below the baseline on at most 2 of 100 venues (here {count})",
                          f"below it on {len(below)} of {count}", len(below) * 100 <= 2 * count,
                          f"{len(below)} venues below the baseline"
                          + (f" (seeds {', '.join(str(r['seed']) for r in below)})" if below else "")))
    if calibrated:
        out.append(target_row("calibration never costs a venue more than 1 point",
                              f"costs more on {len(costly)} of {len(calibrated)}", not costly,
                              f"{len(costly)} venues"))
    out.append("")
    return "\n".join(out)


def summary_sentences(rows):
    if not rows:
        return ""
    hub = median(acc(r["hub"]) for r in rows)
    oracle = median(acc(r.get("oracle")) for r in rows)
    baseline = median(acc(r.get("baseline")) for r in rows)
    below_baseline = [r for r in rows if r.get("baseline") and r["hub"]["accuracy"] < r["baseline"]["accuracy"]]
    families_below = [
        f for f in FAMILIES
        if median(diff(acc(r["hub"]), acc(r.get("baseline"))) for r in rows if r["family"] == f) is not None
        and median(diff(acc(r["hub"]), acc(r.get("baseline"))) for r in rows if r["family"] == f) < 0
    ]
    text = (
        f"Over all {len(rows)} test venues the hub's median accuracy is {pct(hub)}, the oracle's {pct(oracle)} and"
        f" the baseline's {pct(baseline)}. The hub is below the baseline on {len(below_baseline)} of the"
        f" {len(rows)} venues")
    text += (f", and its family median is below the baseline's for: {', '.join(families_below)}."
             if families_below else ".")
    return text


def venue_rows(base):
    """The rows of `scripts/links-accuracy.sh`: BASE/<seed>.json, one JSON line per venue; [] without BASE."""
    rows = []
    if os.path.isdir(base):
        for name in sorted(os.listdir(base)):
            if name.endswith(".json"):
                with open(os.path.join(base, name)) as file:
                    rows += [json.loads(line) for line in file if line.startswith("{")]
    return rows


def links_section(base, command=None, title="the test set"):
    """Self-calibration from the gateways' links: BASE/<seed>.json, one per venue."""
    rows = venue_rows(base)
    if not rows:
        return None
    rows.sort(key=lambda r: r["seed"])
    errors = sorted(e for r in rows for e in r["gainErrors"])
    seeds = [r["seed"] for r in rows]

    def col(way):
        return [r["accuracy"][way] for r in rows]

    def mean(values):
        return sum(values) / len(values)

    off, links, true = col("off"), col("links"), col("true")
    better = sum(1 for a, b in zip(links, off) if a > b)
    worse = sum(1 for a, b in zip(links, off) if a < b)
    learn = rows[0].get("learnSeconds", 0)
    learning = all("accuracyLearning" in r for r in rows) and learn > 0

    def table_rows(label, off, links, true):
        return [
            f"| {label}, mean of venues | {pct(mean(off))} | {pct(mean(links))} | {pct(mean(true))} |"
            f" {pts(mean(links) - mean(true))} |",
            f"| {label}, median of venues | {pct(median(off))} | {pct(median(links))} | {pct(median(true))} |"
            f" {pts(median(links) - median(true))} |",
        ]

    minutes = "1 minute" if learn == 60 else f"{learn / 60:g} minutes"
    if learning:
        lcol = lambda way: [r["accuracyLearning"][way] for r in rows]
        body = table_rows(f"after {minutes} of learning", off, links, true) + table_rows(
            "the first minute, learning" if learn == 60 else f"the first {minutes}, learning", lcol("off"),
            lcol("links"), lcol("true"))
        window = (
            f" Each run lasts {minutes} longer than it is scored: the hub learns from the links for the first"
            f" {minutes} (self-calibration in 30 simulated minutes), and the three ways are scored over the"
            f" time after it, as a hub that has been running places tags; the first {minutes}, while it learns, are"
            " scored too (the second pair of rows). The gain errors are the last fit's, over the last 30 minutes of"
            " links.")
    else:
        body = table_rows("whole run", off, links, true)
        window = ""
    out = [
        "## Self-calibration from the gateways' links",
        "",
        f"{len(rows)} venues of {title} (seeds {min(seeds)}–{max(seeds)}), every gateway advertising its own beacon"
        " every 200 ms (`beacon-sim venue --random --gateway-beacons`, `beacon-sim run --gateway-beacons`; receive"
        " gains drawn within ±6 dB, transmitters off their nominal power by σ 2 dB, walls of unknown loss), each run"
        " replayed three ways through `beacon-hub replay`: the engine with the venue file alone (`linkFitSeconds: 0`),"
        " the default (the links fitted every 5 minutes over the last 30 and the gains applied live), and the same"
        " engine given the simulator's true gains (a calibration of offsets only)." + window + " "
        + (f"Command: `{command}`." if command else "Command: `scripts/links-accuracy.sh` (scripts/accuracy.sh runs it)."),
        "",
        "| | venue file alone | links applied | true gains | links − true |",
        "|---|---|---|---|---|",
        *body,
        "",
        f"Links applied did better than the venue file alone in {better} venues and worse in {worse}"
        + (" (after learning). " if learning else ". ")
        + (f"The last fit's gains (both sides summing to 0) were off by a median of {errors[len(errors) // 2]:.2f} dB"
           f" over {len(errors)} gateways (90th percentile {errors[len(errors) * 9 // 10]:.2f} dB); the target"
           " is 1.5 dB." if errors else "No fit was made (runs shorter than the first fit's 5 minutes)."),
        "",
        "Issue 22's target, accuracy within 2 points of the same engine given the true gains"
        + (f" after {minutes} of learning: " if learning else ": ")
        + "; ".join(f"{'met' if gap >= -0.02 else 'not met'} on the {stat} of venues ({pts(gap)})"
                    for stat, gap in (("mean", mean(links) - mean(true)), ("median", median(links) - median(true))))
        + ".",
        "",
        "<details><summary>Every venue</summary>",
        "",
        "| seed | gateways | venue file alone | links applied | true gains | median gain error |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        e = sorted(r["gainErrors"])
        out.append(
            f"| {r['seed']} | {r['gateways']} | {pct(r['accuracy']['off'])} | {pct(r['accuracy']['links'])} |"
            f" {pct(r['accuracy']['true'])} | {e[len(e) // 2]:.2f} dB |" if e else
            f"| {r['seed']} | {r['gateways']} | {pct(r['accuracy']['off'])} | {pct(r['accuracy']['links'])} |"
            f" {pct(r['accuracy']['true'])} | – |")
    out += ["", "</details>", ""]
    if all("walk" in r["accuracy"] and "walkLinks" in r["accuracy"] for r in rows):
        out += walk_rows(rows, learning)
    return "\n".join(out)


def walk_rows(rows, learning):
    """The phone walk on top of the links (`scripts/links-accuracy.sh --phone-walk S`): the rows' `walk` and
    `walkLinks` ways beside the others."""
    def col(way):
        return [r["accuracy"][way] for r in rows]

    def mean(values):
        return sum(values) / len(values)

    ways = [("venue file alone", "off"), ("links applied", "links"), ("phone walk", "walk"),
            ("phone walk and links", "walkLinks"), ("true gains", "true")]
    walk, both, links = col("walk"), col("walkLinks"), col("links")
    return [
        "**A phone walk as well.** The same runs replayed twice more, after a phone walk through the same radio"
        + (" that strolls round each zone and taps it, as the calibration page asks by default (`beacon-sim"
           " calibration-walk --dwell S --stroll`, then `beacon-hub calibrate --taps zones`"
           if all(r.get("walkTaps") == "zones" for r in rows) else
           " that stands at a tapped point in each zone (`beacon-sim calibration-walk --dwell S`, then `beacon-hub"
           " calibrate --taps points`")
        + ", as the page computes it): the walk's calibration with the links off (gateways that do not advertise), and"
        " with the links applied as well (what a hub whose gateways advertise does once someone has walked)"
        + (", scored over the same time after learning." if learning else "."),
        "",
        "| | " + " | ".join(name for name, _ in ways) + " | walk and links − walk |",
        "|---|" + "---|" * (len(ways) + 1),
        "| mean of venues | " + " | ".join(pct(mean(col(way))) for _, way in ways)
        + f" | {pts(mean(both) - mean(walk))} |",
        "| median of venues | " + " | ".join(pct(median(col(way))) for _, way in ways)
        + f" | {pts(median(both) - median(walk))} |",
        "",
        f"The walk and the links together did better than the walk alone in {sum(1 for a, b in zip(both, walk) if a > b)}"
        f" venues and worse in {sum(1 for a, b in zip(both, walk) if a < b)}; better than the links alone in"
        f" {sum(1 for a, b in zip(both, links) if a > b)} and worse in {sum(1 for a, b in zip(both, links) if a < b)}.",
        "",
        "<details><summary>Every venue, with the walk</summary>",
        "",
        "| seed | gateways | " + " | ".join(name for name, _ in ways) + " |",
        "|---|---|" + "---|" * len(ways),
        *(f"| {r['seed']} | {r['gateways']} | " + " | ".join(pct(r["accuracy"][way]) for _, way in ways) + " |"
          for r in rows),
        "",
        "</details>",
        "",
    ]


def gains_section(base, command=None, title="the test set"):
    """The links' fit alone, on many venues (`scripts/links-accuracy.sh --gains-only`): BASE/<seed>.json, one per
    venue, with gain errors and no accuracy."""
    rows = venue_rows(base)
    rows = [r for r in rows if r["gainErrors"]]
    if not rows:
        return None
    seeds = [r["seed"] for r in rows]
    errors = sorted(e for r in rows for e in r["gainErrors"])

    def quantile(values, q):
        return values[min(len(values) - 1, int(len(values) * q))]

    def line(label, chosen, keep=lambda gain: True):
        """A row of the table: the gateways of the `chosen` venues that `keep` takes (by their per-gateway entry)."""
        if all("gains" in r for r in chosen):
            picked = [(r, g) for r in chosen for g in r["gains"].values() if keep(g)]
            pooled = sorted(abs(g["error"]) for _, g in picked)
            bias = f"{median([g['error'] for _, g in picked]):+.2f} dB".replace("-", "−") if picked else "–"
            venues = len({r["seed"] for r, _ in picked})
        else:
            pooled, bias, venues = sorted(e for r in chosen for e in r["gainErrors"]), "–", len(chosen)
        if not pooled:
            return None
        within = sum(1 for e in pooled if e <= 1.5) / len(pooled)
        return (f"| {label} | {venues} | {len(pooled)} | {median(pooled):.2f} dB | {quantile(pooled, 0.9):.2f} dB |"
                f" {100 * within:.0f} % | {bias} |")

    groups = [("all", rows, None), ("up to 8 gateways", [r for r in rows if r["gateways"] <= 8], None),
              ("9 to 16 gateways", [r for r in rows if 9 <= r["gateways"] <= 16], None),
              ("over 16 gateways", [r for r in rows if r["gateways"] > 16], None)]
    if all("gains" in r for r in rows):
        groups += [("gateways without a directional antenna", rows, lambda g: g["frontToBackDB"] == 0),
                   ("with one (front-to-back 3–10 dB)", rows, lambda g: 0 < g["frontToBackDB"] <= 10),
                   ("with one (front-to-back over 10 dB)", rows, lambda g: g["frontToBackDB"] > 10)]
    return "\n".join([
        f"**The fit alone, on {len(rows)} venues of {title}** (seeds {min(seeds)}–{max(seeds)}): the same venues with"
        " their tags left out, 30 simulated minutes of the gateways' beacons, the last fit's gains (both sides summing"
        " to 0) against the true ones; the bias is the median of fitted − true. "
        + (f"Command: `{command}`." if command else
           "Command: `scripts/links-accuracy.sh BIN OUT SEED… --gains-only` (scripts/accuracy.sh runs it on every"
           " test venue)."),
        "",
        "| | venues | gateways | median error | 90th percentile | within 1.5 dB | bias |",
        "|---|---|---|---|---|---|---|",
        *[row for label, chosen, keep in groups if (row := line(label, chosen, *([keep] if keep else [])))],
        "",
        f"Issue 22's target is a median error of 1.5 dB: {'met' if median(errors) <= 1.5 else 'not met'} here.",
        "",
    ])


def map_limits(path):
    """`scripts/map-limits.sh`'s venues (its JSON lines; the summary lines after them are left out), by seed."""
    try:
        with open(path) as file:
            rows = [json.loads(line) for line in file if line.startswith("{")]
    except FileNotFoundError:
        return {}
    return {row["seed"]: row for row in rows}


# scripts/map-limits.sh's maps, best first after the walk's own: (key, what the hub is given).
LIMIT_MAPS = [("calibrated", "the strolling walk's calibration (replayed)"),
              ("engineZoneMeanMap", "the hub's geometry with each zone's exact level"),
              ("zoneMeanMap", "the true geometry with each zone's mean shadowing"),
              ("unshadowedMap", "the true geometry, no shadowing"),
              ("exactMap", "the exact map")]


def limits_paragraph(limits, walk_rows):
    """What a walk by zones can reach: the strolling walk's runs replayed with scripts/map-limits.sh's maps, against
    the oracle and against the walk. `limits` by seed, with every venue of `walk_rows` (the strolling bench's rows)
    and its oracle."""
    rows = [limits[r["seed"]] for r in walk_rows]
    mean = statistics.mean
    bench = {r["seed"]: acc(r.get("calibratedHub")) for r in walk_rows}
    same = sum(1 for row in rows if bench.get(row["seed"]) is not None
               and abs(row["calibrated"] - bench[row["seed"]]) < 1e-9)
    lines = ["", "**What a walk by zones can reach.** The strolling walk learns one level per zone and gateway. To see"
             " what that can teach at best, `scripts/map-limits.sh` replays each of its runs with the walk's"
             " calibration (which gives the hub's path-loss exponent at the end) and with three maps of the run's"
             " radio (`beacon-sim radio-map --shadowing engine-zone-mean|zone-mean|none`): the hub's own geometry at"
             " that exponent plus each zone's mean difference of the exact map to it (what this hub would learn from"
             " a walk that measured each zone's level exactly); the true geometry with each zone's shadowing averaged"
             " over the zone; and the true geometry without shadowing. The replay of the walk's calibration gives the"
             f" bench's own figure on {same} of {len(rows)} venues.",
             "",
             "| the hub given | venues | mean | median | − oracle (median of venues' differences, points)"
             " | within 2 points of the oracle | strolling walk − it (points) |",
             "|---|---|---|---|---|---|---|"]
    for key, label in LIMIT_MAPS:
        values = [row[key] for row in rows]
        gap = median(row[key] - row["oracle"] for row in rows)
        near = sum(1 for row in rows if row[key] - row["oracle"] >= -0.02)
        walk = "—" if key == "calibrated" else pts(median(row["calibrated"] - row[key] for row in rows))
        lines.append(f"| {label} | {len(rows)} | {pct(mean(values))} | {pct(median(values))} | {pts(gap)}"
                     f" | {near} of {len(rows)} | {walk} |")
    oracle = [row["oracle"] for row in rows]
    lines.append(f"| the oracle | {len(rows)} | {pct(mean(oracle))} | {pct(median(oracle))} | — | — | — |")
    best = median(row["engineZoneMeanMap"] - row["oracle"] for row in rows)
    walk = median(row["calibrated"] - row["engineZoneMeanMap"] for row in rows)
    lines += ["", f"So with each zone's level exactly right this hub is {pts(best)} points from the oracle (median of"
              f" venues' differences), {'within' if best >= -0.02 else 'not within'} 2 points of it: that is as near as"
              f" a walk by zones can bring it. The strolling walk is {pts(walk)} points from that limit; the rest of"
              " its gap to the oracle is the shadowing within the zones, which a walk that says only which zone it is"
              " in cannot teach, and the engine's own loss with the exact map."]
    return lines


def phone_section(paths, command=None, title="the test set", limits=None):
    """Calibrated from a phone walk: `beacon-sim bench --also-calibrated --phone-walk S [--phone-stroll]
    --json` reports, one per way of walking: [(label, path)]; `limits`, scripts/map-limits.sh's output on the
    strolling walk's bench folder, when there is one."""
    walks = [(label, load(path)) for label, path in paths]
    walks = [(label, report, sorted(report["rows"], key=lambda row: row["seed"]))
             for label, report in walks if report and report.get("rows")]
    if not walks:
        return None
    rows = walks[0][2]
    seeds = [r["seed"] for r in rows]
    # The oracle that knows all but the shadowing field (benches since 2026-11-27 write it): a reference for walks.
    shade = all(r.get("unshadowed") for r in rows)
    # The hub given each run's exact radio map (`--exact-map`, benches since 2026-11-28), the limit of calibrating:
    # the same runs in every walk's bench, so taken from whichever bench wrote it.
    exact = {}
    for _, _, walk_rows in walks:
        exact.update({r["seed"]: acc(r["exactMapHub"]) for r in walk_rows if r.get("exactMapHub")})
    exact = exact if all(r["seed"] in exact for r in rows) else {}

    # scripts/map-limits.sh on the strolling walk's bench: only when it has every venue of that walk and the oracle.
    strolling = next((walk_rows for label, _, walk_rows in walks if label == "strolling"), [])
    limited = map_limits(limits) if limits else {}
    if not strolling or not all(r["seed"] in limited and "oracle" in limited[r["seed"]] for r in strolling):
        limited = {}

    def mean(values):
        values = [v for v in values if v is not None]
        return sum(values) / len(values) if values else None

    lines = [
        "## Calibrated from a phone walk",
        "",
        f"{len(rows)} venues of {title} (seeds {min(seeds)}–{max(seeds)}), each calibrated from a phone walk with one"
        " tap a zone (or, strolling with points, a tap every 5 s), computed with the calibration page's code"
        " (`beacon-sim calibration-walk --dwell S [--stroll]`, then `beacon-hub calibrate --taps points|zones|route`,"
        " which turns the walk's stops into the page's taps): "
        + "; ".join(f"**{label}**: {report.get('walk', '?')}" for label, report, _ in walks)
        + ". Each scored over the same run as the uncalibrated hub and the oracle. "
        + (f"Command: `{command}`." if command else
           "Command: scripts/accuracy.sh (`--phone-venues`, `--phone-seconds`)."),
        "",
        "| family | venues | hub, uncalibrated | " + " | ".join(f"hub, {label}" for label, _, _ in walks)
        + (" | oracle without shadowing" if shade else "") + (" | hub, exact map" if exact else "")
        + " | oracle | " + " | ".join(f"{label} − oracle (points)" for label, _, _ in walks) + " |",
        "|---|---|---|" + "---|" * (2 * len(walks) + 1 + shade + bool(exact)),
    ]
    for family, chosen in by_family(rows):
        name = f"**{family}**" if family == "all" else family
        seeds_of = {r["seed"] for r in chosen}
        cells = []
        gaps = []
        for _, _, walk_rows in walks:
            mine = [r for r in walk_rows if r["seed"] in seeds_of]
            cells.append(pct(median(acc(r.get("calibratedHub")) for r in mine)))
            gaps.append(pts(median(diff(acc(r.get("calibratedHub")), acc(r.get("oracle"))) for r in mine)))
        lines.append(
            f"| {name} | {len(chosen)} | {pct(median(acc(r['hub']) for r in chosen))} | " + " | ".join(cells)
            + (f" | {pct(median(acc(r.get('unshadowed')) for r in chosen))}" if shade else "")
            + (f" | {pct(median(exact[r['seed']] for r in chosen))}" if exact else "")
            + f" | {pct(median(acc(r.get('oracle')) for r in chosen))} | " + " | ".join(gaps) + " |")
    hub = [acc(r["hub"]) for r in rows]
    oracle = [acc(r.get("oracle")) for r in rows]
    lines += ["", f"Means of venues: uncalibrated {pct(mean(hub))}, oracle {pct(mean(oracle))}"]
    targets = ["", "| target | measured | verdict |", "|---|---|---|"]
    for label, _, walk_rows in walks:
        phone = {r["seed"]: acc(r.get("calibratedHub")) for r in walk_rows}
        worse = sum(1 for r in rows if phone.get(r["seed"]) is not None and phone[r["seed"]] < acc(r["hub"]))
        lines[-1] += (f"; {label} {pct(mean(phone.values()))}, below the uncalibrated hub on {worse} of"
                      f" {len(walk_rows)} venues")
        # Against the oracle, and (where the bench wrote it) against what a walk can reach: the oracle that knows
        # all of the radio but the shadowing field.
        # Each reference: (the row's target, the reference's accuracy on a venue's row).
        references = [(f"a phone walk of ≤ 60 s a zone ({label}): within 2 points of the oracle",
                       lambda r: acc(r.get("oracle")))]
        if shade:
            references.append((f"the same ({label}) against the oracle without shadowing",
                               lambda r: acc(r.get("unshadowed"))))
        if exact:
            references.append((f"the same ({label}) against the same engine given the exact map",
                               lambda r: exact.get(r["seed"])))
        if label == "strolling" and limited:
            references.append((f"the same ({label}) against the same engine given each zone's exact level (what a"
                               " walk by zones can reach: `scripts/map-limits.sh`)",
                               lambda r: limited[r["seed"]]["engineZoneMeanMap"]))
        for target, reference in references:
            gap = median(diff(phone.get(r["seed"]), reference(r)) for r in rows)
            targets.append(target_row(
                f"{target} (median of venues' differences)", f"{pts(gap)} points", gap is not None and gap >= -0.02,
                f"{(-gap - 0.02) * 100:.1f} points short" if gap is not None else "no figure"))
    lines[-1] += "."
    if shade:
        unshadowed = {r["seed"]: acc(r.get("unshadowed")) for r in rows}
        lines += ["", "**Without the shadowing.** The oracle without shadowing is the same filter as the oracle, given"
                  " all the run's radio but its static shadowing field (each gateway's gain and antenna, the walls'"
                  " losses, each tag's power; the field's spread as noise: `beacon-sim run --unshadowed-oracle`): roughly"
                  " what a calibration could reach that measured all of that exactly but not the field between the"
                  " places it walked — a reference, not a bound, since it takes the static field for noise independent"
                  " from packet to packet (below the nominal model on"
                  f" {sum(1 for r in rows if (diff(acc(r.get('unshadowed')), acc(r.get('nominal'))) or 0) < 0)}"
                  f" of {len(rows)} venues). Median of venues' differences to it: oracle"
                  f" {pts(median(diff(acc(r.get('oracle')), unshadowed[r['seed']]) for r in rows))} points; "
                  + "; ".join(
                      f"{label} {pts(median(diff(acc(r.get('calibratedHub')), unshadowed.get(r['seed'])) for r in walk_rows))}"
                      for label, _, walk_rows in walks)
                  + " points."]
    if exact:
        oracle_of = {r["seed"]: acc(r.get("oracle")) for r in rows}
        engine_gap = median(diff(exact[seed], oracle_of[seed]) for seed in exact)

        def walk_gap(walk_rows):
            return median(diff(acc(r.get("calibratedHub")), exact.get(r["seed"])) for r in walk_rows)
        lines += ["", "**The engine's own limit.** The same runs replayed once more with the hub given each run's exact"
                  " radio map (`beacon-sim radio-map`, `beacon-sim bench --exact-map`): every gateway's mean level at"
                  " every cell, shadowing, gains, antennas and walls included, as a calibration file's `map`. No walk"
                  " can teach the engine more than that, so it is the limit of calibrating; the tags' own powers stay"
                  " unknown to it, as to every hub. Median of venues: the hub given the exact map"
                  f" {pct(median(exact.values()))}; its difference to the oracle"
                  f" {pts(engine_gap)} points (what the engine loses with a"
                  " perfect map: its filter's approximations and the tags' powers); "
                  + "; ".join(
                      f"{label} − exact map {pts(walk_gap(walk_rows))}" for label, _, walk_rows in walks)
                  + " points (what the walk leaves of the map unlearned)."]
    if limited:
        lines += limits_paragraph(limited, strolling)
    return "\n".join(lines + targets + [""])


def command_line(command):
    """The command that wrote the page, as it was typed; a default run says so."""
    command = " ".join(command.split()) or "scripts/accuracy.sh"
    if command == "scripts/accuracy.sh":
        return f"{command}   # every default: the whole test set, the hand-made venues, the flat, the links, the walks"
    return command


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: scripts/accuracy-report.py DIR > docs/accuracy.md")
    root = sys.argv[1]
    meta = load(os.path.join(root, "meta.json")) or {}
    rows = test_rows(root)
    minutes = meta.get("seconds", 0) / 60
    parts = [
        "# Accuracy",
        "",
        "<!-- Written by scripts/accuracy.sh (scripts/accuracy-report.py); edit those, not this file. -->",
        "",
        "How well the hub's zone engine ([inference.md](inference.md)) places tags, measured against ground truth,"
        " beside the limit and the floor: the **oracle**, a filter over the tag's position that knows the venue's"
        " exact signal map and noise (no method can do much better); the **nominal model**, the same filter knowing"
        " only the propagation law (what a well-built engine can reach without calibration); and the **baseline**,"
        " the strongest gateway's zone (what ESPresense with Home Assistant's mqtt_room does, roughly). All of it was"
        " produced by one command:",
        "",
        "```sh",
        command_line(meta.get("command", "")),
        "```",
        "",
        f"This page: commit {meta.get('commit', '?')}, {meta.get('date', '?')}, {minutes:.1f} minutes on"
        f" {meta.get('cores', '?')} cores (release build, not counted: {meta.get('buildSeconds', 0) / 60:.1f}"
        " minutes).",
        "",
        "Metrics (docs/simulator.md): **accuracy** — share of tag-time the reported zone is the true one; **away from"
        " boundaries** — the same over the moments the tag is at least 1 m from every zone boundary it could reach"
        " (near a doorway or a line on the floor no BLE method can be sure); **latency** — median / p90 from a true"
        " crossing to the decision; **false/h** — reported changes into a zone the tag was not in, per tag-hour;"
        " **missed** — true crossings never reported; **no zone** — time with no zone reported while the tag was in"
        " one.",
        "",
        "## Training and test venues",
        "",
        "Defaults are tuned on one set of data and reported on another, so that the figures say how the hub does on"
        " venues nobody tuned it for. The seed sets are constants in the code (`Bench.trainingSeeds`,"
        " `Bench.testSeeds` in Sources/Simulator/Bench.swift; a test keeps them disjoint) and `beacon-sim bench`"
        " (docs/simulator.md) prints which set its seeds belong to:",
        "",
        "- **Training set**: random venues of seeds **1–100** (`beacon-sim bench --seeds 1..100`), the hand-made"
        " venues of config/venues/, and, of the recordings, the Kolakowski flat's calibration run and the TETAM hall's"
        " five straight walks. Look at these to"
        " choose a default, a setting or a model change.",
        "- **Test set**: random venues of seeds **1001–1100** (`--seeds 1001..1100`) and the recorded test runs (the"
        " flat's `test_robot` and `test_walk`, the hall's rectangular and zigzagging tracks). Run them only to report"
        " a result. Never choose a setting, keep or"
        " drop a change, or pick between candidates by looking at test figures; a change made after seeing them"
        " needs a new, unseen test set.",
        "",
    ]
    parts += [real_targets_section(root), flat_section(root), hall_section(root)]
    if rows:
        parts += [
            "## The test set, per family",
            "",
            f"{'All' if meta.get('venues') == 100 else 'The first'} {meta.get('venues', '?')} venues of seeds"
            f" 1001–1100 (`beacon-sim bench --venues {meta.get('venues', '?')} --seeds 1001..1100 --duration"
            f" {meta.get('duration', '?')} --also-calibrated`; the seed draws the family), default settings,"
            f" {meta.get('duration', '?')} of simulated time each. Medians over the family's venues of each venue's"
            " accuracy; \"hub, calibrated\" is the hub given a calibration from a strolling walk through the same"
            " venue (same seed, `beacon-sim calibration-walk --stroll`).",
            "",
            family_table(rows),
            "",
            summary_sentences(rows),
            "",
            "**Away from boundaries** (medians over venues):",
            "",
            away_table(rows),
            "",
            "**Flapping, latency and misses** (medians over venues of each venue's figure):",
            "",
            behaviour_table(rows),
            "",
            "**Tags that stand still** (the venues' carrier-still tags, pooled over each family's venues by tag-hours:"
            " a venue has one to six):",
            "",
            still_table(rows),
            "",
            "<details><summary>Every test venue</summary>",
            "",
            venue_table(rows),
            "",
            "</details>",
            "",
        ]
    parts += [foreign_section(root, rows, meta), targets_section(rows, root), shipped_section(root, meta),
              links_section(os.path.join(root, "links")), gains_section(os.path.join(root, "gains")),
              phone_section([("standing", os.path.join(root, "phone", "bench.json")),
                             ("strolling", os.path.join(root, "phone", "bench-stroll.json")),
                             ("strolling, points", os.path.join(root, "phone", "bench-stroll-points.json"))],
                            limits=os.path.join(root, "phone", "map-limits.txt"))]
    print("\n".join(part for part in parts if part is not None).rstrip() + "\n")


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "--phone-only":
        # The phone walk's section alone:
        # --phone-only STANDING.json[,STROLLING.json[,STROLLING-POINTS.json]] "the test set" [COMMAND…]
        print(phone_section(list(zip(["standing", "strolling", "strolling, points"], sys.argv[2].split(","))),
                            command=" ".join(sys.argv[4:]) or None, title=sys.argv[3]))
    elif len(sys.argv) >= 4 and sys.argv[1] == "--links-only":
        # The links section alone, for a run of scripts/links-accuracy.sh outside scripts/accuracy.sh:
        # --links-only DIR "training set"|"the test set" [COMMAND…]
        print(links_section(sys.argv[2], command=" ".join(sys.argv[4:]) or None, title=sys.argv[3]))
    elif len(sys.argv) >= 4 and sys.argv[1] == "--gains-only":
        # The fit alone: --gains-only DIR "training set"|"the test set" [COMMAND…]
        print(gains_section(sys.argv[2], command=" ".join(sys.argv[4:]) or None, title=sys.argv[3]))
    else:
        main()
