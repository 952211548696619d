# What every conformance case builder shares: the fixed keys, payload writers, `pinion sign`, step builders.

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # conformance/
FORMAT = "pinion-conformance/1"
SCOPE = "conformance.test"


def b64(data):
    return base64.b64encode(data).decode()


def pin(label):
    """A certificate's SPKI SHA-256 pin; the digest stands for the SPKI of certificate `label`."""
    return "sha256/" + b64(hashlib.sha256(("spki:" + label).encode()).digest())


def raw_public_key(name):
    with open(os.path.join(HERE, "keys", name + ".pub")) as handle:
        body = "".join(line for line in handle.read().splitlines() if not line.startswith("-----"))
    return base64.b64decode(body)[-32:]


def key_id(name):
    return hashlib.sha256(raw_public_key(name)).hexdigest()


def dumps(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


class Builder:
    """Writes one case directory: payloads signed into envelopes, and steps.json."""

    def __init__(self, pinion, directory, work):
        self.pinion = pinion
        self.directory = directory
        self.work = work
        os.makedirs(directory)

    def sign(self, name, payload_bytes, keys):
        payload_path = os.path.join(self.work, name + ".payload")
        with open(payload_path, "wb") as handle:
            handle.write(payload_bytes)
        out = os.path.join(self.directory, name)
        arguments = [self.pinion, "sign", "--allow-single-pin"]
        for key in keys:
            arguments += ["--key", os.path.join(HERE, "keys", key + ".key")]
        arguments += [payload_path, "-o", out, "--force"]
        result = subprocess.run(arguments, capture_output=True)
        if result.returncode != 0:
            sys.exit("pinion sign %s failed: %s" % (name, result.stderr.decode()))
        return name

    def sign_openssl(self, name, payload_bytes, keys):
        """For payloads this build's `pinion sign` refuses (members it does not know yet): the same
        DSSE envelope, each signature made by `openssl pkeyutl` over the PAE (docs/DESIGN.md §3)."""
        payload_type = b"application/vnd.pinion.root+json"
        pae = b"DSSEv1 %d %s %d %s" % (len(payload_type), payload_type, len(payload_bytes), payload_bytes)
        pae_path = os.path.join(self.work, name + ".pae")
        with open(pae_path, "wb") as handle:
            handle.write(pae)
        signatures = []
        for key in keys:
            result = subprocess.run(["openssl", "pkeyutl", "-sign", "-rawin", "-inkey",
                                     os.path.join(HERE, "keys", key + ".key"), "-in", pae_path],
                                    capture_output=True)
            if result.returncode != 0:
                sys.exit("openssl pkeyutl %s failed: %s" % (name, result.stderr.decode()))
            signatures.append({"keyid": key_id(key), "sig": b64(result.stdout)})
        envelope = {"payloadType": payload_type.decode(), "payload": b64(payload_bytes), "signatures": signatures}
        return self.raw(name, dumps(envelope))

    def cosign(self, name, source, keys):
        shutil.copyfile(os.path.join(self.directory, source), os.path.join(self.work, name + ".in"))
        out = os.path.join(self.directory, name)
        arguments = [self.pinion, "sign", "--allow-single-pin"]
        for key in keys:
            arguments += ["--key", os.path.join(HERE, "keys", key + ".key")]
        arguments += [os.path.join(self.work, name + ".in"), "-o", out, "--force"]
        result = subprocess.run(arguments, capture_output=True)
        if result.returncode != 0:
            sys.exit("pinion sign %s failed: %s" % (name, result.stderr.decode()))
        return name

    def raw(self, name, data):
        with open(os.path.join(self.directory, name), "wb") as handle:
            handle.write(data)
        return name

    def write_steps(self, description, steps, baseline=None, embedded="root-1.json", pending=None,
                    supported_by=None):
        document = {
            "format": FORMAT,
            "description": description,
            "scope": SCOPE,
            "embeddedRoot": embedded,
            "baseline": baseline,
            "steps": steps,
        }
        if pending:
            document["pending"] = pending
        if supported_by:
            document["supportedBy"] = supported_by
        with open(os.path.join(self.directory, "steps.json"), "w") as handle:
            json.dump(document, handle, indent=2, sort_keys=True, ensure_ascii=False)
            handle.write("\n")


def root_payload(version, root_keys, root_threshold, pins_keys, pins_threshold, issued="2026-12-01T00:00:00Z",
                 expires="2028-12-01T00:00:00Z", cap=7776000, extra=None):
    keys = {}
    for name in root_keys + pins_keys:
        keys[key_id(name)] = {"type": "ed25519", "public": b64(raw_public_key(name))}
    payload = {
        "type": "pinion.root", "specVersion": 1, "scope": SCOPE, "version": version,
        "issuedAt": issued, "expiresAt": expires, "maxManifestLifetime": cap,
        "keys": keys,
        "roles": {
            "root": {"keyids": [key_id(k) for k in root_keys], "threshold": root_threshold},
            "pins": {"keyids": [key_id(k) for k in pins_keys], "threshold": pins_threshold},
        },
    }
    payload.update(extra or {})
    return dumps(payload)


def domain(name, pins, include=False, enforce=True):
    return {"name": name, "includeSubdomains": include, "enforce": enforce, "pins": pins}


def manifest_payload(version, domains, root_version=1, issued="2026-12-15T00:00:00Z",
                     expires="2027-03-01T00:00:00Z", revoked=None, scope=SCOPE, extra=None):
    payload = {
        "type": "pinion.pins", "specVersion": 1, "scope": scope, "rootVersion": root_version,
        "version": version, "issuedAt": issued, "expiresAt": expires, "domains": domains,
        "revokedPins": revoked or [],
    }
    payload.update(extra or {})
    return dumps(payload)


API = "api.conformance.test"
CDN = "cdn.conformance.test"
WILD = "wild.conformance.test"
LEGACY = "legacy.conformance.test"

BASELINE = {
    "type": "pinion.baseline", "specVersion": 1,
    "domains": [domain(API, [pin("base-api-1"), pin("base-api-2")]), domain(LEGACY, [pin("base-legacy")])],
}

# The usual first manifest: api replaces the baseline's pins; cdn is report-only; wild covers
# its subdomains.
M1_DOMAINS = [
    domain(API, [pin("m-api-1"), pin("m-api-2")]),
    domain(CDN, [pin("m-cdn-1"), pin("m-cdn-2")], enforce=False),
    domain(WILD, [pin("m-wild-1"), pin("m-wild-2")], include=True),
]

T_START = "2027-01-01T00:00:00Z"
T_LATER = "2027-02-01T00:00:00Z"
T_AFTER_M = "2027-03-01T00:00:00Z"  # the usual manifest's expiresAt: expired from this second on


def serve(roots=None, manifest=None, etag=None):
    step = {"action": "serve", "roots": {version: ({"status": what} if isinstance(what, int) else {"file": what})
                                         for version, what in (roots or {}).items()}}
    if isinstance(manifest, str):
        step["manifest"] = {"file": manifest}
        if etag:
            step["manifest"]["etag"] = etag
    elif isinstance(manifest, int):
        step["manifest"] = {"status": manifest}
    return step


def refresh(at, outcome, floor, changed, reason=None, policy=None, events=None, absent=None):
    expect = {"outcome": outcome, "floor": floor, "stateChanged": changed}
    if events:
        expect["events"] = events
    if absent:
        expect["absentEvents"] = absent
    if reason:
        expect["reason"] = reason
    if policy is not None:
        expect["policy"] = policy
    return {"action": "refresh", "at": at, "expect": expect}


def pol(pins, enforce=True):
    return {"pins": sorted(pins), "enforce": enforce}


def policy(at, hosts):
    return {"action": "policy", "at": at, "expect": hosts}


def evaluate(host, at, chain, verdict, failure=None):
    expect = {"verdict": verdict}
    if failure:
        expect["failure"] = failure
    return {"action": "evaluate", "host": host, "at": at, "chain": chain, "expect": expect}


def standard_root(b):
    b.sign("root-1.json", root_payload(1, ["root1"], 1, ["pins1"], 1), ["root1"])
