// Root rotation and manifest verification under the newest root (docs/DESIGN.md §4, §5, §6 step 3).

import PinionCore
import PinionCrypto
import PinionTestSupport
import Testing

@Suite struct RootChainTests {
    @Test func rotationNeedsBothThresholds() throws {
        let setup = try Setup()
        let newRootKey = try makeKey()
        let next = rootPayload(version: 2, rootKeys: [newRootKey], pinsKeys: [setup.pinsKey])
        var chain = try setup.chain()

        let onlyOld = try sign(.root, next.serialized(), with: [setup.rootKey])
        #expect(throws: TrustError.thresholdNotMet(role: .root, rootVersion: 2, valid: 0, threshold: 1)) {
            try chain.append(onlyOld.serialized(), crypto: sodium)
        }
        let onlyNew = try sign(.root, next.serialized(), with: [newRootKey])
        #expect(throws: TrustError.thresholdNotMet(role: .root, rootVersion: 1, valid: 0, threshold: 1)) {
            try chain.append(onlyNew.serialized(), crypto: sodium)
        }
        let both = try sign(.root, next.serialized(), with: [setup.rootKey, newRootKey])
        try chain.append(both.serialized(), crypto: sodium)
        #expect(chain.newest.version == 2)
    }

    @Test func rotationMustBeExactlyNextVersion() throws {
        let setup = try Setup()
        var chain = try setup.chain()
        let skip = rootPayload(version: 3, rootKeys: [setup.rootKey], pinsKeys: [setup.pinsKey])
        #expect(throws: TrustError.rootNotNext(expected: 2, found: 3)) {
            try chain.append(
                try sign(.root, skip.serialized(), with: [setup.rootKey]).serialized(), crypto: sodium)
        }
        let same = rootPayload(version: 1, rootKeys: [setup.rootKey], pinsKeys: [setup.pinsKey])
        #expect(throws: TrustError.rootNotNext(expected: 2, found: 1)) {
            try chain.append(
                try sign(.root, same.serialized(), with: [setup.rootKey]).serialized(), crypto: sodium)
        }
    }

    @Test func rotationMustKeepScope() throws {
        let setup = try Setup()
        var chain = try setup.chain()
        let other = rootPayload(
            version: 2, scope: "com.other.app", rootKeys: [setup.rootKey], pinsKeys: [setup.pinsKey])
        #expect(throws: TrustError.scopeMismatch(expected: "com.example.app", found: "com.other.app")) {
            try chain.append(
                try sign(.root, other.serialized(), with: [setup.rootKey]).serialized(), crypto: sodium)
        }
    }

    @Test func rotationChecksCurrentRootSignaturesBeforeParsingPayload() throws {
        let setup = try Setup()
        var chain = try setup.chain()
        let garbage = Envelope(kind: .root, payload: Array("{\"type\": oops".utf8))
        #expect(throws: TrustError.thresholdNotMet(role: .root, rootVersion: 1, valid: 0, threshold: 1)) {
            try chain.append(garbage.serialized(), crypto: sodium)
        }
    }

    @Test func manifestEnvelopeIsNotARoot() throws {
        let setup = try Setup()
        var chain = try setup.chain()
        let manifest = try sign(.pins, manifestPayload().serialized(), with: [setup.pinsKey])
        #expect(throws: TrustError.wrongPayloadKind(expected: .root, found: .pins)) {
            try chain.append(manifest.serialized(), crypto: sodium)
        }
    }

    @Test func verifiesManifestUnderNewestRoot() throws {
        let setup = try Setup()
        let envelope = try sign(.pins, manifestPayload().serialized(), with: [setup.pinsKey])
        let manifest = try ManifestVerifier.verify(
            envelope.serialized(), under: try setup.chain().newest, crypto: sodium)
        #expect(manifest.payload.version == 1)
        #expect(manifest.report.valid == [setup.pinsKey.publicKey.keyID])
        try manifest.checkCurrent(at: t0)
        #expect(
            throws: TrustError.manifestExpired(
                version: 1, expiresAt: t0.adding(seconds: 30 * day), now: t0.adding(seconds: 30 * day))
        ) {
            try manifest.checkCurrent(at: t0.adding(seconds: 30 * day))
        }
    }

    @Test func rejectsLifetimeOverRootCap() throws {
        let setup = try Setup()
        let envelope = try sign(
            .pins, manifestPayload(lifetime: 91 * day).serialized(), with: [setup.pinsKey])
        #expect(throws: TrustError.lifetimeExceedsCap(lifetime: 91 * day, cap: 90 * day)) {
            try ManifestVerifier.verify(
                envelope.serialized(), under: try setup.chain().newest, crypto: sodium)
        }
    }

    @Test func rejectsManifestForOtherScope() throws {
        let setup = try Setup()
        let envelope = try sign(
            .pins, manifestPayload(scope: "com.other.app").serialized(), with: [setup.pinsKey])
        #expect(throws: TrustError.scopeMismatch(expected: "com.example.app", found: "com.other.app")) {
            try ManifestVerifier.verify(
                envelope.serialized(), under: try setup.chain().newest, crypto: sodium)
        }
    }

    @Test func rejectsManifestNamingOtherRootVersion() throws {
        let setup = try Setup()
        let envelope = try sign(
            .pins, manifestPayload(rootVersion: 2).serialized(), with: [setup.pinsKey])
        #expect(throws: TrustError.rootVersionMismatch(expected: 1, found: 2)) {
            try ManifestVerifier.verify(
                envelope.serialized(), under: try setup.chain().newest, crypto: sodium)
        }
    }

    @Test func checksSignaturesBeforeParsingPayload() throws {
        // An unsigned, malformed payload is refused for its missing signatures, so the
        // strict parser never sees unauthenticated payload bytes.
        let setup = try Setup()
        let envelope = Envelope(kind: .pins, payload: Array("not json".utf8))
        #expect(throws: TrustError.thresholdNotMet(role: .pins, rootVersion: 1, valid: 0, threshold: 1)) {
            try ManifestVerifier.verify(
                envelope.serialized(), under: try setup.chain().newest, crypto: sodium)
        }
    }

    @Test func expiredNewestRootIsReported() throws {
        let setup = try Setup()
        let chain = try setup.chain()
        try chain.checkNewestCurrent(at: t0)
        let expiry = t0.adding(seconds: 365 * day)
        #expect(throws: TrustError.rootExpired(version: 1, expiresAt: expiry, now: expiry)) {
            try chain.checkNewestCurrent(at: expiry)
        }
    }

    @Test func pinsKeyRotationInvalidatesOldPinsKey() throws {
        let setup = try Setup()
        let newPins = try makeKey()
        var chain = try setup.chain()
        let next = rootPayload(version: 2, rootKeys: [setup.rootKey], pinsKeys: [newPins])
        try chain.append(
            try sign(.root, next.serialized(), with: [setup.rootKey]).serialized(), crypto: sodium)
        let stolen = try sign(
            .pins, manifestPayload(version: 99, rootVersion: 2).serialized(), with: [setup.pinsKey])
        #expect(throws: TrustError.thresholdNotMet(role: .pins, rootVersion: 2, valid: 0, threshold: 1)) {
            try ManifestVerifier.verify(stolen.serialized(), under: chain.newest, crypto: sodium)
        }
    }
}
