// The refresh under a root with a `log` (docs/DESIGN.md §12), driven with bytes: each attack on the log refused with its reason code and the state unchanged, or noticed.

import Foundation
import PinionCore
import PinionLog
import PinionTrust
import PinionTrustTestSupport
import Testing

/// A publisher with a log, its tree and a client core whose embedded root carries the log.
struct LogWorld {
    let publisher: Publisher
    var log: LogPublisher
    let root: [UInt8]
    let core: TrustCore
    let tree = LoggedTree()

    init(log: LogPublisher? = nil) throws {
        publisher = try Publisher()
        self.log = try log ?? LogPublisher()
        root = try publisher.loggedRoot(log: self.log.policy)
        core = try TrustCore(scope: scope, embeddedRoot: root, crypto: PortableCrypto.provider)
    }

    /// Publishes manifest `version`: signs it, appends its head, serves it.
    @discardableResult
    mutating func publish(version: Int64, pins: [Pin]? = nil) throws -> [UInt8] {
        let manifest = try publisher.pinsManifest(version: version, pins: pins ?? [try junkPin(UInt8(version))])
        try log.append(root: root, rootVersion: 1, manifest: manifest)
        tree.manifests.append(manifest)
        return manifest
    }

    /// Serves the proof of the last entry cosigned by witnesses 1 and 2 at `time`.
    func serveProof(cosignedAt time: Timestamp = t0.adding(seconds: -100)) throws {
        tree.proof = .found(try log.proof(cosignedAt: time))
    }

    /// A state that accepted the tree's manifests up to now.
    func accepted(at time: Timestamp = t0) throws -> TrustedState {
        let result = tree.refresh(core, core.initialState(), at: time)
        guard case .updated = result.outcome else { throw FixtureFailure(description: "setup: \(result.outcome)") }
        return result.state
    }
}

/// Asserts a refusal by the log step with `code`, nothing changed.
func expectLogRefusal(
    _ result: RefreshedState, _ code: String, from state: TrustedState,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    guard case .rejected(let error) = result.outcome, let refusal = error.logRefusal else {
        Issue.record("expected \(code), got \(result.outcome)", sourceLocation: sourceLocation)
        return
    }
    #expect(refusal.reasonCode == code, sourceLocation: sourceLocation)
    #expect(result.document == "manifest.proof", sourceLocation: sourceLocation)
    #expect(result.state == state, sourceLocation: sourceLocation)
    #expect(!result.stateChanged, sourceLocation: sourceLocation)
    #expect(
        result.events.contains(.rejected(.log(refusal))),
        sourceLocation: sourceLocation)
}

@Suite struct RefreshLogStepTests {
    @Test func acceptsALoggedManifestAndStoresTheCheckpoint() throws {
        var world = try LogWorld()
        try world.publish(version: 1)
        try world.serveProof(cosignedAt: t0.adding(seconds: -100))
        let result = world.tree.refresh(world.core, world.core.initialState())
        #expect(result.outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))
        let stored = try #require(result.state.persisted.logCheckpoint)
        #expect(stored.checkpoint.size == 1)
        #expect(stored.checkpoint.origin == world.log.origin)
        #expect(stored.quorumTime == t0.secondsSince1970 - 100)
        #expect(result.state.persisted.lastKnownTime == t0)
        #expect(world.tree.proofFetches == 1)
        #expect(!result.events.contains { if case .staleCheckpoint = $0 { true } else { false } })
    }

    @Test func fetchesTheProofAfterA304AndKeepsTheReCosignedCheckpoint() throws {
        var world = try LogWorld()
        try world.publish(version: 1)
        try world.serveProof()
        let state = try world.accepted()
        // log refresh re-cosigned the same checkpoint an hour later.
        try world.serveProof(cosignedAt: t0.adding(seconds: 3600))
        let later = t0.adding(seconds: 3700)
        let result = world.tree.refresh(world.core, state, at: later)
        #expect(result.outcome == .unchanged)
        #expect(world.tree.proofFetches == 2)
        #expect(result.state.persisted.logCheckpoint?.quorumTime == t0.secondsSince1970 + 3600)
        #expect(result.state.persisted.lastKnownTime == later)
    }

