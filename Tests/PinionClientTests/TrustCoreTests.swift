// The client's trust core driven with bytes (docs/DESIGN.md §4-§6 and the attacks on them).
// Every refusal asserts the typed error AND that the state is unchanged.

import PinionCore
import PinionCrypto
import PinionLinux
import PinionTestSupport
import PinionTrust
import PinionTrustTestSupport
import Testing

/// A publisher made of bytes: roots by version and one manifest.
struct FakePublisher {
    var roots: [Int64: Served] = [:]
    var manifest: Served = .failed("404")
    /// Versions asked for, in order.
    var asked: [Int64] = []

    func root(_ version: Int64) -> Served { roots[version] ?? .notFound }
}

/// Keys and a client for one scope: root key, pins key, embedded root version 1.
struct ClientWorld {
    let setup: Setup
    let core: TrustCore

    init() throws {
        setup = try Setup()
        core = try TrustCore(scope: "com.example.app", embeddedRoot: setup.rootEnvelope.serialized(), crypto: sodium)
    }

    func manifest(
        version: Int64 = 1, rootVersion: Int64 = 1, issuedAt: Timestamp = t0, lifetime: Int64 = 30 * day,
        domains: [ManifestPayload.Domain]? = nil, revoked: [Pin] = [], scope: String = "com.example.app",
        keys: [Ed25519SecretKey]? = nil, kind: PayloadKind = .pins
    ) throws -> [UInt8] {
        var payload = manifestPayload(
            version: version, rootVersion: rootVersion, scope: scope, issuedAt: issuedAt, lifetime: lifetime,
            domains: domains)
        payload.revokedPins = revoked
        return try sign(kind, payload.serialized(), with: keys ?? [setup.pinsKey]).serialized()
    }

    func refresh(_ state: TrustedState, at time: Timestamp = t0, manifest: [UInt8], etag: String? = "\"e1\"")
        -> RefreshedState
    {
        core.refresh(
            state, startTime: time, fetchRoot: { _ in .notFound }, fetchManifest: { _ in .found(manifest, etag: etag) })
    }

