# Pending cases (conformance/cases-pending/): rules of docs/DESIGN.md that not every SDK implements yet.

from .common import *  # noqa: F401,F403 (the case vocabulary)
from .logcases import LOG_CASES


def case_rotation_keeps_pins(b):
    standard_root(b)
    b.sign_openssl("root-2.json", root_payload(2, ["root2"], 1, ["pins1"], 1, extra={"pinsRoleSince": 1}),
           ["root1", "root2"])
    b.sign("manifest-1.json", manifest_payload(1, M1_DOMAINS), ["pins1"])
    b.sign("manifest-2.json", manifest_payload(2, M1_DOMAINS, issued="2026-12-16T00:00:00Z"), ["pins1"])
    current = {API: pol([pin("m-api-1"), pin("m-api-2")])}
    b.write_steps("A rotation that keeps the pins role keeps the stored manifest current; a manifest named "
                  "by root 1 is accepted under root 2 (pinsRoleSince 1)", [
        serve(manifest="manifest-1.json"),
        refresh(T_START, "updated", [1, 1], True, policy=current),
        serve(roots={"2": "root-2.json"}, manifest="manifest-1.json"),
        refresh(T_START, "unchanged", [1, 1], True, policy=current),
        {"action": "restart"},
        policy(T_START, current),
        serve(roots={"2": "root-2.json"}, manifest="manifest-2.json"),
        refresh(T_START, "updated", [1, 2], True, policy=current),
    ], baseline="baseline.json")


def case_pins_role_since_cut(b):
    standard_root(b)
    b.sign_openssl("root-2.json", root_payload(2, ["root2"], 1, ["pins1"], 1, extra={"pinsRoleSince": 2}),
           ["root1", "root2"])
    b.sign("manifest-1.json", manifest_payload(1, M1_DOMAINS), ["pins1"])
    b.sign("manifest-2.json", manifest_payload(2, M1_DOMAINS, issued="2026-12-16T00:00:00Z"), ["pins1"])
    b.sign("manifest-3.json", manifest_payload(3, M1_DOMAINS, root_version=2), ["pins1"])
    b.write_steps("pinsRoleSince = the new version cuts off manifests named by older roots", [
        serve(manifest="manifest-1.json"),
        refresh(T_START, "updated", [1, 1], True),
        serve(roots={"2": "root-2.json"}, manifest="manifest-2.json"),
        refresh(T_START, "rejected", [1, 1], True, "root-version-mismatch",
                policy={API: pol([]), LEGACY: pol([pin("base-legacy")])}),
        serve(roots={"2": "root-2.json"}, manifest="manifest-3.json"),
        refresh(T_START, "updated", [2, 3], True, policy={API: pol([pin("m-api-1"), pin("m-api-2")])}),
    ], baseline="baseline.json")


def case_copy_a_corrupted(b):
    standard_root(b)
    b.sign("manifest-1.json", manifest_payload(1, M1_DOMAINS), ["pins1"])
    b.sign("manifest-2.json", manifest_payload(2, [domain(API, [pin("m2-api-1")])],
                                               issued="2026-12-16T00:00:00Z"), ["pins1"])
    after = {API: pol([pin("m2-api-1")]), CDN: None}
    b.write_steps("Losing one copy never lowers protection: the floor survives in copy B (docs/DESIGN.md §6)", [
        serve(manifest="manifest-2.json"),
        refresh(T_START, "updated", [1, 2], True, policy=after),
        {"action": "corruptCopy", "copy": "A"},
        policy(T_START, after),
        serve(manifest="manifest-1.json"),
        refresh(T_START, "rejected", [1, 2], False, "rollback", policy=after),
        {"action": "corruptCopy", "copy": "B"},
        policy(T_START, after),
        refresh(T_START, "rejected", [1, 2], False, "rollback"),
    ], baseline="baseline.json")


