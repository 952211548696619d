# Transparency-log conformance cases (docs/DESIGN.md §12): a log model, signed notes, cosignatures, tlog-proof@v1.
#
# The log is modelled here independently of the Swift code: RFC 9162 §2.1 hashing and inclusion paths
# (RFC 6962 PATH), C2SP signed-note key IDs and signature lines, tlog-cosignature/v1 messages and
# tlog-proof@v1 files, all written from the specs with hashlib; Ed25519 signatures come from
# `openssl pkeyutl -sign -rawin` with the fixed keys of conformance/keys/ (deterministic).

import calendar
import hashlib
import json
import os
import subprocess
import sys
import time

from .common import *  # noqa: F401,F403 (the case vocabulary)
from .common import HERE, raw_public_key

ORIGIN = "conformance.test/log"
WITNESSES = {  # key file -> (witness name, URL)
    "witness1": ("witness-1.conformance.test", "https://witness1.conformance.test/w"),
    "witness2": ("witness-2.conformance.test", "https://witness2.conformance.test:8443"),
    "witness3": ("witness-3.conformance.test", "https://witness3.conformance.test/a/b"),
    "witness4": ("witness-4.conformance.test", "https://witness4.conformance.test"),  # listed by no root
}
MAX_AGE = 86400            # one day
GRACE = 604800             # seven days


def posix(text):
    return calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%SZ"))


def rfc3339(seconds):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


T0 = posix(T_START)


def sha256(data):
    return hashlib.sha256(data).digest()


def key_id(name, type_byte, key):
    return sha256(name.encode() + b"\n" + bytes([type_byte]) + key)[:4]


def verifier_key(name, type_byte, key_file):
    key = raw_public_key(key_file)
    return name + "+" + key_id(name, type_byte, key).hex() + "+" + b64(bytes([type_byte]) + key)


def ed25519(b, key_file, message):
    path = os.path.join(b.work, "note-message")
    with open(path, "wb") as handle:
        handle.write(message)
    result = subprocess.run(["openssl", "pkeyutl", "-sign", "-rawin", "-inkey",
                             os.path.join(HERE, "keys", key_file + ".key"), "-in", path], capture_output=True)
    if result.returncode != 0 or len(result.stdout) != 64:
        sys.exit("openssl pkeyutl (note) failed: %s" % result.stderr.decode())
    return result.stdout


def log_member(log_key="log1", origin=ORIGIN, witnesses=("witness1", "witness2", "witness3"), quorum=2,
               max_age=MAX_AGE, grace=GRACE):
    return {"log": {
        "origin": origin, "key": verifier_key(origin, 0x01, log_key),
        "witnesses": [{"key": verifier_key(WITNESSES[w][0], 0x04, w), "url": WITNESSES[w][1]} for w in witnesses],
        "quorum": quorum, "maxCheckpointAge": max_age, "checkpointGrace": grace}}


def head(sequence, root_version, root_payload_bytes, manifest_root_version, manifest_version, manifest_payload_bytes):
    """The head record of docs/TRANSPARENCY.md, byte for byte."""
    return ("pinion.head/v1\nscope %s\nsequence %d\nroot %d %s\nmanifest %d %d %s\n" % (
        SCOPE, sequence, root_version, hashlib.sha256(root_payload_bytes).hexdigest(), manifest_root_version,
        manifest_version, hashlib.sha256(manifest_payload_bytes).hexdigest())).encode()