    /// A state that accepted manifest version `version`.
    func accepted(version: Int64 = 1) throws -> TrustedState {
        let result = refresh(core.initialState(), manifest: try manifest(version: version))
        guard case .updated = result.outcome else { throw TestFailure("setup refresh failed: \(result.outcome)") }
        return result.state
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Asserts a refusal: the given outcome, and nothing changed.
func expectRefused(
    _ result: RefreshedState, _ expected: ClientError, from state: TrustedState,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(result.outcome == .rejected(expected), sourceLocation: sourceLocation)
    #expect(result.state == state, sourceLocation: sourceLocation)
    #expect(!result.stateChanged, sourceLocation: sourceLocation)
}

@Suite struct TrustCoreManifestTests {
    @Test func acceptsFirstManifestAndSetsFloorAndLastKnownTime() throws {
        let world = try ClientWorld()
        let result = world.refresh(world.core.initialState(), manifest: try world.manifest())
        #expect(result.outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))
        #expect(result.stateChanged)
        #expect(result.state.floor == ManifestOrder(rootVersion: 1, version: 1))
        #expect(result.state.persisted.lastKnownTime == t0)
        #expect(result.state.persisted.manifestETag == "\"e1\"")
        #expect(result.state.manifestValid)
        #expect(result.state.persisted.manifestDomainNames == ["api.example.com"])
    }

    @Test func refusesUnsignedEnvelope() throws {
        let world = try ClientWorld()
        let state = try world.accepted()
        let bytes = try world.manifest(version: 2, keys: [])
        expectRefused(
            world.refresh(state, manifest: bytes),
            .trust(.thresholdNotMet(role: .pins, rootVersion: 1, valid: 0, threshold: 1)), from: state)
    }

    @Test func refusesSignatureByUnknownKey() throws {
        let world = try ClientWorld()
        let state = try world.accepted()
        let bytes = try world.manifest(version: 2, keys: [try makeKey()])
        expectRefused(
            world.refresh(state, manifest: bytes),
            .trust(.thresholdNotMet(role: .pins, rootVersion: 1, valid: 0, threshold: 1)), from: state)
    }

    @Test(arguments: ["bit-flip", "truncated", "duplicated"])
    func refusesDamagedSignatures(_ damage: String) throws {
        let world = try ClientWorld()
        let state = try world.accepted()
        var envelope = try Envelope.parse(try world.manifest(version: 2))
        switch damage {
        case "bit-flip": envelope.signatures[0].signature[7] ^= 0x20
        case "truncated": envelope.signatures[0].signature.removeLast()
        default:
            // One key's (bad) signature twice still counts at most once: zero here.
            envelope.signatures[0].signature[0] ^= 1
            envelope.signatures.append(envelope.signatures[0])
        }
        expectRefused(
            world.refresh(state, manifest: envelope.serialized()),
            .trust(.thresholdNotMet(role: .pins, rootVersion: 1, valid: 0, threshold: 1)), from: state)
    }

    @Test func signaturesBelowThresholdAndOneKeyTwice() throws {
        let rootKey = try makeKey()
        let pinsA = try makeKey()
        let pinsB = try makeKey()
        let root = rootPayload(rootKeys: [rootKey], pinsKeys: [pinsA, pinsB], pinsThreshold: 2)
        let core = try TrustCore(
            scope: "com.example.app", embeddedRoot: try sign(.root, root.serialized(), with: [rootKey]).serialized(),
            crypto: sodium)
        let state = core.initialState()
        var envelope = try sign(.pins, manifestPayload().serialized(), with: [pinsA])
        envelope.signatures.append(envelope.signatures[0])
        let result = core.refresh(
            state, startTime: t0, fetchRoot: { _ in .notFound },
            fetchManifest: { _ in .found(envelope.serialized(), etag: nil) })
        expectRefused(
            result, .trust(.thresholdNotMet(role: .pins, rootVersion: 1, valid: 1, threshold: 2)), from: state)
        let both = try sign(.pins, manifestPayload().serialized(), with: [pinsA, pinsB])
        let accepted = core.refresh(
            state, startTime: t0, fetchRoot: { _ in .notFound },
            fetchManifest: { _ in .found(both.serialized(), etag: nil) })
        #expect(accepted.outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))
    }

    @Test func refusesRootRoleSignatureForPinsRole() throws {
        let world = try ClientWorld()
        let state = try world.accepted()
        let bytes = try world.manifest(version: 2, keys: [world.setup.rootKey])
        expectRefused(
            world.refresh(state, manifest: bytes),
            .trust(.thresholdNotMet(role: .pins, rootVersion: 1, valid: 0, threshold: 1)), from: state)
    }

    @Test func refusesRootEnvelopeAsManifestAndManifestAsRoot() throws {
        let world = try ClientWorld()
        let state = try world.accepted()
        expectRefused(
            world.refresh(state, manifest: world.setup.rootEnvelope.serialized()),
            .trust(.wrongPayloadKind(expected: .pins, found: .root)), from: state)
        // A manifest served as root 2.
        let manifest = try world.manifest(version: 2)
        let result = world.core.refresh(
            state, startTime: t0, fetchRoot: { $0 == 2 ? .found(manifest) : .notFound },
            fetchManifest: { _ in .notModified })
        expectRefused(result, .trust(.wrongPayloadKind(expected: .root, found: .pins)), from: state)
        // The same pins payload re-labelled as a root payloadType does not verify either.
        var relabelled = try Envelope.parse(try world.manifest(version: 2))
        relabelled.kind = .root
        let swapped = world.core.refresh(
            state, startTime: t0, fetchRoot: { $0 == 2 ? .found(relabelled.serialized()) : .notFound },
            fetchManifest: { _ in .notModified })
        #expect(!swapped.stateChanged)
        guard case .rejected = swapped.outcome else {
            Issue.record("relabelled envelope accepted: \(swapped.outcome)")
            return
        }
    }

    @Test func refusesManifestForAnotherScope() throws {
        let world = try ClientWorld()
        let state = try world.accepted()
        let bytes = try world.manifest(version: 2, scope: "com.other.app")
        expectRefused(
            world.refresh(state, manifest: bytes),
            .trust(.scopeMismatch(expected: "com.example.app", found: "com.other.app")), from: state)
    }

    @Test func refusesLifetimeOverRootCap() throws {
        let world = try ClientWorld()
        let state = try world.accepted()
        let bytes = try world.manifest(version: 2, lifetime: 91 * day)
        expectRefused(
            world.refresh(state, manifest: bytes), .trust(.lifetimeExceedsCap(lifetime: 91 * day, cap: 90 * day)),
            from: state)
    }

    @Test func refusesRollbackBelowFloor() throws {
        let world = try ClientWorld()
        let state = try world.accepted(version: 5)
        expectRefused(
            world.refresh(state, manifest: try world.manifest(version: 4)),
            .rollback(
                offered: ManifestOrder(rootVersion: 1, version: 4), floor: ManifestOrder(rootVersion: 1, version: 5)),
            from: state)
    }

    @Test func refusesEquivocationAndReportsIt() throws {
        let world = try ClientWorld()
        let state = try world.accepted(version: 3)
        let other = try world.manifest(version: 3, domains: [.init(name: "evil.example.com", pins: [pin(9), pin(8)])])
        let result = world.refresh(state, manifest: other)
        expectRefused(result, .equivocation(order: ManifestOrder(rootVersion: 1, version: 3)), from: state)
        #expect(result.events.contains(.equivocation(ManifestOrder(rootVersion: 1, version: 3))))
    }

    @Test func samePayloadWithExtraCoSignatureIsAQuietNoOp() throws {
        let world = try ClientWorld()
        let state = try world.accepted(version: 3)
        var envelope = try Envelope.parse(try world.manifest(version: 3))
        let stranger = try makeKey()
        envelope.signatures.append(
            .init(keyID: stranger.publicKey.keyID, signature: try stranger.sign(envelope.signingInput)))
        let result = world.refresh(state, manifest: envelope.serialized())
        #expect(result.outcome == .unchanged)
        #expect(result.state == state)
        #expect(!result.events.contains(where: { if case .equivocation = $0 { return true } else { return false } }))
    }

    @Test func theAcceptedManifestOfferedAgainAfterExpiryIsRefusedAndA304Reported() throws {
        let world = try ClientWorld()
        let bytes = try world.manifest(version: 1, issuedAt: t0, lifetime: day)
        let first = world.refresh(world.core.initialState(), manifest: bytes)
        #expect(first.outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))
        let expiry = t0.adding(seconds: day)
        // Before expiry the same bytes are a quiet no-op; from expiry on they are refused.
        #expect(world.refresh(first.state, at: expiry.adding(seconds: -1), manifest: bytes).outcome == .unchanged)
        expectRefused(
            world.refresh(first.state, at: expiry, manifest: bytes),
            .trust(.manifestExpired(version: 1, expiresAt: expiry, now: expiry)), from: first.state)
        // A 304 finds nothing newer: unchanged, and the app is told the manifest expired.
        let notModified = world.core.refresh(
            first.state, startTime: expiry, fetchRoot: { _ in .notFound }, fetchManifest: { _ in .notModified })
        #expect(notModified.outcome == .unchanged)
        #expect(
            notModified.events.contains {
                if case .manifestNotCurrent(let reason) = $0 { return reason.contains("expired") }
                return false
            })
    }

    @Test func refusesExpiredManifestAndExpiryExactlyNow() throws {
        let world = try ClientWorld()
        let state = try world.accepted()
        let bytes = try world.manifest(version: 2, issuedAt: t0, lifetime: day)
        let expiry = t0.adding(seconds: day)
        expectRefused(
            world.refresh(state, at: expiry, manifest: bytes),
            .trust(.manifestExpired(version: 2, expiresAt: expiry, now: expiry)), from: state)
        expectRefused(
            world.refresh(state, at: expiry.adding(seconds: 3600), manifest: bytes),
            .trust(.manifestExpired(version: 2, expiresAt: expiry, now: expiry.adding(seconds: 3600))), from: state)
        // One second before expiry, with one start time for the whole refresh: accepted.
        let result = world.refresh(state, at: expiry.adding(seconds: -1), manifest: bytes)
        #expect(result.outcome == .updated(ManifestOrder(rootVersion: 1, version: 2)))
    }

    @Test func clockSteppedBackUsesLastKnownTime() throws {
        let world = try ClientWorld()
        // Accepted at t0 + 20 days: lastKnownTime = t0 + 20d.
        let state = world.refresh(
            world.core.initialState(), at: t0.adding(seconds: 20 * day), manifest: try world.manifest()
        ).state
        #expect(state.persisted.lastKnownTime == t0.adding(seconds: 20 * day))
        // A manifest expiring at t0 + 10d, offered with the wall clock set back to t0: the
        // effective time is lastKnownTime, so it is expired; the step back is reported.
        let stale = try world.manifest(version: 2, issuedAt: t0, lifetime: 10 * day)
        let result = world.refresh(state, at: t0, manifest: stale)
        #expect(result.events.contains(.clockSteppedBack(wallClock: t0, lastKnownTime: t0.adding(seconds: 20 * day))))
        expectRefused(
            result,
            .trust(
                .manifestExpired(version: 2, expiresAt: t0.adding(seconds: 10 * day), now: t0.adding(seconds: 20 * day))
            ),
            from: state)
    }

    @Test func farFutureIssuedAtIsReportedAndDoesNotMoveLastKnownTime() throws {
        let world = try ClientWorld()
        let state = try world.accepted()
        let future = t0.adding(seconds: 40 * day)
        let bytes = try world.manifest(version: 2, issuedAt: future, lifetime: 30 * day)
        let later = t0.adding(seconds: 2 * day)
        let result = world.refresh(state, at: later, manifest: bytes)
        #expect(result.outcome == .updated(ManifestOrder(rootVersion: 1, version: 2)))
        #expect(result.events.contains(.futureDated(issuedAt: future, startTime: later)))
        #expect(result.state.persisted.lastKnownTime == later)
    }

    @Test func refusesVersionTwoToTheFiftyThird() throws {
        let world = try ClientWorld()
        let state = try world.accepted()
        let text = String(decoding: manifestPayload(version: 7).serialized(), as: UTF8.self)
            .replacingOccurrences(of: "\"version\": 7", with: "\"version\": 9007199254740992")
        let bytes = try sign(.pins, Array(text.utf8), with: [world.setup.pinsKey]).serialized()
        expectRefused(
            world.refresh(state, manifest: bytes),
            .trust(
                .format(
                    FormatError(path: "payload.version", rule: .integerOutOfRange(min: 1, max: 9_007_199_254_740_991)))),
            from: state)
    }

    @Test func manifestFetchFailuresKeepState() throws {
        let world = try ClientWorld()
        let state = try world.accepted()
        for reason in ["HTTP 404", "HTTP 500", "connection refused"] {
            let result = world.core.refresh(
                state, startTime: t0, fetchRoot: { _ in .notFound }, fetchManifest: { _ in .failed(reason) })
            #expect(result.outcome == .networkFailure(.fetchFailed(resource: "manifest.json", reason: reason)))
            #expect(result.state == state && !result.stateChanged)
        }
    }

    @Test func conditionalGetSendsStoredETag() throws {
        let world = try ClientWorld()
        let state = try world.accepted()
        var sent: String?
        let result = world.core.refresh(
            state, startTime: t0, fetchRoot: { _ in .notFound },
            fetchManifest: { etag in
                sent = etag
                return .notModified
            })
        #expect(sent == "\"e1\"")
        #expect(result.outcome == .unchanged && !result.stateChanged)
    }

    @Test func revokedPinsAccumulateAcrossVersions() throws {
        let world = try ClientWorld()
        var state = try world.accepted()
        state = world.refresh(state, manifest: try world.manifest(version: 2, revoked: [pin(7)])).state
        state = world.refresh(state, manifest: try world.manifest(version: 3, revoked: [])).state
        #expect(state.revoked == [pin(7)])
    }
}

@Suite struct TrustCoreRootTests {
    func rotation(
        _ world: ClientWorld, to version: Int64, rootKeys: [Ed25519SecretKey], pinsKeys: [Ed25519SecretKey],
        signers: [Ed25519SecretKey]
    ) throws -> [UInt8] {
        let payload = rootPayload(version: version, rootKeys: rootKeys, pinsKeys: pinsKeys)
        return try sign(.root, payload.serialized(), with: signers).serialized()
    }

