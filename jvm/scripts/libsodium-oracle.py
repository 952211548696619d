#!/usr/bin/env python3
# Produces src/test/resources/vectors/libsodium-verdicts.txt: libsodium's own verdicts (the reference).
#
# Calls the system libsodium (Debian libsodium23) through ctypes: crypto_sign_verify_detached for
# every Wycheproof and ed25519-speccheck case, crypto_core_ed25519_is_valid_point for every public
# key they use plus edge points. Run once and commit the output; the JVM tests compare with it.
import ctypes
import ctypes.util
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
vectors = os.path.join(here, "..", "src", "test", "resources", "vectors")
sodium = ctypes.CDLL(ctypes.util.find_library("sodium") or "libsodium.so.23")
if sodium.sodium_init() < 0:
    sys.exit("sodium_init failed")
sodium.sodium_version_string.restype = ctypes.c_char_p
version = sodium.sodium_version_string().decode()


def verify(sig, msg, pk):
    if len(sig) != 64 or len(pk) != 32:
        return False
    return sodium.crypto_sign_verify_detached(sig, msg, ctypes.c_ulonglong(len(msg)), pk) == 0


def valid_point(pk):
    return len(pk) == 32 and sodium.crypto_core_ed25519_is_valid_point(pk) == 1


lines = ["# libsodium %s verdicts (V valid, X invalid), produced by scripts/libsodium-oracle.py" % version]
keys = []
with open(os.path.join(vectors, "ed25519_test.json")) as f:
    wycheproof = json.load(f)
for group in wycheproof["testGroups"]:
    pk = bytes.fromhex(group["publicKey"]["pk"])
    keys.append(pk)
    for test in group["tests"]:
        ok = verify(bytes.fromhex(test["sig"]), bytes.fromhex(test["msg"]), pk)
        lines.append("wycheproof %d %s" % (test["tcId"], "V" if ok else "X"))
with open(os.path.join(vectors, "speccheck_cases.txt")) as f:
    for number, line in enumerate(f):
        msg, pk, sig = (bytes.fromhex(x) for x in line.split())
        keys.append(pk)
        lines.append("speccheck %d %s" % (number, "V" if verify(sig, msg, pk) else "X"))
p = 2**255 - 19
edge = [
    (1).to_bytes(32, "little"),            # identity (order 1)
    (0).to_bytes(32, "little"),            # order 4
    (p - 1).to_bytes(32, "little"),        # order 2
    (p).to_bytes(32, "little"),            # non-canonical 0
    (p + 1).to_bytes(32, "little"),        # non-canonical 1
    (2**255 - 1).to_bytes(32, "little"),   # y >= p
    bytes.fromhex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05"),  # order 8
    bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"),  # order 8
    bytes.fromhex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"),  # RFC 8032 test 1
    (2).to_bytes(32, "little"),            # y = 2: not on the curve or a point; libsodium decides
    (3).to_bytes(32, "little"),
    (9).to_bytes(32, "little"),
]
seen = set()
for pk in keys + edge:
    if pk in seen:
        continue
    seen.add(pk)
    lines.append("point %s %s" % (pk.hex(), "V" if valid_point(pk) else "X"))
with open(os.path.join(vectors, "libsodium-verdicts.txt"), "w") as out:
    out.write("\n".join(lines) + "\n")
print("wrote %d verdicts" % (len(lines) - 1))
