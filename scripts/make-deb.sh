#!/usr/bin/env bash
# `make deb`: builds beacon-agent_VERSION_ARCH.deb and beacon-hub_VERSION_ARCH.deb in dist/ (docs/operations.md,
# "Installing by package"). The programs are release builds with the Swift runtime linked in (--static-swift-stdlib),
# so the packages depend only on Debian's runtime libraries, found by dpkg-shlibdeps from what the binaries link.
# On amd64 it gives the amd64 packages, on an aarch64 Debian 12 machine with the Swift toolchain the Pi's.
#
# Environment: DEB_OUT (folder, default dist), DEB_REVISION (Debian revision, default 1), DEB_SKIP_BUILD=1 (package
# what the last release build left, e.g. to make a second revision for an upgrade test).
set -euo pipefail
cd "$(dirname "$0")/.."

out=${DEB_OUT:-dist}
revision=${DEB_REVISION:-1}
upstream=$(sed -n 's/.*static let current = "\(.*\)"/\1/p' Sources/BeaconModel/BeaconTrackerVersion.swift)
[ -n "$upstream" ] || { echo "make-deb: no version in Sources/BeaconModel/BeaconTrackerVersion.swift" >&2; exit 1; }
version="$upstream-$revision"
arch=$(dpkg --print-architecture)
for tool in dpkg-deb dpkg-shlibdeps strip; do
  command -v "$tool" >/dev/null || { echo "make-deb: $tool is missing: install dpkg-dev and binutils (scripts/setup.sh)" >&2; exit 1; }
done

build=(swift build -c release --static-swift-stdlib)
# BEACONTRACKER_SCRATCH: a build directory of its own (scripts/test.sh builds here beside a running `swift test`,
# which holds .build's lock for as long as it runs).
if [ -n "${BEACONTRACKER_SCRATCH:-}" ]; then build+=(--scratch-path "$BEACONTRACKER_SCRATCH"); fi
if [ "${DEB_SKIP_BUILD:-0}" != "1" ]; then
  for product in beacon-agent beacon-hub; do
    echo "make-deb: building $product (release, Swift runtime linked in)"
    "${build[@]}" --product "$product" 2>&1 | grep -vE "^\[[0-9]+/[0-9]+\]" | tail -n 20
  done
fi
bin=$("${build[@]}" --show-bin-path)
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
stage=.build/deb
rm -rf "$stage"
mkdir -p "$out"

# A package's control file, its Depends from what the binary links (dpkg-shlibdeps needs a debian/control to run in).
shlib_depends() {
  local work
  work=$(mktemp -d)
  mkdir -p "$work/debian"
  printf 'Source: beacontracker\n\nPackage: beacontracker\nArchitecture: any\n' >"$work/debian/control"
  local depends
  depends=$(cd "$work" && dpkg-shlibdeps -O "$(realpath -m "$OLDPWD/$1")" 2>"$work/errors" | sed -n 's/^shlibs:Depends=//p')
  if [ -z "$depends" ]; then
    cat "$work/errors" >&2
    echo "make-deb: dpkg-shlibdeps found no dependencies of $1 (above: what it said)" >&2
    rm -rf "$work"
    exit 1
  fi
  rm -rf "$work"
  echo "$depends"
}

