#!/usr/bin/env bash
# Instructions per advert of the agent's decoding, counted by valgrind's callgrind (repeatable on a noisy machine,
# unlike times): a tag's advert and a phone's, through the agent's event path, the report path, and a plain C parse of
# the same bytes (Sources/CBenchParse). `make bench` runs it. Only the measured loop is counted
# (--toggle-collect), after a warm pass. valgrind 3.19 cannot read the Swift compiler's DWARF 5, so it runs a copy of
# beacon-bench without debug information (the symbol table stays, for --toggle-collect).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "instructions: valgrind is missing: bash scripts/setup.sh installs it" >&2; exit 1; }
events=${EVENTS:-20000}
swift build -c release --static-swift-stdlib --product beacon-bench 2>&1 | grep -vE "^\[[0-9]+/[0-9]+\]|mktemp" | tail -n 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$(swift build -c release --static-swift-stdlib --show-bin-path)/beacon-bench" "$work/beacon-bench"
strip --strip-debug "$work/beacon-bench"

echo "instructions per advert (callgrind, $events adverts each, warm; the C parse is the yardstick):"
printf '  %-8s %10s %10s %10s\n' advert event report C
for kind in beacon phone; do
  row=()
  for path in event report c; do
    out=$(valgrind --tool=callgrind --callgrind-out-file="$work/out" --toggle-collect='*measuredLoop*' \
      "$work/beacon-bench" instructions --events "$events" --kind "$kind" --path "$path" 2>&1)
    collected=$(grep -oE 'Collected : [0-9]+' <<<"$out" | grep -oE '[0-9]+$')
    [ -n "$collected" ] || { echo "$out" | tail -n 20 >&2; echo "instructions: callgrind gave no count" >&2; exit 1; }
    row+=("$((collected / events))")
  done
  printf '  %-8s %10s %10s %10s\n' "$kind" "${row[@]}"
done
