# The cases both SDKs must pass (conformance/cases/), each a function writing its fixtures and steps.

import json
import os
import sys

from .common import *  # noqa: F401,F403 (the case vocabulary)


def case_update_and_evaluate(b):
    standard_root(b)
    b.sign("manifest-1.json", manifest_payload(1, M1_DOMAINS), ["pins1"])
    b.write_steps("A first manifest replaces the baseline's pins; evaluation matching of docs/DESIGN.md §8", [
        policy(T_START, {API: pol([pin("base-api-1"), pin("base-api-2")]), LEGACY: pol([pin("base-legacy")]),
                         CDN: None}),
        evaluate(API, T_START, [pin("base-api-2")], "trusted"),
        serve(manifest="manifest-1.json"),
        refresh(T_START, "updated", [1, 1], True, policy={
            API: pol([pin("m-api-1"), pin("m-api-2")]), CDN: pol([pin("m-cdn-1"), pin("m-cdn-2")], False),
            WILD: pol([pin("m-wild-1"), pin("m-wild-2")]), LEGACY: pol([pin("base-legacy")]),
            "x." + WILD: pol([pin("m-wild-1"), pin("m-wild-2")]), "x." + API: None}),
        evaluate(API, T_START, [pin("leaf"), pin("m-api-2")], "trusted"),
        evaluate(API, T_START, [pin("base-api-1")], "rejected", "noMatchingPin"),
        evaluate(API, T_START, [], "rejected", "noVerifiedChain"),
        evaluate("API.Conformance.Test.", T_START, [pin("m-api-1")], "trusted"),
        evaluate("x." + API, T_START, [pin("other")], "notPinned"),
        evaluate("not" + API, T_START, [pin("other")], "notPinned"),
        evaluate(CDN, T_START, [pin("other")], "reportOnly", "noMatchingPin"),
        evaluate(CDN, T_START, [pin("m-cdn-1")], "trusted"),
        evaluate("a.b." + WILD, T_START, [pin("m-wild-2")], "trusted"),
        evaluate("a." + WILD, T_START, [pin("other")], "rejected", "noMatchingPin"),
        evaluate("wild.conformance.test.evil.test", T_START, [pin("other")], "notPinned"),
        evaluate(LEGACY, T_START, [pin("base-legacy")], "trusted"),
        evaluate("192.0.2.1", T_START, [pin("other")], "notPinned"),
        evaluate("[2001:db8::1]", T_START, [pin("other")], "notPinned"),
        evaluate("conformance.test", T_START, [pin("other")], "notPinned"),
        refresh(T_START, "unchanged", [1, 1], False),
        refresh(T_LATER, "unchanged", [1, 1], True),
    ], baseline="baseline.json")


def case_thresholds(b):
    b.sign("root-1.json", root_payload(1, ["root1"], 1, ["pins1", "pins2", "pins3"], 2), ["root1"])
    payload = manifest_payload(1, M1_DOMAINS)
    b.sign("manifest-one-key.json", payload, ["pins1"])
    b.sign("manifest-stranger.json", payload, ["pins1", "stranger"])
    b.sign("manifest-root-key.json", payload, ["pins1", "root1"])
    b.sign("manifest-two-keys.json", payload, ["pins1", "pins3"])
    b.cosign("manifest-three-keys.json", "manifest-two-keys.json", ["pins2"])
    b.write_steps("Threshold 2 of 3 pins keys: only distinct keys of the pins role count (docs/DESIGN.md §2)", [
        serve(manifest="manifest-one-key.json"),
        refresh(T_START, "rejected", None, False, "threshold-not-met"),
        serve(manifest="manifest-stranger.json"),
        refresh(T_START, "rejected", None, False, "threshold-not-met"),
        serve(manifest="manifest-root-key.json"),
        refresh(T_START, "rejected", None, False, "threshold-not-met",
                policy={API: pol([pin("base-api-1"), pin("base-api-2")])}),
        serve(manifest="manifest-two-keys.json"),
        refresh(T_START, "updated", [1, 1], True, policy={API: pol([pin("m-api-1"), pin("m-api-2")])}),
        serve(manifest="manifest-three-keys.json"),
        refresh(T_START, "unchanged", [1, 1], False),
    ], baseline="baseline.json")


