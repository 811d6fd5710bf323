#!/usr/bin/env bash
# The long round of the fault tests (docs/operations.md "Fault tests"): the hub SIGKILLed 50 times mid-ingest,
# the broker stopped with SIGTERM and killed with SIGKILL 10 times each under load, a gateway cut off for 120 s, and the
# shipped broker configuration's security checks. CI runs the same tests in a shorter round (8 hub kills, 3 + 3 broker
# stops, a 20 s cut) as
# part of `make test`. Each test prints its figures. Loopback only; nothing outside the build folder is touched.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
swift build --build-tests 2>&1 | tail -n 1
export BEACONTRACKER_CRASH_KILLS=${BEACONTRACKER_CRASH_KILLS:-50}
export BEACONTRACKER_BROKER_KILLS=${BEACONTRACKER_BROKER_KILLS:-10}
export BEACONTRACKER_CUT_SECONDS=${BEACONTRACKER_CUT_SECONDS:-120}
log=.build/fault-test.log
swift test --skip-build \
  --filter 'killingTheHubMidIngest|stoppingAndKillingTheBroker|aGatewayCutOff|aFullDiskAtTheHub|BrokerSecurityTests|brokerOutageAndAgentKill' \
  2>&1 | tee "$log" | grep -E '^(crash safety|broker faults|gateway cut|disk full|✔|✘)' || true
echo
echo "fault tests: figures above; the whole log is $log"
grep -q '✘' "$log" && { echo "fault tests: FAILED" >&2; exit 1; }
grep -q 'Test run with .* passed' "$log" || { echo "fault tests: no test run finished" >&2; exit 1; }
echo "fault tests: passed"