class Log:
    """An append-only list of entries with RFC 9162 tree hashes and inclusion paths."""

    def __init__(self, origin=ORIGIN, key="log1"):
        self.origin = origin
        self.key = key
        self.entries = []

    def append(self, entry):
        self.entries.append(entry)
        return self

    @staticmethod
    def _mth(leaves):
        if not leaves:
            return sha256(b"")
        if len(leaves) == 1:
            return sha256(b"\x00" + leaves[0])
        k = 1
        while k * 2 < len(leaves):
            k *= 2
        return sha256(b"\x01" + Log._mth(leaves[:k]) + Log._mth(leaves[k:]))

    @staticmethod
    def _path(m, leaves):
        if len(leaves) <= 1:
            return []
        k = 1
        while k * 2 < len(leaves):
            k *= 2
        if m < k:
            return Log._path(m, leaves[:k]) + [Log._mth(leaves[k:])]
        return Log._path(m - k, leaves[k:]) + [Log._mth(leaves[:k])]

    def text(self, size):
        return "%s\n%d\n%s\n" % (self.origin, size, b64(self._mth(self.entries[:size])))

    def note(self, b, size, cosigners=(("witness1", -3600), ("witness2", -1800)), log_signature=True, text=None):
        """The checkpoint of the first `size` entries as a signed note: the log's signature, then one
        tlog-cosignature/v1 line per (witness key file, seconds from T_START) or (file, offset, "bad")."""
        text = text or self.text(size)
        lines = ""
        if log_signature:
            signature = ed25519(b, self.key, text.encode())
            lines += "\u2014 %s %s\n" % (self.origin, b64(key_id(self.origin, 0x01, raw_public_key(self.key)) + signature))
        for cosigner in cosigners:
            key_file, offset = cosigner[0], cosigner[1]
            name = WITNESSES[key_file][0]
            stamp = T0 + offset
            signature = ed25519(b, key_file, ("cosignature/v1\ntime %d\n" % stamp).encode() + text.encode())
            if len(cosigner) > 2 and cosigner[2] == "bad":
                signature = bytes([signature[0] ^ 0x01]) + signature[1:]
            lines += "\u2014 %s %s\n" % (name, b64(key_id(name, 0x04, raw_public_key(key_file))
                                                  + stamp.to_bytes(8, "big") + signature))
        return (text + "\n" + lines).encode()

    def proof(self, index, size, note):
        """tlog-proof@v1 of entry `index` in the tree of `size` entries, with the entry in `extra`."""
        leaves = self.entries[:size]
        out = "c2sp.org/tlog-proof@v1\nextra %s\nindex %d\n" % (b64(self.entries[index]), index)
        for hash_ in self._path(index, leaves):
            out += b64(hash_) + "\n"
        return (out + "\n").encode() + note


def log_root(b, name="root-1.json", version=1, signers=("root1",), since=None, **log):
    extra = log_member(**log)
    if since:
        extra["pinsRoleSince"] = since
    payload = root_payload(version, ["root1"], 1, ["pins1"], 1, extra=extra)
    b.sign(name, payload, list(signers))
    return payload


def manifest(b, name, version, domains=None, root_version=1, issued=None):
    payload = manifest_payload(version, domains or M1_DOMAINS, root_version=root_version,
                               issued=issued or "2026-12-%02dT00:00:00Z" % (14 + version))
    b.sign(name, payload, ["pins1"])
    return payload


def serve_log(manifest=None, proof=None, roots=None, etag=None):
    step = serve(roots=roots, manifest=manifest, etag=etag)
    if isinstance(proof, str):
        step["proof"] = {"file": proof}
    elif isinstance(proof, int):
        step["proof"] = {"status": proof}
    return step


def steps(b, description, body):
    # Graduated: both SDKs pass every log case (conformance/README.md, "Pending cases").
    b.write_steps(description + " (docs/DESIGN.md §12)", body, baseline="baseline.json")


M_PINS = {API: pol([pin("m-api-1"), pin("m-api-2")])}
BASELINE_API = {API: pol([pin("base-api-1"), pin("base-api-2")])}
NARROWED = {API: pol([]), LEGACY: pol([pin("base-legacy")])}  # B ∩ M: the manifest counts as expired


def case_log_accepted(b):
    root = log_root(b)
    m1 = manifest(b, "manifest-1.json", 1)
    m2 = manifest(b, "manifest-2.json", 2)
    log = Log().append(head(0, 1, root, 1, 1, m1)).append(head(1, 1, root, 1, 2, m2))
    b.raw("proof-1.proof", log.proof(0, 1, log.note(b, 1)))
    b.raw("proof-2.proof", log.proof(1, 2, log.note(b, 2, cosigners=(
        ("witness4", -60), ("witness1", -3600), ("witness3", -1200), ("witness2", -7200)))))
    steps(b, "Accepted with a quorum of 2 of 3 listed witnesses (an unlisted cosigner is ignored); the proof is "
             "fetched and verified after a 304 too, and the stored checkpoint survives a restart", [
        serve_log("manifest-1.json", "proof-1.proof"),
        refresh(T_START, "updated", [1, 1], True, policy=M_PINS, absent=["staleCheckpoint"]),
        serve_log("manifest-2.json", "proof-2.proof", etag='"m2"'),
        refresh(T_START, "updated", [1, 2], True, policy=M_PINS),
        {"action": "restart"},
        refresh(T_START, "unchanged", [1, 2], False, absent=["staleCheckpoint", "rejected"]),
        serve_log("manifest-2.json", 404, etag='"m2"'),
        refresh(T_START, "rejected", [1, 2], False, "log-proof-missing", policy=M_PINS),
        serve_log("manifest-2.json", "proof-1.proof", etag='"m2"'),
        refresh(T_START, "rejected", [1, 2], False, "log-manifest-not-logged"),
    ])