def case_rollback_equivocation(b):
    standard_root(b)
    b.sign("manifest-1.json", manifest_payload(1, M1_DOMAINS), ["pins1"])
    m2 = [domain(API, [pin("m2-api-1"), pin("m2-api-2")])]
    b.sign("manifest-2.json", manifest_payload(2, m2), ["pins1"])
    b.sign("manifest-2-other.json", manifest_payload(2, [domain(API, [pin("evil-1"), pin("evil-2")])]), ["pins1"])
    b.sign("manifest-3.json", manifest_payload(3, m2, issued="2026-12-20T00:00:00Z"), ["pins1"])
    after2 = {API: pol([pin("m2-api-1"), pin("m2-api-2")]), CDN: None}
    b.write_steps("Rollback and equivocation against the floor (docs/DESIGN.md §6 step 4)", [
        serve(manifest="manifest-2.json"),
        refresh(T_START, "updated", [1, 2], True, policy=after2),
        serve(manifest="manifest-1.json"),
        refresh(T_START, "rejected", [1, 2], False, "rollback", policy=after2),
        serve(manifest="manifest-2-other.json"),
        refresh(T_START, "rejected", [1, 2], False, "equivocation", policy=after2),
        evaluate(API, T_START, [pin("evil-1")], "rejected", "noMatchingPin"),
        serve(manifest="manifest-3.json"),
        refresh(T_START, "updated", [1, 3], True),
        serve(manifest="manifest-2.json"),
        refresh(T_START, "rejected", [1, 3], False, "rollback"),
    ], baseline="baseline.json")


def case_expiry(b):
    standard_root(b)
    b.sign("manifest-1.json", manifest_payload(1, [
        domain(API, [pin("base-api-1"), pin("m-api-1")]),
        domain(CDN, [pin("m-cdn-1"), pin("m-cdn-2")], enforce=False),
        domain(WILD, [pin("m-wild-1")], include=True)]), ["pins1"])
    b.sign("manifest-2.json", manifest_payload(2, [domain(API, [pin("m-api-1")])],
                                               issued="2027-01-20T00:00:00Z", expires="2027-04-01T00:00:00Z"),
           ["pins1"])
    expired = {API: pol([pin("base-api-1")]), CDN: pol([], False), WILD: pol([]), "a." + WILD: pol([]),
               LEGACY: pol([pin("base-legacy")])}
    b.write_steps("Expiry at every connection, lastKnownTime, and the fail-closed merge of an expired manifest "
                  "(docs/DESIGN.md §6, §7)", [
        serve(manifest="manifest-1.json"),
        refresh(T_START, "updated", [1, 1], True),
        policy("2027-02-28T23:59:59Z", {API: pol([pin("base-api-1"), pin("m-api-1")]),
                                        WILD: pol([pin("m-wild-1")])}),
        policy(T_AFTER_M, expired),
        evaluate(API, T_AFTER_M, [pin("m-api-1")], "rejected", "noMatchingPin"),
        evaluate(API, T_AFTER_M, [pin("base-api-1")], "trusted"),
        evaluate(WILD, T_AFTER_M, [pin("m-wild-1")], "rejected", "noUsablePin"),
        evaluate("x." + WILD, T_AFTER_M, [pin("m-wild-1")], "rejected", "noUsablePin"),
        evaluate(CDN, T_AFTER_M, [pin("m-cdn-1")], "reportOnly", "noUsablePin"),
        evaluate(LEGACY, T_AFTER_M, [pin("base-legacy")], "trusted"),
        serve(manifest="manifest-1.json"),
        refresh(T_AFTER_M, "rejected", [1, 1], False, "manifest-expired"),
        refresh("2027-02-20T00:00:00Z", "unchanged", [1, 1], True),
        # lastKnownTime is now 2027-02-20: a clock set back still sees the manifest expire on time.
        serve(manifest="manifest-2.json"),
        refresh("2027-01-21T00:00:00Z", "updated", [1, 2], True),
        policy("2027-03-31T23:59:59Z", {API: pol([pin("m-api-1")])}),
        policy("2027-04-01T00:00:00Z", {API: pol([]), LEGACY: pol([pin("base-legacy")])}),
    ], baseline="baseline.json")


def case_last_known_time(b):
    standard_root(b)
    b.sign("manifest-1.json", manifest_payload(1, M1_DOMAINS), ["pins1"])
    b.sign("manifest-2.json", manifest_payload(2, M1_DOMAINS, issued="2026-12-16T00:00:00Z",
                                               expires="2027-02-28T06:00:00Z"), ["pins1"])
    b.write_steps("The effective time is max(wall clock, lastKnownTime) (docs/DESIGN.md §6)", [
        serve(manifest="manifest-1.json", etag='"m1"'),
        refresh("2027-02-28T00:00:00Z", "updated", [1, 1], True),
        refresh("2027-02-28T12:00:00Z", "unchanged", [1, 1], True),
        serve(manifest="manifest-2.json"),
        refresh("2027-03-02T00:00:00Z", "rejected", [1, 1], False, "manifest-expired"),
        refresh(T_START, "rejected", [1, 1], False, "manifest-expired"),
    ])


