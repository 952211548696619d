#!/usr/bin/python3
"""Writes cosignature-vector.txt: a C2SP tlog-cosignature/v1 (note key type 0x04) vector made
independently of Pinion, with Debian's python3-cryptography (Ed25519, RFC 8032) and hashlib.

Line 1 is the witness verifier key (name+keyhash+base64(0x04 || public key)); the rest is a
checkpoint note carrying only that witness's cosignature. The key is derived from a fixed
seed, SHA-256 of SEED_LABEL, so the vector is reproducible: Ed25519 signatures are deterministic.
Run: /usr/bin/python3 make_cosignature_vector.py > cosignature-vector.txt
"""
import base64
import hashlib
import struct

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

SEED_LABEL = b"pinion tlog-cosignature vector witness seed"
NAME = "witness.example/w1"
TIMESTAMP = 1679315147
CHECKPOINT = "example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"

key = Ed25519PrivateKey.from_private_bytes(hashlib.sha256(SEED_LABEL).digest())
public = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
key_id = hashlib.sha256(NAME.encode() + b"\n" + b"\x04" + public).digest()[:4]
vkey = "%s+%s+%s" % (NAME, key_id.hex(), base64.b64encode(b"\x04" + public).decode())
message = ("cosignature/v1\ntime %d\n" % TIMESTAMP).encode() + CHECKPOINT.encode()
signature = key.sign(message)
line = "\u2014 %s %s\n" % (NAME, base64.b64encode(key_id + struct.pack(">Q", TIMESTAMP) + signature).decode())
print(vkey)
print(CHECKPOINT + "\n" + line, end="")
