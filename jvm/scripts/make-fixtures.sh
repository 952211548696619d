#!/usr/bin/env bash
# Regenerates src/test/resources/fixtures/: roots, manifests and a baseline made with the Swift `pinion` CLI.
# Usage: jvm/scripts/make-fixtures.sh [PATH_TO_pinion]  (default: .build/debug/pinion of the repository;
# build it with `swift build --product pinion`). Keys are fresh each run and unencrypted (test only);
# only their public halves and the signed envelopes are kept. All times are fixed, so tests pass
# explicit times and never read the clock.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
pinion="${1:-$repo/.build/debug/pinion}"
[ -x "$pinion" ] || { echo "make-fixtures: $pinion not found; run: swift build --product pinion" >&2; exit 2; }
out="$here/../src/test/resources/fixtures"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
rm -rf "$out"
mkdir -p "$out"
q() { "$pinion" "$@" >/dev/null 2>&1 || { echo "make-fixtures: pinion $* failed" >&2; "$pinion" "$@"; exit 1; }; }
for k in rootA rootB pinsA pinsB other; do q keygen --out "$work/$k" --insecure-no-passphrase; done
scope=com.example.app
ISS=2026-01-01T00:00:00Z
EXP=2028-01-01T00:00:00Z
# Pins (SPKI SHA-256) used by manifests and the baseline: fixed values, not real keys.
PIN1=sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=
PIN2=sha256/AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=
PIN3=sha256/AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI=
PIN4=sha256/AwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwM=

# Root 1: root role rootA, pins role pinsA, cap 30 days.
q root init --scope $scope --root-key "$work/rootA.pub" --root-threshold 1 --pins-key "$work/pinsA.pub" \
  --pins-threshold 1 --issued-at $ISS --expires-at $EXP --max-manifest-lifetime 30d -o "$work/root1.payload"
q sign --key "$work/rootA.key" "$work/root1.payload" -o "$out/root-1.json"
# Root 2 keeps the pins role (no pinsRoleSince: the Swift CLI does not write it yet, so it is 2).
q root rotate --previous "$out/root-1.json" --issued-at 2026-02-01T00:00:00Z --expires-at $EXP -o "$work/root2.payload"
q sign --key "$work/rootA.key" "$work/root2.payload" -o "$out/root-2-same-pins.json"
# Root 2 replacing the pins key pinsA by pinsB, and the root key rootA by rootB (signed by both).
q root rotate --previous "$out/root-1.json" --add-pins-key "$work/pinsB.pub" --remove-pins-key "$work/pinsA.pub" \
  --add-root-key "$work/rootB.pub" --remove-root-key "$work/rootA.pub" --issued-at 2026-02-01T00:00:00Z \
  --expires-at $EXP -o "$work/root2b.payload"
q sign --key "$work/rootA.key" --key "$work/rootB.key" "$work/root2b.payload" -o "$out/root-2-new-keys.json"
q sign --key "$work/rootA.key" "$work/root2b.payload" -o "$out/root-2-old-signer-only.json"
q sign --key "$work/rootB.key" "$work/root2b.payload" -o "$out/root-2-new-signer-only.json"
# Root 3 after root-2-new-keys, signed by rootB.
q root rotate --previous "$out/root-2-new-keys.json" --issued-at 2026-03-01T00:00:00Z --expires-at $EXP -o "$work/root3.payload"
q sign --key "$work/rootB.key" "$work/root3.payload" -o "$out/root-3-after-new-keys.json"
# A root of another scope, and one that expires early.
q root init --scope org.other.app --root-key "$work/rootA.pub" --root-threshold 1 --pins-key "$work/pinsA.pub" \
  --pins-threshold 1 --issued-at $ISS --expires-at $EXP -o "$work/other.payload"
q sign --key "$work/rootA.key" "$work/other.payload" -o "$out/root-1-other-scope.json"
q root init --scope $scope --root-key "$work/rootA.pub" --root-threshold 1 --pins-key "$work/pinsA.pub" \
  --pins-threshold 1 --issued-at $ISS --expires-at 2026-06-15T00:00:00Z --max-manifest-lifetime 30d -o "$work/short.payload"
q sign --key "$work/rootA.key" "$work/short.payload" -o "$out/root-1-expires-june.json"