def case_log_split_view(b):
    root = log_root(b)
    m1 = manifest(b, "manifest-1.json", 1)
    m2 = manifest(b, "manifest-2.json", 2)
    evil = manifest(b, "manifest-3-split.json", 3, domains=[domain(API, [pin("evil-1"), pin("evil-2")])])
    log = Log().append(head(0, 1, root, 1, 1, m1)).append(head(1, 1, root, 1, 2, m2))
    fork = Log().append(head(0, 1, root, 1, 1, m1)).append(head(1, 1, root, 1, 3, evil))
    b.raw("proof-2.proof", log.proof(1, 2, log.note(b, 2)))
    b.raw("proof-split.proof", fork.proof(1, 2, fork.note(b, 2)))
    steps(b, "Split view: the log key signed two trees of size 2 and a quorum cosigned the other one; a client "
             "that verified one refuses the other as equivocation (the event carries both notes), even after a "
             "restart and again later", [
        serve_log("manifest-2.json", "proof-2.proof"),
        refresh(T_START, "updated", [1, 2], True),
        {"action": "restart"},
        serve_log("manifest-3-split.json", "proof-split.proof"),
        refresh(T_START, "rejected", [1, 2], False, "log-equivocation", events=["equivocation"], policy=M_PINS),
        evaluate(API, T_START, [pin("evil-1")], "rejected", "noMatchingPin"),
        refresh(T_START, "rejected", [1, 2], False, "log-equivocation", events=["equivocation"]),
        serve_log("manifest-2.json", "proof-2.proof"),
        refresh(T_START, "unchanged", [1, 2], False),
    ])


def case_log_unlogged_manifest(b):
    root = log_root(b)
    m1 = manifest(b, "manifest-1.json", 1)
    manifest(b, "manifest-2-unlogged.json", 2, domains=[domain(API, [pin("evil-1"), pin("evil-2")])])
    log = Log().append(head(0, 1, root, 1, 1, m1))
    b.raw("proof-1.proof", log.proof(0, 1, log.note(b, 1)))
    steps(b, "A manifest signed with a stolen pins key but left out of the log has no head: refused", [
        serve_log("manifest-1.json", "proof-1.proof"),
        refresh(T_START, "updated", [1, 1], True),
        serve_log("manifest-2-unlogged.json", "proof-1.proof"),
        refresh(T_START, "rejected", [1, 1], False, "log-manifest-not-logged", policy=M_PINS),
        serve_log("manifest-2-unlogged.json"),
        refresh(T_START, "rejected", [1, 1], False, "log-proof-missing", policy=M_PINS),
    ])


def case_log_stale_proof(b):
    root = log_root(b)
    m1 = manifest(b, "manifest-1.json", 1)
    m2 = manifest(b, "manifest-2.json", 2)
    log = Log().append(head(0, 1, root, 1, 1, m1)).append(head(1, 1, root, 1, 2, m2))
    note = log.note(b, 2)
    b.raw("proof-old-entry.proof", log.proof(0, 2, note))
    b.raw("proof-2.proof", log.proof(1, 2, note))
    steps(b, "A stale proof (of an older entry while a newer one is in the log) is refused: only the last entry "
             "counts", [
        serve_log("manifest-1.json", "proof-old-entry.proof"),
        refresh(T_START, "rejected", None, False, "log-not-last-entry"),
        serve_log("manifest-2.json", "proof-2.proof"),
        refresh(T_START, "updated", [1, 2], True),
    ])


