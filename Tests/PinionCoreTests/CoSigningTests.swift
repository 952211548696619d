// The co-signing rule of DSSE envelopes signed in turn (docs/DESIGN.md §3): one signature per
// key, an invalid one under the key's id replaced, other keys' signatures untouched.

import PinionCore
import PinionCrypto
import PinionTestSupport
import Testing

@Suite struct CoSigningTests {
    /// A pins manifest envelope signed by `keys`, in order.
    private func envelope(signedBy keys: [Ed25519SecretKey]) throws -> Envelope {
        try sign(.pins, manifestPayload().serialized(), with: keys)
    }

    private func coSign(_ envelope: inout Envelope, with key: Ed25519SecretKey, limits: Limits = .standard) throws
        -> CoSigningOutcome
    {
        let message = envelope.signingInput
        return try envelope.coSign(
            keyID: key.publicKey.keyID, publicKey: key.publicKey.raw, verifier: sodium.verifier, limits: limits
        ) { try key.sign(message) }
    }

    @Test func invalidSignatureUnderTheSameKeyIDIsReplaced() throws {
        let a = try makeKey()
        var signed = try envelope(signedBy: [a])
        signed.signatures[0].signature[0] ^= 1
        #expect(try coSign(&signed, with: a) == .replacedInvalid(count: 1))
        #expect(signed.signatures.map(\.keyID) == [a.publicKey.keyID])
        #expect(
            sodium.verifier.isValidSignature(
                signed.signatures[0].signature, of: signed.signingInput, publicKey: a.publicKey.raw))
    }

    @Test func everyInvalidSignatureUnderTheKeyIDIsReplacedAndOthersKeepTheirPlace() throws {
        let a = try makeKey()
        let b = try makeKey()
        var signed = try envelope(signedBy: [a, b])
        let planted = Envelope.Signature(keyID: a.publicKey.keyID, signature: [UInt8](repeating: 7, count: 64))
        signed.signatures = [planted, signed.signatures[1], planted]
        let other = signed.signatures[1]
        #expect(try coSign(&signed, with: a) == .replacedInvalid(count: 2))
        #expect(signed.signatures.map(\.keyID) == [b.publicKey.keyID, a.publicKey.keyID])
        #expect(signed.signatures[0] == other)
    }

    @Test func validSignatureIsKeptAndNothingIsSigned() throws {
        let a = try makeKey()
        var signed = try envelope(signedBy: [a])
        let before = signed
        var signerCalled = false
        let outcome = try signed.coSign(
            keyID: a.publicKey.keyID, publicKey: a.publicKey.raw, verifier: sodium.verifier
        ) {
            signerCalled = true
            return [UInt8](repeating: 0, count: 64)
        }
        #expect(outcome == .alreadySigned)
        #expect(!signerCalled)
        #expect(signed == before)
    }

    @Test func validSignatureBesideAnInvalidOneUnderTheKeyIDCountsAsSigned() throws {
        let a = try makeKey()
        var signed = try envelope(signedBy: [a])
        signed.signatures.insert(
            Envelope.Signature(keyID: a.publicKey.keyID, signature: [UInt8](repeating: 7, count: 64)), at: 0)
        let before = signed
        #expect(try coSign(&signed, with: a) == .alreadySigned)
        #expect(signed == before)
    }

    @Test func differentKeyIDIsAppendedAfterTheExistingSignatures() throws {
        let a = try makeKey()
        let b = try makeKey()
        var signed = try envelope(signedBy: [a])
        signed.signatures[0].signature[0] ^= 1  // another key's invalid signature is not this signer's business
        let first = signed.signatures[0]
        #expect(try coSign(&signed, with: b) == .appended)
        #expect(signed.signatures.count == 2)
        #expect(signed.signatures[0] == first)
        #expect(signed.signatures[1].keyID == b.publicKey.keyID)
        #expect(
            sodium.verifier.isValidSignature(
                signed.signatures[1].signature, of: signed.signingInput, publicKey: b.publicKey.raw))
    }

    @Test func payloadBytesNeverChange() throws {
        let a = try makeKey()
        let b = try makeKey()
        var signed = try envelope(signedBy: [a])
        let payload = signed.payload
        _ = try coSign(&signed, with: b)
        #expect(signed.payload == payload)
        #expect(signed.kind == .pins)
    }

    @Test func fullEnvelopeRefusesANewKeyWithoutSigning() throws {
        let a = try makeKey()
        let b = try makeKey()
        var signed = try envelope(signedBy: [a])
        var limits = Limits.standard
        limits.maxSignatures = 1
        let before = signed
        #expect(throws: CoSigningError.signatureLimit(1)) { try coSign(&signed, with: b, limits: limits) }
        #expect(signed == before)
        #expect(CoSigningError.signatureLimit(32).description == "the envelope already has 32 signatures (the limit)")
    }

    @Test func fullEnvelopeStillTakesAReplacementForAnInvalidSignature() throws {
        let a = try makeKey()
        var signed = try envelope(signedBy: [a])
        signed.signatures[0].signature[0] ^= 1
        var limits = Limits.standard
        limits.maxSignatures = 1
        #expect(try coSign(&signed, with: a, limits: limits) == .replacedInvalid(count: 1))
        #expect(signed.signatures.count == 1)
    }
}