def case_root_expired_and_cap(b):
    b.sign("root-1.json", root_payload(1, ["root1"], 1, ["pins1"], 1, expires="2027-02-01T00:00:00Z",
                                       cap=2592000), ["root1"])
    b.sign("manifest-long.json", manifest_payload(1, M1_DOMAINS, issued="2026-12-15T00:00:00Z",
                                                  expires="2027-01-15T00:00:01Z"), ["pins1"])
    b.sign("manifest-1.json", manifest_payload(1, M1_DOMAINS, issued="2026-12-15T00:00:00Z",
                                               expires="2027-01-14T00:00:00Z"), ["pins1"])
    b.sign("manifest-2.json", manifest_payload(2, M1_DOMAINS, issued="2027-01-10T00:00:00Z",
                                               expires="2027-02-05T00:00:00Z"), ["pins1"])
    b.sign("manifest-3.json", manifest_payload(3, [domain(API, [pin("base-api-1"), pin("m3-api-1")])],
                                               issued="2027-01-16T00:00:00Z", expires="2027-02-15T00:00:00Z"),
           ["pins1"])
    b.write_steps("The lifetime cap and the newest root's expiry (docs/DESIGN.md §4, §5)", [
        serve(manifest="manifest-long.json"),
        refresh(T_START, "rejected", None, False, "lifetime-exceeds-cap"),
        serve(manifest="manifest-1.json"),
        refresh(T_START, "updated", [1, 1], True),
        serve(manifest="manifest-2.json"),
        refresh("2027-02-01T00:00:00Z", "rejected", [1, 1], False, "root-expired"),
        policy("2027-01-13T00:00:00Z", {API: pol([pin("m-api-1"), pin("m-api-2")])}),
        policy("2027-01-14T00:00:00Z", {API: pol([])}),
        serve(manifest="manifest-3.json"),
        refresh("2027-01-20T00:00:00Z", "updated", [1, 3], True),
        # The manifest runs to 2027-02-15, but the newest root expires on 2027-02-01: it stops
        # counting as current at that second (docs/DESIGN.md §4, §7).
        policy("2027-01-31T23:59:59Z", {API: pol([pin("base-api-1"), pin("m3-api-1")])}),
        evaluate(API, "2027-01-31T23:59:59Z", [pin("m3-api-1")], "trusted"),
        policy("2027-02-01T00:00:00Z", {API: pol([pin("base-api-1")]), LEGACY: pol([pin("base-legacy")])}),
        evaluate(API, "2027-02-01T00:00:00Z", [pin("m3-api-1")], "rejected", "noMatchingPin"),
        evaluate(API, "2027-02-01T00:00:00Z", [pin("base-api-1")], "trusted"),
    ], baseline="baseline.json")


def case_format_and_scope(b):
    standard_root(b)
    b.sign("manifest-other-scope.json", manifest_payload(1, M1_DOMAINS, scope="other.test"), ["pins1"])
    b.raw("manifest-not-json.json", b"<html>maintenance</html>")
    b.raw("manifest-trailing.json", open(os.path.join(b.directory, b.sign(
        "manifest-1.json", manifest_payload(1, M1_DOMAINS), ["pins1"])), "rb").read() + b"x")
    b.write_steps("Envelopes and payloads that break the format, the payload type or the scope", [
        serve(manifest="manifest-other-scope.json"),
        refresh(T_START, "rejected", None, False, "scope-mismatch"),
        serve(manifest="manifest-not-json.json"),
        refresh(T_START, "rejected", None, False, "json-syntax"),
        serve(manifest="manifest-trailing.json"),
        refresh(T_START, "rejected", None, False, "json-trailing-bytes"),
        serve(manifest="root-1.json"),
        refresh(T_START, "rejected", None, False, "wrong-payload-kind"),
        serve(manifest="manifest-1.json"),
        refresh(T_START, "updated", [1, 1], True),
    ])


def case_network(b):
    standard_root(b)
    b.sign("manifest-1.json", manifest_payload(1, M1_DOMAINS), ["pins1"])
    b.sign("manifest-2.json", manifest_payload(2, M1_DOMAINS, issued="2026-12-16T00:00:00Z"), ["pins1"])
    b.write_steps("Statuses on the update channel: nothing becomes unpinned (docs/DESIGN.md §6)", [
        serve(manifest=404),
        refresh(T_START, "network", None, False),
        serve(manifest=500),
        refresh(T_START, "network", None, False),
        serve(roots={"2": 503}, manifest="manifest-1.json"),
        refresh(T_START, "network", None, False),
        serve(manifest="manifest-1.json", etag='"v1"'),
        refresh(T_START, "updated", [1, 1], True),
        serve(manifest="manifest-2.json", etag='"v1"'),
        refresh(T_LATER, "unchanged", [1, 1], True),
        serve(manifest=502),
        refresh(T_LATER, "network", [1, 1], False, policy={API: pol([pin("m-api-1"), pin("m-api-2")])}),
        serve(manifest="manifest-2.json", etag='"v2"'),
        refresh(T_LATER, "updated", [1, 2], True),
    ])