def case_log_withheld_root(b):
    root1 = log_root(b)
    root2 = log_root(b, "root-2.json", 2, since=1)
    m1 = manifest(b, "manifest-1.json", 1)
    log = Log().append(head(0, 1, root1, 1, 1, m1)).append(head(1, 2, root2, 1, 1, m1))
    b.raw("proof-1.proof", log.proof(0, 1, log.note(b, 1)))
    b.raw("proof-2.proof", log.proof(1, 2, log.note(b, 2)))
    steps(b, "Withheld root: the log names root 2 but the publisher answers 404 for root/2.json: refused "
             "(root 2 is logged but not served); a proof that does not name a served root 2 refuses the manifest step "
             "(root 2, verified by the root role, is kept); once both are served, accepted", [
        serve_log("manifest-1.json", "proof-1.proof"),
        refresh(T_START, "updated", [1, 1], True),
        serve_log("manifest-1.json", "proof-2.proof"),
        refresh(T_START, "rejected", [1, 1], False, "log-root-logged-not-served", policy=M_PINS),
        serve_log("manifest-1.json", "proof-1.proof", roots={"2": "root-2.json"}),
        refresh(T_START, "rejected", [1, 1], True, "log-root-mismatch", events=["rootAccepted"]),
        serve_log("manifest-1.json", "proof-2.proof", roots={"2": "root-2.json"}),
        refresh(T_START, "unchanged", [1, 1], True, policy=M_PINS),
    ])


def case_log_bad_cosignatures(b):
    root = log_root(b)
    m1 = manifest(b, "manifest-1.json", 1)
    log = Log().append(head(0, 1, root, 1, 1, m1))
    b.raw("proof-below-quorum.proof", log.proof(0, 1, log.note(b, 1, cosigners=(("witness1", -60),))))
    b.raw("proof-one-key-twice.proof", log.proof(0, 1, log.note(b, 1, cosigners=(
        ("witness1", -60), ("witness1", -120)))))
    b.raw("proof-unlisted-witness.proof", log.proof(0, 1, log.note(b, 1, cosigners=(
        ("witness1", -60), ("witness4", -120)))))
    b.raw("proof-bad-cosignature.proof", log.proof(0, 1, log.note(b, 1, cosigners=(
        ("witness1", -60), ("witness2", -90, "bad"), ("witness3", -120)))))
    b.raw("proof-no-log-signature.proof", log.proof(0, 1, log.note(b, 1, log_signature=False)))
    other = Log(key="log2").append(head(0, 1, root, 1, 1, m1))
    b.raw("proof-other-log-key.proof", other.proof(0, 1, other.note(b, 1)))
    b.raw("proof-ok.proof", log.proof(0, 1, log.note(b, 1)))
    steps(b, "Bad cosignatures: below the quorum, one witness key twice, an unlisted witness, a listed "
             "witness's bad signature, no log signature, another log key: each refused with the state unchanged", [
        serve_log("manifest-1.json", "proof-below-quorum.proof"),
        refresh(T_START, "rejected", None, False, "log-quorum-not-met"),
        serve_log("manifest-1.json", "proof-one-key-twice.proof"),
        refresh(T_START, "rejected", None, False, "log-quorum-not-met"),
        serve_log("manifest-1.json", "proof-unlisted-witness.proof"),
        refresh(T_START, "rejected", None, False, "log-quorum-not-met"),
        serve_log("manifest-1.json", "proof-bad-cosignature.proof"),
        refresh(T_START, "rejected", None, False, "log-cosignature-invalid"),
        serve_log("manifest-1.json", "proof-no-log-signature.proof"),
        refresh(T_START, "rejected", None, False, "log-signature-missing"),
        serve_log("manifest-1.json", "proof-other-log-key.proof"),
        refresh(T_START, "rejected", None, False, "log-signature-missing"),
        serve_log("manifest-1.json", "proof-ok.proof"),
        refresh(T_START, "updated", [1, 1], True, policy=M_PINS),
    ])


def case_log_future_quorum_time(b):
    root = log_root(b)
    m1 = manifest(b, "manifest-1.json", 1)
    log = Log().append(head(0, 1, root, 1, 1, m1))
    two_days = 2 * 86400
    b.raw("proof-future.proof", log.proof(0, 1, log.note(b, 1, cosigners=(
        ("witness1", two_days), ("witness2", two_days + 60)))))
    # The first refresh stores min(t_q, now) = T_START; the second sees the same tree and keeps
    # that stored t_q, so the view ages from its first sight (future-dated cosignatures cannot
    # keep it fresh): the manifest narrows maxCheckpointAge + grace after T_START.
    limit = T0 + MAX_AGE + GRACE
    steps(b, "A t_q two days ahead is reported, counts as age 0 and is stored as now once: lastKnownTime does not "
             "move (no clock-stepped-back an hour later), the same tree seen again keeps its stored t_q, and the "
             "manifest narrows maxCheckpointAge + grace after the first sight", [
        serve_log("manifest-1.json", "proof-future.proof"),
        refresh(T_START, "updated", [1, 1], True, absent=["staleCheckpoint"]),
        refresh(rfc3339(T0 + 3600), "unchanged", [1, 1], True, absent=["clockSteppedBack"]),
        policy(rfc3339(limit), M_PINS),
        policy(rfc3339(limit + 1), NARROWED),
    ])