    @Test func refusesRotationSignedOnlyByOldOrOnlyByNewKeys() throws {
        let world = try ClientWorld()
        let state = try world.accepted()
        let newRoot = try makeKey()
        for (signers, failingVersion) in [([world.setup.rootKey], Int64(2)), ([newRoot], Int64(1))] {
            let bytes = try rotation(
                world, to: 2, rootKeys: [newRoot], pinsKeys: [world.setup.pinsKey], signers: signers)
            let result = world.core.refresh(
                state, startTime: t0, fetchRoot: { $0 == 2 ? .found(bytes) : .notFound },
                fetchManifest: { _ in .notModified })
            expectRefused(
                result, .trust(.thresholdNotMet(role: .root, rootVersion: failingVersion, valid: 0, threshold: 1)),
                from: state)
        }
    }

    @Test func refusesRotationSkippingAVersion() throws {
        let world = try ClientWorld()
        let state = try world.accepted()
        let bytes = try rotation(
            world, to: 3, rootKeys: [world.setup.rootKey], pinsKeys: [world.setup.pinsKey],
            signers: [world.setup.rootKey])
        let result = world.core.refresh(
            state, startTime: t0, fetchRoot: { $0 == 2 ? .found(bytes) : .notFound },
            fetchManifest: { _ in .notModified })
        expectRefused(result, .trust(.rootNotNext(expected: 2, found: 3)), from: state)
    }

