#!/usr/bin/env bash
# Provisions one gateway on the broker host: a random password in the broker's password file, and a bundle to copy
# to the Pi (agent.yaml, the password, the CA certificate, a systemd drop-in). Run it again with --force to rotate
# the password. docs/operations.md ("Provisioning a gateway") has the whole procedure.
set -euo pipefail

script_dir=$(cd "$(dirname "$0")" && pwd)
me=$(basename "$0")

usage() {
  cat <<EOF
Usage: $me --gateway ID --site ID --broker HOST --out DIR [options]

Creates a random password for broker user ID (the gateway id), adds or updates it in the broker's password file
(mosquitto_passwd -b), and writes into DIR:
  agent.yaml                            from the template: gateway, site, and mqtt: set for HOST:PORT over TLS
  mqtt-password                         the password (mode 0600); install as /etc/beacontracker/mqtt-password
  ca.pem                                the CA certificate; install as /etc/beacontracker/ca.pem
  beacon-agent.service.d/credentials.conf
                                        hands mqtt-password to the agent as a systemd credential (the agent runs as
                                        a dynamic user that cannot read root's files)
  README.txt                            the commands to install the bundle on the gateway

Required:
  --gateway ID        the gateway id, as in the venue file: 1-64 of A-Z a-z 0-9 . _ : -  (not hub-…, alerts or
                      homeassistant: those user names are reserved by deploy/mosquitto/beacontracker.acl)
  --site ID           the venue's site id (same rule)
  --broker HOST       the broker's host name or address as the gateway will reach it; the broker's certificate must
                      name it
  --out DIR           where to write the bundle (created; must be empty unless --force)

Options:
  --port N            broker TLS port (default 8883)
  --passwd-file PATH  the broker's password file (default /etc/mosquitto/beacontracker.passwd; created if missing)
  --ca-cert PATH      the CA certificate to bundle (default /etc/mosquitto/certs/ca.crt; ignored with --ca-dir)
  --ca-dir DIR        use DIR/ca.crt; if DIR has no CA, make one (DIR/ca.crt, DIR/ca.key), and if it has no broker
                      certificate, make one for HOST (DIR/broker.crt, DIR/broker.key) with openssl. Install those
                      three as /etc/mosquitto/certs/{ca.crt,broker.crt,broker.key}; keep ca.key off the gateways.
  --template PATH     agent.yaml to start from (default: config/agent.yaml of this repository)
  --force             overwrite the files of an existing bundle in DIR (rotates the password)
  -h, --help          this text

The password passes through mosquitto_passwd's command line (visible in ps on this host for a moment). After adding
users, reload the broker: sudo systemctl reload mosquitto
EOF
}

fail() {
  echo "$me: $*" >&2
  exit 1
}

gateway="" site="" broker="" out="" port=8883 force=0
passwd_file=/etc/mosquitto/beacontracker.passwd
ca_cert=/etc/mosquitto/certs/ca.crt
ca_dir=""
template="$script_dir/../config/agent.yaml"

need_value() { [ $# -ge 2 ] && [ -n "$2" ] || fail "$1 needs a value (see --help)"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --gateway) need_value "$@"; gateway=$2; shift 2 ;;
    --site) need_value "$@"; site=$2; shift 2 ;;
    --broker) need_value "$@"; broker=$2; shift 2 ;;
    --out) need_value "$@"; out=$2; shift 2 ;;
    --port) need_value "$@"; port=$2; shift 2 ;;
    --passwd-file) need_value "$@"; passwd_file=$2; shift 2 ;;
    --ca-cert) need_value "$@"; ca_cert=$2; shift 2 ;;
    --ca-dir) need_value "$@"; ca_dir=$2; shift 2 ;;
    --template) need_value "$@"; template=$2; shift 2 ;;
    --force) force=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) fail "unknown argument \"$1\" (see --help)" ;;
  esac
done

# --- Checking the input ------------------------------------------------------------------------------------------