# Licences: ours, the Swift runtime's, and every Swift package the build resolved (their texts, as they ship them).
licences() {
  local dir=$1/usr/share/doc/$2/licenses
  install -d "$dir"
  install -m 0644 LICENSE "$dir/BeaconTracker-Apache-2.0.txt"
  install -m 0644 "$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")/share/swift/LICENSE.txt" \
    "$dir/swift-runtime.txt"
  local checkout file
  for checkout in .build/checkouts/*/; do
    file=$(find "$checkout" -maxdepth 1 -iname 'LICEN[CS]E*' | sort | head -n 1)
    [ -n "$file" ] && install -m 0644 "$file" "$dir/$(basename "$checkout").txt"
  done
  return 0
}

# The unit as deploy/systemd has it, with the packaged binary's path.
unit() {
  install -d "$1/lib/systemd/system"
  sed 's|/usr/local/bin/|/usr/bin/|g' "deploy/systemd/$2.service" >"$1/lib/systemd/system/$2.service"
  chmod 0644 "$1/lib/systemd/system/$2.service"
}

maintainer_scripts() {
  local root=$1 package=$2 user=$3 home=$4 config=$5 state=$6 statedir=$7
  # postinst: the system user, the configuration readable by it, no start on a first install (the sample
  # configuration names another venue's broker and site); an upgrade restarts a running service.
  cat >"$root/DEBIAN/postinst" <<EOF
#!/bin/sh
set -e
if [ "\$1" = configure ]; then
  if ! getent passwd $user >/dev/null; then
    adduser --system --group --quiet --no-create-home --home $home $user
  fi
  # The state directory as the unit's StateDirectory= makes it, so that '$package check' passes before the first start.
  $statedir
  if [ -z "\$2" ]; then
    # First install: the configuration is root's, readable by the service's group only.
    for file in $config; do
      [ -e "\$file" ] && chgrp -R $user "\$file" && chmod -R g+r,o-rwx "\$file"
    done
  fi
  if [ -x /usr/bin/deb-systemd-helper ]; then
    deb-systemd-helper update-state $package.service >/dev/null || true
  fi
  if [ -d /run/systemd/system ]; then
    systemctl --system daemon-reload >/dev/null || true
    if [ -n "\$2" ]; then
      deb-systemd-invoke try-restart $package.service >/dev/null || true
    fi
  fi
  if [ -z "\$2" ]; then
    echo "$package: not started. Edit /etc/beacontracker/${package#beacon-}.yaml (docs: /usr/share/doc/beacontracker), check it"
    echo "  with '$package check --config /etc/beacontracker/${package#beacon-}.yaml', then: systemctl enable --now $package"
  fi
fi
exit 0
EOF
  cat >"$root/DEBIAN/prerm" <<EOF
#!/bin/sh
set -e
if [ "\$1" = remove ] && [ -d /run/systemd/system ]; then
  deb-systemd-invoke stop $package.service >/dev/null || true
fi
exit 0
EOF
  # postrm: on purge, the service's enablement and its state ($state: the outbox or the history database) go too;
  # the system user stays, as Debian leaves system users (files elsewhere may still belong to it).
  cat >"$root/DEBIAN/postrm" <<EOF
#!/bin/sh
set -e
if [ -d /run/systemd/system ]; then
  systemctl --system daemon-reload >/dev/null || true
fi
if [ "\$1" = purge ]; then
  if [ -x /usr/bin/deb-systemd-helper ]; then
    deb-systemd-helper purge $package.service >/dev/null || true
  fi
  rm -rf $state
  rmdir --ignore-fail-on-non-empty /etc/beacontracker 2>/dev/null || true
fi
exit 0
EOF
  chmod 0755 "$root/DEBIAN/postinst" "$root/DEBIAN/prerm" "$root/DEBIAN/postrm"
}

control() {
  local root=$1 package=$2 depends=$3 description=$4
  local size
  size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
  cat >"$root/DEBIAN/control" <<EOF
Package: $package
Version: $version
Architecture: $arch
Maintainer: BeaconTracker developers <beacontracker@localhost>
Installed-Size: $size
Depends: $depends
Section: net
Priority: optional
Homepage: https://github.com/beacontracker/beacontracker
Description: $description
EOF
  (cd "$root" && find etc -type f | sed 's|^|/|' | sort) >"$root/DEBIAN/conffiles"
}

copyright() {
  local root=$1 package=$2 licence=$3 note=$4
  cat >"$root/usr/share/doc/$package/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: BeaconTracker
Source: the BeaconTracker repository at commit $commit (the complete corresponding source of this package)

Files: *
Copyright: BeaconTracker developers
License: $licence
 $note
 The project's own source is Apache-2.0 (/usr/share/common-licenses/Apache-2.0). The Swift runtime and the Swift
 packages linked into the program are listed with their licence texts in /usr/share/doc/$package/licenses/.
EOF
}

# beacon-agent: GPL-3.0-or-later as a whole, for it links BlueZ's libbluetooth (docs/decisions/0001-licence.md).
agent=$stage/beacon-agent
install -d "$agent/DEBIAN" "$agent/usr/bin" "$agent/etc/beacontracker" "$agent/usr/share/doc/beacon-agent" \
  "$agent/usr/share/doc/beacontracker"
install -m 0755 "$bin/beacon-agent" "$agent/usr/bin/beacon-agent"
strip --strip-debug "$agent/usr/bin/beacon-agent"
install -m 0644 config/agent.yaml "$agent/etc/beacontracker/agent.yaml"
unit "$agent" beacon-agent
install -m 0644 docs/agent.md "$agent/usr/share/doc/beacontracker/agent.md"
licences "$agent" beacon-agent
copyright "$agent" beacon-agent GPL-3.0-or-later \
  "The program links BlueZ's libbluetooth (GPL-2.0-or-later), so the binary is distributed under the GNU General
 Public License version 3 or later: /usr/share/common-licenses/GPL-3."
# DynamicUser=yes keeps its state in /var/lib/private/beacon-agent, reached through a link /var/lib/beacon-agent.
maintainer_scripts "$agent" beacon-agent beacon-agent /nonexistent /etc/beacontracker/agent.yaml \
  "/var/lib/beacon-agent /var/lib/private/beacon-agent" \
  "install -d -m 0700 /var/lib/private && install -d -o beacon-agent -g beacon-agent -m 0700 /var/lib/private/beacon-agent
  [ -e /var/lib/beacon-agent ] || ln -s private/beacon-agent /var/lib/beacon-agent"
# Assigned first: a failure inside "$(...)" in an argument would not stop the script (set -e ignores it there).
agent_depends=$(shlib_depends "$agent/usr/bin/beacon-agent")
control "$agent" beacon-agent "adduser, $agent_depends" \
  "BeaconTracker gateway agent: BLE beacon scanning to MQTT
 Scans Bluetooth LE through BlueZ's HCI socket, decodes iBeacon, Eddystone and AltBeacon, filters by region and
 publishes batched sightings to an MQTT broker from a durable outbox. The systemd unit beacon-agent.service is
 installed but not started: edit /etc/beacontracker/agent.yaml, then systemctl enable --now beacon-agent."

# beacon-hub: the program, its web page, the sample configuration and the museum venue it names.
hub=$stage/beacon-hub
install -d "$hub/DEBIAN" "$hub/usr/bin" "$hub/etc/beacontracker/venues" "$hub/usr/share/beacontracker" \
  "$hub/usr/share/doc/beacon-hub" "$hub/usr/share/doc/beacontracker"
install -m 0755 "$bin/beacon-hub" "$hub/usr/bin/beacon-hub"
strip --strip-debug "$hub/usr/bin/beacon-hub"
cp -r Sources/Dashboard/Web "$hub/usr/share/beacontracker/web"
find "$hub/usr/share/beacontracker/web" -type d -exec chmod 0755 {} + -o -type f -exec chmod 0644 {} +
install -m 0644 config/hub.yaml "$hub/etc/beacontracker/hub.yaml"
install -m 0644 config/venues/museum.yaml "$hub/etc/beacontracker/venues/museum.yaml"
unit "$hub" beacon-hub
for doc in operations hub configuration dashboard mqtt venue inference storage security integrations; do
  install -m 0644 "docs/$doc.md" "$hub/usr/share/doc/beacontracker/$doc.md"
done
install -m 0644 docs/openapi.yaml "$hub/usr/share/doc/beacontracker/openapi.yaml"
licences "$hub" beacon-hub
copyright "$hub" beacon-hub Apache-2.0 "beacon-hub is distributed under the Apache License 2.0."
maintainer_scripts "$hub" beacon-hub beacon-hub /var/lib/beacontracker \
  "/etc/beacontracker/hub.yaml /etc/beacontracker/venues" /var/lib/beacontracker \
  "install -d -o beacon-hub -g beacon-hub -m 0750 /var/lib/beacontracker"
hub_depends=$(shlib_depends "$hub/usr/bin/beacon-hub")
control "$hub" beacon-hub "adduser, libjs-chart.js, $hub_depends" \
  "BeaconTracker hub: zones, enter/exit events and history from BLE sightings
 Fuses the gateways' sightings, infers the zone each tag is in, emits enter, exit and stayed events, keeps visits
 and dwell statistics in SQLite or PostgreSQL, and serves an HTTP API and a dashboard. The systemd unit
 beacon-hub.service is installed but not started: edit /etc/beacontracker/hub.yaml, then
 systemctl enable --now beacon-hub."

for package in beacon-agent beacon-hub; do
  dpkg-deb --root-owner-group -Zxz --build "$stage/$package" "$out/${package}_${version}_${arch}.deb" >/dev/null
  echo "make-deb: $out/${package}_${version}_${arch}.deb ($(du -h "$out/${package}_${version}_${arch}.deb" | cut -f1))"
done