    @Test func serverErrorForFirstNewRootFailsAndKeepsState() throws {
        let world = try ClientWorld()
        let state = try world.accepted()
        var manifestAsked = false
        let result = world.core.refresh(
            state, startTime: t0, fetchRoot: { _ in .failed("HTTP 500") },
            fetchManifest: { _ in
                manifestAsked = true
                return .notModified
            })
        #expect(result.outcome == .networkFailure(.fetchFailed(resource: "root/2.json", reason: "HTTP 500")))
        #expect(result.state == state && !result.stateChanged)
        #expect(!manifestAsked)
    }

    @Test func overLongWalkKeepsTheVerifiedPrefix() throws {
        let world = try ClientWorld()
        let state = try world.accepted()
        var roots: [Int64: [UInt8]] = [:]
        for version in Int64(2)...Int64(RootChain.maxRotationsPerWalk + 2) {
            roots[version] = try rotation(
                world, to: version, rootKeys: [world.setup.rootKey], pinsKeys: [world.setup.pinsKey],
                signers: [world.setup.rootKey])
        }
        let result = world.core.refresh(
            state, startTime: t0, fetchRoot: { roots[$0].map { .found($0) } ?? .notFound },
            fetchManifest: { _ in .notModified })
        #expect(result.outcome == .rejected(.tooManyRotations(limit: RootChain.maxRotationsPerWalk)))
        #expect(result.stateChanged)
        #expect(result.state.chain.newest.version == Int64(RootChain.maxRotationsPerWalk + 1))
        #expect(result.state.persisted.acceptedRoots.count == RootChain.maxRotationsPerWalk)
        // The next refresh resumes where the walk stopped.
        let next = world.core.refresh(
            result.state, startTime: t0, fetchRoot: { roots[$0].map { .found($0) } ?? .notFound },
            fetchManifest: { _ in .notModified })
        #expect(next.state.chain.newest.version == Int64(RootChain.maxRotationsPerWalk + 2))
    }

