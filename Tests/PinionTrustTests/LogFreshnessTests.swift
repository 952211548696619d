// Log freshness at every connection (docs/DESIGN.md §12) through the whole client: manifest.proof fetched on every refresh, staleCheckpoint once per checkpoint, and the first connection past maxCheckpointAge + grace narrowed.

import Foundation
import PinionCore
import PinionLog
import PinionTrust
import PinionTrustTestSupport
import Testing

/// A client of a scope whose embedded root has a log, over the fake transport and memory storage.
struct LoggedClientWorld {
    let publisher: Publisher
    var log: LogPublisher
    let root: [UInt8]
    let certificates: Certificates
    let transport: FakeTransport
    let storage = MemoryStorage()
    let clock = TestClock(t0)
    let recorder = Recorder()

    init() throws {
        publisher = try Publisher()
        log = try LogPublisher()
        root = try publisher.loggedRoot(log: log.policy)
        certificates = try Certificates.load()
        transport = FakeTransport(
            verifiedChain: certificates.chain(certificates.leaf), hasher: PortableCrypto.provider.hasher)
    }

    /// A client with baseline B: api.example.test pinned to a key no server has, and
    /// other.example.test pinned to the leaf.
    func client() throws -> PinningClient {
        let baseline = try Baseline(domains: [
            PinnedDomain(name: "api.example.test", pins: [try junkPin(0x33)]),
            PinnedDomain(name: "other.example.test", pins: [try certificates.pin("leaf.der")]),
        ])
        let configuration = ClientConfiguration(
            scope: scope, baseURL: URL(string: "https://publisher.example.test/"), embeddedRoot: root,
            baseline: baseline, stateDirectory: "", clock: clock.function)
        let recorder = self.recorder
        return try PinningClient(
            configuration: configuration, crypto: PortableCrypto.provider, transport: transport, storage: storage,
            onEvent: { recorder.record($0) })
    }

    /// Publishes manifest 1 pinning api.example.test to the leaf, logs it and serves its proof
    /// cosigned at `time`.
    mutating func publish(cosignedAt time: Timestamp) throws {
        let manifest = try publisher.pinsManifest(version: 1, pins: [try certificates.pin("leaf.der")])
        try log.append(root: root, rootVersion: 1, manifest: manifest)
        transport.serve("manifest.json", manifest, etag: Harness.etag(manifest))
        reCosign(at: time)
    }

    /// `pinion log refresh`: the same checkpoint cosigned again at `time`.
    func reCosign(at time: Timestamp) {
        // A failure to build the proof leaves the old one; the assertions then fail.
        if let proof = try? log.proof(cosignedAt: time) {
            transport.serve("manifest.proof", proof, etag: Harness.etag(proof))
        }
    }

    var staleEvents: [ClientEvent] {
        recorder.events.filter { if case .staleCheckpoint = $0 { true } else { false } }
    }

    func isTrusted(_ verdict: ConnectionVerdict) -> Bool {
        if case .trusted = verdict { return true }
        return false
    }
}