def case_pins_role_since_rules(b):
    standard_root(b)
    same_pins = root_payload(2, ["root1"], 1, ["pins1"], 1, extra={"pinsRoleSince": 1})
    b.sign_openssl("root-2.json", same_pins, ["root1"])
    b.sign_openssl("root-2-over-version.json", root_payload(2, ["root1"], 1, ["pins1"], 1,
                                                            extra={"pinsRoleSince": 3}), ["root1"])
    b.sign_openssl("root-3-kept-while-changed.json", root_payload(3, ["root1"], 1, ["pins1", "pins2"], 1,
                                                                  extra={"pinsRoleSince": 1}), ["root1"])
    b.sign_openssl("root-3-zero.json", root_payload(3, ["root1"], 1, ["pins1"], 1,
                                                       extra={"pinsRoleSince": 0}), ["root1"])
    b.sign_openssl("root-3-raised-cap-kept.json", root_payload(3, ["root1"], 1, ["pins1"], 1, cap=15552000,
                                                               extra={"pinsRoleSince": 1}), ["root1"])
    b.sign_openssl("root-3.json", root_payload(3, ["root1"], 1, ["pins1", "pins2"], 1,
                                               extra={"pinsRoleSince": 3}), ["root1"])
    # A draft signed only by pins2 while root 1's pins role was {pins1}: never valid under the root it names.
    b.sign("manifest-draft.json", manifest_payload(1, [domain(API, [pin("draft-1"), pin("draft-2")])]), ["pins2"])
    b.sign("manifest-1.json", manifest_payload(1, M1_DOMAINS), ["pins1"])
    b.sign("manifest-3.json", manifest_payload(2, M1_DOMAINS, root_version=3), ["pins2"])
    b.write_steps("pinsRoleSince: its range, kept only while the pins role and cap are unchanged, and a draft "
                  "pre-signed by a key added later never becomes valid (docs/DESIGN.md §4, §5)", [
        serve(roots={"2": "root-2-over-version.json"}, manifest="manifest-1.json"),
        refresh(T_START, "rejected", None, False, "integer-out-of-range"),
        serve(roots={"2": "root-2.json"}, manifest="manifest-1.json"),
        refresh(T_START, "updated", [1, 1], True),
        serve(roots={"2": "root-2.json", "3": "root-3-kept-while-changed.json"}, manifest="manifest-draft.json"),
        refresh(T_START, "rejected", [1, 1], False, "pins-role-since-invalid"),
        serve(roots={"2": "root-2.json", "3": "root-3-zero.json"}, manifest="manifest-1.json"),
        refresh(T_START, "rejected", [1, 1], False, "integer-out-of-range"),
        serve(roots={"2": "root-2.json", "3": "root-3-raised-cap-kept.json"}, manifest="manifest-1.json"),
        refresh(T_START, "rejected", [1, 1], False, "pins-role-since-invalid"),
        serve(roots={"2": "root-2.json", "3": "root-3.json"}, manifest="manifest-draft.json"),
        refresh(T_START, "rejected", [1, 1], True, "root-version-mismatch"),
        serve(roots={"2": "root-2.json", "3": "root-3.json"}, manifest="manifest-3.json"),
        refresh(T_START, "updated", [3, 2], True),
    ])


def case_upgrade_reverifies_stored(b):
    standard_root(b)
    b.sign_openssl("root-2.json", root_payload(2, ["root2"], 1, ["pins1"], 1, extra={"pinsRoleSince": 1}),
                   ["root1", "root2"])
    b.sign_openssl("root-2-new-pins.json", root_payload(2, ["root2"], 1, ["pins2"], 1,
                                                        extra={"pinsRoleSince": 2}), ["root1", "root2"])
    b.sign("manifest-1.json", manifest_payload(1, M1_DOMAINS), ["pins1"])
    current = {API: pol([pin("m-api-1"), pin("m-api-2")])}
    b.write_steps("Start-up after a release embedding a newer root: the stored manifest named by an older root "
                  "is re-verified under the embedded root's pins role (docs/DESIGN.md §6)", [
        serve(manifest="manifest-1.json"),
        refresh(T_START, "updated", [1, 1], True, policy=current),
        {"action": "upgradeApp", "embeddedRoot": "root-2.json"},
        policy(T_START, current),
        {"action": "upgradeApp", "embeddedRoot": "root-2-new-pins.json"},
        policy(T_START, {API: pol([]), LEGACY: pol([pin("base-legacy")])}),
    ], baseline="baseline.json")


def case_refusal_order(b):
    standard_root(b)
    b.sign("manifest-other-scope.json", manifest_payload(1, M1_DOMAINS, scope="other.test"), ["stranger"])
    b.sign("manifest-root-5.json", manifest_payload(1, M1_DOMAINS, root_version=5), ["stranger"])
    b.sign("manifest-too-long.json", manifest_payload(1, M1_DOMAINS, expires="2027-06-01T00:00:00Z"), ["stranger"])
    b.write_steps("A refusal names the most specific cause, in the order payloadType, strict payload, scope, "
                  "rootVersion, signatures, lifetime cap (docs/DESIGN.md §5)", [
        serve(manifest="manifest-other-scope.json"),
        refresh(T_START, "rejected", None, False, "scope-mismatch"),
        serve(manifest="manifest-root-5.json"),
        refresh(T_START, "rejected", None, False, "root-version-mismatch"),
        serve(manifest="manifest-too-long.json"),
        refresh(T_START, "rejected", None, False, "threshold-not-met"),
    ], pending="the refusal order of docs/DESIGN.md §5: both SDKs check signatures before "
               "the payload is parsed, so these read threshold-not-met")


# Written as pending, now implemented by both SDKs: generated into cases/.
GRADUATED = [
    ("rotation-keeps-pins-role", case_rotation_keeps_pins),
    ("pins-role-since-cut", case_pins_role_since_cut),
    ("copy-a-corrupted", case_copy_a_corrupted),
    ("pins-role-since-rules", case_pins_role_since_rules),
    ("upgrade-reverifies-stored-manifest", case_upgrade_reverifies_stored),
]
# The transparency-log cases, written as pending and passed by both SDKs.
GRADUATED += LOG_CASES

PENDING = [
    ("refusal-order", case_refusal_order),
]