    @Test func refusesAMissingProof() throws {
        var world = try LogWorld()
        try world.publish(version: 1)
        world.tree.proof = .notFound
        let start = world.core.initialState()
        expectLogRefusal(world.tree.refresh(world.core, start), "log-proof-missing", from: start)
        // A core wired without a proof fetcher refuses the same way.
        let result = world.core.refresh(
            start, startTime: t0, fetchRoot: world.tree.fetchRoot, fetchManifest: world.tree.fetchManifest)
        expectLogRefusal(result, "log-proof-missing", from: start)
    }

    @Test func refusesAnOversizedProof() throws {
        var world = try LogWorld()
        try world.publish(version: 1)
        let start = world.core.initialState()
        world.tree.proof = .tooLarge(limit: TlogProofLimits.standard.maxBytes)
        expectLogRefusal(world.tree.refresh(world.core, start), "log-proof-too-large", from: start)
        // Over the limit though delivered whole: refused before parsing.
        var bytes = try world.log.proof(cosignedAt: t0)
        bytes += [UInt8](repeating: 0x41, count: TlogProofLimits.standard.maxBytes)
        world.tree.proof = .found(bytes)
        expectLogRefusal(world.tree.refresh(world.core, start), "log-proof-too-large", from: start)
    }

    @Test func aProofThatCannotBeFetchedIsANetworkFailureWithTheStateKept() throws {
        var world = try LogWorld()
        try world.publish(version: 1)
        world.tree.proof = .failed("HTTP 503")
        let start = world.core.initialState()
        let result = world.tree.refresh(world.core, start)
        #expect(result.outcome == .networkFailure(.fetchFailed(resource: "manifest.proof", reason: "HTTP 503")))
        #expect(result.state == start && !result.stateChanged)
    }

    @Test func stolenPinsKeyWithAnUnloggedManifestIsRefused() throws {
        var world = try LogWorld()
        try world.publish(version: 1)
        try world.serveProof()
        let state = try world.accepted()
        // The thief signs version 2 with the pins key but cannot log it: the log still ends at 1.
        world.tree.manifests.append(try world.publisher.pinsManifest(version: 2, pins: [try junkPin(0xEE)]))
        let result = world.tree.refresh(world.core, state, at: t0.adding(seconds: 60))
        expectLogRefusal(result, "log-manifest-not-logged", from: state)
        // Retried once (manifest.json and manifest.proof again), then refused.
        #expect(world.tree.manifestFetches == 3)
        #expect(world.tree.proofFetches == 3)
    }

    @Test func aProofNewerThanTheManifestIsRetriedOnce() throws {
        var world = try LogWorld()
        let first = try world.publish(version: 1)
        try world.publish(version: 2)
        try world.serveProof()
        // The first manifest.json read fell before the publish wrote the new one.
        world.tree.manifests = [first]
        world.tree.laterManifests = [try world.publisher.pinsManifest(version: 2, pins: [try junkPin(2)])]
        let result = world.tree.refresh(world.core, world.core.initialState())
        #expect(result.outcome == .updated(ManifestOrder(rootVersion: 1, version: 2)))
        #expect(world.tree.manifestFetches == 2 && world.tree.proofFetches == 2)
        #expect(result.state.persisted.logCheckpoint?.checkpoint.size == 2)
    }

    @Test func refusesAStaleProofOfAnOlderHead() throws {
        var world = try LogWorld()
        let first = try world.publish(version: 1)
        try world.publish(version: 2)
        // A proof of entry 0 (the version 1 head) against the current checkpoint, with version 1 served.
        let note = try world.log.note(cosignedBy: [(0, t0.secondsSince1970), (1, t0.secondsSince1970)])
        world.tree.proof = .found(try world.log.proof(note: note, index: 0))
        world.tree.manifests = [first]
        let start = world.core.initialState()
        expectLogRefusal(world.tree.refresh(world.core, start), "log-not-last-entry", from: start)
    }