def case_update_channel_statuses(b):
    standard_root(b)
    b.sign("manifest-1.json", manifest_payload(1, M1_DOMAINS), ["pins1"])
    b.write_steps("The update channel's status table (docs/DESIGN.md §6, docs/ARCHITECTURE.md): 404 and 410 on "
                  "root/N+1.json end the root walk; a final 3xx (a redirect the transport did not follow), a 304 "
                  "to a root request and a 304 to a request that sent no If-None-Match are refused "
                  "(fetch-refused); 404 and 410 on manifest.json are failures", [
        serve(roots={"2": 410}, manifest="manifest-1.json"),
        refresh(T_START, "updated", [1, 1], True),
        serve(roots={"2": 301}, manifest="manifest-1.json"),
        refresh(T_START, "rejected", [1, 1], False, "fetch-refused"),
        serve(roots={"2": 304}, manifest="manifest-1.json"),
        refresh(T_START, "rejected", [1, 1], False, "fetch-refused"),
        serve(roots={"2": 410}, manifest=302),
        refresh(T_START, "rejected", [1, 1], False, "fetch-refused"),
        serve(roots={"2": 410}, manifest=308),
        refresh(T_START, "rejected", [1, 1], False, "fetch-refused"),
        # manifest-1.json was served without an ETag: the client holds none and sends no If-None-Match.
        serve(roots={"2": 410}, manifest=304),
        refresh(T_START, "rejected", [1, 1], False, "fetch-refused"),
        serve(roots={"2": 410}, manifest=410),
        refresh(T_START, "network", [1, 1], False, "network"),
        serve(manifest=404),
        refresh(T_START, "network", [1, 1], False, "network"),
        serve(roots={"2": 500}, manifest="manifest-1.json"),
        refresh(T_START, "network", [1, 1], False, "network"),
        serve(manifest="manifest-1.json"),
        refresh(T_START, "unchanged", [1, 1], False),
    ])


def case_rotation(b):
    standard_root(b)
    # root 2: root role root1 -> root2, pins role pins1 -> pins2 (a changed pins role).
    r2 = root_payload(2, ["root2"], 1, ["pins2"], 1)
    b.sign("root-2.json", r2, ["root1", "root2"])
    b.sign("root-2-old-only.json", r2, ["root1"])
    b.sign("root-2-new-only.json", r2, ["root2"])
    b.sign("root-3-as-2.json", root_payload(3, ["root2"], 1, ["pins2"], 1), ["root1", "root2"])
    b.sign("root-2-other-scope.json", root_payload(2, ["root2"], 1, ["pins2"], 1, extra={"scope": "other.test"}),
           ["root1", "root2"])
    b.sign("manifest-1.json", manifest_payload(1, M1_DOMAINS, revoked=[pin("base-legacy")]), ["pins1"])
    b.sign("manifest-2-r1.json", manifest_payload(2, M1_DOMAINS, issued="2026-12-16T00:00:00Z"),
           ["pins1", "pins2"])
    b.sign("manifest-r3.json", manifest_payload(3, M1_DOMAINS, root_version=3), ["pins2"])
    b.sign("manifest-2-old-key.json", manifest_payload(2, M1_DOMAINS, root_version=2), ["pins1"])
    b.sign("manifest-2.json", manifest_payload(2, [domain(API, [pin("r2-api-1"), pin("r2-api-2")])],
                                               root_version=2), ["pins2"])
    b.write_steps("Root rotation: both thresholds, exactly the next version, the same scope; manifests under "
                  "the newest root; the revoked set restarts with the new pins role (docs/DESIGN.md §4, §7)", [
        serve(manifest="manifest-1.json"),
        refresh(T_START, "updated", [1, 1], True, policy={LEGACY: pol([])}),
        serve(roots={"2": "root-2-old-only.json"}, manifest="manifest-1.json"),
        refresh(T_START, "rejected", [1, 1], False, "threshold-not-met"),
        serve(roots={"2": "root-2-new-only.json"}, manifest="manifest-1.json"),
        refresh(T_START, "rejected", [1, 1], False, "threshold-not-met"),
        serve(roots={"2": "root-3-as-2.json"}, manifest="manifest-1.json"),
        refresh(T_START, "rejected", [1, 1], False, "root-not-next"),
        serve(roots={"2": "root-2-other-scope.json"}, manifest="manifest-1.json"),
        refresh(T_START, "rejected", [1, 1], False, "scope-mismatch"),
        serve(roots={"2": "root-2.json"}, manifest="manifest-2-r1.json"),
        refresh(T_START, "rejected", [1, 1], True, "root-version-mismatch",
                policy={API: pol([]), LEGACY: pol([]), CDN: pol([], False)}),
        evaluate(API, T_START, [pin("m-api-1")], "rejected", "noUsablePin"),
        serve(roots={"2": "root-2.json"}, manifest="manifest-r3.json"),
        refresh(T_START, "rejected", [1, 1], False, "root-version-mismatch"),
        serve(roots={"2": "root-2.json"}, manifest="manifest-2-old-key.json"),
        refresh(T_START, "rejected", [1, 1], False, "threshold-not-met"),
        serve(roots={"2": "root-2.json"}, manifest="manifest-2.json"),
        refresh(T_START, "updated", [2, 2], True, policy={
            API: pol([pin("r2-api-1"), pin("r2-api-2")]), LEGACY: pol([pin("base-legacy")]), CDN: None}),
        evaluate(LEGACY, T_START, [pin("base-legacy")], "trusted"),
        serve(roots={"2": "root-2.json"}, manifest="manifest-1.json"),
        refresh(T_START, "rejected", [2, 2], False, "threshold-not-met"),
    ], baseline="baseline.json")


