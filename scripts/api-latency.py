#!/usr/bin/env python3
"""Response times of the hub's HTTP API, as a user's script sees them: each endpoint requested N times over one
keep-alive connection, printing median, p95, p99 and max in milliseconds, and the body size.

Usage: scripts/api-latency.py [BASE_URL] [N]   (default http://127.0.0.1:8080, 200)
Run it beside `make demo` to measure under the demo's load. BEACONTRACKER_TOKEN is sent as a bearer token if set.
"""
import http.client
import json
import os
import statistics
import sys
import time
import urllib.parse

base = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8080"
count = int(sys.argv[2]) if len(sys.argv) > 2 else 200
url = urllib.parse.urlparse(base)
headers = {}
if os.environ.get("BEACONTRACKER_TOKEN"):
    headers["Authorization"] = "Bearer " + os.environ["BEACONTRACKER_TOKEN"]

now = int(time.time())
endpoints = [
    "/health/ready",
    "/api/venue",
    "/api/tags",
    "/api/occupancy",
    f"/api/occupancy?at={now - 30}",
    f"/api/occupancy/series?since={now - 3600}&until={now}&step=60",
    "/api/dwell?by=zone",
    "/api/dwell?by=hour-of-day",
    "/api/routes?top=10&length=3",
    "/api/events?limit=100",
    "/api/regions/visitors/state",
    "/metrics",
]

connection = http.client.HTTPConnection(url.hostname, url.port or 80, timeout=30)
# A tag that exists, for its path.
connection.request("GET", "/api/tags", headers=headers)
tags = json.loads(connection.getresponse().read()).get("tags", [])
# The path of a tag inside a zone (it has visits), else of any tag.
inside = [t["tag"] for t in tags if t.get("state") == "inside"] or [t["tag"] for t in tags]
if inside:
    endpoints.insert(3, f"/api/tags/{urllib.parse.quote(inside[0])}/path")

print(f"{'endpoint':58} {'median':>8} {'p95':>8} {'p99':>8} {'max':>8} {'bytes':>8}")
for endpoint in endpoints:
    times = []
    size = 0
    for _ in range(count):
        started = time.perf_counter()
        connection.request("GET", endpoint, headers=headers)
        response = connection.getresponse()
        data = response.read()
        times.append((time.perf_counter() - started) * 1000)
        size = len(data)
        if response.status != 200:
            print(f"{endpoint}: HTTP {response.status}: {data[:200]!r}", file=sys.stderr)
            break
    times.sort()
    def pick(q):
        return times[min(len(times) - 1, int(q * len(times)))]
    print(f"{endpoint[:58]:58} {statistics.median(times):8.2f} {pick(0.95):8.2f} {pick(0.99):8.2f} "
          f"{times[-1]:8.2f} {size:8d}")