def case_log_freeze(b):
    root = log_root(b)
    m1 = manifest(b, "manifest-1.json", 1)
    log = Log().append(head(0, 1, root, 1, 1, m1))
    b.raw("proof-1.proof", log.proof(0, 1, log.note(b, 1, cosigners=(("witness1", -60), ("witness2", 0)))))
    b.raw("proof-1-recosigned.proof", log.proof(0, 1, log.note(b, 1, cosigners=(
        ("witness1", 9 * 86400), ("witness3", 9 * 86400 + 5)))))
    t_q = T0 - 60  # the 2nd newest of the two cosignatures
    stale = rfc3339(t_q + MAX_AGE + 1)
    expired = t_q + MAX_AGE + GRACE + 1
    steps(b, "Freeze: the same checkpoint served for days raises staleCheckpoint past maxCheckpointAge; past "
             "maxCheckpointAge + checkpointGrace the manifest narrows at the first connection (baseline stays); a "
             "re-cosigned checkpoint of the same tree restores it", [
        serve_log("manifest-1.json", "proof-1.proof", etag='"m1"'),
        refresh(T_START, "updated", [1, 1], True, absent=["staleCheckpoint"]),
        refresh(rfc3339(t_q + MAX_AGE), "unchanged", [1, 1], True, absent=["staleCheckpoint"]),
        refresh(stale, "unchanged", [1, 1], True, events=["staleCheckpoint"], policy=M_PINS),
        policy(rfc3339(expired - 1), M_PINS),
        policy(rfc3339(expired), NARROWED),
        evaluate(API, rfc3339(expired), [pin("m-api-1")], "rejected", "noUsablePin"),
        evaluate(LEGACY, rfc3339(expired), [pin("base-legacy")], "trusted"),
        refresh(rfc3339(expired), "unchanged", [1, 1], True, events=["staleCheckpoint"], policy=NARROWED),
        serve_log("manifest-1.json", "proof-1-recosigned.proof", etag='"m1"'),
        refresh(rfc3339(T0 + 9 * 86400 + 60), "unchanged", [1, 1], True, absent=["staleCheckpoint"],
                policy=M_PINS),
    ])


def case_log_smaller_checkpoint(b):
    root = log_root(b)
    m1 = manifest(b, "manifest-1.json", 1)
    m2 = manifest(b, "manifest-2.json", 2)
    log = Log().append(head(0, 1, root, 1, 1, m1)).append(head(1, 1, root, 1, 2, m2))
    log.append(head(2, 1, root, 1, 2, m2))
    b.raw("proof-size-3.proof", log.proof(2, 3, log.note(b, 3)))
    b.raw("proof-size-2.proof", log.proof(1, 2, log.note(b, 2)))
    steps(b, "A checkpoint smaller than the stored one is a rollback of the log: refused, also after a restart and "
             "with one state copy lost (the checkpoint is part of the crash-safe state); with all state deleted the "
             "client starts over", [
        serve_log("manifest-2.json", "proof-size-3.proof"),
        refresh(T_START, "updated", [1, 2], True),
        serve_log("manifest-2.json", "proof-size-2.proof"),
        refresh(T_START, "rejected", [1, 2], False, "log-checkpoint-shrank"),
        {"action": "restart"},
        refresh(T_START, "rejected", [1, 2], False, "log-checkpoint-shrank"),
        {"action": "corruptCopy", "copy": "A"},
        refresh(T_START, "rejected", [1, 2], False, "log-checkpoint-shrank"),
        serve_log("manifest-2.json", "proof-size-3.proof"),
        refresh(T_START, "unchanged", [1, 2], False),
        {"action": "deleteState"},
        serve_log("manifest-2.json", "proof-size-2.proof"),
        refresh(T_START, "updated", [1, 2], True),
    ])