def case_rotation_cap(b):
    standard_root(b)
    roots = {}
    for version in range(2, 259):
        name = "root-%d.json" % version
        b.sign(name, root_payload(version, ["root1"], 1, ["pins1"], 1), ["root1"])
        roots[str(version)] = name
    b.sign("manifest-1.json", manifest_payload(1, M1_DOMAINS, root_version=258), ["pins1"])
    b.write_steps("At most 256 rotations per refresh; the verified prefix is kept and the walk resumes "
                  "(docs/DESIGN.md §4)", [
        serve(roots=roots, manifest="manifest-1.json"),
        refresh(T_START, "rejected", None, True, "too-many-rotations"),
        refresh(T_START, "updated", [258, 1], True, policy={API: pol([pin("m-api-1"), pin("m-api-2")])}),
        refresh(T_START, "unchanged", [258, 1], False),
    ])


def case_revocation(b):
    standard_root(b)
    b.sign("manifest-1.json", manifest_payload(1, [domain(API, [pin("m-api-1"), pin("m-api-2")])],
                                               revoked=[pin("m-api-2"), pin("base-legacy")]), ["pins1"])
    b.sign("manifest-2.json", manifest_payload(2, [domain(API, [pin("m-api-1"), pin("m-api-2")])],
                                               issued="2026-12-16T00:00:00Z"), ["pins1"])
    b.write_steps("Revoked pins never count, the baseline's included, and revocations persist (docs/DESIGN.md §7)",
                  [
        serve(manifest="manifest-1.json"),
        refresh(T_START, "updated", [1, 1], True, policy={API: pol([pin("m-api-1")]), LEGACY: pol([])}),
        evaluate(API, T_START, [pin("m-api-2")], "rejected", "noMatchingPin"),
        evaluate(LEGACY, T_START, [pin("base-legacy")], "rejected", "noUsablePin"),
        serve(manifest="manifest-2.json"),
        refresh(T_START, "updated", [1, 2], True, policy={API: pol([pin("m-api-1")]), LEGACY: pol([])}),
        {"action": "restart"},
        policy(T_START, {API: pol([pin("m-api-1")]), LEGACY: pol([])}),
        policy(T_AFTER_M, {API: pol([]), LEGACY: pol([])}),
    ], baseline="baseline.json")


def case_enforce_or(b):
    standard_root(b)
    b.sign("manifest-1.json", manifest_payload(1, [
        domain(API, [pin("m-api-1"), pin("m-api-2")], enforce=False),
        domain("conformance.test", [pin("apex-1"), pin("apex-2")], include=True),
        domain("report.conformance.test", [pin("rep-1"), pin("rep-2")], enforce=False),
        domain("deep.report.conformance.test", [pin("deep-1")], enforce=False),
    ]), ["pins1"])
    b.write_steps("enforce is ORed over B, M and every matching entry; pins from the longest match "
                  "(docs/DESIGN.md §7, §8)", [
        serve(manifest="manifest-1.json"),
        refresh(T_START, "updated", [1, 1], True, policy={
            API: pol([pin("m-api-1"), pin("m-api-2")]),
            "report.conformance.test": pol([pin("rep-1"), pin("rep-2")]),
            "x.deep.report.conformance.test": pol([pin("apex-1"), pin("apex-2")]),
            "deep.report.conformance.test": pol([pin("deep-1")]),
            "other.conformance.test": pol([pin("apex-1"), pin("apex-2")])}),
        evaluate(API, T_START, [pin("base-api-1")], "rejected", "noMatchingPin"),
        evaluate("report.conformance.test", T_START, [pin("apex-1")], "rejected", "noMatchingPin"),
        evaluate("deep.report.conformance.test", T_START, [pin("rep-1")], "rejected", "noMatchingPin"),
        evaluate("deep.report.conformance.test", T_START, [pin("deep-1")], "trusted"),
        evaluate("a.b.conformance.test", T_START, [pin("apex-2")], "trusted"),
        evaluate("conformance.test", T_START, [pin("x")], "rejected", "noMatchingPin"),
    ], baseline="baseline.json")


