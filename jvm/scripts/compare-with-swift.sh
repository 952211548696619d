#!/usr/bin/env bash
# Runs `pinion client refresh --json` and `pinion-jvm client refresh --json` against one `pinion serve`
# tree through an update, a 304, a revocation, a pins-key rotation published with its manifest and
# a rollback, and compares their JSON outputs field by field and their exit codes; each step must
# also have the expected exit code and outcome, so two CLIs failing alike do not pass. Needs the
# Swift CLI (swift build --product pinion) and jvm/build; run by scripts/test. Documents and the
# test certificate are made when it runs, so every time in it is relative to that moment.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
pinion="${PINION:-$repo/.build/debug/pinion}"
jvm="$here/../pinion-jvm"
work="$(mktemp -d)"
server=""
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
q() { "$pinion" "$@" >/dev/null 2>&1 || { "$pinion" "$@"; exit 1; }; }
cd "$work"
for k in root pins pins2; do q keygen --out "$k" --insecure-no-passphrase; done
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout tls.key -out tls.pem -days 2 \
  -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null
q root init --scope cmp.example --root-key root.pub --root-threshold 1 --pins-key pins.pub --pins-threshold 1 -o r1.payload
q sign --key root.key r1.payload -o root-1.json
q publish --repo tree root-1.json
q manifest init --scope cmp.example --expires-in 20d -o m1.payload
q manifest set-domain m1.payload api.example.com --pin sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA= --pin sha256/AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=
q sign --allow-single-pin --key pins.key m1.payload -o m1.json
q publish --repo tree m1.json
"$pinion" serve --repo tree --cert tls.pem --key tls.key --listen 127.0.0.1:0 > serve.out 2>serve.err &
server=$!
for _ in $(seq 50); do grep -q listening serve.out 2>/dev/null && break; sleep 0.1; done
url="$(sed -n 's/.*listening on \(https:[^ ]*\).*/\1/p' serve.out)/"
status=0
step() {
  local name="$1" expected_exit="$2" expected_kind="$3"
  set +e
  "$pinion" client refresh --root root-1.json --scope cmp.example --url "$url" --state swift-state --cafile tls.pem --json > "swift-$name.json" 2>/dev/null
  local s=$?
  "$jvm" client refresh --root root-1.json --scope cmp.example --url "$url" --state jvm-state --cafile tls.pem --json > "jvm-$name.json" 2>/dev/null
  local j=$?
  set -e
  if [ "$s" != "$expected_exit" ] || ! grep -q "\"outcomeKind\": \"$expected_kind\"" "swift-$name.json"; then
    echo "UNEXPECTED at $name: swift exit $s (expected $expected_exit, outcome $expected_kind)"; cat "swift-$name.json"; status=1
  fi
  # Network-error wording differs by TLS stack, and the Swift CLI explains a signature
  # refusal in more words (ManifestDiagnosis) than the JVM CLI; the prose "outcome" member of
  # a rejection is therefore compared by its kind only ("outcomeKind"), everything else must
  # be identical.
  local drop='"network failure'
  [ "$expected_kind" = "rejected" ] && drop='"outcome": "rejected: '
  if [ "$s" != "$j" ] || ! diff <(grep -v "$drop" "swift-$name.json") <(grep -v "$drop" "jvm-$name.json") >/dev/null; then
    echo "DIFFERENT at $name: exit swift $s, jvm $j"; diff "swift-$name.json" "jvm-$name.json" || true; status=1
  else
    echo "same at $name (exit $s, $expected_kind)"
  fi
}
step first 0 updated
step again 0 unchanged
q manifest init --previous m1.json --expires-in 20d -o m2.payload
q manifest revoke-pin m2.payload sha256/AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=
q sign --allow-single-pin --key pins.key m2.payload -o m2.json
q publish --repo tree m2.json
step revocation 0 updated
q root rotate --previous root-1.json --add-pins-key pins2.pub --remove-pins-key pins.pub -o r2.payload
q sign --key root.key r2.payload -o root-2.json
q manifest init --root root-2.json --previous m2.json --expires-in 20d -o m3.payload
q sign --allow-single-pin --key pins2.key m3.payload -o m3.json
q publish --repo tree root-2.json m3.json
step rotation 0 updated
cp tree/v1/cmp.example/history/1.json tree/v1/cmp.example/manifest.json
step rollback 1 rejected
[ "$status" -eq 0 ] && echo "compare-with-swift: both CLIs agree at every step"
exit $status