missing=()
[ -n "$gateway" ] || missing+=(--gateway)
[ -n "$site" ] || missing+=(--site)
[ -n "$broker" ] || missing+=(--broker)
[ -n "$out" ] || missing+=(--out)
((${#missing[@]} == 0)) || fail "missing ${missing[*]} (see --help)"

id_pattern='^[A-Za-z0-9._:-]{1,64}$'
[[ $gateway =~ $id_pattern ]] ||
  fail "gateway id \"$gateway\" is not 1-64 characters of A-Z a-z 0-9 . _ : - (it is an MQTT topic level and the" \
    "broker user name): use the id of the venue file"
[[ $site =~ $id_pattern ]] ||
  fail "site id \"$site\" is not 1-64 characters of A-Z a-z 0-9 . _ : -: use the venue's site:"
case "$gateway" in
  hub-* | alerts | homeassistant)
    fail "gateway id \"$gateway\" is a user name reserved for the hub, alert or Home Assistant users of" \
      "deploy/mosquitto/beacontracker.acl: name the gateway differently (in the venue file too)" ;;
esac
[[ $broker =~ ^[A-Za-z0-9.:-]+$ ]] || fail "broker host \"$broker\" is not a host name or address"
[[ $port =~ ^[0-9]{1,5}$ ]] && ((10#$port >= 1 && 10#$port <= 65535)) || fail "port \"$port\" is not in 1-65535"

for tool in mosquitto_passwd openssl awk; do
  command -v "$tool" >/dev/null ||
    fail "$tool not found: install it (sudo apt-get install mosquitto openssl) or run this on the broker host"
done
[ -r "$template" ] || fail "template $template not readable: give --template PATH (an agent.yaml)"
for key in gateway site mqtt; do
  grep -q "^$key:" "$template" || fail "template $template has no top-level \"$key:\" line: give an agent.yaml"
done

if [ -e "$out/agent.yaml" ] && [ "$force" -eq 0 ]; then
  fail "$out already holds a bundle: give --force to overwrite it (and rotate the password), or another --out"
fi

passwd_dir=$(dirname "$passwd_file")
[ -d "$passwd_dir" ] || fail "folder $passwd_dir of the password file does not exist: is mosquitto installed here?" \
  "Or give --passwd-file PATH"
if [ -e "$passwd_file" ]; then
  [ -w "$passwd_file" ] || fail "cannot write $passwd_file: run as root (sudo) or give --passwd-file PATH"
else
  [ -w "$passwd_dir" ] || fail "cannot create $passwd_file: run as root (sudo) or give --passwd-file PATH"
fi

# --- Certificates ------------------------------------------------------------------------------------------------

umask 077

# How the broker's certificate must name it: an IP address or a DNS name.
if [[ $broker =~ ^[0-9.]+$ || $broker == *:* ]]; then
  san="IP:$broker" check=(-checkip "$broker")
else
  san="DNS:$broker" check=(-checkhost "$broker")
fi

if [ -n "$ca_dir" ]; then
  mkdir -p "$ca_dir"
  if [ ! -e "$ca_dir/ca.crt" ]; then
    [ ! -e "$ca_dir/ca.key" ] || fail "$ca_dir has ca.key but no ca.crt: restore ca.crt or remove ca.key"
    echo "$me: making a CA in $ca_dir (ca.crt, ca.key; valid 10 years)"
    openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -noenc -sha256 -days 3650 \
      -subj "/CN=BeaconTracker CA" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
      -keyout "$ca_dir/ca.key" -out "$ca_dir/ca.crt" 2>/dev/null ||
      fail "openssl could not make the CA in $ca_dir: check that the folder is writable"
    chmod 0644 "$ca_dir/ca.crt"
  fi
  [ -r "$ca_dir/ca.key" ] || [ -e "$ca_dir/broker.crt" ] ||
    fail "$ca_dir has ca.crt but no ca.key to sign a broker certificate: bring the CA key or the broker certificate"
  if [ ! -e "$ca_dir/broker.crt" ]; then
    echo "$me: making a broker certificate for $broker in $ca_dir (broker.crt, broker.key; valid 825 days)"
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -noenc -subj "/CN=$broker" \
      -keyout "$ca_dir/broker.key" -out "$ca_dir/broker.csr" 2>/dev/null ||
      fail "openssl could not make the broker key in $ca_dir"
    printf '%s\n' "subjectAltName=$san" "basicConstraints=critical,CA:FALSE" \
      "keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth" >"$ca_dir/broker.ext"
    openssl x509 -req -in "$ca_dir/broker.csr" -CA "$ca_dir/ca.crt" -CAkey "$ca_dir/ca.key" -CAcreateserial \
      -sha256 -days 825 -extfile "$ca_dir/broker.ext" -out "$ca_dir/broker.crt" 2>/dev/null ||
      fail "openssl could not sign the broker certificate with $ca_dir/ca.key"
    rm -f "$ca_dir/broker.csr" "$ca_dir/broker.ext"
    chmod 0644 "$ca_dir/broker.crt"
    # mosquitto reads its key after dropping root.
    chmod 0640 "$ca_dir/broker.key"
    chgrp mosquitto "$ca_dir/broker.key" 2>/dev/null || true
  elif ! openssl x509 -in "$ca_dir/broker.crt" -noout "${check[@]}" 2>/dev/null | grep -q ' does match'; then
    echo "$me: warning: $ca_dir/broker.crt does not name $broker; the agent will refuse the broker (tls-failure)." \
      "Remove broker.crt and broker.key to make a new one, or give --broker as the certificate names it." >&2
  fi
  ca_cert="$ca_dir/ca.crt"
fi

[ -r "$ca_cert" ] || fail "CA certificate $ca_cert not readable: give --ca-cert PATH, or --ca-dir DIR to make one"
openssl x509 -in "$ca_cert" -noout 2>/dev/null || fail "$ca_cert is not a PEM certificate: give the CA's certificate"

# --- The broker user ---------------------------------------------------------------------------------------------

password=$(openssl rand -hex 32)
if [ -e "$passwd_file" ]; then
  mosquitto_passwd -b "$passwd_file" "$gateway" "$password" ||
    fail "mosquitto_passwd could not update $passwd_file: check that it is a mosquitto password file"
  echo "$me: user $gateway set in $passwd_file"
else
  mosquitto_passwd -c -b "$passwd_file" "$gateway" "$password" ||
    fail "mosquitto_passwd could not create $passwd_file"
  # mosquitto re-reads it on reload, after dropping root.
  chmod 0640 "$passwd_file"
  chgrp mosquitto "$passwd_file" 2>/dev/null || true
  echo "$me: created $passwd_file with user $gateway"
fi

# --- The bundle --------------------------------------------------------------------------------------------------

mkdir -p "$out/beacon-agent.service.d"

printf '%s\n' "$password" >"$out/mqtt-password"
chmod 0600 "$out/mqtt-password"
cp "$ca_cert" "$out/ca.pem"
chmod 0644 "$out/ca.pem"

# agent.yaml: the template with gateway, site and the mqtt: section replaced. The template's root, clientId,
# keepAlive and reconnect settings are kept; everything else of it (regions, batch, outbox, scanner) as it is.
awk -v gateway="$gateway" -v site="$site" -v host="$broker" -v port="$port" '
  function mqtt_block() {
    print "mqtt:"
    print "  host: " host
    print "  port: " port
    if (kept["root"] == "") print "  root: beacontracker"
    for (i = 1; i <= nkept; i++) print keptLines[i]
    print "  username: " gateway
    print "  # The password arrives as a systemd credential (beacon-agent.service.d/credentials.conf loads it from"
    print "  # /etc/beacontracker/mqtt-password, which only root can read; the agent runs as a dynamic user)."
    print "  passwordFile: /run/credentials/beacon-agent.service/mqtt-password"
    print "  tls:"
    print "    caFile: /etc/beacontracker/ca.pem"
    print "    version: tlsv1.2"
    print ""
  }
  # First pass: the template mqtt: lines worth keeping.
  NR == FNR {
    if ($0 ~ /^mqtt:/) { inside = 1; next }
    if (inside && ($0 ~ /^[^ ]/)) inside = 0
    if (inside && match($0, /^  (root|clientId|keepAlive|reconnectMinSeconds|reconnectMaxSeconds):/)) {
      key = substr($0, 3, RLENGTH - 3)
      kept[key] = 1
      keptLines[++nkept] = $0
    }
    next
  }
  /^gateway:/ { print "gateway: " gateway; next }
  /^site:/ { print "site: " site; next }
  /^mqtt:/ { mqtt_block(); skipping = 1; next }
  skipping && /^[^ ]/ { skipping = 0 }
  skipping { next }
  { print }
' "$template" "$template" >"$out/agent.yaml"
chmod 0644 "$out/agent.yaml"

cat >"$out/beacon-agent.service.d/credentials.conf" <<'EOF'
# Hands the broker password to beacon-agent (a dynamic user, which cannot read root's files) as a systemd
# credential: /run/credentials/beacon-agent.service/mqtt-password, readable by the service only.
[Service]
LoadCredential=mqtt-password:/etc/beacontracker/mqtt-password
EOF
chmod 0644 "$out/beacon-agent.service.d/credentials.conf"

cat >"$out/README.txt" <<EOF
Gateway $gateway of site $site, broker $broker:$port (TLS). On the gateway, in this folder (docs/operations.md):

  sudo install -d -m 0755 /etc/beacontracker /etc/systemd/system/beacon-agent.service.d
  sudo install -m 0644 agent.yaml ca.pem /etc/beacontracker/
  sudo install -m 0600 mqtt-password /etc/beacontracker/
  sudo install -m 0644 beacon-agent.service.d/credentials.conf /etc/systemd/system/beacon-agent.service.d/
  sudo systemctl daemon-reload && sudo systemctl restart beacon-agent

Then delete this folder: mqtt-password is the gateway's secret.
EOF
chmod 0644 "$out/README.txt"

echo "$me: bundle for $gateway written to $out (agent.yaml, mqtt-password, ca.pem, beacon-agent.service.d/, README.txt)"
echo "$me: next: sudo systemctl reload mosquitto   (makes the new password valid), then copy $out to the gateway"
