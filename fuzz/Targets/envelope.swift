// Fuzz target 2: the DSSE envelope decoder and the manifest verifier under a fixed root
// (manifests/root-1.json, the documentation's demo root).
//
// Each input is verified twice: with libsodium (real signatures only: the committed
// seeds verify, mutations mostly stop at the threshold) and with a stand-in verifier that
// accepts any 64-byte signature whose first byte is even, so that the fuzzer also reaches
// the checks after the threshold (payload schema, scope, root version, lifetime cap).

import PinionCore
import PinionCrypto

#if canImport(Glibc)
    import Glibc
#endif

private let sodium = CryptoProvider.sodium
private let now = Timestamp(secondsSince1970: 1_796_029_200)  // 2026-11-30T09:00:00Z

private let fixedRoot: VerifiedRoot = {
    do {
        return try RootChain(anchor: Array(demoRoot.utf8), crypto: sodium).newest
    } catch {
        report("the fixed root does not verify: \(error)")
        abort()
    }
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEnvelope(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    if let envelope = try? Envelope.parse(bytes) {
        let again = try? Envelope.parse(envelope.serialized())
        expect(again == envelope, "an envelope does not survive serialized() and parse")
        let input = envelope.signingInput
        expect(input.count >= envelope.payload.count + 10, "PAE shorter than its body")
    }
    for crypto in [sodium, permissiveCrypto] {
        do {
            let manifest = try ManifestVerifier.verify(bytes, under: fixedRoot, crypto: crypto)
            expect(
                manifest.report.valid.count >= fixedRoot.payload.pinsRole.threshold,
                "verified below the threshold")
            expect(manifest.payload.scope == fixedRoot.payload.scope, "verified another scope")
            expect(manifest.payload.rootVersion == fixedRoot.version, "verified another root version")
            expect(Set(manifest.report.valid).count == manifest.report.valid.count, "a key counted twice")
            _ = try? manifest.checkCurrent(at: now)
        } catch {
            _ = error.description
        }
    }
    return 0
}

/// manifests/root-1.json (scripts/make-examples), the fixed trusted root.
private let demoRoot = """
    {
      "payloadType": "application/vnd.pinion.root+json",
      "payload": "ewogICJ0eXBlIjogInBpbmlvbi5yb290IiwKICAic3BlY1ZlcnNpb24iOiAxLAogICJzY29wZSI6ICJjb20uZXhhbXBsZS5hcHAiLAogICJ2ZXJzaW9uIjogMSwKICAiaXNzdWVkQXQiOiAiMjAyNi0xMS0zMFQwOTowMDowMFoiLAogICJleHBpcmVzQXQiOiAiMjAyNy0xMS0zMFQwOTowMDowMFoiLAogICJtYXhNYW5pZmVzdExpZmV0aW1lIjogNzc3NjAwMCwKICAia2V5cyI6IHsKICAgICI1NmZhYzJmNDRmZjJhYzhhMDZiMWQ4MzU4N2UyYzU3MTNjMzg3OTRjNWE3M2MzM2E1ZTRmNmYyOWJjYzMwOTQzIjogewogICAgICAidHlwZSI6ICJlZDI1NTE5IiwKICAgICAgInB1YmxpYyI6ICJ1enQ3ZklvVndwUld6TFZFcFdMbS9JdksrNXU0MitGMGdNYmRYWjJXL053PSIKICAgIH0sCiAgICAiOGNiZTNhMDIwOTZkNTUwNTEzYWIwNjNhYWI2NzFmYTU2ZTk4NmJjYzMxNDM2NjIyMWU3OTJjMTg4MTY4MjIxMyI6IHsKICAgICAgInR5cGUiOiAiZWQyNTUxOSIsCiAgICAgICJwdWJsaWMiOiAiU0ZaanRqQTdtQ0FuTk15dmRsbFlYMFAxSFFVd3JCbkMyMVFuK3h2eE5mWT0iCiAgICB9LAogICAgImY4ZmUzYzgxYjZmYjQyNjY1NmU4YmY1OTA2Yzc1YTE5YThiMmQwNzM2N2E3NjRlNDY4NzRiMzhjZWFhMGEyYmEiOiB7CiAgICAgICJ0eXBlIjogImVkMjU1MTkiLAogICAgICAicHVibGljIjogIklDdlRLTURUeVBBL2I5eHhQWEtnZWZsY2NSQW9KRlczSTZ0ckxrK2RSRnM9IgogICAgfQogIH0sCiAgInJvbGVzIjogewogICAgInJvb3QiOiB7CiAgICAgICJrZXlpZHMiOiBbCiAgICAgICAgIjhjYmUzYTAyMDk2ZDU1MDUxM2FiMDYzYWFiNjcxZmE1NmU5ODZiY2MzMTQzNjYyMjFlNzkyYzE4ODE2ODIyMTMiLAogICAgICAgICI1NmZhYzJmNDRmZjJhYzhhMDZiMWQ4MzU4N2UyYzU3MTNjMzg3OTRjNWE3M2MzM2E1ZTRmNmYyOWJjYzMwOTQzIgogICAgICBdLAogICAgICAidGhyZXNob2xkIjogMgogICAgfSwKICAgICJwaW5zIjogewogICAgICAia2V5aWRzIjogWwogICAgICAgICJmOGZlM2M4MWI2ZmI0MjY2NTZlOGJmNTkwNmM3NWExOWE4YjJkMDczNjdhNzY0ZTQ2ODc0YjM4Y2VhYTBhMmJhIgogICAgICBdLAogICAgICAidGhyZXNob2xkIjogMQogICAgfQogIH0KfQo=",
      "signatures": [
        {
          "keyid": "8cbe3a02096d550513ab063aab671fa56e986bcc314366221e792c1881682213",
          "sig": "OTP0+HykmsyugNHPfXyx5yLGEoLVoqSmX2+Dd7+KVP77zjXtWywUqV5B9/SbofA0TSp5gJW0iU4E5oqb5NqBAQ=="
        },
        {
          "keyid": "56fac2f44ff2ac8a06b1d83587e2c5713c38794c5a73c33a5e4f6f29bcc30943",
          "sig": "b61t/JxKY2PvAvUqfWSM9pn3ni+R5oCKIEkL2axEyar6JG46oQO0Blry5VuR81UyQMHZ8al1RsbdjloZxSjzDg=="
        }
      ]
    }

    """
