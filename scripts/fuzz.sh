#!/usr/bin/env bash
# Fuzzes the advertisement / HCI / btsnoop parsers and the hub's payload decoding with libFuzzer for a fixed time
# (default 300 s): scripts/fuzz.sh [SECONDS]. Compiled with swiftc directly, since `swift build -sanitize=fuzzer` does
# not link under SwiftPM on Linux. New coverage is merged into Tests/Fuzz/corpus (kept in git); crashing inputs go
# to Tests/Fuzz/crashes, which `swift test` replays (FuzzRegressionTests). Prints executions and crashes.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-300}
build=.build/fuzz
mkdir -p "$build" Tests/Fuzz/corpus Tests/Fuzz/crashes
flags=(-O -sanitize=fuzzer,address -parse-as-library -swift-version 6)

echo "fuzz: building (swiftc -sanitize=fuzzer,address)…"
swiftc "${flags[@]}" -emit-module -emit-library -static -module-name BeaconModel \
  -emit-module-path "$build/BeaconModel.swiftmodule" -o "$build/libBeaconModel.a" Sources/BeaconModel/*.swift
swiftc "${flags[@]}" -emit-module -emit-library -static -module-name BeaconDecoding -I "$build" \
  -emit-module-path "$build/BeaconDecoding.swiftmodule" -o "$build/libBeaconDecoding.a" Sources/BeaconDecoding/*.swift
swiftc "${flags[@]}" -I "$build" -L "$build" -lBeaconDecoding -lBeaconModel -module-name Fuzz \
  Tests/Fuzz/Harness.swift Tests/FuzzRegressionTests/FuzzInput.swift -o "$build/fuzz" 2>&1 |
  grep -v 'Cannot export local symbol' || true

# A fresh working corpus: the kept one, or the seeds when there is none yet.
work=$build/corpus
rm -rf "$work" && mkdir -p "$work"
if [ -z "$(ls -A Tests/Fuzz/corpus)" ]; then
  BEACONTRACKER_FUZZ_SEEDS="$work" "$build/fuzz" -runs=0 "$work" >/dev/null 2>&1 || true
else
  cp Tests/Fuzz/corpus/* "$work/"
fi

echo "fuzz: running for ${seconds} s"
log=$build/fuzz.log
# -fork keeps fuzzing after a crash (each is saved); timeouts (a hang) count as crashes too.
"$build/fuzz" "$work" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
  -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
  -artifact_prefix=Tests/Fuzz/crashes/ -print_final_stats=1 >"$log" 2>&1 || true

# Keep the corpus small: only inputs that add coverage.
rm -rf "$build/merged" && mkdir -p "$build/merged"
"$build/fuzz" -merge=1 "$build/merged" "$work" >/dev/null 2>&1 || true
rm -f Tests/Fuzz/corpus/* && cp "$build/merged"/* Tests/Fuzz/corpus/ 2>/dev/null || true

# With -fork the last "#N:" status line holds the executions of all jobs.
executions=$( (grep -oE '^#[0-9]+' "$log" || true) | tail -1 | tr -d '#')
crashes=$(ls Tests/Fuzz/crashes | grep -cE '^(crash|timeout|oom|leak)-' || true)
echo "fuzz: ${seconds} s, ${executions:-0} executions, corpus $(ls Tests/Fuzz/corpus | wc -l) inputs, crashes kept: ${crashes}"
(grep -E '^(==[0-9]+==ERROR|SUMMARY|.*Fatal error)' "$log" || true) | sort | uniq -c | head -20
echo "fuzz: log in $log"
