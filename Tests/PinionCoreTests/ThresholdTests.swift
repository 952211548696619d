// Threshold counting and root-document key rules (docs/DESIGN.md §2, §4).

import PinionCore
import PinionCrypto
import PinionTestSupport
import Testing

@Suite struct ThresholdTests {
    @Test func duplicateSignatureByOneKeyCountsOnce() throws {
        let a = try makeKey()
        let b = try makeKey()
        let pins = try makeKey()
        let root = rootPayload(rootKeys: [a, b], rootThreshold: 2, pinsKeys: [pins])
        var envelope = try sign(.root, root.serialized(), with: [a])
        envelope.signatures.append(envelope.signatures[0])
        let report = Signatures.check(envelope, role: root.rootRole, keys: root, crypto: sodium)
        #expect(report.valid == [a.publicKey.keyID])
        #expect(report.duplicates == [a.publicKey.keyID])
        #expect(throws: TrustError.thresholdNotMet(role: .root, rootVersion: 1, valid: 1, threshold: 2)) {
            try RootChain(anchor: envelope.serialized(), crypto: sodium)
        }
    }

    @Test func twoDistinctKeysMeetThresholdTwo() throws {
        let a = try makeKey()
        let b = try makeKey()
        let pins = try makeKey()
        let root = rootPayload(rootKeys: [a, b], rootThreshold: 2, pinsKeys: [pins])
        let envelope = try sign(.root, root.serialized(), with: [b, a])
        let chain = try RootChain(anchor: envelope.serialized(), crypto: sodium)
        #expect(Set(chain.newest.ownRoleReport.valid) == [a.publicKey.keyID, b.publicKey.keyID])
    }

    @Test func rootListingAKeyUnderAnotherIDIsInvalid() throws {
        let a = try makeKey()
        let other = try makeKey()
        var root = rootPayload(rootKeys: [a], pinsKeys: [a])
        // a's public key listed under other's id (and the roles naming that id)
        root.keys = [RootPayload.Key(keyID: other.publicKey.keyID, publicKey: a.publicKey.raw)]
        root.rootRole = .init(keyIDs: [other.publicKey.keyID], threshold: 1)
        root.pinsRole = .init(keyIDs: [other.publicKey.keyID], threshold: 1)
        #expect(
            throws: FormatError(
                path: "keys.\(other.publicKey.keyID)",
                rule: .keyIDMismatch(listed: other.publicKey.keyID, actual: a.publicKey.keyID))
        ) {
            try RootPayload.parse(root.serialized(), crypto: sodium)
        }
    }

    @Test func rootRoleSignatureDoesNotCountTowardPinsRole() throws {
        let setup = try Setup()
        let manifest = manifestPayload()
        let signedByRootKey = try sign(.pins, manifest.serialized(), with: [setup.rootKey])
        #expect(throws: TrustError.thresholdNotMet(role: .pins, rootVersion: 1, valid: 0, threshold: 1)) {
            try ManifestVerifier.verify(
                signedByRootKey.serialized(), under: try setup.chain().newest, crypto: sodium)
        }
    }

    @Test(arguments: [0, 3, -1])
    func thresholdOutsideOneToNIsRejected(threshold: Int) throws {
        let a = try makeKey()
        let b = try makeKey()
        let root = rootPayload(rootKeys: [a, b], rootThreshold: threshold, pinsKeys: [a])
        #expect(
            throws: FormatError(
                path: "roles.root.threshold", rule: .invalidThreshold(threshold: Int64(threshold), keys: 2))
        ) {
            try RootPayload.parse(root.serialized(), crypto: sodium)
        }
    }

    @Test func failingSignatureOfListedKeyDoesNotCountAndIsReported() throws {
        let a = try makeKey()
        let b = try makeKey()
        let pins = try makeKey()
        let root = rootPayload(rootKeys: [a, b], rootThreshold: 1, pinsKeys: [pins])
        var envelope = try sign(.root, root.serialized(), with: [a, b])
        envelope.signatures[1].signature[0] ^= 0x01
        let chain = try RootChain(anchor: envelope.serialized(), crypto: sodium)
        #expect(chain.newest.ownRoleReport.valid == [a.publicKey.keyID])
        #expect(chain.newest.ownRoleReport.invalid == [b.publicKey.keyID])

        envelope.signatures[0].signature[5] ^= 0x80
        #expect(throws: TrustError.thresholdNotMet(role: .root, rootVersion: 1, valid: 0, threshold: 1)) {
            try RootChain(anchor: envelope.serialized(), crypto: sodium)
        }
    }

    @Test func unknownKeyIDIsIgnored() throws {
        let setup = try Setup()
        let stranger = try makeKey()
        var envelope = setup.rootEnvelope
        envelope.signatures.insert(
            .init(keyID: stranger.publicKey.keyID, signature: try stranger.sign(envelope.signingInput)),
            at: 0)
        let chain = try RootChain(anchor: envelope.serialized(), crypto: sodium)
        #expect(chain.newest.ownRoleReport.ignored == [stranger.publicKey.keyID])
        #expect(chain.newest.ownRoleReport.valid == [setup.rootKey.publicKey.keyID])
    }

    @Test func signatureOverOtherPayloadTypeDoesNotVerify() throws {
        // PAE binds the payloadType: a root signature replayed as a pins envelope fails.
        let key = try makeKey()
        let root = rootPayload(rootKeys: [key], pinsKeys: [key])
        let manifest = manifestPayload()
        var envelope = try sign(.root, manifest.serialized(), with: [key])
        envelope.kind = .pins
        let chain = try RootChain(
            anchor: try sign(.root, root.serialized(), with: [key]).serialized(), crypto: sodium)
        #expect(throws: TrustError.thresholdNotMet(role: .pins, rootVersion: 1, valid: 0, threshold: 1)) {
            try ManifestVerifier.verify(envelope.serialized(), under: chain.newest, crypto: sodium)
        }
    }

    @Test func coSigningKeepsPayloadBytesIdentical() throws {
        let a = try makeKey()
        let b = try makeKey()
        let root = rootPayload(rootKeys: [a, b], rootThreshold: 2, pinsKeys: [a])
        let first = try sign(.root, root.serialized(), with: [a])
        var second = try Envelope.parse(first.serialized())
        second.signatures.append(
            .init(keyID: b.publicKey.keyID, signature: try b.sign(second.signingInput)))
        let reparsed = try Envelope.parse(second.serialized())
        #expect(reparsed.payload == first.payload)
        #expect(sodium.hasher.sha256(reparsed.payload) == sodium.hasher.sha256(root.serialized()))
        #expect(
            try RootChain(anchor: reparsed.serialized(), crypto: sodium).newest.ownRoleReport.valid.count
                == 2)
    }

    @Test func roleNamingUnlistedKeyIsInvalid() throws {
        let a = try makeKey()
        let b = try makeKey()
        var root = rootPayload(rootKeys: [a], pinsKeys: [a])
        root.pinsRole = .init(keyIDs: [b.publicKey.keyID], threshold: 1)
        #expect(
            throws: FormatError(
                path: "roles.pins.keyids[0]",
                rule: .invalidRoleKey("\(b.publicKey.keyID) is not listed in keys"))
        ) {
            try RootPayload.parse(root.serialized(), crypto: sodium)
        }
    }
}

@Suite struct RootKeyTests {
    @Test func smallOrderPublicKeyIsRefused() throws {
        let a = try makeKey()
        var root = rootPayload(rootKeys: [a], pinsKeys: [a])
        // The identity point (0, 1) encodes as 0x01 followed by zeros: small order, no
        // signature can be checked against it.
        let identity = [UInt8(1)] + [UInt8](repeating: 0, count: 31)
        let id = KeyID.of(publicKey: identity, hasher: sodium.hasher)
        root.keys.append(RootPayload.Key(keyID: id, publicKey: identity))
        root.pinsRole = .init(keyIDs: [a.publicKey.keyID, id], threshold: 1)
        #expect(
            throws: FormatError(
                path: "keys.\(id).public",
                rule: .invalidPublicKey("not a usable Ed25519 point (small-order or non-canonical)"))
        ) {
            try RootPayload.parse(root.serialized(), crypto: sodium)
        }
    }
}
