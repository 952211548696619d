#!/usr/bin/env bash
# The adoption gate end to end: a known fleet of Swift (`pinion client refresh`) and JVM
# (`pinion-jvm client refresh`) clients, on two app releases' baselines, holding manifest
# version 0, 1 or 2, polls a real `pinion serve` (its own access log, its /metrics) and a real
# nginx (the shipped deploy/nginx/pinion.conf, combined log format) serving one tree. Then:
#   - `pinion adoption --json` over both logs must report exactly that fleet, bucket by bucket;
#   - the switch question (`--domain --pin` for the key the server moves to, judged when
#     version 1 has expired) must give exactly the fleet's accepting share, and exit 0 at
#     that share and 1 just above it;
#   - `pinion serve`'s pinion_manifest_polls_total, scraped with curl and parsed strictly,
#     must count exactly the polls that reached it.
# Needs the Swift CLI (swift build --product pinion), jvm/build, nginx, openssl, curl and
# python3; run by scripts/test. Every time in it is relative to the moment it runs.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
pinion="${PINION:-$repo/.build/debug/pinion}"
jvm="$here/../pinion-jvm"
nginx_binary=/usr/sbin/nginx
work="$(mktemp -d)"
# nginx's workers run as nobody when this runs as root: they must read the tree.
chmod 755 "$work"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
q() { "$pinion" "$@" >/dev/null 2>&1 || { "$pinion" "$@"; exit 1; }; }
fail() { echo "adoption-end-to-end: FAILED: $*" >&2; exit 1; }
cd "$work"

scope=adopt.example
pin_a=sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=
pin_b=sha256/AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=
# The key the server moves to.
pin_next=sha256/AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI=

for k in root pins; do q keygen --out "$k" --insecure-no-passphrase; done
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout tls.key -out tls.pem -days 2 \
  -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null
q root init --scope $scope --root-key root.pub --root-threshold 1 --pins-key pins.pub --pins-threshold 1 -o r1.payload
q sign --key root.key r1.payload -o root-1.json
q publish --repo tree root-1.json
# Version 1 expires in 3 days; version 2 adds the next key and lasts 30.
q manifest init --scope $scope --expires-in 3d -o m1.payload
q manifest set-domain m1.payload api.adopt.example --pin $pin_a --pin $pin_b
q sign --key pins.key m1.payload -o m1.json
q manifest init --previous m1.json --expires-in 30d -o m2.payload
q manifest set-domain m2.payload api.adopt.example --pin $pin_a --pin $pin_b --pin $pin_next
q sign --key pins.key m2.payload -o m2.json
# Two app releases: release 1 shipped version 1's pins, release 2 version 2's.
q export baseline --root root-1.json m1.json -o baseline-1.json
q export baseline --root root-1.json m2.json -o baseline-2.json
chmod -R a+rX tree

started_url=""
start_serve() { # name, extra flags...; sets started_url
  local name="$1"
  shift
  "$pinion" serve --repo tree --cert tls.pem --key tls.key --listen 127.0.0.1:0 "$@" > "$name.out" 2> "$name.err" &
  pids+=($!)
  for _ in $(seq 100); do grep -q listening "$name.out" 2>/dev/null && break; sleep 0.1; done
  started_url="$(sed -n 's/.*listening on \(https:[^ ]*\).*/\1/p' "$name.out")"
  [ -n "$started_url" ] || { cat "$name.err"; fail "pinion serve ($name) did not start"; }
}

# The fleet: SDK, baseline release, version held before the measured poll, publisher.
fleet=(
  "swift 1 1 serve" "swift 1 1 serve" "jvm 1 1 nginx"
  "swift 2 2 serve" "jvm 1 2 nginx" "jvm 1 2 serve"
  "swift 2 0 nginx" "jvm 1 0 nginx"
)
refresh() { # index, sdk, release, url
  local cli=("$pinion")
  [ "$2" = jvm ] && cli=("$jvm")
  "${cli[@]}" client refresh --root root-1.json --scope $scope --url "$4/" --state "state-$1" \
    --baseline "baseline-$3.json" --cafile tls.pem --json > "refresh-$1.json" 2>&1 \
    || { cat "refresh-$1.json"; fail "client $1 ($2) could not refresh from $4"; }
}

# Bring each client to the version it holds, through a publisher whose log is not measured.
q publish --repo tree m1.json
chmod -R a+rX tree
start_serve prep --access-log off
prep="$started_url"
for i in "${!fleet[@]}"; do
  read -r sdk release held _ <<< "${fleet[$i]}"
  [ "$held" = 1 ] && refresh "$i" "$sdk" "$release" "$prep"
done
q publish --repo tree m2.json
chmod -R a+rX tree
for i in "${!fleet[@]}"; do
  read -r sdk release held _ <<< "${fleet[$i]}"
  [ "$held" = 2 ] && refresh "$i" "$sdk" "$release" "$prep"
done
kill "${pids[0]}"

