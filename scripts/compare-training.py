#!/usr/bin/env python3
"""Replays kept bench venues through beacon-hub with extra inference settings and prints medians per family beside
the oracle, the nominal reference and the baseline of the same runs. For choosing settings on TRAINING venues only:

    beacon-sim bench --venues 36 --seeds 1..100 --duration 10m --also-calibrated --out /tmp/train/venues
    python3 scripts/compare-training.py NAME 'method: position; readingWeight: 0.8' --venues /tmp/train/venues

NAME names the hub-NAME.yaml and events-NAME.jsonl written into each venue's folder; the settings are `;`-separated
lines of hub.yaml's `inference:` section (`{n}` stands for the venue's true path-loss exponent, for experiments).
--calibrated starts from hub-calibrated.yaml. Binaries: $BIN (default .build/release). Results: /tmp/compare-NAME.json.
"""
import json, os, re, subprocess, sys, statistics
from concurrent.futures import ThreadPoolExecutor
name = sys.argv[1]; extra = sys.argv[2]
root = '/tmp/train/venues'; calibrated = '--calibrated' in sys.argv
if '--venues' in sys.argv: root = sys.argv[sys.argv.index('--venues') + 1]
binary = os.environ.get('BIN', os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '.build', 'release'))
dirs = sorted(d for d in os.listdir(root) if d.startswith('seed-'))
def one(d):
    path = os.path.join(root, d)
    base = open(os.path.join(path, 'hub-calibrated.yaml' if calibrated else 'hub.yaml')).read()
    venue_text = open(os.path.join(path, 'venue.yaml')).read()
    n = re.search(r'pathLossExponent: ([0-9.]+)', venue_text).group(1)
    lines = [l.strip().replace('{n}', n) for l in extra.split(';') if l.strip()]
    text = base + ('inference:\n' + ''.join('  ' + l + '\n' for l in lines) if lines else '')
    hub = os.path.join(path, f'hub-{name}.yaml'); open(hub, 'w').write(text)
    events = os.path.join(path, f'events-{name}.jsonl')
    r = subprocess.run([f'{binary}/beacon-hub', 'replay', '--config', hub, os.path.join(path, 'run/sightings.jsonl'), '--events', events], capture_output=True, text=True)
    if r.returncode: return d, None, r.stderr[-500:]
    r = subprocess.run([f'{binary}/beacon-sim', 'score', '--venue', os.path.join(path, 'venue.yaml'), '--truth', os.path.join(path, 'run/truth.jsonl'), '--near-boundary', os.path.join(path, 'run/near-boundary.jsonl'), '--json', '--events', events], capture_output=True, text=True)
    if r.returncode: return d, None, r.stderr[-500:]
    s = json.loads(r.stdout)['hub']
    o = json.loads(open(os.path.join(path, 'score-oracle.out')).read())['hub']
    n = json.loads(open(os.path.join(path, 'score-nominal.out')).read())['hub']
    b = json.loads(open(os.path.join(path, 'score.out')).read())['baseline']
    fam = re.search(r'family (\w+)', open(os.path.join(path, 'venue.yaml')).readline()).group(1)
    return d, dict(fam=fam, acc=s['accuracy'], ft=s['falseTransitionsPerTagHour'], lat=s.get('latencyMedian', 99), o=o['accuracy'], n=n['accuracy'], b=b['accuracy'], of=o['falseTransitionsPerTagHour']), None
jobs = int(sys.argv[sys.argv.index('--jobs') + 1]) if '--jobs' in sys.argv else 2
with ThreadPoolExecutor(jobs) as ex: results = list(ex.map(one, dirs))
rows = [r for _, r, e in results if r]
for d, r, e in results:
    if e: print('ERROR', d, e)
med = lambda xs: statistics.median(xs) * 100
fams = sorted(set(r['fam'] for r in rows))
print(f'{name} [{extra}] {"calibrated" if calibrated else ""}')
print(f'{"family":12} {"n":>3} {"hub":>6} {"oracle":>6} {"nomin":>6} {"base":>6} {"h-o":>6} {"h-b":>6} {"<b":>3} {"ft/h":>5} {"o ft":>5} {"lat":>5}')
for f in fams + ['ALL']:
    rs = [r for r in rows if f == 'ALL' or r['fam'] == f]
    print(f'{f:12} {len(rs):3} {med([r["acc"] for r in rs]):6.1f} {med([r["o"] for r in rs]):6.1f} {med([r["n"] for r in rs]):6.1f} {med([r["b"] for r in rs]):6.1f} {med([r["acc"]-r["o"] for r in rs]):6.1f} {med([r["acc"]-r["b"] for r in rs]):6.1f} {sum(r["acc"]<r["b"] for r in rs):3} {statistics.median([r["ft"] for r in rs]):5.1f} {statistics.median([r["of"] for r in rs]):5.1f} {statistics.median([r["lat"] for r in rs]):5.1f}')
json.dump({d: r for d, r, e in results}, open(f'/tmp/compare-{name}.json', 'w'))