    @Test func stolenPinsKeyRecoveryByRootRotation() throws {
        let world = try ClientWorld()
        var state = try world.accepted()
        // The attacker signs a huge version revoking every pin; it is accepted (validly signed).
        let attack = try world.manifest(version: 9_007_199_254_740_991, revoked: [pin(1), pin(2)])
        state = world.refresh(state, manifest: attack).state
        #expect(state.floor == ManifestOrder(rootVersion: 1, version: 9_007_199_254_740_991))
        #expect(state.revoked == [pin(1), pin(2)])
        // Recovery: root 2 replaces the pins key; a new manifest under root 2 (any version)
        // is above the floor because rootVersion is compared first, and R restarts.
        let newPins = try makeKey()
        let root2 = try rotation(
            world, to: 2, rootKeys: [world.setup.rootKey], pinsKeys: [newPins], signers: [world.setup.rootKey])
        let fresh = try world.manifest(version: 2, rootVersion: 2, keys: [newPins])
        let result = world.core.refresh(
            state, startTime: t0, fetchRoot: { $0 == 2 ? .found(root2) : .notFound },
            fetchManifest: { _ in .found(fresh, etag: nil) })
        #expect(result.outcome == .updated(ManifestOrder(rootVersion: 2, version: 2)))
        #expect(result.state.revoked.isEmpty)
        #expect(result.state.manifestValid)
        // The attacker's key no longer counts.
        let again = try world.manifest(version: 9_007_199_254_740_991, rootVersion: 2)
        expectRefused(
            world.refresh(result.state, manifest: again),
            .trust(.thresholdNotMet(role: .pins, rootVersion: 2, valid: 0, threshold: 1)), from: result.state)
    }

