#!/usr/bin/env bash
# The repository is self-contained: a user's clone has nothing beside it. Fails, naming file and line, where a file
# that the programs, tests, scripts or docs read refers to the team's shared folder next to the checkout (recorded
# data lives in data/recorded instead).
set -euo pipefail
cd "$(dirname "$0")/.."

# Put together from parts so that this script does not match itself: the parent's folder named in a relative path,
# or its data folder appended to a parent path.
s=shared
pattern="\\.\\./$s\\b|(^|[^A-Za-z_./-])$s/(data|hooks)\\b|\"$s/data\""
places=(Package.swift Makefile README.md Sources Tests scripts config deploy docs data .ci)
if hits=$(grep -rnIE "$pattern" "${places[@]}" 2>/dev/null); then
  echo "$hits" >&2
  echo "check-self-contained: the lines above read files from outside the repository; copy what they need into" \
    "data/ (with its licence) and point them there" >&2
  exit 1
fi
echo "check-self-contained: ok"