    @Test func refusesAWithheldRoot() throws {
        var world = try LogWorld()
        let manifest = try world.publish(version: 1)
        try world.serveProof()
        let state = try world.accepted()
        // Root 2 is published into the log, but the publisher 404s root/2.json.
        let root2 = try world.publisher.loggedRoot(version: 2, log: world.log.policy)
        try world.log.append(root: root2, rootVersion: 2, manifest: manifest)
        try world.serveProof(cosignedAt: t0)
        let result = world.tree.refresh(world.core, state, at: t0.adding(seconds: 60))
        expectLogRefusal(result, "log-root-logged-not-served", from: state)
        guard case .rejected(let error) = result.outcome else { return }
        #expect(error.description.contains("root 2 is logged but not served"))
        // Served, the same proof is accepted.
        world.tree.roots[2] = root2
        let served = world.tree.refresh(world.core, state, at: t0.adding(seconds: 120))
        #expect(served.outcome == .unchanged)
        #expect(served.state.chain.newest.version == 2)
    }

    @Test func aRootPublishedBetweenTheWalkAndTheProofIsWalkedToOnTheRetry() throws {
        var world = try LogWorld()
        let manifest = try world.publish(version: 1)
        try world.serveProof()
        let state = try world.accepted()
        let root2 = try world.publisher.loggedRoot(version: 2, log: world.log.policy)
        try world.log.append(root: root2, rootVersion: 2, manifest: manifest)
        try world.serveProof(cosignedAt: t0)
        // root/2.json appears only after the first walk (the publish was under way).
        var asked: [Int64] = []
        let result = world.core.refresh(
            state, startTime: t0.adding(seconds: 60),
            fetchRoot: { version in
                asked.append(version)
                return version == 2 && asked.filter({ $0 == 2 }).count > 1 ? .found(root2) : .notFound
            },
            fetchManifest: world.tree.fetchManifest, fetchProof: world.tree.fetchProof)
        #expect(result.outcome == .unchanged)
        #expect(result.state.chain.newest.version == 2)
        #expect(asked == [2, 2, 3])
        #expect(result.state.persisted.logCheckpoint?.checkpoint.size == 2)
    }

    @Test func aRootThatIsServedButNotLoggedIsRefusedAndTheManifestStepUndone() throws {
        var world = try LogWorld()
        try world.publish(version: 1)
        try world.serveProof()
        let state = try world.accepted()
        // Root 2 is served (signed by the root role); the log's head still names root 1. As
        // after any failure, the walk's verified roots are kept (docs/DESIGN.md §6), nothing else.
        world.tree.roots[2] = try world.publisher.loggedRoot(version: 2, log: world.log.policy)
        let result = world.tree.refresh(world.core, state, at: t0.adding(seconds: 60))
        guard case .rejected(let error) = result.outcome, let refusal = error.logRefusal else {
            Issue.record("expected a log refusal, got \(result.outcome)")
            return
        }
        #expect(refusal.reasonCode == "log-root-mismatch")
        #expect(result.state.chain.newest.version == 2)
        #expect(result.events.contains(.rootAccepted(version: 2)))
        #expect(result.state.persisted.manifest == state.persisted.manifest)
        #expect(result.state.persisted.lastKnownTime == state.persisted.lastKnownTime)
        #expect(result.state.persisted.logCheckpoint == state.persisted.logCheckpoint)
    }

    @Test func aRootWalkThatFailsUnderALogKeepsItsVerifiedPrefixAndNoManifest() throws {
        var world = try LogWorld()
        try world.publish(version: 1)
        try world.serveProof()
        let state = try world.accepted()
        world.tree.roots[2] = try world.publisher.loggedRoot(version: 2, log: world.log.policy)
        let result = world.core.refresh(
            state, startTime: t0, fetchRoot: { $0 == 3 ? .failed("HTTP 500") : world.tree.fetchRoot($0) },
            fetchManifest: world.tree.fetchManifest, fetchProof: world.tree.fetchProof)
        guard case .networkFailure = result.outcome else {
            Issue.record("expected a network failure, got \(result.outcome)")
            return
        }
        #expect(result.state.chain.newest.version == 2)
        #expect(world.tree.manifestFetches == 1 && world.tree.proofFetches == 1)
    }

