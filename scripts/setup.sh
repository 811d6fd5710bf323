#!/usr/bin/env bash
# Installs the Debian packages BeaconTracker needs, only those missing. Safe to run again and again.
set -euo pipefail

packages=(
  mosquitto mosquitto-clients libmosquitto-dev   # broker (tests and demo start their own), client tools, C library
  libbluetooth-dev                               # BlueZ HCI library for the agent's scanner
  libsqlite3-dev                                 # SQLite for GRDB
  openssl pkg-config                             # test certificates; SwiftPM finds libmosquitto through pkg-config
  libjs-chart.js                                 # the dashboard's charts, served from /usr/share/javascript/chart.js
  postgresql-15 postgresql-client-15             # the shared history's tests start their own server (initdb, no service)
  dpkg-dev binutils debootstrap                  # make deb (dpkg-shlibdeps, strip) and its test's clean Debian root
  libcurl4-openssl-dev                           # make deb: the hub's webhooks (URLSession) linked statically need -lcurl
  valgrind                                       # make bench: instructions per advert (scripts/instructions.sh)
)
# The dashboard's browser test drives Debian's Chromium through its WebDriver (skipped with a message without them).
if [ "${BEACONTRACKER_NO_BROWSER:-0}" != "1" ]; then
  packages+=(chromium chromium-driver)
fi

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "setup: run as root or install sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v swift >/dev/null; then
  echo "setup: the Swift 6 toolchain is not on PATH; install it (swift.org, Swift 6.1 or later) and retry" >&2
  exit 1
fi