    @Test func refusesManifestNamingARootOlderThanTheNewest() throws {
        let world = try ClientWorld()
        let root2 = try rotation(
            world, to: 2, rootKeys: [world.setup.rootKey], pinsKeys: [world.setup.pinsKey],
            signers: [world.setup.rootKey])
        let state = world.core.refresh(
            try world.accepted(), startTime: t0, fetchRoot: { $0 == 2 ? .found(root2) : .notFound },
            fetchManifest: { _ in .notModified }
        ).state
        // Signed by the (unchanged) pins key, but naming root 1 while root 2 (pinsRoleSince
        // absent: 2) is the newest.
        expectRefused(
            world.refresh(state, manifest: try world.manifest(version: 2, rootVersion: 1)),
            .trust(.rootVersionBeforePinsRole(found: 1, pinsRoleSince: 2, newest: 2)), from: state)
    }

    @Test func rootRotationMakesStoredManifestNotCurrent() throws {
        let world = try ClientWorld()
        let state = try world.accepted()
        let root2 = try rotation(
            world, to: 2, rootKeys: [world.setup.rootKey], pinsKeys: [world.setup.pinsKey],
            signers: [world.setup.rootKey])
        let result = world.core.refresh(
            state, startTime: t0, fetchRoot: { $0 == 2 ? .found(root2) : .notFound },
            fetchManifest: { _ in .notModified })
        #expect(result.state.chain.newest.version == 2)
        #expect(!result.state.manifestValid)
        #expect(result.state.manifest != nil)
        #expect(result.events.contains(.rootAccepted(version: 2)))
    }
}

@Suite struct TrustCoreRestoreTests {
    @Test func restoreReverifiesStoredState() throws {
        let world = try ClientWorld()
        let state = try world.accepted()
        let (restored, events) = world.core.restore(state.persisted)
        #expect(restored == state)
        #expect(events.isEmpty)
    }

    @Test func foreignScopeIsDroppedButItsDomainsStayEnforced() throws {
        let world = try ClientWorld()
        var stored = try world.accepted().persisted
        stored.scope = "com.other.app"
        let (restored, events) = world.core.restore(stored)
        #expect(restored.manifest == nil)
        #expect(restored.forcedDomains == ["api.example.com"])
        #expect(events.count == 1)
    }

    @Test func tamperedStoredManifestIsDroppedAndItsDomainsForced() throws {
        let world = try ClientWorld()
        var stored = try world.accepted().persisted
        var envelope = try Envelope.parse(stored.manifest ?? [])
        envelope.signatures[0].signature[1] ^= 4
        stored.manifest = envelope.serialized()
        let (restored, events) = world.core.restore(stored)
        #expect(restored.manifest == nil && restored.persisted.manifest == nil)
        #expect(restored.forcedDomains == ["api.example.com"])
        #expect(restored.floor == ManifestOrder(rootVersion: 1, version: 1))
        #expect(!events.isEmpty)
    }

    @Test func expiredStoredManifestIsKeptAsNonCurrent() throws {
        let world = try ClientWorld()
        let state = try world.accepted()
        let (restored, _) = world.core.restore(state.persisted)
        // Verification at restore does not look at expiry; the merge treats it as expired
        // by time at every connection.
        #expect(restored.manifest?.expiresAt == t0.adding(seconds: 30 * day))
        #expect(restored.manifestValid)
    }

    @Test func newerEmbeddedRootSupersedesStoredRoots() throws {
        let world = try ClientWorld()
        let root2 = rootPayload(version: 2, rootKeys: [world.setup.rootKey], pinsKeys: [world.setup.pinsKey])
        let root2Bytes = try sign(.root, root2.serialized(), with: [world.setup.rootKey]).serialized()
        let stateWith2 = world.core.refresh(
            world.core.initialState(), startTime: t0, fetchRoot: { $0 == 2 ? .found(root2Bytes) : .notFound },
            fetchManifest: { _ in .notModified }
        ).state
        #expect(stateWith2.persisted.acceptedRoots.count == 1)
        // A later app build embeds root 2 itself.
        let core2 = try TrustCore(scope: "com.example.app", embeddedRoot: root2Bytes, crypto: sodium)
        let (restored, events) = core2.restore(stateWith2.persisted)
        #expect(restored.chain.newest.version == 2)
        #expect(restored.persisted.acceptedRoots.isEmpty)
        #expect(events.isEmpty)
    }

    @Test func embeddedRootOfAnotherScopeIsAnAppBuildError() throws {
        let setup = try Setup()
        #expect(throws: ClientError.self) {
            try TrustCore(scope: "com.other.app", embeddedRoot: setup.rootEnvelope.serialized(), crypto: sodium)
        }
    }
}