# Manifests under root 1, issued 2026-06-01, expiring 2026-07-01 (30 days, the cap).
q manifest init --scope $scope --issued-at 2026-06-01T00:00:00Z --expires-at 2026-07-01T00:00:00Z -o "$work/m1.payload"
q manifest set-domain "$work/m1.payload" api.example.com --pin $PIN1 --pin $PIN2
q manifest set-domain "$work/m1.payload" example.net --pin $PIN3 --pin $PIN4 --include-subdomains
q sign --allow-single-pin --key "$work/pinsA.key" "$work/m1.payload" -o "$out/manifest-1.json"
cp "$out/manifest-1.json" "$work/m1-co.json"
q sign --allow-single-pin --key "$work/other.key" "$work/m1-co.json" -o "$out/manifest-1-extra-cosignature.json"
q sign --allow-single-pin --key "$work/other.key" "$work/m1.payload" -o "$out/manifest-1-unknown-key.json"
q sign --allow-single-pin --key "$work/rootA.key" "$work/m1.payload" -o "$out/manifest-1-root-key.json"
q manifest init --previous "$out/manifest-1.json" --issued-at 2026-06-02T00:00:00Z --expires-at 2026-07-02T00:00:00Z -o "$work/m2.payload"
q manifest revoke-pin "$work/m2.payload" $PIN2
q sign --allow-single-pin --key "$work/pinsA.key" "$work/m2.payload" -o "$out/manifest-2-revokes-pin2.json"
q manifest init --previous "$out/manifest-1.json" --issued-at 2026-06-02T00:00:00Z --expires-at 2026-07-01T12:00:00Z -o "$work/m2e.payload"
q sign --allow-single-pin --key "$work/pinsA.key" "$work/m2e.payload" -o "$out/manifest-2-equivocation.json"
q manifest init --previous "$out/manifest-2-revokes-pin2.json" --issued-at 2026-06-03T00:00:00Z --expires-at 2026-07-03T00:00:00Z -o "$work/m3.payload"
q manifest revoke-pin "$work/m3.payload" $PIN4
q sign --allow-single-pin --key "$work/pinsA.key" "$work/m3.payload" -o "$out/manifest-3-revokes-pin4.json"
q manifest init --scope $scope --issued-at 2026-06-01T00:00:00Z --expires-at 2026-07-01T00:00:01Z -o "$work/long.payload"
q sign --allow-single-pin --key "$work/pinsA.key" "$work/long.payload" -o "$out/manifest-1-over-cap.json"
q manifest init --scope org.other.app --issued-at 2026-06-01T00:00:00Z --expires-at 2026-07-01T00:00:00Z -o "$work/os.payload"
q sign --allow-single-pin --key "$work/pinsA.key" "$work/os.payload" -o "$out/manifest-1-other-scope.json"
q manifest init --scope $scope --issued-at 2026-06-01T00:00:00Z --expires-at 2026-06-02T00:00:00Z -o "$work/mshort.payload"
q sign --allow-single-pin --key "$work/pinsA.key" "$work/mshort.payload" -o "$out/manifest-1-expires-june-2.json"
# Far future issuedAt (2026-06-20 for a refresh on 2026-06-02).
q manifest init --scope $scope --issued-at 2026-06-20T00:00:00Z --expires-at 2026-07-10T00:00:00Z -o "$work/fut.payload"
q sign --allow-single-pin --key "$work/pinsA.key" "$work/fut.payload" -o "$out/manifest-1-future-dated.json"
# Under root 2 (same pins) and root 2 (new pins key): version 4, rootVersion 2.
q manifest init --root "$out/root-2-same-pins.json" --previous "$out/manifest-3-revokes-pin4.json" \
  --issued-at 2026-06-04T00:00:00Z --expires-at 2026-07-04T00:00:00Z -o "$work/m4.payload"
q sign --allow-single-pin --key "$work/pinsA.key" "$work/m4.payload" -o "$out/manifest-4-root-2-same-pins.json"
q manifest init --root "$out/root-2-new-keys.json" --previous "$out/manifest-3-revokes-pin4.json" \
  --issued-at 2026-06-04T00:00:00Z --expires-at 2026-07-04T00:00:00Z -o "$work/m4b.payload"
q sign --allow-single-pin --key "$work/pinsB.key" "$work/m4b.payload" -o "$out/manifest-4-root-2-new-pins-key.json"
q sign --allow-single-pin --key "$work/pinsA.key" "$work/m4b.payload" -o "$out/manifest-4-root-2-signed-by-old-pins-key.json"

cat > "$out/baseline.json" <<JSON
{
  "type": "pinion.baseline",
  "specVersion": 1,
  "domains": [
    {"name": "api.example.com", "pins": ["$PIN1", "$PIN3"]},
    {"name": "static.example.org", "includeSubdomains": true, "pins": ["$PIN2", "$PIN4"]}
  ]
}
JSON
cat > "$out/README.md" <<'MD'
# Trust-core fixtures

Made by `jvm/scripts/make-fixtures.sh` with the Swift `pinion` CLI (so the JVM SDK is checked
against envelopes of the reference implementation). Keys are throwaway; times are fixed:
roots issued 2026-01-01, expiring 2028-01-01 (one expires 2026-06-15); manifests issued
2026-06-01 ... 2026-06-04 with 30-day lifetimes under a 30-day cap. Pins are fixed test values
(32 bytes of 0x00, 0x01, 0x02, 0x03), not real keys. Licence: same as the repository.
MD
echo "wrote $(ls "$out" | wc -l) files to $out"