    /// Notes whose cosignatures must not reach the quorum of 2, or must not verify.
    static let badCosignatures: [(String, String)] = [
        ("one cosignature below the quorum", "log-quorum-not-met"),
        ("one witness key counted twice", "log-quorum-not-met"),
        ("a witness the root does not list", "log-quorum-not-met"),
        ("a listed witness's bad signature", "log-cosignature-invalid"),
        ("no log signature", "log-signature-missing"),
    ]

    @Test(arguments: badCosignatures)
    func refusesBadCosignatures(name: String, code: String) throws {
        var world = try LogWorld()
        try world.publish(version: 1)
        let time = t0.secondsSince1970
        let note: SignedNote
        switch name {
        case "one cosignature below the quorum": note = try world.log.note(cosignedBy: [(0, time)])
        case "one witness key counted twice": note = try world.log.note(cosignedBy: [(0, time), (0, time - 5)])
        case "a witness the root does not list":
            let listed = try world.log.note(cosignedBy: [(0, time)])
            // Same name as witness 2, another key: its key ID differs, so it never counts.
            let stranger = try SodiumSigner(seed: [UInt8](repeating: 0x99, count: 32))
            let line = try Cosignature.sign(
                text: listed.text, keyName: "w2.example", timestamp: UInt64(time), signer: stranger,
                hasher: LogPublisher.hasher)
            note = SignedNote(text: listed.text, signatures: listed.signatures + [line])
        case "a listed witness's bad signature":
            let good = try world.log.note(cosignedBy: [(0, time), (1, time), (2, time)])
            var signatures = good.signatures
            var bytes = signatures[2].signature
            bytes[bytes.count - 1] ^= 0x01
            signatures[2] = NoteSignature(keyName: signatures[2].keyName, keyID: signatures[2].keyID, signature: bytes)
            note = SignedNote(text: good.text, signatures: signatures)
        default: note = try world.log.note(cosignedBy: [(0, time), (1, time)], logSigned: false)
        }
        world.tree.proof = .found(try world.log.proof(note: note))
        let start = world.core.initialState()
        expectLogRefusal(world.tree.refresh(world.core, start), code, from: start)
    }