def case_state_deleted(b):
    standard_root(b)
    b.sign("manifest-1.json", manifest_payload(1, M1_DOMAINS), ["pins1"])
    b.sign("manifest-2.json", manifest_payload(2, [domain(API, [pin("m2-api-1")])],
                                               issued="2026-12-16T00:00:00Z"), ["pins1"])
    b.write_steps("All state deleted: a fresh install, no floor (docs/DESIGN.md §6)", [
        serve(manifest="manifest-2.json"),
        refresh(T_START, "updated", [1, 2], True),
        {"action": "restart"},
        policy(T_START, {API: pol([pin("m2-api-1")])}),
        serve(manifest="manifest-1.json"),
        refresh(T_START, "rejected", [1, 2], False, "rollback"),
        {"action": "deleteState"},
        policy(T_START, {API: pol([pin("base-api-1"), pin("base-api-2")]), CDN: None}),
        refresh(T_START, "updated", [1, 1], True, policy={API: pol([pin("m-api-1"), pin("m-api-2")])}),
    ], baseline="baseline.json")


def case_envelope_format(b):
    standard_root(b)
    b.sign("manifest-1.json", manifest_payload(1, M1_DOMAINS), ["pins1"])
    envelope = json.loads(open(os.path.join(b.directory, "manifest-1.json"), "rb").read())
    signature = envelope["signatures"][0]

    def variant(name, **changes):
        copy = dict(envelope)
        copy.update(changes)
        return b.raw(name, dumps(copy))

    variant("unknown-payload-type.json", payloadType="application/json")
    url_safe = signature["sig"].replace("+", "-").replace("/", "_")
    if url_safe == signature["sig"]:
        sys.exit("envelope-format: the signature has no + or /; pick another payload")
    variant("url-safe-signature.json", signatures=[{"keyid": signature["keyid"], "sig": url_safe}])
    variant("payload-with-newline.json", payload=envelope["payload"][:40] + "\n" + envelope["payload"][40:])
    variant("unpadded-signature.json", signatures=[{"keyid": signature["keyid"], "sig": signature["sig"].rstrip("=")}])
    variant("no-keyid.json", signatures=[{"sig": signature["sig"]}])
    variant("keyid-uppercase.json", signatures=[{"keyid": signature["keyid"].upper(), "sig": signature["sig"]}])
    variant("keyid-of-other-key.json", signatures=[{"keyid": key_id("pins2"), "sig": signature["sig"]}])
    variant("bad-signature.json", signatures=[{"keyid": signature["keyid"], "sig": b64(bytes(64))}])
    variant("too-many-signatures.json", signatures=[signature] * 33)
    variant("no-signatures.json", signatures=[])
    b.raw("duplicate-member.json", dumps(envelope)[:-1] + b',"payload":"e30="}')
    b.raw("extra-member.json", dumps(envelope)[:-1] + b',"x-note":"ignored"}')
    steps = []
    for name, reason in [("unknown-payload-type.json", "wrong-payload-type"),
                         ("url-safe-signature.json", "invalid-base64"),
                         ("payload-with-newline.json", "invalid-base64"),
                         ("unpadded-signature.json", "invalid-base64"),
                         ("no-keyid.json", "missing-member"),
                         ("keyid-uppercase.json", "invalid-key-id"),
                         ("keyid-of-other-key.json", "threshold-not-met"),
                         ("bad-signature.json", "threshold-not-met"),
                         ("too-many-signatures.json", "json-too-many-elements"),
                         ("no-signatures.json", "threshold-not-met"),
                         ("duplicate-member.json", "json-duplicate-name")]:
        steps += [serve(manifest=name), refresh(T_START, "rejected", None, False, reason)]
    steps += [serve(manifest="extra-member.json"), refresh(T_START, "updated", [1, 1], True)]
    b.write_steps("The DSSE envelope's strict rules (docs/DESIGN.md §3)", steps)


