#!/usr/bin/env bash
# Each C library is wrapped once: fails when a Swift target other than its single owner imports it.
set -euo pipefail
cd "$(dirname "$0")/.."

status=0
check() {  # module owner-directory
  local module=$1 owner=$2
  local offenders
  offenders=$(grep -rlE "^\s*(@_implementationOnly\s+|@preconcurrency\s+|public\s+|package\s+|internal\s+)?import\s+(struct\s+|class\s+|enum\s+|func\s+)?${module}(\.|\s|$)" \
      Sources Tests --include='*.swift' | grep -v "^${owner}/" || true)
  if [ -n "$offenders" ]; then
    echo "check-c-imports: ${module} may be imported only under ${owner}/, but is imported by:" >&2
    echo "$offenders" | sed 's/^/  /' >&2
    status=1
  fi
}
check CMosquitto Sources/BeaconMQTT
check CBluetooth Sources/BLEScanner
check GRDB Sources/BeaconStore
check GRDBSQLite Sources/BeaconStore
check SQLite3 Sources/BeaconStore
check CSQLite Sources/BeaconStore
check PostgresNIO Sources/BeaconPostgres
check CBenchParse Sources/beacon-bench
[ $status -eq 0 ] && echo "check-c-imports: ok (CMosquitto → BeaconMQTT, CBluetooth → BLEScanner, GRDB → BeaconStore, PostgresNIO → BeaconPostgres, CBenchParse → beacon-bench)"
exit $status