def case_log_missing_proof(b):
    root = log_root(b)
    m1 = manifest(b, "manifest-1.json", 1)
    log = Log().append(head(0, 1, root, 1, 1, m1))
    proof = log.proof(0, 1, log.note(b, 1))
    b.raw("proof-1.proof", proof)
    b.raw("proof-truncated.proof", proof[:len(proof) // 2])
    b.raw("proof-too-large.proof", proof + b"x" * (32 * 1024 - len(proof) + 1))
    b.raw("proof-wrong-index.proof", proof.replace(b"\nindex 0\n", b"\nindex 00\n"))
    steps(b, "A missing, truncated, oversized or malformed proof refuses the refresh with its reason; a proof that "
             "cannot be fetched (HTTP 500) is a network failure; the state is unchanged", [
        serve_log("manifest-1.json"),
        refresh(T_START, "rejected", None, False, "log-proof-missing", policy=BASELINE_API),
        serve_log("manifest-1.json", 404),
        refresh(T_START, "rejected", None, False, "log-proof-missing"),
        serve_log("manifest-1.json", "proof-truncated.proof"),
        refresh(T_START, "rejected", None, False, "log-malformed-proof"),
        serve_log("manifest-1.json", "proof-too-large.proof"),
        refresh(T_START, "rejected", None, False, "log-proof-too-large"),
        serve_log("manifest-1.json", "proof-wrong-index.proof"),
        refresh(T_START, "rejected", None, False, "log-malformed-proof"),
        serve_log("manifest-1.json", 500),
        refresh(T_START, "network", None, False, "network"),
        serve_log("manifest-1.json", "proof-1.proof"),
        refresh(T_START, "updated", [1, 1], True, policy=M_PINS),
    ])


def case_log_key_change(b):
    root1 = log_root(b)
    root2 = log_root(b, "root-2.json", 2, log_key="log2")
    m1 = manifest(b, "manifest-1.json", 1)
    m2 = manifest(b, "manifest-2.json", 2)
    m3 = manifest(b, "manifest-3.json", 3, root_version=2)
    old = Log().append(head(0, 1, root1, 1, 1, m1)).append(head(1, 1, root1, 1, 2, m2))
    new = Log(key="log2").append(head(0, 2, root2, 2, 3, m3))
    b.raw("proof-old-2.proof", old.proof(1, 2, old.note(b, 2)))
    b.raw("proof-new-1.proof", new.proof(0, 1, new.note(b, 1)))
    steps(b, "A root rotation that changes the log key drops the stored checkpoint: the new log's size-1 "
             "checkpoint is accepted (not a shrink of the old log's size 2), and a proof by the old key is refused", [
        serve_log("manifest-2.json", "proof-old-2.proof"),
        refresh(T_START, "updated", [1, 2], True),
        serve_log("manifest-3.json", "proof-old-2.proof", roots={"2": "root-2.json"}),
        refresh(T_START, "rejected", [1, 2], True, "log-signature-missing", events=["rootAccepted"]),
        serve_log("manifest-3.json", "proof-new-1.proof", roots={"2": "root-2.json"}),
        refresh(T_START, "updated", [2, 3], True, policy=M_PINS),
        {"action": "restart"},
        refresh(T_START, "unchanged", [2, 3], False),
    ])


def case_log_origin_change(b):
    root1 = log_root(b)
    root2 = log_root(b, "root-2.json", 2, origin="conformance.test/log2")
    m1 = manifest(b, "manifest-1.json", 1)
    m2 = manifest(b, "manifest-2.json", 2)
    m3 = manifest(b, "manifest-3.json", 3, root_version=2)
    old = Log().append(head(0, 1, root1, 1, 1, m1)).append(head(1, 1, root1, 1, 2, m2))
    new = Log(origin="conformance.test/log2").append(head(0, 2, root2, 2, 3, m3))
    b.raw("proof-old-2.proof", old.proof(1, 2, old.note(b, 2)))
    b.raw("proof-new-1.proof", new.proof(0, 1, new.note(b, 1)))
    steps(b, "A root rotation that changes the log origin: a proof of the old origin is refused, the new origin's "
             "first checkpoint is accepted and stored", [
        serve_log("manifest-2.json", "proof-old-2.proof"),
        refresh(T_START, "updated", [1, 2], True),
        serve_log("manifest-3.json", "proof-old-2.proof", roots={"2": "root-2.json"}),
        refresh(T_START, "rejected", [1, 2], True, "log-wrong-origin", events=["rootAccepted"]),
        serve_log("manifest-3.json", "proof-new-1.proof", roots={"2": "root-2.json"}),
        refresh(T_START, "updated", [2, 3], True, policy=M_PINS),
        {"action": "restart"},
        refresh(T_START, "unchanged", [2, 3], False),
    ])


def case_log_invalid_root_member(b):
    log_root(b)
    m1 = manifest(b, "manifest-1.json", 1)
    good = log_member()["log"]
    w1 = dict(good["witnesses"][0])

    def rotated(name, change):
        log = json.loads(json.dumps(good))
        change(log)
        payload = root_payload(2, ["root1"], 1, ["pins1"], 1, extra={"log": log, "pinsRoleSince": 1})
        b.sign_openssl(name, payload, ["root1"])  # `pinion sign` refuses these payloads

    rotated("root-2-witness-twice.json", lambda log: log["witnesses"].append(
        {"key": verifier_key("witness-1-again.conformance.test", 0x04, "witness1"), "url": w1["url"]}))
    rotated("root-2-log-key-as-witness.json", lambda log: log["witnesses"].append(
        {"key": verifier_key("witness-9.conformance.test", 0x04, "log1"), "url": "https://w9.conformance.test"}))
    rotated("root-2-quorum-above-witnesses.json", lambda log: log.update(quorum=4))
    rotated("root-2-http-witness.json", lambda log: log["witnesses"][0].update(url="http://witness1.conformance.test"))
    rotated("root-2-witness-type-0x01.json", lambda log: log["witnesses"][0].update(
        key=verifier_key(WITNESSES["witness1"][0], 0x01, "witness1")))
    rotated("root-2-bad-key-hash.json", lambda log: log.update(key=good["key"].replace("+", "+0", 1)[:-1]))
    rotated("root-2-unknown-member.json", lambda log: log.update(witnessQuorum=2))
    rotated("root-2-negative-grace.json", lambda log: log.update(checkpointGrace=-1))
    log = Log().append(head(0, 1, log_root_payload(), 1, 1, m1))
    b.raw("proof-1.proof", log.proof(0, 1, log.note(b, 1)))
    body = [serve_log("manifest-1.json", "proof-1.proof"), refresh(T_START, "updated", [1, 1], True)]
    for name, reason in (("root-2-witness-twice.json", "invalid-log"), ("root-2-log-key-as-witness.json", "invalid-log"),
                         ("root-2-quorum-above-witnesses.json", "invalid-log"), ("root-2-http-witness.json", "invalid-log"),
                         ("root-2-witness-type-0x01.json", "invalid-log"), ("root-2-bad-key-hash.json", "invalid-log"),
                         ("root-2-unknown-member.json", "unknown-member"),
                         ("root-2-negative-grace.json", "integer-out-of-range")):
        body.append(serve_log("manifest-1.json", "proof-1.proof", roots={"2": name}))
        body.append(refresh(T_START, "rejected", [1, 1], False, reason, policy=M_PINS))
    steps(b, "A rotation to a root whose log member is invalid (one witness key twice, the log key as a witness, a "
             "quorum above the witnesses, an http URL, a witness key of type 0x01, a bad key hash, an unknown member, a "
             "negative grace) is refused; the client keeps its root and manifest", body)


def log_root_payload():
    return root_payload(1, ["root1"], 1, ["pins1"], 1, extra=log_member())


LOG_CASES = [
    ("log-accepted-quorum", case_log_accepted),
    ("log-split-view", case_log_split_view),
    ("log-unlogged-manifest", case_log_unlogged_manifest),
    ("log-stale-proof", case_log_stale_proof),
    ("log-withheld-root", case_log_withheld_root),
    ("log-bad-cosignatures", case_log_bad_cosignatures),
    ("log-future-quorum-time", case_log_future_quorum_time),
    ("log-freeze", case_log_freeze),
    ("log-smaller-checkpoint", case_log_smaller_checkpoint),
    ("log-missing-proof", case_log_missing_proof),
    ("log-key-change-drops-checkpoint", case_log_key_change),
    ("log-origin-change", case_log_origin_change),
    ("log-invalid-root-member", case_log_invalid_root_member),
]