    @Test func aFutureCosignatureIsReportedCountsAsAgeZeroAndNeverMovesLastKnownTime() throws {
        var world = try LogWorld()
        try world.publish(version: 1)
        try world.serveProof(cosignedAt: t0.adding(seconds: 2 * day))
        let result = world.tree.refresh(world.core, world.core.initialState())
        #expect(result.outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))
        #expect(
            result.events.contains(
                .futureCosignatures(witnesses: ["w1.example", "w2.example"], quorumTimeInFuture: true)))
        #expect(result.state.persisted.logCheckpoint?.quorumTime == t0.secondsSince1970)
        #expect(result.state.persisted.lastKnownTime == t0)
    }

    @Test func aSplitViewIsRefusedAndBothNotesAreKeptAsEvidence() throws {
        var world = try LogWorld()
        let first = try world.publish(version: 1)
        let second = try world.publish(version: 2)
        try world.serveProof()
        let state = try world.accepted()
        let storedNote = try #require(state.persisted.logCheckpoint?.note)
        // The log key signs another tree of size 2 whose last head also names version 2.
        var fork = try LogPublisher()
        try fork.append(
            HeadRecord(
                scope: scope, sequence: 0, rootVersion: 1,
                rootPayloadSHA256: try LogPublisher.payloadSHA256(world.root),
                manifestRootVersion: 1, manifestVersion: 1,
                manifestPayloadSHA256: LogPublisher.hasher.sha256(Array("another manifest".utf8))))
        try fork.append(root: world.root, rootVersion: 1, manifest: second)
        let forkNote = try fork.note(cosignedBy: [(0, t0.secondsSince1970), (1, t0.secondsSince1970)])
        world.tree.proof = .found(try fork.proof(note: forkNote))
        _ = first
        let result = world.tree.refresh(world.core, state, at: t0.adding(seconds: 60))
        expectLogRefusal(result, "log-equivocation", from: state)
        let evidence = try #require(
            result.events.lazy.compactMap { event -> Equivocation? in
                if case .logEquivocation(let evidence) = event { return evidence }
                return nil
            }.first)
        #expect(evidence.storedNote == storedNote)
        #expect(evidence.receivedNote == forkNote.bytes)
        #expect(evidence.stored.size == 2 && evidence.received.size == 2)
        #expect(evidence.stored.rootHash != evidence.received.rootHash)
        // The evidence file's round trip (PinningClient writes it next to the state).
        #expect(
            LogEquivocationRecord.decode(LogEquivocationRecord.encode(evidence), hasher: LogPublisher.hasher)
                == evidence)
    }

    @Test func refusesACheckpointSmallerThanTheStoredOne() throws {
        var world = try LogWorld()
        try world.publish(version: 1)
        let second = try world.publish(version: 2)
        try world.serveProof()
        let state = try world.accepted()
        // A rolled-back log of one entry whose head names the accepted manifest.
        var rolledBack = try LogPublisher()
        try rolledBack.append(
            HeadRecord(
                scope: scope, sequence: 0, rootVersion: 1,
                rootPayloadSHA256: try LogPublisher.payloadSHA256(world.root),
                manifestRootVersion: 1, manifestVersion: 2,
                manifestPayloadSHA256: try LogPublisher.payloadSHA256(second)))
        world.tree.proof = .found(try rolledBack.proof(cosignedAt: t0))
        expectLogRefusal(
            world.tree.refresh(world.core, state, at: t0.adding(seconds: 60)), "log-checkpoint-shrank", from: state)
    }

    @Test func refusesBrokenProofBytes() throws {
        var world = try LogWorld()
        try world.publish(version: 1)
        try world.publish(version: 2)
        let bytes = try world.log.proof(cosignedAt: t0)
        let text = String(decoding: bytes, as: UTF8.self)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = world.core.initialState()

        world.tree.proof = .found(Array(bytes.dropLast(20)))
        expectLogRefusal(world.tree.refresh(world.core, start), "log-malformed-proof", from: start)

        // An inclusion proof line rewritten to another hash.
        lines[3] = Base64.encode([UInt8](repeating: 0x5A, count: 32))
        world.tree.proof = .found(Array(lines.joined(separator: "\n").utf8))
        expectLogRefusal(world.tree.refresh(world.core, start), "log-inclusion-failed", from: start)

        // The checkpoint's root hash rewritten: the log signature no longer verifies.
        lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let rootLine = try #require(lines.firstIndex(of: Base64.encode(world.log.rootHash)))
        lines[rootLine] = Base64.encode([UInt8](repeating: 0x11, count: 32))
        world.tree.proof = .found(Array(lines.joined(separator: "\n").utf8))
        expectLogRefusal(world.tree.refresh(world.core, start), "log-signature-invalid", from: start)

        // Every single-byte change anywhere is refused (or, in ignored spots, changes nothing).
        for position in stride(from: 0, to: bytes.count, by: 7) {
            var damaged = bytes
            damaged[position] ^= 0x04
            world.tree.proof = .found(damaged)
            let result = world.tree.refresh(world.core, start)
            guard case .rejected(let error) = result.outcome, error.logRefusal != nil else {
                Issue.record("byte \(position) changed: \(result.outcome)")
                continue
            }
            #expect(result.state == start)
        }
    }

    @Test func aRotationToAnotherLogOriginDropsTheStoredCheckpoint() throws {
        var world = try LogWorld()
        let manifest = try world.publish(version: 1)
        try world.publish(version: 2)
        try world.serveProof()
        let state = try world.accepted()
        #expect(state.persisted.logCheckpoint?.checkpoint.size == 2)
        // Root 2 names a new log (other origin and key) that has one head so far: smaller
        // than the stored checkpoint, which is not compared since it belongs to the old log.
        var newLog = try LogPublisher(origin: "pinion.example/com.example.app/v2", seed: 0x60)
        let root2 = try world.publisher.loggedRoot(version: 2, log: newLog.policy)
        try newLog.append(root: root2, rootVersion: 2, manifest: world.tree.manifests[1])
        world.tree.roots[2] = root2
        world.tree.proof = .found(try newLog.proof(cosignedAt: t0))
        _ = manifest
        let result = world.tree.refresh(world.core, state, at: t0.adding(seconds: 60))
        #expect(result.outcome == .unchanged)
        #expect(result.state.persisted.logCheckpoint?.checkpoint.origin == newLog.origin)
        #expect(result.state.persisted.logCheckpoint?.checkpoint.size == 1)
    }

    @Test func aRotationToAnotherLogKeyOfTheSameOriginDropsTheStoredCheckpoint() throws {
        var world = try LogWorld()
        try world.publish(version: 1)
        try world.publish(version: 2)
        try world.serveProof()
        let state = try world.accepted()
        var rekeyed = try LogPublisher(seed: 0x70)
        let root2 = try world.publisher.loggedRoot(version: 2, log: rekeyed.policy)
        try rekeyed.append(root: root2, rootVersion: 2, manifest: world.tree.manifests[1])
        world.tree.roots[2] = root2
        world.tree.proof = .found(try rekeyed.proof(cosignedAt: t0))
        let result = world.tree.refresh(world.core, state, at: t0.adding(seconds: 60))
        #expect(result.outcome == .unchanged)
        #expect(result.state.persisted.logCheckpoint?.checkpoint.size == 1)
        // At start-up too: an app whose embedded root names the new log drops the old checkpoint.
        let upgraded = try TrustCore(scope: scope, embeddedRoot: root2, crypto: PortableCrypto.provider)
        #expect(upgraded.restore(state.persisted).0.persisted.logCheckpoint == nil)
        #expect(world.core.restore(state.persisted).0.persisted.logCheckpoint == state.persisted.logCheckpoint)
    }

    @Test func aRotationRemovingTheLogDropsTheCheckpointAndFetchesNoProof() throws {
        var world = try LogWorld()
        try world.publish(version: 1)
        try world.serveProof()
        let state = try world.accepted()
        world.tree.roots[2] = try world.publisher.loggedRoot(version: 2, log: nil)
        let result = world.tree.refresh(world.core, state, at: t0.adding(seconds: 60))
        #expect(result.outcome == .unchanged)
        #expect(result.state.persisted.logCheckpoint == nil)
        #expect(world.tree.proofFetches == 1)
    }

    @Test func theManifestStopsBeingCurrentPastMaxCheckpointAgePlusGrace() throws {
        var world = try LogWorld()
        try world.publish(version: 1)
        let quorumTime = t0.adding(seconds: -100)
        try world.serveProof(cosignedAt: quorumTime)
        let state = try world.accepted()
        let limit = day + 7 * day
        #expect(state.logStaleFrom == quorumTime.adding(seconds: day + 1))
        #expect(state.logCurrentUntil == quorumTime.adding(seconds: limit + 1))
        let snapshot = PolicySnapshot(
            baseline: .empty, manifest: state.manifest, manifestValid: state.manifestValid, revoked: state.revoked,
            staleGrace: 0, rootExpiresAt: state.chain.newest.payload.expiresAt, logCurrentUntil: state.logCurrentUntil)
        #expect(snapshot.isManifestCurrent(at: quorumTime.adding(seconds: limit)))
        #expect(!snapshot.isManifestCurrent(at: quorumTime.adding(seconds: limit + 1)))
        // A refresh that verifies a stale checkpoint says so.
        let late = world.tree.refresh(world.core, state, at: quorumTime.adding(seconds: 2 * day))
        #expect(
            late.events.contains(
                .staleCheckpoint(size: 1, quorumTime: quorumTime.secondsSince1970, age: 2 * day)))
    }

    @Test func freshnessOffNeverExpiresByTheLog() throws {
        var world = try LogWorld(log: try LogPublisher(maxCheckpointAge: 0))
        try world.publish(version: 1)
        try world.serveProof(cosignedAt: t0.adding(seconds: -400 * day))
        let state = try world.accepted()
        #expect(state.logCurrentUntil == nil && state.logStaleFrom == nil)
    }
}