def case_root_threshold(b):
    b.sign("root-1.json", root_payload(1, ["root1", "root2", "root3"], 2, ["pins1"], 1), ["root1", "root2"])
    r2 = root_payload(2, ["root1", "root2", "root3"], 2, ["pins1", "pins2"], 2)
    b.sign("root-2-one-old.json", r2, ["root1"])
    b.sign("root-2-stranger.json", r2, ["root1", "stranger"])
    b.sign("root-2-pins-keys.json", r2, ["root1", "pins1"])
    b.sign("root-2.json", r2, ["root2", "root3"])
    b.sign("manifest-1.json", manifest_payload(1, M1_DOMAINS), ["pins1"])
    b.sign("manifest-2-one.json", manifest_payload(2, M1_DOMAINS, root_version=2), ["pins1"])
    b.sign("manifest-2.json", manifest_payload(2, M1_DOMAINS, root_version=2), ["pins1", "pins2"])
    b.write_steps("A root role of 2 of 3 keys signs the next root; a new pins threshold of 2 applies to the next "
                  "manifest (docs/DESIGN.md §2, §4)", [
        serve(manifest="manifest-1.json"),
        refresh(T_START, "updated", [1, 1], True),
        serve(roots={"2": "root-2-one-old.json"}, manifest="manifest-1.json"),
        refresh(T_START, "rejected", [1, 1], False, "threshold-not-met"),
        serve(roots={"2": "root-2-stranger.json"}, manifest="manifest-1.json"),
        refresh(T_START, "rejected", [1, 1], False, "threshold-not-met"),
        serve(roots={"2": "root-2-pins-keys.json"}, manifest="manifest-1.json"),
        refresh(T_START, "rejected", [1, 1], False, "threshold-not-met"),
        serve(roots={"2": "root-2.json"}, manifest="manifest-2-one.json"),
        refresh(T_START, "rejected", [1, 1], True, "threshold-not-met"),
        {"action": "restart"},
        serve(roots={"2": "root-2.json"}, manifest="manifest-2.json"),
        refresh(T_START, "updated", [2, 2], True, policy={API: pol([pin("m-api-1"), pin("m-api-2")])}),
        {"action": "restart"},
        refresh(T_START, "unchanged", [2, 2], False, policy={API: pol([pin("m-api-1"), pin("m-api-2")])}),
    ])


def case_events(b):
    standard_root(b)
    b.sign("root-2.json", root_payload(2, ["root1"], 1, ["pins2"], 1), ["root1"])
    b.sign("manifest-1.json", manifest_payload(1, M1_DOMAINS, issued="2027-01-05T00:00:00Z",
                                               expires="2027-03-01T00:00:00Z"), ["pins1"])
    b.sign("manifest-2.json", manifest_payload(2, M1_DOMAINS, issued="2026-12-20T00:00:00Z",
                                               expires="2027-01-03T00:00:00Z"), ["pins1"])
    b.sign("manifest-2-other.json", manifest_payload(2, M1_DOMAINS[:1], issued="2026-12-20T00:00:00Z",
                                                     expires="2027-01-03T00:00:00Z"), ["pins1"])
    b.write_steps("Events a refresh reports: a future-dated issuedAt (which never moves lastKnownTime), a clock "
                  "stepped back, equivocation, a root accepted, a manifest no longer current (docs/DESIGN.md §6)", [
        serve(manifest="manifest-1.json"),
        refresh(T_START, "updated", [1, 1], True, events=["updated", "futureDated"]),
        # lastKnownTime is T_START, not the issuedAt of 2027-01-05: a manifest expiring on 2027-01-03 is current.
        serve(manifest="manifest-2.json", etag='"m2"'),
        refresh("2027-01-02T00:00:00Z", "updated", [1, 2], True, events=["updated"], absent=["futureDated"]),
        serve(manifest="manifest-2-other.json"),
        refresh("2027-01-02T00:00:00Z", "rejected", [1, 2], False, "equivocation",
                events=["equivocation", "rejected"]),
        serve(manifest="manifest-2.json", etag='"m2"'),
        refresh("2027-01-01T23:55:00Z", "unchanged", [1, 2], False, absent=["clockSteppedBack"]),
        refresh("2027-01-01T23:54:59Z", "unchanged", [1, 2], False, events=["clockSteppedBack", "unchanged"]),
        refresh("2027-01-03T00:00:00Z", "unchanged", [1, 2], True, events=["unchanged", "manifestNotCurrent"]),
        serve(roots={"2": "root-2.json"}, manifest="manifest-2.json", etag='"m2"'),
        refresh("2027-01-03T00:00:00Z", "unchanged", [1, 2], True, events=["rootAccepted", "manifestNotCurrent"]),
    ])