@Suite struct LogFreshnessTests {
    @Test func aFrozenClientIsToldOnceAndNarrowsAtTheFirstConnectionPastTheGrace() throws {
        var world = try LoggedClientWorld()
        try world.publish(cosignedAt: t0)
        let client = try world.client()
        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))
        let chain = world.certificates.chain(world.certificates.leaf)
        #expect(world.isTrusted(client.verdict(for: "api.example.test", verifiedChainDER: chain)))
        #expect(world.staleEvents.isEmpty)

        // Past maxCheckpointAge (1 day) with no fresh cosignature: one event, at the first
        // connection, and not again for the same checkpoint; the manifest still counts.
        world.clock.set(t0.adding(seconds: day + 10))
        #expect(world.isTrusted(client.verdict(for: "api.example.test", verifiedChainDER: chain)))
        world.clock.set(t0.adding(seconds: day + 20))
        #expect(world.isTrusted(client.verdict(for: "api.example.test", verifiedChainDER: chain)))
        #expect(world.staleEvents == [.staleCheckpoint(size: 1, quorumTime: t0.secondsSince1970, age: day + 10)])

        // Past maxCheckpointAge + checkpointGrace (8 days): the manifest counts as expired at
        // the first connection. Narrow only: B ∩ M for api.example.test (nothing), and the
        // baseline's own entry stays.
        let generation = client.trustGeneration
        world.clock.set(t0.adding(seconds: 8 * day + 1))
        guard case .rejected = client.verdict(for: "api.example.test", verifiedChainDER: chain) else {
            Issue.record("the frozen manifest still granted its pin past the grace")
            return
        }
        #expect(world.isTrusted(client.verdict(for: "other.example.test", verifiedChainDER: chain)))
        #expect(client.trustGeneration == generation + 1)
        #expect(world.staleEvents.count == 1)
    }

    @Test func aReCosignedCheckpointKeepsTheManifestCurrentAndIsWatchedAfresh() throws {
        var world = try LoggedClientWorld()
        try world.publish(cosignedAt: t0)
        let client = try world.client()
        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))
        world.clock.set(t0.adding(seconds: day + 10))
        _ = client.trustGeneration
        #expect(world.staleEvents.count == 1)

        // log refresh cosigned again; the next refresh gets a 304 for manifest.json and still
        // fetches manifest.proof.
        world.transport.clearRequests()
        world.reCosign(at: t0.adding(seconds: day + 30))
        world.clock.set(t0.adding(seconds: day + 60))
        #expect(client.refresh().outcome == .unchanged)
        let paths = world.transport.requests.map(\.path)
        #expect(paths.contains("/v1/\(scope)/manifest.proof"))
        #expect(world.transport.statuses.contains(304))
        #expect(client.trustedState.persisted.logCheckpoint?.quorumTime == t0.secondsSince1970 + day + 30)

        // Fresh for another day, then stale again: a second event, for the new checkpoint.
        world.clock.set(t0.adding(seconds: 2 * day + 31))
        #expect(
            world.isTrusted(
                client.verdict(
                    for: "api.example.test", verifiedChainDER: world.certificates.chain(world.certificates.leaf))))
        #expect(world.staleEvents.count == 2)
    }

    @Test func theCheckpointSurvivesARestartAndARefusedProofChangesNothing() throws {
        var world = try LoggedClientWorld()
        try world.publish(cosignedAt: t0)
        let client = try world.client()
        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 1)))
        let stored = try #require(client.trustedState.persisted.logCheckpoint)

        // The publisher stops serving the proof: refused with its reason, nothing saved.
        world.transport.answer("manifest.proof", status: 404)
        let before = client.trustedState
        let report = client.refresh()
        guard case .rejected(let error) = report.outcome, let refusal = error.logRefusal else {
            Issue.record("expected a log refusal, got \(report.outcome)")
            return
        }
        #expect(refusal.reasonCode == "log-proof-missing")
        #expect(report.document == "manifest.proof")
        #expect(client.trustedState == before)

        // A restarted app reads the checkpoint back from both copies.
        let restarted = try world.client()
        #expect(restarted.trustedState.persisted.logCheckpoint == stored)
    }

    @Test func anOversizedProofIsRefusedWhileReading() throws {
        var world = try LoggedClientWorld()
        try world.publish(cosignedAt: t0)
        world.transport.serve("manifest.proof", [UInt8](repeating: 0x41, count: TlogProofLimits.standard.maxBytes + 1))
        let client = try world.client()
        let report = client.refresh()
        guard case .rejected(let error) = report.outcome, let refusal = error.logRefusal else {
            Issue.record("expected a log refusal, got \(report.outcome)")
            return
        }
        #expect(refusal.reasonCode == "log-proof-too-large")
        #expect(client.trustedState.persisted.manifest == nil)
    }

    @Test func aSplitViewIsKeptInTheEvidenceFileOnce() throws {
        var world = try LoggedClientWorld()
        let leaf = try world.certificates.pin("leaf.der")
        let first = try world.publisher.pinsManifest(version: 1, pins: [leaf])
        let second = try world.publisher.pinsManifest(version: 2, pins: [leaf])
        try world.log.append(root: world.root, rootVersion: 1, manifest: first)
        try world.log.append(root: world.root, rootVersion: 1, manifest: second)
        world.transport.serve("manifest.json", second, etag: Harness.etag(second))
        world.reCosign(at: t0)
        let client = try world.client()
        #expect(client.refresh().outcome == .updated(ManifestOrder(rootVersion: 1, version: 2)))
        #expect(client.logEquivocationEvidence == nil)
        let before = client.trustedState

        // Two forks of size 2 signed by the log key, each ending in the head of version 2.
        func fork(_ label: String) throws -> (LogPublisher, [UInt8]) {
            var fork = try LogPublisher()
            try fork.append(
                HeadRecord(
                    scope: scope, sequence: 0, rootVersion: 1,
                    rootPayloadSHA256: try LogPublisher.payloadSHA256(world.root), manifestRootVersion: 1,
                    manifestVersion: 1, manifestPayloadSHA256: LogPublisher.hasher.sha256(Array(label.utf8))))
            try fork.append(root: world.root, rootVersion: 1, manifest: second)
            return (fork, try fork.proof(cosignedAt: t0))
        }
        let (_, firstFork) = try fork("fork one")
        world.transport.serve("manifest.proof", firstFork)
        guard case .rejected(let error) = client.refresh().outcome, let refusal = error.logRefusal else {
            Issue.record("the split view was not refused")
            return
        }
        #expect(refusal.reasonCode == "log-equivocation")
        #expect(client.trustedState == before)
        let evidence = try #require(client.logEquivocationEvidence)
        #expect(evidence.storedNote == before.persisted.logCheckpoint?.note)
        #expect(
            world.recorder.events.contains { if case .logEquivocation(evidence) = $0 { true } else { false } })

        // A second fork is refused too; the first evidence stays in the file.
        let (_, secondFork) = try fork("fork two")
        world.transport.serve("manifest.proof", secondFork)
        _ = client.refresh()
        #expect(client.logEquivocationEvidence == evidence)
        let record = try #require(
            try world.storage.read(LogEquivocationRecord.fileName, maxBytes: LogEquivocationRecord.maxBytes))
        #expect(LogEquivocationRecord.decode(record, hasher: LogPublisher.hasher) == evidence)
        // A damaged record is not evidence.
        var damaged = record
        damaged[damaged.count / 2] ^= 0x20
        #expect(LogEquivocationRecord.decode(damaged, hasher: LogPublisher.hasher) == nil)
    }
}
