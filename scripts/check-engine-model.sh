#!/usr/bin/env bash
# The engine weighs readings with its own observation model: fails when the ZoneInference module imports the
# simulator or names a type of the simulator's radio (RadioSettings, ForeignRadioSettings, RadioModel).
set -euo pipefail
cd "$(dirname "$0")/.."

offenders=$(grep -rnE "^\s*(@testable\s+|public\s+|package\s+)?import\s+Simulator\b|\b(RadioSettings|ForeignRadioSettings|RadioModel)\b" \
    Sources/ZoneInference --include='*.swift' || true)
if [ -n "$offenders" ]; then
  echo "check-engine-model: the position engine (Sources/ZoneInference) may not use the simulator's radio:" >&2
  echo "$offenders" | sed 's/^/  /' >&2
  echo "  give the engine its own model (ObservationModel) and keep the simulator's in Sources/Simulator" >&2
  exit 1
fi
echo "check-engine-model: ok (Sources/ZoneInference names no simulator radio type)"