def case_app_upgrade(b):
    standard_root(b)
    # The team's root 2 and a thief's root 2 (made with the stolen root1 key): same version, other bytes.
    b.sign("root-2.json", root_payload(2, ["root2"], 1, ["pins2"], 1), ["root1", "root2"])
    b.sign("root-2-thief.json", root_payload(2, ["stranger"], 1, ["stranger"], 1), ["root1", "stranger"])
    b.sign("manifest-thief.json", manifest_payload(9, [domain(API, [pin("thief-1"), pin("thief-2")])],
                                                   root_version=2), ["stranger"])
    b.sign("manifest-2.json", manifest_payload(2, [domain(API, [pin("r2-api-1"), pin("r2-api-2")])],
                                               root_version=2), ["pins2"])
    b.write_steps("An app release embedding the team's root 2 drops a thief's fork of the root chain and the "
                  "floor it set (docs/DESIGN.md §6, start-up)", [
        serve(roots={"2": "root-2-thief.json"}, manifest="manifest-thief.json"),
        refresh(T_START, "updated", [2, 9], True, policy={API: pol([pin("thief-1"), pin("thief-2")])}),
        serve(roots={"2": "root-2.json"}, manifest="manifest-2.json"),
        refresh(T_START, "rejected", [2, 9], False, "threshold-not-met"),
        {"action": "upgradeApp", "embeddedRoot": "root-2.json"},
        # The thief's manifest no longer verifies: its domains stay enforced with no pins.
        policy(T_START, {API: pol([]), "x." + API: pol([]), LEGACY: pol([pin("base-legacy")])}),
        refresh(T_START, "updated", [2, 2], True, policy={API: pol([pin("r2-api-1"), pin("r2-api-2")])}),
        {"action": "restart"},
        policy(T_START, {API: pol([pin("r2-api-1"), pin("r2-api-2")])}),
        serve(roots={"2": "root-2-thief.json"}, manifest="manifest-thief.json"),
        refresh(T_START, "rejected", [2, 2], False, "threshold-not-met"),
    ], baseline="baseline.json")


def case_app_upgrade_same_chain(b):
    standard_root(b)
    b.sign("root-2.json", root_payload(2, ["root2"], 1, ["pins2"], 1), ["root1", "root2"])
    b.sign("manifest-2.json", manifest_payload(2, [domain(API, [pin("r2-api-1"), pin("r2-api-2")])],
                                               root_version=2), ["pins2"])
    b.sign("manifest-1.json", manifest_payload(1, M1_DOMAINS, root_version=2), ["pins2"])
    current = {API: pol([pin("r2-api-1"), pin("r2-api-2")])}
    b.write_steps("An app release embedding the root the client already accepted keeps the floor and the "
                  "manifest (docs/DESIGN.md §6, start-up)", [
        serve(roots={"2": "root-2.json"}, manifest="manifest-2.json"),
        refresh(T_START, "updated", [2, 2], True, policy=current),
        {"action": "upgradeApp", "embeddedRoot": "root-2.json"},
        policy(T_START, current),
        serve(manifest="manifest-1.json"),
        refresh(T_START, "rejected", [2, 2], False, "rollback", policy=current),
        serve(manifest="manifest-2.json"),
        refresh(T_START, "unchanged", [2, 2], False),
    ], baseline="baseline.json")


def case_include_subdomains_or(b):
    standard_root(b)
    b.sign("manifest-1.json", manifest_payload(1, [
        domain(LEGACY, [pin("base-legacy"), pin("m-legacy-1")], include=True, enforce=False)]), ["pins1"])
    b.write_steps("includeSubdomains and enforce are ORed over B and M, current or expired (docs/DESIGN.md §7)", [
        policy(T_START, {LEGACY: pol([pin("base-legacy")]), "x." + LEGACY: None}),
        serve(manifest="manifest-1.json"),
        refresh(T_START, "updated", [1, 1], True, policy={
            LEGACY: pol([pin("base-legacy"), pin("m-legacy-1")]),
            "x." + LEGACY: pol([pin("base-legacy"), pin("m-legacy-1")]),
            "x.y." + LEGACY: pol([pin("base-legacy"), pin("m-legacy-1")])}),
        evaluate("x." + LEGACY, T_START, [pin("other")], "rejected", "noMatchingPin"),
        evaluate("x." + LEGACY, T_START, [pin("m-legacy-1")], "trusted"),
        policy(T_AFTER_M, {LEGACY: pol([pin("base-legacy")]), "x." + LEGACY: pol([pin("base-legacy")])}),
        evaluate("x." + LEGACY, T_AFTER_M, [pin("m-legacy-1")], "rejected", "noMatchingPin"),
    ], baseline="baseline.json")


CASES = [
    ("update-and-evaluate", case_update_and_evaluate),
    ("thresholds", case_thresholds),
    ("rollback-equivocation", case_rollback_equivocation),
    ("expiry-merge", case_expiry),
    ("last-known-time", case_last_known_time),
    ("root-expiry-lifetime-cap", case_root_expired_and_cap),
    ("format-and-scope", case_format_and_scope),
    ("network", case_network),
    ("update-channel-statuses", case_update_channel_statuses),
    ("rotation", case_rotation),
    ("rotation-cap", case_rotation_cap),
    ("revocation", case_revocation),
    ("enforce-or", case_enforce_or),
    ("state-deleted", case_state_deleted),
    ("envelope-format", case_envelope_format),
    ("root-threshold", case_root_threshold),
    ("events", case_events),
    ("app-upgrade-drops-fork", case_app_upgrade),
    ("app-upgrade-same-chain", case_app_upgrade_same_chain),
    ("include-subdomains-or", case_include_subdomains_or),
]
