#!/usr/bin/env bash
# The packaging test (`make test` runs it; alone: `make deb-test`). Builds the packages (scripts/make-deb.sh), installs
# them with apt into a clean Debian 12 root made by debootstrap, and checks inside it: the programs run (--help, the
# agent decodes a known advert, both check their shipped configuration), nothing they link is missing, the units
# pass systemd-analyze verify, the system users exist and own what they should, nothing was started or enabled, an
# edited configuration survives a reinstall, and a purge leaves no file of theirs behind.
# DEB_TEST_KEEP=1 keeps the root it worked in (unmounted) for a look.
#
# The clean root is made once and cached (BEACONTRACKER_CACHE, default ~/.cache/beacontracker), with the Debian
# packages apt fetched for it; each run works on a fresh copy. Needs root (debootstrap, chroot) and the Debian mirror
# (DEBIAN_MIRROR, default http://deb.debian.org/debian); without root it is skipped, saying so.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
  echo "deb-test: skipped: debootstrap and chroot need root; run 'sudo bash scripts/deb-test.sh'"
  exit 0
fi
command -v debootstrap >/dev/null || { echo "deb-test: debootstrap is missing: bash scripts/setup.sh installs it" >&2; exit 1; }

arch=$(dpkg --print-architecture)
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${BEACONTRACKER_CACHE:-$HOME/.cache/beacontracker}
base=$cache/debootstrap-bookworm-$arch
archives=$cache/debootstrap-bookworm-$arch-archives

# The packages first: a build failure is the likelier one.
DEB_OUT=.build/deb-out bash scripts/make-deb.sh
version=$(dpkg-deb -f .build/deb-out/beacon-agent_*_"$arch".deb Version)
agent_deb=.build/deb-out/beacon-agent_${version}_${arch}.deb
hub_deb=.build/deb-out/beacon-hub_${version}_${arch}.deb

if [ ! -f "$base/.complete" ]; then
  echo "deb-test: making a clean Debian 12 root in $base (once; cached)"
  rm -rf "$base" "$base.partial"
  mkdir -p "$cache"
  if ! debootstrap --variant=minbase --include=systemd bookworm "$base.partial" "$mirror" >"$cache/debootstrap.log" 2>&1; then
    tail -n 20 "$cache/debootstrap.log" >&2
    echo "deb-test: debootstrap failed (log: $cache/debootstrap.log); is $mirror reachable? DEBIAN_MIRROR names another" >&2
    exit 1
  fi
  mv "$base.partial" "$base"
  touch "$base/.complete"
fi
mkdir -p "$archives"

root=$(mktemp -d /var/tmp/beacontracker-deb-test.XXXXXX)
mounted=()
cleanup() {
  local mount
  for mount in "${mounted[@]}"; do umount "$mount" 2>/dev/null || umount -l "$mount" 2>/dev/null || true; done
  # --one-file-system: never into a mount that failed to go (proc, the package cache).
  if [ "${DEB_TEST_KEEP:-0}" = 1 ]; then echo "deb-test: kept $root"; else rm -rf --one-file-system "$root"; fi
}
trap cleanup EXIT
cp -a "$base/." "$root/"
rm -f "$root/.complete"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc" && mounted+=("$root/proc")
# The packages apt fetched in earlier runs, and those it fetches now, are kept beside the cached root.
mount --bind "$archives" "$root/var/cache/apt/archives" && mounted+=("$root/var/cache/apt/archives")
mkdir -p "$root/var/cache/apt/archives/partial"
cp "$agent_deb" "$hub_deb" "$root/tmp/"

in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"; }
fail() {
  echo "deb-test: FAILED: $*" >&2
  exit 1
}
apt_install() {
  # The cached package lists may be older than the mirror: on failure, update them and try again.
  in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >"$root/tmp/apt.log" 2>&1 ||
    { in_root apt-get update -q >/dev/null 2>&1 &&
      in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >"$root/tmp/apt.log" 2>&1; } ||
    { tail -n 30 "$root/tmp/apt.log" >&2; fail "apt-get install $*"; }
}

# The packages' dependencies first, so that what is on the root before ours can be compared with what is left after
# their purge: the two lists of files must be the same.
depends=$(for deb in "$agent_deb" "$hub_deb"; do dpkg-deb -f "$deb" Depends | tr ',' '\n'; done | sed 's/(.*)//; s/ //g' | sort -u)
# shellcheck disable=SC2086 # one word per package
apt_install $depends
files() {
  (cd "$root" && find . -xdev \( -path ./proc -o -path ./run -o -path ./tmp -o -path ./var/cache -o -path ./var/lib/apt \
    -o -path ./var/lib/dpkg -o -path ./var/log -o -path './etc/passwd*' -o -path './etc/group*' \
    -o -path './etc/shadow*' -o -path './etc/gshadow*' \) -prune -o -print | sort)
}
files >"$root/tmp/before.txt"

echo "deb-test: installing $(basename "$agent_deb") and $(basename "$hub_deb") into a clean Debian 12 root"
apt_install "/tmp/$(basename "$agent_deb")" "/tmp/$(basename "$hub_deb")"
grep -q "beacon-agent: not started" "$root/tmp/apt.log" || fail "the agent's postinst did not say it left the service stopped"