# The measured publishers.
start_serve serve --access-log serve.log --metrics-listen 127.0.0.1:0
serve_url="$started_url"
metrics_url="$(sed -n 's/.*metrics on \(http:[^ ]*\).*/\1/p' serve.out serve.err | head -1)"
[ -n "$metrics_url" ] || { cat serve.out serve.err; fail "pinion serve printed no metrics address"; }
mkdir -p nginx/temp
# nginx's workers (as nobody when this runs as root) read the key.
chmod 644 tls.key
user=""
[ "$(id -u)" = 0 ] && user="user nobody $(id -gn nobody);"
nginx_port=""
for _ in $(seq 20); do
  nginx_port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  sed -e "s|@PINION_LISTEN@|127.0.0.1:$nginx_port|" -e "s|@PINION_SERVER_NAME@|127.0.0.1|" \
    -e "s|@PINION_CERT@|$work/tls.pem|" -e "s|@PINION_KEY@|$work/tls.key|" -e "s|@PINION_TREE@|$work/tree|" \
    "$repo/deploy/nginx/pinion.conf" > nginx/pinion.conf
  cat > nginx/nginx.conf <<EOF
daemon off;
worker_processes 1;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log info;
$user
events { worker_connections 64; }
http {
  client_body_temp_path $work/nginx/temp/body;
  proxy_temp_path $work/nginx/temp/proxy;
  fastcgi_temp_path $work/nginx/temp/fastcgi;
  uwsgi_temp_path $work/nginx/temp/uwsgi;
  scgi_temp_path $work/nginx/temp/scgi;
  access_log $work/nginx/access.log combined;
  include $work/nginx/pinion.conf;
}
EOF
  "$nginx_binary" -p "$work/nginx" -c "$work/nginx/nginx.conf" 2> nginx/stderr &
  pids+=($!)
  for _ in $(seq 100); do [ -s nginx/nginx.pid ] && break; kill -0 "${pids[-1]}" 2>/dev/null || break; sleep 0.1; done
  [ -s nginx/nginx.pid ] && break
  grep -q "Address already in use" nginx/stderr nginx/error.log 2>/dev/null || { cat nginx/stderr; fail "nginx did not start"; }
done
[ -s nginx/nginx.pid ] || fail "nginx found no free port"
nginx_url="https://127.0.0.1:$nginx_port"

# The measured polls: one refresh per client.
for i in "${!fleet[@]}"; do
  read -r sdk release _ publisher <<< "${fleet[$i]}"
  url="$serve_url"
  [ "$publisher" = nginx ] && url="$nginx_url"
  refresh "$i" "$sdk" "$release" "$url"
done

# Every client ran on 127.0.0.1. Each stands for a device on its own network, so each poll
# line's address is replaced, in order, by its client's own (198.51.I.7, one /24 per client;
# the clients polled one after another, each with exactly one manifest request). The lines are
# otherwise as the publishers wrote them.
python3 - serve.log nginx/access.log "${fleet[@]}" <<'EOF_PY'
import re, sys
serve_log, nginx_log, fleet = sys.argv[1], sys.argv[2], sys.argv[3:]
queues = {"serve": [], "nginx": []}
for index, entry in enumerate(fleet):
    queues[entry.split()[3]].append(f"198.51.{index}.7")
poll = re.compile(r"GET /v1/[^ ]*/manifest\.json")
for path, kind in ((serve_log, "serve"), (nginx_log, "nginx")):
    lines = open(path).read().split("\n")
    polls = [i for i, line in enumerate(lines) if poll.search(line)]
    if len(polls) != len(queues[kind]):
        sys.exit(f"{path}: {len(polls)} manifest polls, expected {len(queues[kind])}:\n" + "\n".join(lines))
    for i, address in zip(polls, queues[kind]):
        fields = lines[i].split(" ", 2)
        if kind == "serve":
            if not fields[1].startswith("127.0.0.1:"):
                sys.exit(f"{path}: unexpected client in {lines[i]!r}")
            lines[i] = f"{fields[0]} {address}:{fields[1].split(':')[1]} {fields[2]}"
        else:
            if fields[0] != "127.0.0.1":
                sys.exit(f"{path}: unexpected client in {lines[i]!r}")
            lines[i] = f"{address} {fields[1]} {fields[2]}"
    open(path, "w").write("\n".join(lines))
EOF_PY

# What the fleet is, worked out from its definition, and what pinion adoption says.
base() { sha256sum "baseline-$1.json" | cut -c1-16; }
expected="$(
  for entry in "${fleet[@]}"; do
    read -r _ release held _ <<< "$entry"
    echo "$held $(base "$release")"
  done | sort | uniq -c
)"
at="$(date -u -d '+5 days' +%Y-%m-%dT%H:%M:%SZ)"
set +e
"$pinion" adoption --repo tree --at "$at" --baseline baseline-1.json --baseline baseline-2.json --json \
  serve.log nginx/access.log > adoption.json 2> adoption.err