# The programs, run inside the clean root.
in_root beacon-agent --help | grep -q "USAGE: beacon-agent" || fail "beacon-agent --help"
in_root beacon-hub --help | grep -q "USAGE: beacon-hub" || fail "beacon-hub --help"
decoded=$(in_root beacon-agent decode 0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5)
expected='{"id":"ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2","kind":"ibeacon","major":1,"minor":2,"txPower":-59,"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"}'
[ "$decoded" = "$expected" ] || fail "beacon-agent decode printed $decoded"
in_root beacon-agent check --config /etc/beacontracker/agent.yaml >/dev/null || fail "beacon-agent check of the shipped agent.yaml"
in_root beacon-hub check --config /etc/beacontracker/hub.yaml >/dev/null || fail "beacon-hub check of the shipped hub.yaml"
for program in beacon-agent beacon-hub; do
  if in_root ldd "/usr/bin/$program" | grep -q "not found"; then fail "$program links a library the packages do not pull in"; fi
  if in_root ldd "/usr/bin/$program" | grep -qi swift; then fail "$program links the Swift runtime dynamically"; fi
done
[ -f "$root/usr/share/beacontracker/web/index.html" ] || fail "the dashboard's page is not in /usr/share/beacontracker/web"

# The units: systemd's own check (it resolves the binaries and the users), installed, neither enabled nor running.
in_root systemd-analyze verify /lib/systemd/system/beacon-agent.service /lib/systemd/system/beacon-hub.service ||
  fail "systemd-analyze verify of the units"
for unit in beacon-agent beacon-hub; do
  state=$(in_root systemctl is-enabled "$unit.service" 2>/dev/null || true)
  [ "$state" = disabled ] || fail "$unit.service is '$state' after install, not 'disabled'"
done

# The system users and what they may read.
for user in beacon-agent beacon-hub; do
  in_root getent passwd "$user" >/dev/null || fail "no system user $user"
done
owner=$(in_root stat -c '%U:%G %a' /etc/beacontracker/hub.yaml)
[ "$owner" = "root:beacon-hub 640" ] || fail "/etc/beacontracker/hub.yaml is $owner, not root:beacon-hub 640"
owner=$(in_root stat -c '%U:%G %a' /etc/beacontracker/agent.yaml)
[ "$owner" = "root:beacon-agent 640" ] || fail "/etc/beacontracker/agent.yaml is $owner, not root:beacon-agent 640"

# The configuration is the administrator's: an edit survives a reinstall (what an upgrade does with it).
echo "# edited by deb-test" >>"$root/etc/beacontracker/agent.yaml"
echo "# edited by deb-test" >>"$root/etc/beacontracker/hub.yaml"
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --reinstall \
  "/tmp/$(basename "$agent_deb")" "/tmp/$(basename "$hub_deb")" >"$root/tmp/apt.log" 2>&1 ||
  { tail -n 30 "$root/tmp/apt.log" >&2; fail "apt-get install --reinstall"; }
for config in agent hub; do
  grep -q "edited by deb-test" "$root/etc/beacontracker/$config.yaml" || fail "the reinstall replaced the edited $config.yaml"
done
grep -q "not started" "$root/tmp/apt.log" && fail "the reinstall's postinst spoke as on a first install"

# Removal: purge leaves none of the packages' files, no configuration and no state.
mkdir -p "$root/var/lib/beacontracker" && touch "$root/var/lib/beacontracker/hub.db"
in_root env DEBIAN_FRONTEND=noninteractive apt-get purge -y -q beacon-agent beacon-hub >"$root/tmp/apt.log" 2>&1 ||
  { tail -n 30 "$root/tmp/apt.log" >&2; fail "apt-get purge"; }
for path in /usr/bin/beacon-agent /usr/bin/beacon-hub /lib/systemd/system/beacon-agent.service \
  /lib/systemd/system/beacon-hub.service /usr/share/beacontracker /usr/share/doc/beacontracker /etc/beacontracker \
  /var/lib/beacontracker; do
  [ ! -e "$root$path" ] || fail "$path is still there after apt-get purge"
done
files >"$root/tmp/after.txt"
if ! diff "$root/tmp/before.txt" "$root/tmp/after.txt" >"$root/tmp/diff.txt"; then
  cat "$root/tmp/diff.txt" >&2
  fail "the purge left these differences from the root before the install (< gone, > left behind)"
fi
for package in beacon-agent beacon-hub; do
  status=$(in_root dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  case "$status" in "" | *not-installed) ;; *) fail "dpkg still has $package: $status" ;; esac
done
[ -z "$(in_root dpkg --audit)" ] || fail "dpkg --audit: $(in_root dpkg --audit)"

echo "deb-test: ok: $(basename "$agent_deb") ($(du -h "$agent_deb" | cut -f1)), $(basename "$hub_deb") ($(du -h "$hub_deb" | cut -f1)): installed, ran, verified, reinstalled keeping the configuration, purged"