status=$?
set -e
[ "$status" = 0 ] || { cat adoption.err adoption.json; fail "pinion adoption exited $status"; }
python3 - "$scope" "$expected" adoption.json <<'EOF'
import json, sys
scope, expected_text, path = sys.argv[1], sys.argv[2], sys.argv[3]
expected = {}
for line in expected_text.strip().splitlines():
    count, held, base = line.split()
    expected[(int(held), base)] = int(count)
report = json.load(open(path))
scopes = {s["scope"]: s for s in report["scopes"]}
if set(scopes) != {scope}:
    sys.exit(f"scopes {sorted(scopes)}, expected only {scope}")
s = scopes[scope]
got = {(int(g["have"]), g["base"]): g["polls"] for g in s["groups"]}
if got != expected:
    sys.exit(f"groups {got}, expected {expected}")
if s["polls"] != sum(expected.values()):
    sys.exit(f"{s['polls']} polls, expected {sum(expected.values())}")
if report["malformedLines"] != 0:
    sys.exit(f"malformed lines: {report['malformedLines']}")
print(f"adoption: {len(got)} groups, {s['polls']} polls, as the fleet")
EOF

# The switch question, judged when version 1 has expired: version 2 holders accept the next
# key (their manifest lists it), version 1 holders fall back to their baseline, fresh installs
# have only theirs; release 2's baseline lists the next key, release 1's does not.
accepting=0
for entry in "${fleet[@]}"; do
  read -r _ release held _ <<< "$entry"
  if [ "$held" = 2 ] || [ "$release" = 2 ]; then accepting=$((accepting + 1)); fi
done
share="$(python3 -c "print(100 * $accepting / ${#fleet[@]})")"
gate() { # min-share
  set +e
  "$pinion" adoption --repo tree --at "$at" --baseline baseline-1.json --baseline baseline-2.json \
    --domain api.adopt.example --pin $pin_next --min-share "$1" --json serve.log nginx/access.log > gate.json 2> gate.err
  local s=$?
  set -e
  echo "$s"
}
[ "$(gate "$share")" = 0 ] || { cat gate.err gate.json; fail "the gate refused at exactly the fleet's share $share%"; }
python3 - "$scope" "$accepting" "${#fleet[@]}" gate.json <<'EOF'
import json, sys
scope, accepting, total, path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
report = json.load(open(path))
verdicts = [v for v in report["gate"]["scopes"] if v["scope"] == scope]
if len(verdicts) != 1:
    sys.exit(f"gate verdicts {report['gate']['scopes']}")
verdict = verdicts[0]
if abs(verdict["pollShare"] - accepting / total) > 0.00005:
    sys.exit(f"poll share {verdict['pollShare']}, expected {accepting} of {total}")
if abs(verdict["prefixShare"] - accepting / total) > 0.00005:
    sys.exit(f"prefix share {verdict['prefixShare']}, expected {accepting} of {total} (one network per client)")
if not verdict["passes"]:
    sys.exit(f"the gate does not pass at the fleet's own share: {verdict}")
print(f"gate: {accepting} of {total} polls accept the next key (poll share {verdict['pollShare']}, prefix share {verdict['prefixShare']})")
EOF
above="$(python3 -c "print($share + 0.5)")"
[ "$(gate "$above")" = 1 ] || { cat gate.err gate.json; fail "the gate passed above the fleet's share ($above%)"; }

# pinion serve's poll counter, scraped and parsed strictly.
curl -sS --fail "${metrics_url%/}/metrics" > metrics.txt || fail "metrics scrape of $metrics_url failed"
python3 - "$scope" metrics.txt "$(for e in "${fleet[@]}"; do read -r _ _ held publisher <<< "$e"; [ "$publisher" = serve ] && echo "$held"; done | sort | uniq -c)" <<'EOF'
import re, sys
scope, path, expected_text = sys.argv[1], sys.argv[2], sys.argv[3]
sample = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*",?)*\})? (-?[0-9.e+-]+|NaN|\+Inf|-Inf)$')
polls = {}
for number, line in enumerate(open(path).read().split("\n"), 1):
    if line == "" or line.startswith("# HELP ") or line.startswith("# TYPE "):
        continue
    m = sample.match(line)
    if not m:
        sys.exit(f"metrics line {number} is not Prometheus text: {line!r}")
    if m.group(1) == "pinion_manifest_polls_total":
        labels = dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
        if set(labels) != {"scope", "have"}:
            sys.exit(f"poll counter labels {labels}")
        polls[(labels["scope"], labels["have"])] = float(m.group(3))
expected = {}
for line in expected_text.strip().splitlines():
    count, held = line.split()
    expected[(scope, held)] = float(count)
if polls != expected:
    sys.exit(f"pinion_manifest_polls_total {polls}, expected {expected}")
print(f"metrics: pinion_manifest_polls_total counts {int(sum(polls.values()))} polls, as sent to pinion serve")
EOF
echo "adoption-end-to-end: pinion adoption, the gate and pinion serve's counter report exactly the fleet"
